// Package leaktest is the goroutine-leak check every package's TestMain runs
// (docs/security-tests.md LD-05): every goroutine the tests started must end
// after the last test. It imports only the standard library, internal/soak
// and internal/skips (which do too), so a leaf package's tests (cursor,
// oauth, server/catalog) can use it without linking the store; packages whose
// tests use PostgreSQL call storetest.MainWithLeakCheck, which also stops the
// private cluster first.
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
	"heyaira/internal/soak"
)

// Grace is how long the tests' goroutines should take to end: a timing
// figure, failed only under scripts/soak, since a loaded machine can take
// longer to wind down idle connections. HangBound is how long Main waits
// before it reports a leak, which only a real leak reaches.
const (
	Grace     = 5 * time.Second
	HangBound = 60 * time.Second
)

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
		start := time.Now()
		if leaked := Leaked(HangBound); leaked != "" {
			fmt.Fprintf(os.Stderr, "LD-05: goroutines still running %v after the tests ended:\n\n%s\n", HangBound, leaked)
			return 1
		}
		if took := time.Since(start); took > Grace {
			fmt.Fprintf(os.Stderr, "LD-05: the tests' goroutines took %v to end, want ≤ %v", took.Round(time.Millisecond), Grace)
			if soak.On() {
				fmt.Fprintln(os.Stderr)
				return 1
			}
			fmt.Fprintln(os.Stderr, " (timing: gated only under scripts/soak)")
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
