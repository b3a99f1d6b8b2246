package server

import (
	"context"
	"sync"
	"time"
)

// keyedSlots gives each key a semaphore of its own, which exists while some
// request holds or waits for one of its slots: the per-principal and
// per-project GitHub shares (flights.go).
type keyedSlots struct {
	mu sync.Mutex
	m  map[string]*share
}

// share is one key's slots; users counts the requests holding or waiting
// for them, guarded by keyedSlots.mu.
type share struct {
	slots chan struct{}
	users int
}

// join returns key's share, of n slots when it is new, counting the caller
// as one of its users.
func (k *keyedSlots) join(key string, n int) *share {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]*share{}
	}
	s := k.m[key]
	if s == nil {
		s = &share{slots: make(chan struct{}, n)}
		k.m[key] = s
	}
	s.users++
	return s
}

// leave ends the caller's use of key's share s, and drops s with its last
// user.
func (k *keyedSlots) leave(key string, s *share) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(k.m, key)
	}
}

// take puts a token in c, waiting until expired fires (never, when nil) or
// ctx ends; a free place is taken even if ctx is done.
func take(ctx context.Context, c chan struct{}, expired <-chan time.Time) error {
	select {
	case c <- struct{}{}:
		return nil
	default:
	}
	select {
	case c <- struct{}{}:
		return nil
	case <-expired:
		return errInFlight
	case <-ctx.Done():
		return ctx.Err()
	}
}
