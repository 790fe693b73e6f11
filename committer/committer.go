// Package committer schedules a node's background commits: it tracks,
// per sandbox, the write-log sequence numbers appended and the ones a
// committed generation holds, starts a commit when a sandbox's
// uncommitted bytes or age pass a threshold (or a caller waits for the
// `committed` level), and wakes the callers waiting for a commit that
// covers their write (DESIGN.md "Durability").
//
// It knows nothing of stores or vfs: the commit itself (persist the
// delta, publish the head with fencing, trim the log) is the CommitFunc
// the owner of the sandboxes gives it. A sandbox whose commit was fenced
// is failed for good (Fail): its waiters and every later Wait get that
// error and no commit of it is started again.
package committer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultMaxBytes of uncommitted log bytes start a commit.
	DefaultMaxBytes = 4 << 20
	// DefaultMaxDelay after a sandbox's oldest uncommitted write starts
	// a commit.
	DefaultMaxDelay = 2 * time.Second
	// DefaultWorkers commits run at once on a node.
	DefaultWorkers = 2
	// DefaultRetry is the wait before a failed (not fenced) commit is
	// tried again.
	DefaultRetry = time.Second
)

// Options tune a Committer; the zero value uses the defaults above.
type Options struct {
	MaxBytes int64
	MaxDelay time.Duration
	Workers  int
	Retry    time.Duration
	Logger   *slog.Logger
}

// Result is what one commit of a sandbox made durable: every log record
// up to and including Seq is in generation Generation.
type Result struct {
	Seq        uint64
	Generation uint64
}

// CommitFunc commits one sandbox's current state. It returns the
// sandbox's committed position; a sandbox that is gone returns a zero
// Result and nil.
type CommitFunc func(ctx context.Context, sandbox string) (Result, error)

// ErrClosed is returned by Wait after Close.
var ErrClosed = errors.New("committer: closed")

type state struct {
	logged    uint64 // last sequence number appended
	committed uint64 // last sequence number in a generation
	gen       uint64
	pending   int64     // log bytes appended since the last commit started
	since     time.Time // the oldest uncommitted append (zero: clean)
	kick      bool      // a waiter wants a commit now
	queued    bool      // queued or running
	retryAt   time.Time
	err       error  // permanent (Fail)
	lastErr   error  // the last failed attempt
	errSeq    uint64 // logged position that attempt covered
	changed   chan struct{}
}

// Committer is one node's commit scheduler. Safe for concurrent use.
type Committer struct {
	fn   CommitFunc
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	sbs    map[string]*state
	work   chan string
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// New starts a Committer running fn. Close stops it.
func New(fn CommitFunc, opts Options) *Committer {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = DefaultMaxDelay
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Committer{fn: fn, opts: opts, log: opts.Logger, sbs: map[string]*state{},
		work: make(chan string, 1024), stop: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(1 + opts.Workers)
	go c.scheduler()
	for range opts.Workers {
		go c.worker()
	}
	return c
}

func (c *Committer) get(sb string) *state {
	s := c.sbs[sb]
	if s == nil {
		s = &state{changed: make(chan struct{})}
		c.sbs[sb] = s
	}
	return s
}

// Logged notes that sandbox's record seq (of n bytes) is in the write log
// and not yet committed.
func (c *Committer) Logged(sandbox string, seq uint64, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(sandbox)
	s.logged = max(s.logged, seq)
	s.pending += int64(n)
	if s.since.IsZero() {
		s.since = time.Now()
	}
	if s.pending >= c.opts.MaxBytes {
		c.enqueueLocked(sandbox, s)
	}
}

// Committed records a commit made outside the Committer (a hibernate) and
// wakes its waiters.
func (c *Committer) Committed(sandbox string, r Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.doneLocked(c.get(sandbox), r, 0)
}

// Fail stops committing sandbox: its waiters and every later Wait get err.
func (c *Committer) Fail(sandbox string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(sandbox)
	if s.err == nil {
		s.err = err
	}
	s.broadcastLocked()
}

// Forget drops a deleted sandbox; its waiters get an error.
func (c *Committer) Forget(sandbox string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sbs[sandbox]; s != nil {
		if s.err == nil {
			s.err = fmt.Errorf("sandbox %s was deleted before its commit", sandbox)
		}
		s.broadcastLocked()
		delete(c.sbs, sandbox)
	}
}

// Position returns sandbox's committed sequence number and generation.
func (c *Committer) Position(sandbox string) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sbs[sandbox]; s != nil {
		return Result{Seq: s.committed, Generation: s.gen}
	}
	return Result{}
}

// Pending returns the log bytes of sandbox appended since its last
// commit started (what a budget counts as uncommitted in the log).
func (c *Committer) Pending(sandbox string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sbs[sandbox]; s != nil && s.committed < s.logged {
		return s.pending
	}
	return 0
}

// Kick starts a commit of sandbox soon (a budget wants room), unless one
// is queued or running.
func (c *Committer) Kick(sandbox string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(sandbox)
	if s.committed >= s.logged {
		return
	}
	s.kick = true
	c.enqueueLocked(sandbox, s)
}

// Wait starts a commit of sandbox now unless one covering seq landed
// already, and returns the generation holding seq once one does. A
// failed attempt that covered seq returns its error (the write stays in
// the log and a later commit carries it).
func (c *Committer) Wait(ctx context.Context, sandbox string, seq uint64) (uint64, error) {
	c.mu.Lock()
	s := c.get(sandbox)
	s.logged = max(s.logged, seq)
	for {
		switch {
		case s.err != nil:
			err := s.err
			c.mu.Unlock()
			return 0, err
		case s.committed >= seq:
			g := s.gen
			c.mu.Unlock()
			return g, nil
		case c.closed:
			c.mu.Unlock()
			return 0, ErrClosed
		}
		if s.lastErr != nil && s.errSeq >= seq {
			err := s.lastErr
			s.lastErr = nil
			c.mu.Unlock()
			return 0, fmt.Errorf("commit of sandbox %s failed: %w", sandbox, err)
		}
		s.kick = true
		s.retryAt = time.Time{}
		c.enqueueLocked(sandbox, s)
		ch := s.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for the commit of sandbox %s: %w", sandbox, ctx.Err())
		}
		c.mu.Lock()
		if cur := c.sbs[sandbox]; cur != s {
			c.mu.Unlock()
			return 0, fmt.Errorf("sandbox %s was deleted before its commit", sandbox)
		}
	}
}

