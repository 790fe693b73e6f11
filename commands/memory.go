package commands

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrMemoryLimit is matched (errors.Is) by every error a Memory budget
// returns, so the shell can map any of them to status 125.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// MemoryLimitError names the sandbox's budget that a charge ran into.
type MemoryLimitError struct{ Max int64 }

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("warren: memory limit exceeded (%d MiB)", e.Max>>20)
}

// Unwrap makes errors.Is(err, ErrMemoryLimit) hold.
func (e *MemoryLimitError) Unwrap() error { return ErrMemoryLimit }

// Memory is one sandbox's memory budget, shared by its shell and every
// command it runs, across concurrent pipeline stages and background jobs.
// Whatever grows with script input (strings, arrays, buffers, sort state,
// hold spaces, awk and jq values) is charged before it is allocated and
// released when it is dropped. Go cannot attribute heap to a goroutine, so
// the budget is only as good as its charge points; the node's structural
// backstop (DESIGN.md "Containment") covers what is not charged.
//
// A nil *Memory is unlimited, so callers need no checks.
type Memory struct {
	max  int64
	used atomic.Int64
}

// NewMemory returns a budget of max bytes; max <= 0 means unlimited (the
// budget still counts, for metrics).
func NewMemory(max int64) *Memory { return &Memory{max: max} }

// Charge reserves n bytes, or fails with a *MemoryLimitError and reserves
// nothing. n <= 0 always succeeds.
func (m *Memory) Charge(n int64) error {
	if m == nil || n <= 0 {
		return nil
	}
	if used := m.used.Add(n); m.max > 0 && used > m.max {
		m.used.Add(-n)
		return &MemoryLimitError{Max: m.max}
	}
	return nil
}

// Release returns n bytes charged earlier.
func (m *Memory) Release(n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.used.Add(-n)
}

// Used is the bytes charged now.
func (m *Memory) Used() int64 {
	if m == nil {
		return 0
	}
	return m.used.Load()
}

// Max is the budget (0: unlimited).
func (m *Memory) Max() int64 {
	if m == nil || m.max < 0 {
		return 0
	}
	return m.max
}

// Reservation tracks what one owner (a command invocation, a buffer) has
// charged, so that it can give it all back at once when it is done, on
// every return path: r := mem.Reserve(); defer r.Close().
type Reservation struct {
	m    *Memory
	held int64
}

// Reserve starts a reservation against m (m may be nil).
func (m *Memory) Reserve() *Reservation { return &Reservation{m: m} }

// Grow charges n more bytes to the reservation.
func (r *Reservation) Grow(n int64) error {
	if err := r.m.Charge(n); err != nil {
		return err
	}
	if n > 0 {
		r.held += n
	}
	return nil
}

// Shrink gives back n bytes (at most what is held).
func (r *Reservation) Shrink(n int64) {
	n = min(n, r.held)
	r.m.Release(n)
	r.held -= max(n, 0)
}

// Held is what the reservation holds now.
func (r *Reservation) Held() int64 { return r.held }

// Close gives back everything the reservation holds.
func (r *Reservation) Close() {
	r.m.Release(r.held)
	r.held = 0
}
