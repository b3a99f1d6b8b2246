package web

import (
	"sync"
	"time"
)

// RateLimiter is a token bucket per key. Once a minute, the buckets that
// would be full by now are dropped: a dropped key comes back full, as it
// would have been, so a slow bucket (one a minute, say) is not refilled
// early, and memory stays bounded by the keys spent within one refill.
type RateLimiter struct {
	rate  float64 // allow's, per second
	burst float64
	mu    sync.Mutex
	b     map[string]*bucket
	swept time.Time
}

type bucket struct {
	tokens, rate, burst float64
	last                time.Time
}

func NewRateLimiter(rate float64, burst int) *RateLimiter {
	return &RateLimiter{rate: rate, burst: float64(burst), b: map[string]*bucket{}}
}

// Allow takes one token for key, or reports how long until one is available.
func (l *RateLimiter) Allow(key string, now time.Time) (time.Duration, bool) {
	return l.Take(key, l.rate, l.burst, now)
}

// Take is allow for a key with a rate (per second) and burst of its own,
// which apply from this call on.
func (l *RateLimiter) Take(key string, rate, burst float64, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for k, b := range l.b {
			if b.tokens+now.Sub(b.last).Seconds()*b.rate >= b.burst {
				delete(l.b, k)
			}
		}
		l.swept = now
	}
	b, ok := l.b[key]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		l.b[key] = b
	}
	b.rate, b.burst = rate, burst
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(burst, b.tokens+el*rate)
		b.last = now
	}
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / rate * float64(time.Second)), false
	}
	b.tokens--
	return 0, true
}
