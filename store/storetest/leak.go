package storetest

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// MainWithLeakCheck runs a package's tests and then the standard-library
// goroutine-leak check of docs/security-tests.md LD-05: every goroutine the
// tests started must end within 5 s (idle HTTP connections are closed first).
// It lives here because storetest is the one test-helper package every
// package's tests may import. Use it as:
//
//	func TestMain(m *testing.M) { os.Exit(storetest.MainWithLeakCheck(m)) }
//
// It also stops the private PostgreSQL cluster the tests may have started
// (cluster.go), before the leak check.
func MainWithLeakCheck(m *testing.M) int {
	code := m.Run()
	stopCluster()
	if code == 0 {
		if leaked := leakedGoroutines(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "LD-05: goroutines still running 5 s after the tests ended:\n\n%s\n", leaked)
			code = 1
		}
	}
	return code
}

// leakedGoroutines waits up to d for the goroutines the tests started to
// end, and returns the stacks of those that did not.
func leakedGoroutines(d time.Duration) string {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 4<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if !strings.Contains(g, "leakedGoroutines") && !strings.Contains(g, "testing.(*M).") &&
				!strings.Contains(g, "os/signal.") && !strings.Contains(g, "runtime.ensureSigM") {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return strings.Join(left, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
