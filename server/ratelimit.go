package server

import (
	"sync"
	"time"
)

// rateLimiter is a token bucket per key. Once a minute, the buckets that
// would be full by now are dropped: a dropped key comes back full, as it
// would have been, so a slow bucket (one a minute, say) is not refilled
// early, and memory stays bounded by the keys spent within one refill.
type rateLimiter struct {
	rate  float64
	burst float64
	mu    sync.Mutex
	b     map[string]*bucket
	swept time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(rate float64, burst int) *rateLimiter {
	return &rateLimiter{rate: rate, burst: float64(burst), b: map[string]*bucket{}}
}

// allow takes one token for key, or reports how long until one is available.
func (l *rateLimiter) allow(key string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for k, b := range l.b {
			if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
				delete(l.b, k)
			}
		}
		l.swept = now
	}
	b, ok := l.b[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.b[key] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(l.burst, b.tokens+el*l.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
	}
	b.tokens--
	return 0, true
}

// peek reports, without taking a token, whether key has one now, and if
// not how long until it will.
func (l *rateLimiter) peek(key string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.b[key]
	if !ok {
		return 0, true
	}
	tokens := b.tokens
	if el := now.Sub(b.last).Seconds(); el > 0 {
		tokens = min(l.burst, tokens+el*l.rate)
	}
	if tokens < 1 {
		return time.Duration((1 - tokens) / l.rate * float64(time.Second)), false
	}
	return 0, true
}
