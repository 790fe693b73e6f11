package sandbox

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/vfs"
)

// Budget bounds the bytes a node holds that are not yet in a committed
// generation (DESIGN.md "Durability"): a sandbox's uncommitted bytes are
// the larger of its delta's growth since its last commit and its write-log
// bytes since then (overwrites grow the log, not the delta). At half a
// budget a commit starts; at the full budget writers wait (at most Wait)
// for a commit to make room, then fail with a *BudgetError. Commits,
// hibernates and drains never wait on a budget: they are what gives it
// back, so a sandbox going to standby always finishes its commit.
type Budget struct {
	// Sandbox is the budget of one sandbox (0: DefaultSandboxBudget;
	// negative: none).
	Sandbox int64
	// Node is the budget of all of the node's sandboxes together (0:
	// DefaultNodeBudget; negative: none).
	Node int64
	// Wait is how long a writer over budget waits (0: DefaultBudgetWait).
	Wait time.Duration
}

// Defaults of Budget.
const (
	DefaultSandboxBudget = 256 << 20
	DefaultNodeBudget    = 1 << 30
	DefaultBudgetWait    = 10 * time.Second
)

// budgetRetry is the Retry-After of a refused write: about one commit.
const budgetRetry = 2 * time.Second

func (bg Budget) withDefaults() Budget {
	if bg.Sandbox == 0 {
		bg.Sandbox = DefaultSandboxBudget
	}
	if bg.Node == 0 {
		bg.Node = DefaultNodeBudget
	}
	if bg.Wait <= 0 {
		bg.Wait = DefaultBudgetWait
	}
	return bg
}

// BudgetError refuses a write over a budget. It is an api.ErrWriteBudget
// (507 with Retry-After from the API). It wraps no errno on purpose: the
// commands that hit it print its text ("head: write error: write /big:
// warren: write budget exhausted (...)") where an ENOSPC would print only
// "No space left on device".
type BudgetError struct {
	Sandbox     string
	Scope       string // "sandbox" or "node"
	Uncommitted int64  // bytes uncommitted in that scope
	Limit       int64
	Waited      time.Duration
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("warren: write budget exhausted (%d MiB uncommitted, committing to object storage)", (e.Uncommitted+(1<<20)-1)>>20)
}

// Unwrap: the API class.
func (e *BudgetError) Unwrap() error { return api.ErrWriteBudget }

// RetryAfter implements api.RetryAfter.
func (e *BudgetError) RetryAfter() time.Duration { return budgetRetry }

// budgetState is a box's share of the budgets.
type budgetState struct {
	fs      atomic.Pointer[vfs.FS] // the live delta the gate guards (nil: not in memory)
	cbytes  atomic.Int64           // its bytes at the last commit (or load)
	live    atomic.Bool            // a budget commit of the live delta is running
	nextTry atomic.Int64           // unix nanos before which no budget commit starts (after a failure)
}

// nodeBudget caches the node's sum (summing takes every box).
type nodeBudget struct {
	mu      sync.Mutex
	at      time.Time
	sum     int64
	largest *box
	waits   atomic.Uint64 // writers that waited
	refused atomic.Uint64 // writes refused
}

// nodeSumEvery bounds how stale the node's sum is.
const nodeSumEvery = 20 * time.Millisecond

// armBudget puts fsys (b's live delta; committed bytes of it already in a
// generation or the image) under the budgets.
func (m *Manager) armBudget(b *box, fsys *vfs.FS, committed int64) {
	if m.dur == nil {
		return
	}
	b.bs.cbytes.Store(committed)
	b.bs.fs.Store(fsys)
	if m.dur.Budget.Sandbox < 0 && m.dur.Budget.Node < 0 {
		return
	}
	fsys.SetWriteGate(func() error { return m.admit(b, fsys) })
}

// disarmBudget: b's delta left memory (hibernated, deleted).
func (b *box) disarmBudget() {
	if fsys := b.bs.fs.Swap(nil); fsys != nil {
		fsys.SetWriteGate(nil)
	}
}

// uncommitted is b's uncommitted bytes now.
func (m *Manager) uncommitted(b *box) int64 {
	fsys := b.bs.fs.Load()
	if fsys == nil {
		return 0
	}
	return max(0, fsys.Usage().Bytes-b.bs.cbytes.Load(), m.commits.Pending(b.id))
}

// nodeUncommitted is the node's sum (at most nodeSumEvery old unless
// fresh) and the box holding the most.
func (m *Manager) nodeUncommitted(fresh bool) (int64, *box) {
	nb := &m.bud
	nb.mu.Lock()
	defer nb.mu.Unlock()
	if !fresh && time.Since(nb.at) < nodeSumEvery {
		return nb.sum, nb.largest
	}
	var sum, top int64
	var largest *box
	m.mu.RLock()
	for _, b := range m.boxes {
		u := m.uncommitted(b)
		sum += u
		if u > top {
			top, largest = u, b
		}
	}
	m.mu.RUnlock()
	nb.at, nb.sum, nb.largest = time.Now(), sum, largest
	return sum, largest
}

