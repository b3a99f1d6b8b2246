// Package loadgen holds what the process-level tests (internal/systemtest)
// and the load benchmark (internal/systemtest/bench) measure with: one
// open-loop driver, one percentile and one wait for "back to baseline", so
// that a figure in a test and the same figure in the benchmark mean one thing.
package loadgen

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// OpenLoop starts request i, for every i due within d, at t0 + i/rate in its
// own goroutine as fire(i, due), whatever the earlier ones are doing; a
// caller that measures latency from due is charged any wait for a connection
// or a late timer (no coordinated omission). With limit > 0, a request due
// while limit are still running is not started, so a saturated server cannot
// make the driver grow without bound; their numbers are returned. When ctx
// ends no request starts any more. OpenLoop returns once every started
// request has ended.
func OpenLoop(ctx context.Context, rate float64, d time.Duration, limit int64, fire func(i int, due time.Time)) (skipped []int) {
	n := int(rate * d.Seconds())
	var wg sync.WaitGroup
	defer wg.Wait()
	var running atomic.Int64
	t0 := time.Now().Add(10 * time.Millisecond)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := range n {
		due := t0.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if w := time.Until(due); w > 0 {
			timer.Reset(w)
			select {
			case <-ctx.Done():
				return skipped
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return skipped
		}
		if limit > 0 && running.Load() >= limit {
			skipped = append(skipped, i)
			continue
		}
		running.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer running.Add(-1)
			fire(i, due)
		}()
	}
	return skipped
}

// Pct returns the q-quantile (0 < q ≤ 1) of ds by the nearest-rank method:
// the smallest value at least a fraction q of ds do not exceed.
func Pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	// The rank is ceil(q·n); the epsilon keeps 0.99·100 (in floating point
	// 99.00000000000001 for some n) from rounding up a whole rank.
	i := int(math.Ceil(q*float64(len(s))-1e-9)) - 1
	return s[max(0, min(i, len(s)-1))]
}

// BackToBaseline calls back at once and then every poll, until back reports
// true or within has passed (the last call is made after within), and
// returns how long that took and whether back came true.
func BackToBaseline(within, poll time.Duration, back func() bool) (time.Duration, bool) {
	start := time.Now()
	for {
		if back() {
			return time.Since(start), true
		}
		if time.Since(start) >= within {
			return time.Since(start), false
		}
		time.Sleep(poll)
	}
}
