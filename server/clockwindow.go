package server

import (
	"math"
	"sync"
	"time"
)

// clockWindow counts requests per key in fixed windows of the UTC clock (a
// clock hour, a clock minute). A new window clears the counts, which also
// bounds the map by the keys active in the current window.
type clockWindow struct {
	size  time.Duration
	mu    sync.Mutex
	start time.Time
	used  map[string]int // by key, in the window that began at start
}

func newClockWindow(size time.Duration) *clockWindow {
	return &clockWindow{size: size, used: map[string]int{}}
}

// take counts one request of key if fewer than one replica's share of limit
// were counted in now's window: limit / replicas rounded up, so that the
// replicas together allow limit (plus replicas − 1 for the rounding).
// Otherwise it counts nothing and refuses with message, rate_limited until
// the next window begins.
func (w *clockWindow) take(key string, limit, replicas int, now time.Time, message string) error {
	start := now.UTC().Truncate(w.size)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !start.Equal(w.start) {
		w.start = start
		clear(w.used)
	}
	if w.used[key] >= (limit+replicas-1)/replicas {
		return retryAfter(message, start.Add(w.size).Sub(now))
	}
	w.used[key]++
	return nil
}

// retryAfter is a rate_limited refusal with retry_after_seconds for wait.
func retryAfter(message string, wait time.Duration) error {
	return &fieldsError{err: &codedError{"rate_limited", message}, fields: retryFields(wait)}
}

// retryFields is the retry_after_seconds field for wait, in whole seconds
// rounded up, at least 1.
func retryFields(wait time.Duration) map[string]any {
	return map[string]any{"retry_after_seconds": max(1, int(math.Ceil(wait.Seconds())))}
}
