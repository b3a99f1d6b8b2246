package systemtest

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDemoScriptsDevPortTaken: scripts/dev on a port something else holds
// stops before it starts anything, says which address is taken, by whom
// (when ss can tell: here, this test process), and how to choose another,
// and exits non-zero. It once went on, let the other server answer its
// readiness check, and failed later on a seed file that was never written.
func TestDemoScriptsDevPortTaken(t *testing.T) {
	t.Parallel()
	clone := cleanCopy(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()

	cmd := exec.Command(filepath.Join(clone, "scripts", "dev"))
	cmd.Dir = clone
	cmd.Env = append(withoutHeyAira(os.Environ()), "HEYAIRA_LISTEN_ADDR="+addr)
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // it builds nothing and starts nothing
		cmd.Process.Kill()
		<-done
		t.Fatalf("scripts/dev on a taken port did not exit within 2 minutes:\n%s", out)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Errorf("scripts/dev on a taken port: %v, want a non-zero exit", err)
	}
	msg := string(out)
	t.Logf("scripts/dev printed:\n%s", msg)
	wants := []string{addr + " is already in use", "HEYAIRA_LISTEN_ADDR=127.0.0.1:8081 scripts/dev", "public URL follows"}
	if _, err := exec.LookPath("ss"); err == nil {
		wants = append(wants, "(pid "+strconv.Itoa(os.Getpid())+")")
	}
	for _, want := range wants {
		if !strings.Contains(msg, want) {
			t.Errorf("scripts/dev's message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "demo-github.env") || strings.Contains(msg, "FAIL") {
		t.Errorf("scripts/dev went on past the taken port:\n%s", msg)
	}
	// Nothing started, nothing built: no cluster, no binaries, no log.
	for _, p := range []string{".data/pg", ".data/bin", ".data/server.log", ".data/cursor.key"} {
		if _, err := os.Stat(filepath.Join(clone, p)); !os.IsNotExist(err) {
			t.Errorf("scripts/dev on a taken port left %s (%v)", p, err)
		}
	}
	// The holder is untouched: it still accepts.
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Errorf("the port's holder no longer accepts: %v", err)
	} else {
		c.Close()
	}
}
