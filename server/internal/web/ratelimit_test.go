package web

import (
	"testing"
	"time"
)

// A bucket is dropped only once it would be full: a caller who pauses for
// the sweep's minute gets what the rate refilled, not a new burst. Before,
// every bucket idle for a minute was dropped, so CIMD's network share (3,
// then one a minute) and registration's buckets gave a full burst again
// after 61 s.
func TestRateLimiterSweepKeepsSlowBuckets(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewRateLimiter(1.0/60, 3) // 3, then one a minute
	for i := range 3 {
		if _, ok := l.Allow("n", t0); !ok {
			t.Fatalf("take %d of the burst refused", i+1)
		}
	}
	later := t0.Add(61 * time.Second) // past the sweep's minute: one token refilled
	if _, ok := l.Allow("other", later); !ok {
		t.Fatal("a new key was refused")
	}
	if _, ok := l.Allow("n", later); !ok {
		t.Fatal("the token refilled in 61 s was refused")
	}
	if wait, ok := l.Allow("n", later); ok {
		t.Fatal("a spent bucket got a new burst after a minute's pause")
	} else if wait <= 0 {
		t.Errorf("refused without a wait: %v", wait)
	}
	// Once it would be full, a bucket is dropped by the next sweep.
	full := later.Add(4 * time.Minute)
	l.Allow("x", full)
	l.mu.Lock()
	_, kept := l.b["n"]
	n := len(l.b)
	l.mu.Unlock()
	if kept || n != 1 {
		t.Errorf("after a full refill: bucket kept %v, %d buckets (want only x)", kept, n)
	}
}
