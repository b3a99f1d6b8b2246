package main

import (
	"os"
	"testing"

	"heyaira/store/storetest"
)

// TestMain adds the goroutine-leak check of docs/security-tests.md LD-05.
//
// The load harness re-executes this test binary as its server process
// (bench_helper_test.go, HEYAIRA_BENCH_HELPER=1) and as its bare-GET client
// (bench_bare_test.go, HEYAIRA_BENCH_BARE_HELPER=1), and scripts/dev runs it
// as the demo server (demo_helper_test.go, HEYAIRA_DEMO_HELPER=1). Those
// processes are not test runs, and are not checked: the check would hold a
// stopping demo server up to 5 s, with its signals no longer handled.
func TestMain(m *testing.M) {
	if os.Getenv("HEYAIRA_BENCH_HELPER") != "" || os.Getenv("HEYAIRA_BENCH_BARE_HELPER") != "" ||
		os.Getenv("HEYAIRA_DEMO_HELPER") != "" {
		os.Exit(m.Run())
	}
	os.Exit(storetest.MainWithLeakCheck(m))
}
