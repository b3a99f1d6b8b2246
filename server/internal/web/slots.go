package web

import (
	"context"
	"errors"
	"sync"
	"time"
)

// KeyedSlots gives each key a semaphore of its own, which exists while some
// request holds or waits for one of its slots: the per-principal and
// per-project GitHub shares (flights.go).
type KeyedSlots struct {
	mu sync.Mutex
	m  map[string]*Share
}

// Share is one key's slots; users counts the requests holding or waiting
// for them, guarded by KeyedSlots.mu.
type Share struct {
	Slots chan struct{}
	users int
}

// Join returns key's share, of n slots when it is new, counting the caller
// as one of its users.
func (k *KeyedSlots) Join(key string, n int) *Share {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]*Share{}
	}
	s := k.m[key]
	if s == nil {
		s = &Share{Slots: make(chan struct{}, n)}
		k.m[key] = s
	}
	s.users++
	return s
}

// Leave ends the caller's use of key's share s, and drops s with its last
// user.
func (k *KeyedSlots) Leave(key string, s *Share) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(k.m, key)
	}
}

// ErrExpired is Take's answer when its wait expired.
var ErrExpired = errors.New("web: the wait for a slot expired")

// Take puts a token in c, waiting until expired fires (never, when nil) or
// ctx ends; a free place is taken even if ctx is done.
func Take(ctx context.Context, c chan struct{}, expired <-chan time.Time) error {
	select {
	case c <- struct{}{}:
		return nil
	default:
	}
	select {
	case c <- struct{}{}:
		return nil
	case <-expired:
		return ErrExpired
	case <-ctx.Done():
		return ctx.Err()
	}
}
