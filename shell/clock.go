package shell

import (
	"context"
	"sync"
	"time"
)

// runClock ends a Run at its deadline. A session keeps one timer and
// re-arms it per Run, where context.WithTimeoutCause would build a timer,
// a timer context and (with the AfterFunc that kills the Run's pipes) a
// child map for every exec: nine allocations of the heartbeat's 46, and a
// tenth of its CPU at 10,000 sandboxes. At the deadline it cancels the
// Run's context with the limit as the cause and kills its pipes, as the
// AfterFunc did.
type runClock struct {
	mu       sync.Mutex
	t        *time.Timer
	rs       *runState // the Run armed for; nil when none
	cancel   context.CancelCauseFunc
	deadline time.Time
	cause    error
}

// arm starts the deadline of rs (Runs of one Shell are serialised, so
// there is one at a time); cause is what the Run's context ends with.
func (c *runClock) arm(rs *runState, cancel context.CancelCauseFunc, d time.Duration, cause error) {
	c.mu.Lock()
	c.rs, c.cancel, c.deadline, c.cause = rs, cancel, time.Now().Add(d), cause
	if c.t == nil {
		c.t = time.AfterFunc(d, c.fire)
	} else {
		c.t.Reset(d)
	}
	c.mu.Unlock()
}

// disarm stops the deadline of the Run that ends.
func (c *runClock) disarm() {
	c.mu.Lock()
	c.rs, c.cancel = nil, nil
	c.t.Stop()
	c.mu.Unlock()
}

func (c *runClock) fire() {
	c.mu.Lock()
	rs, cancel, cause := c.rs, c.cancel, c.cause
	if rs == nil || time.Now().Before(c.deadline) {
		// A firing of an earlier Run's arming that raced with the
		// re-arm: the current Run's own firing is still due.
		c.mu.Unlock()
		return
	}
	c.rs, c.cancel = nil, nil
	c.mu.Unlock()
	cancel(cause)
	rs.closePipes()
}
