package servertest

import (
	"sync"
	"sync/atomic"
	"time"
)

// StillClock is the clock of Config.Now in tests: it stands still unless the
// test advances it, so that no limiter refills and no deadline passes
// because the machine is slow. Sessions and sign-in links use the
// database clock and are not affected.
type StillClock struct {
	base   time.Time
	offset atomic.Int64
}

// NewClock is a StillClock that reads the time it was made at.
func NewClock() *StillClock                   { return &StillClock{base: time.Now()} }
func (c *StillClock) Now() time.Time          { return c.base.Add(time.Duration(c.offset.Load())) }
func (c *StillClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// ManualClock is a time source a test sets and moves by hand.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock is a ManualClock that reads t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

func (c *ManualClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *ManualClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
