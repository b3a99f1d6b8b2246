//go:build bench

package bench

import (
	"os"
	"testing"

	"heyaira/store/storetest"
)

// TestMain adds the goroutine-leak check of docs/security-tests.md LD-05.
//
// The harness re-executes this test binary as its server process
// (bench_helper_test.go, HEYAIRA_BENCH_HELPER=1) and as its bare-GET client
// (bench_bare_test.go, HEYAIRA_BENCH_BARE_HELPER=1). Those processes are not
// test runs, and are not checked.
// Row LD-05 (docs/security-tests.md).
func TestMain(m *testing.M) {
	if os.Getenv("HEYAIRA_BENCH_HELPER") != "" || os.Getenv("HEYAIRA_BENCH_BARE_HELPER") != "" {
		os.Exit(m.Run())
	}
	os.Exit(storetest.MainWithLeakCheck(m))
}
