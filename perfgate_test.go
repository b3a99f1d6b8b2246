package main

import "testing"

// perfGate checks a latency or timing figure against its target. The figures
// are measured on shared 2-core machines, where another suite running beside
// this one can double any of them, so the default run reports a miss
// (t.Logf) and only scripts/soak (HEYAIRA_SOAK=1), run on a quiet machine,
// fails on it. Correctness (codes, counts, caps, recovery) is always asserted.
func perfGate(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	switch {
	case ok:
	case soak():
		t.Errorf(format, args...)
	default:
		t.Logf("TIMING over target (gated only under scripts/soak): "+format, args...)
	}
}