// admit is b's write gate: nil while b and the node are under budget;
// over it, wait for a commit to make room, at most Budget.Wait.
func (m *Manager) admit(b *box, fsys *vfs.FS) error {
	bg := m.dur.Budget
	var deadline time.Time
	var timer *time.Timer
	for fresh := false; ; fresh = true {
		u := m.uncommitted(b)
		n, largest := m.nodeUncommitted(fresh)
		if bg.Sandbox > 0 && u >= bg.Sandbox/2 {
			m.commitForBudget(b, fsys)
		}
		if bg.Node > 0 && n >= bg.Node/2 && largest != nil {
			if lf := largest.bs.fs.Load(); lf != nil {
				m.commitForBudget(largest, lf)
			}
		}
		var e *BudgetError
		switch {
		case bg.Sandbox > 0 && u >= bg.Sandbox:
			e = &BudgetError{Sandbox: b.id, Scope: "sandbox", Uncommitted: u, Limit: bg.Sandbox}
		case bg.Node > 0 && n >= bg.Node:
			e = &BudgetError{Sandbox: b.id, Scope: "node", Uncommitted: n, Limit: bg.Node}
		default:
			return nil
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(bg.Wait)
			m.bud.waits.Add(1)
			timer = time.NewTimer(0)
			defer timer.Stop()
		}
		if !now.Before(deadline) {
			e.Waited = bg.Wait
			m.bud.refused.Add(1)
			m.log.Warn("write refused over the uncommitted budget", "sandbox", b.id, "scope", e.Scope,
				"uncommitted", e.Uncommitted, "budget", e.Limit, "waited", bg.Wait)
			return e
		}
		timer.Reset(min(nodeSumEvery, deadline.Sub(now)))
		// runCtx is set once in newBox: no b.mu here (a writer may hold
		// it, e.g. while the native tier's changes are synced in).
		select {
		case <-timer.C:
		case <-b.runCtx.Done():
			return fmt.Errorf("waiting for room in the write budget: %w", context.Canceled)
		}
	}
}

// commitForBudget starts a commit of b to give back budget, unless one
// runs. When most of b's uncommitted bytes are in the log, the committer
// commits the last record as usual; when they are in a write still
// running (one exec writing a large file), the live delta is committed as
// the start of a new record chain (as a write too large to log is).
func (m *Manager) commitForBudget(b *box, fsys *vfs.FS) {
	if time.Now().UnixNano() < b.bs.nextTry.Load() {
		return
	}
	b.dmu.Lock()
	var logged int64
	if b.ds.snap != nil {
		logged = b.ds.snap.Usage().Bytes
	}
	fenced := b.ds.fenced != nil
	b.dmu.Unlock()
	if fenced {
		return
	}
	if fsys.Usage().Bytes-logged <= m.commits.Pending(b.id) {
		m.commits.Kick(b.id)
		return
	}
	if !b.bs.live.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer b.bs.live.Store(false)
		if err := m.commitLive(b, fsys); err != nil {
			b.bs.nextTry.Store(time.Now().Add(time.Second).UnixNano())
			m.log.Warn("budget commit failed; writers keep waiting", "sandbox", b.id, "err", err)
		}
	}()
}

// commitLive commits fsys (b's live delta, mid-write) as a new chain.
func (m *Manager) commitLive(b *box, fsys *vfs.FS) error {
	b.mu.Lock()
	if b.state != api.StateRunning || b.fs != fsys {
		b.mu.Unlock()
		return nil
	}
	ctx := b.runCtx
	b.mu.Unlock()
	b.dmu.Lock()
	if b.ds.fenced != nil {
		b.dmu.Unlock()
		return b.ds.fenced
	}
	b.ds.snap, b.ds.based = fsys.Fork(), false
	b.ds.chain++
	b.dmu.Unlock()
	_, err := m.commitBox(ctx, b)
	return err
}

// BudgetStats are the budgets' counters, for /metrics.
type BudgetStats struct {
	Uncommitted int64  // the node's uncommitted bytes now
	Waits       uint64 // writes that waited for room
	Refused     uint64 // writes refused after the wait
}

// BudgetStats returns the budgets' counters (zero without Durable).
func (m *Manager) BudgetStats() BudgetStats {
	if m.dur == nil {
		return BudgetStats{}
	}
	n, _ := m.nodeUncommitted(true)
	return BudgetStats{Uncommitted: n, Waits: m.bud.waits.Load(), Refused: m.bud.refused.Load()}
}