func (s *state) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (c *Committer) enqueueLocked(sb string, s *state) {
	if s.queued || s.err != nil || c.closed {
		return
	}
	select {
	case c.work <- sb:
		s.queued = true
	default: // full: the scheduler tries again on its next tick
	}
}

func (c *Committer) doneLocked(s *state, r Result, started int64) {
	if r.Seq >= s.committed {
		s.committed, s.gen = r.Seq, r.Generation
	}
	s.pending = max(0, s.pending-started)
	if s.committed >= s.logged {
		s.since, s.pending = time.Time{}, 0
	} else {
		s.since = time.Now()
	}
	s.broadcastLocked()
}

// scheduler queues the sandboxes over a threshold.
func (c *Committer) scheduler() {
	defer c.wg.Done()
	tick := time.NewTicker(max(c.opts.MaxDelay/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		c.mu.Lock()
		for sb, s := range c.sbs {
			due := s.kick || s.pending >= c.opts.MaxBytes ||
				(!s.since.IsZero() && now.Sub(s.since) >= c.opts.MaxDelay)
			if due && now.After(s.retryAt) {
				c.enqueueLocked(sb, s)
			}
		}
		c.mu.Unlock()
	}
}

func (c *Committer) worker() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case sb := <-c.work:
			c.commit(sb)
		}
	}
}

func (c *Committer) commit(sb string) {
	c.mu.Lock()
	s := c.sbs[sb]
	if s == nil || s.err != nil {
		if s != nil {
			s.queued = false
		}
		c.mu.Unlock()
		return
	}
	s.kick = false
	started, covers := s.pending, s.logged
	c.mu.Unlock()
	r, err := c.fn(c.ctx, sb)
	c.mu.Lock()
	defer c.mu.Unlock()
	s.queued = false
	if c.sbs[sb] != s {
		return
	}
	if err != nil {
		if s.err == nil {
			c.log.Warn("commit failed; retrying", "sandbox", sb, "err", err, "retry_in", c.opts.Retry)
			s.lastErr, s.errSeq = err, covers
			s.retryAt = time.Now().Add(c.opts.Retry)
		}
		s.broadcastLocked()
		return
	}
	s.lastErr = nil
	c.doneLocked(s, r, started)
	if s.kick {
		c.enqueueLocked(sb, s)
	}
}

// Close stops starting commits and waits for the running ones (they get a
// cancelled context). Waiters get ErrClosed.
func (c *Committer) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	for _, s := range c.sbs {
		s.broadcastLocked()
	}
	c.mu.Unlock()
	close(c.stop)
	c.cancel()
	c.wg.Wait()
}
