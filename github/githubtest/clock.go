package githubtest

import (
	"sync"
	"time"
)

// Clock is a manual clock, safe for concurrent use. It moves only when
// Advance or Set is called.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time; use it as github.Config.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// FollowWallClock keeps the clock on the wall clock, every second, until the
// returned stop is called. It is for a server in another process, which
// signs App JWTs by the wall clock and cannot share this clock: a frozen
// fake would refuse every JWT once the JWT's 60 s backdate has passed since
// the fake started (a slow start on a loaded machine, a long run).
func (c *Clock) FollowWallClock() (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			c.Set(time.Now())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-exited }) }
}
