// Package skips makes the tests that skip for a missing prerequisite
// (storetest.Missing: no PostgreSQL, no Node packages, no Chromium) visible
// at the end of the test binary, with how many and why, so that a plain
// `go test ./...` does not look fully green. scripts/test sets
// HEYAIRA_TEST_NO_SKIP=1, which turns each such skip into a failure, so
// there it reports nothing. Like leaktest, it imports only the standard
// library.
package skips

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

var (
	mu      sync.Mutex
	byWhy   = map[string][]string{} // reason → test names
	reasons []string                // in first-seen order
)

// Record notes that test skipped for reason.
func Record(test, reason string) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := byWhy[reason]; !ok {
		reasons = append(reasons, reason)
	}
	byWhy[reason] = append(byWhy[reason], test)
}

// Summary returns the lines that say how many tests skipped and why, or ""
// when none did. prog names the test binary.
func Summary(prog string) string {
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, tests := range byWhy {
		n += len(tests)
	}
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SKIPPED: %d test(s) of %s did not run, for a missing prerequisite "+
		"(scripts/test installs them and runs everything):\n", n, prog)
	for _, why := range reasons {
		tests := slices.Clone(byWhy[why])
		slices.Sort(tests)
		fmt.Fprintf(&b, "  %d × %s\n      (%s)\n", len(tests), why, strings.Join(tests, ", "))
	}
	return b.String()
}

// tty opens the terminal. go test ./... prints only "ok" for a package whose
// tests pass, whatever the test binary wrote (its output is shown with -v,
// -json or a failure), so the summary also goes to the terminal when there
// is one.
var tty = func() (io.WriteCloser, error) { return os.OpenFile("/dev/tty", os.O_WRONLY, 0) }

// Report writes the summary, if any, to w and to the terminal.
func Report(w io.Writer) {
	s := Summary(strings.TrimSuffix(filepath.Base(os.Args[0]), ".test"))
	if s == "" {
		return
	}
	fmt.Fprint(w, s)
	if t, err := tty(); err == nil {
		fmt.Fprint(t, s)
		t.Close()
	}
}
