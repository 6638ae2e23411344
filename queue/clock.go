package queue

import (
	"sync"
	"time"
)

// Clock is an instance's own clock. No deadline depends on it: session
// deadlines, reclaim, liveness and the admission-rate buckets all follow the
// store's clock (TIME), so instances whose clocks disagree still agree. It
// only ages this instance's cache of the admission rate; tests skew it to
// show that nothing else reads it.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// SystemClock is the wall clock.
var SystemClock Clock = systemClock{}

// FakeClock is a Clock that moves only when told to.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewFakeClock returns a FakeClock set to t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{t: t} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the fake time forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
