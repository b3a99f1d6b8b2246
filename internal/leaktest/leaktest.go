// Package leaktest is the goroutine-leak check every package's TestMain runs
// (docs/security-tests.md LD-05): every goroutine the tests started must end
// within 5 s of the last test. It imports only the standard library (and
// internal/skips, which does too), so a
// leaf package's tests (cursor, oauth, server/catalog) can use it without
// linking the store; packages whose tests use PostgreSQL call
// storetest.MainWithLeakCheck, which also stops the private cluster first.
//
//	func TestMain(m *testing.M) { os.Exit(leaktest.Main(m)) }
package leaktest

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"heyaira/internal/skips"
)

// Grace is how long the goroutines the tests started get to end.
const Grace = 5 * time.Second

// Main runs the tests, then each of after (in order, whatever the result),
// then prints how many tests skipped for a missing prerequisite (package
// skips), then, if the tests passed, the leak check. It returns the exit code.
func Main(m *testing.M, after ...func()) int {
	code := m.Run()
	for _, f := range after {
		f()
	}
	skips.Report(os.Stdout)
	if code == 0 {
		if leaked := Leaked(Grace); leaked != "" {
			fmt.Fprintf(os.Stderr, "LD-05: goroutines still running %v after the tests ended:\n\n%s\n", Grace, leaked)
			code = 1
		}
	}
	return code
}

// Leaked waits up to d for the goroutines the tests started to end, and
// returns the stacks of those that did not ("" when none is left). Idle
// connections of http.DefaultTransport are closed first: their goroutines
// end only then.
func Leaked(d time.Duration) string {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 4<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if !strings.Contains(g, "leaktest.Leaked") && !strings.Contains(g, "testing.(*M).") &&
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
