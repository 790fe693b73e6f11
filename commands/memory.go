package commands

import (
	"context"
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

// Grow charges n more bytes to the reservation. A nil *Reservation is
// unlimited and holds nothing.
func (r *Reservation) Grow(n int64) error {
	if r == nil {
		return nil
	}
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
	if r == nil {
		return
	}
	n = min(n, r.held)
	r.m.Release(n)
	r.held -= max(n, 0)
}

// Held is what the reservation holds now.
func (r *Reservation) Held() int64 {
	if r == nil {
		return 0
	}
	return r.held
}

// Resize sets what the reservation holds to n bytes, charging the growth
// or giving back the difference: for owners that re-estimate their whole
// size from time to time (the awk and jq meters).
func (r *Reservation) Resize(n int64) error {
	if r == nil {
		return nil
	}
	if d := n - r.held; d > 0 {
		return r.Grow(d)
	}
	r.Shrink(r.held - n)
	return nil
}

// Close gives back everything the reservation holds.
func (r *Reservation) Close() {
	if r == nil {
		return
	}
	r.m.Release(r.held)
	r.held = 0
}

// StatusLimit is the exit status of a command stopped by a sandbox limit
// (memory, nesting depth), as the shell's own limits.
const StatusLimit = 125

// ErrDepth is matched (errors.Is) by every *DepthError.
var ErrDepth = errors.New("nesting too deep")

// DepthError says that input nested deeper than a command's recursion
// bound: a Go stack overflow is fatal to the whole process (every tenant),
// so each recursive command stops at a fixed depth instead.
type DepthError struct{ Limit int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("warren: nesting too deep (limit %d)", e.Limit)
}

// Unwrap makes errors.Is(err, ErrDepth) hold.
func (e *DepthError) Unwrap() error { return ErrDepth }

// Memory is the sandbox's shared budget (nil: unlimited).
func (inv *Invocation) Memory() *Memory {
	if inv.Sys == nil {
		return nil
	}
	return inv.Sys.Memory
}

// LimitExceeded reports err on stderr, in the limit's own words
// ("warren: memory limit exceeded (64 MiB)"), and returns StatusLimit when
// err is a memory or depth limit; otherwise it returns false and prints
// nothing.
func (inv *Invocation) LimitExceeded(err error) (int, bool) {
	var me *MemoryLimitError
	var de *DepthError
	switch {
	case errors.As(err, &me):
		fmt.Fprintln(inv.Stderr, me.Error())
	case errors.As(err, &de):
		fmt.Fprintln(inv.Stderr, de.Error())
	default:
		return 0, false
	}
	return StatusLimit, true
}

type reservationKey struct{}

// Reserving wraps fn so that it runs with a Reservation of its own on the
// sandbox's budget (ReservationFrom(ctx)), given back when fn returns,
// whatever the return path. Without a budget fn runs as it is.
func Reserving(fn Func) Func {
	return func(ctx context.Context, inv *Invocation) int {
		m := inv.Memory()
		if m == nil {
			return fn(ctx, inv)
		}
		r := m.Reserve()
		defer r.Close()
		return fn(context.WithValue(ctx, reservationKey{}, r), inv)
	}
}

// ReservationFrom is the Reservation Reserving put in ctx (nil: unlimited).
func ReservationFrom(ctx context.Context) *Reservation {
	r, _ := ctx.Value(reservationKey{}).(*Reservation)
	return r
}
