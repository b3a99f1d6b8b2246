//go:build bench

package bench

// The bare GET from another process. The harness's own bare GET (e.bare)
// runs in the process that also holds the fake GitHub, so client and fake
// meet over loopback without crossing a process. A read through HeyAira
// crosses processes twice (driver to server, server to fake), and the
// independent side-by-side run measured its bare GET from a client process
// of its own. So the one-principal phase also measures that floor: this
// test binary, re-executed with HEYAIRA_BENCH_BARE_HELPER=1, does one bare
// GET of the document for each line it reads on stdin and answers with the
// time the GET took, measured in the child around the request alone (the
// pipe is not in it).

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const benchBareHelperEnv = "HEYAIRA_BENCH_BARE_HELPER"

// TestBareGetHelperProcess is not a test: see the comment at the top of the file.
func TestBareGetHelperProcess(t *testing.T) {
	if os.Getenv(benchBareHelperEnv) != "1" {
		t.Skip("not a test: the bare-GET client process of the load harness, run only when bench_bare_test.go re-executes " +
			"the test binary with " + benchBareHelperEnv + "=1")
	}
	size, _ := strconv.Atoi(os.Getenv("HEYAIRA_BENCH_BARE_SIZE"))
	d := &benchDoc{bareURL: os.Getenv("HEYAIRA_BENCH_BARE_URL"), ghToken: os.Getenv("HEYAIRA_BENCH_BARE_TOKEN"), bareSize: size}
	e := &benchEnv{github: benchGitHubClient(benchFakeRoots(t), 1)}
	in, out := bufio.NewScanner(os.Stdin), bufio.NewWriter(os.Stdout)
	for in.Scan() {
		start := time.Now()
		r, _ := e.bare(d)
		fmt.Fprintf(out, "%s %d\n", r.code, time.Since(start))
		out.Flush()
	}
}

// benchGitHubClient is the driver's client of the fake: roots holds only
// the fake's certificate.
func benchGitHubClient(roots *x509.CertPool, conns int) *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 90 * time.Second, DisableCompression: true}}
}

// benchBareProc is the driver's side of the child.
type benchBareProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startBareProc starts the child for document d; it ends with the test.
func startBareProc(t *testing.T, e *benchEnv, d *benchDoc) *benchBareProc {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "github-ca.pem")
	if err := os.WriteFile(ca, e.gh.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBareGetHelperProcess$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), benchBareHelperEnv+"=1", "HEYAIRA_BENCH_GITHUB_CA_FILE="+ca,
		"HEYAIRA_BENCH_BARE_URL="+d.bareURL, "HEYAIRA_BENCH_BARE_TOKEN="+d.ghToken,
		"HEYAIRA_BENCH_BARE_SIZE="+strconv.Itoa(d.bareSize))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Close() // the helper's loop ends, and its test with it
		if err := cmd.Wait(); err != nil {
			t.Errorf("the bare-GET helper process: %v", err)
		}
	})
	return &benchBareProc{cmd: cmd, in: w, out: bufio.NewScanner(r)}
}

// get has the child do one bare GET and returns its outcome and the time
// the child measured. The test binary prints PASS lines and the like only
// after its stdin closes, so every line before is an answer.
func (p *benchBareProc) get() (benchResult, time.Duration) {
	if _, err := io.WriteString(p.in, "get\n"); err != nil || !p.out.Scan() {
		return benchResult{code: "helper_gone"}, 0
	}
	code, ns, _ := strings.Cut(p.out.Text(), " ")
	n, _ := strconv.ParseInt(ns, 10, 64)
	return benchResult{ok: code == "ok", code: code}, time.Duration(n)
}
