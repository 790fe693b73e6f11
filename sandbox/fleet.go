package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// The Manager's side of a fleet (docs/fleet.md): a node's routing layer
// tells it which sandboxes it owns now, and the node's lease says whether
// it may acknowledge writes at all.

// WriteGate says whether this node may acknowledge writes now. A fleet
// node closes it when it could not renew its lease with a margin to spare
// (it may be partitioned, and another node may take its sandboxes over):
// from then on every ack fails with the gate's error (retryable) until the
// lease is held again and ownership was checked.
type WriteGate interface {
	AckAllowed() error
}

// RecordReader reads one record; a fleet's shared store implements it so
// a node can load a sandbox created elsewhere without listing them all.
type RecordReader interface {
	Sandbox(ctx context.Context, id string) (Record, error)
}

// fleetState is the Manager's fleet bookkeeping (zero without a fleet).
type fleetState struct {
	gate atomic.Pointer[WriteGate]
	// lost counts write-log records (acked at `local` at most) of
	// sandboxes dropped because another node took them over.
	lost    atomic.Int64
	dropped atomic.Int64
	mu      sync.Mutex
	// moving: sandboxes being handed off (drain); requests get 503.
	moving map[string]bool
	// seqs: the last log sequence number of a dropped sandbox, so a
	// later takeover by this node appends above it.
	seqs map[string]uint64
	// tombs: boxes handed off or dropped. They stay in the map (a
	// request that found one gets 503 and is routed again, never a 404)
	// until Prepare replaces them with a fresh load.
	tombs map[string]*box
}

func (m *Manager) tombstone(b *box) bool {
	m.fl.mu.Lock()
	defer m.fl.mu.Unlock()
	return m.fl.tombs[b.id] == b
}

// bury makes b a tombstone: no new use (resume says 503), what runs in it
// is cancelled and its memory dropped. It reports false if b already was.
func (m *Manager) bury(b *box, kill bool) bool {
	m.fl.mu.Lock()
	if m.fl.tombs == nil {
		m.fl.tombs = map[string]*box{}
	}
	if m.fl.tombs[b.id] == b {
		m.fl.mu.Unlock()
		return false
	}
	m.fl.tombs[b.id] = b
	m.fl.mu.Unlock()
	b.mu.Lock()
	b.closed = true
	var ws interface{ Close() error }
	if kill {
		b.runCancel()
		if w := b.takeWorkspaceLocked(); w != nil {
			ws = w
		}
		// Standby and closed: nothing resumes, commits or hibernates
		// it. fs stays for an op in flight, whose ack then fails with
		// ds.fenced; the memory goes when Prepare replaces the box.
		if b.state != api.StateDeleted {
			b.state = api.StateStandby
		}
	}
	b.mu.Unlock()
	if ws != nil {
		ws.Close()
	}
	return true
}

// SetWriteGate installs g (nil: always allowed).
func (m *Manager) SetWriteGate(g WriteGate) {
	if g == nil {
		m.fl.gate.Store(nil)
		return
	}
	m.fl.gate.Store(&g)
}

// gateErr is the write gate's refusal, nil when acks may go out.
func (m *Manager) gateErr() error {
	if g := m.fl.gate.Load(); g != nil {
		return (*g).AckAllowed()
	}
	return nil
}

// FleetStats are the fleet's counters, for /metrics.
type FleetStats struct {
	LostRecords int64 // acked at local (at most), dropped when fenced
	Dropped     int64 // sandboxes dropped because another node owns them
}

// FleetStats returns the counters.
func (m *Manager) FleetStats() FleetStats {
	return FleetStats{LostRecords: m.fl.lost.Load(), Dropped: m.fl.dropped.Load()}
}

// NodeID is the owner name this Manager claims with ("" without Durable).
func (m *Manager) NodeID() string {
	if m.dur == nil {
		return ""
	}
	return m.dur.Node
}

// owned returns the node and epoch b is held at by this process (zero
// when not claimed here).
func (b *box) owned() (string, uint64) {
	b.dmu.Lock()
	epoch, fenced := b.ds.epoch, b.ds.fenced
	b.dmu.Unlock()
	if epoch == 0 || fenced != nil || b.m.dur == nil || b.m.tombstone(b) {
		return "", 0
	}
	return b.m.dur.Node, epoch
}

// Prepare makes sandbox id servable here by a routing layer that found
// this node its owner at epoch (or about to claim it: epoch 0 means "no
// claim yet, resume will claim"). A sandbox created on another node is
// loaded from the store; a copy this process held at an older epoch (it
// was taken over meanwhile) is dropped first, its unpublished records
// counted as lost. An unknown id is left to the caller's lookup (404).
func (m *Manager) Prepare(ctx context.Context, id string, owner string, epoch uint64) error {
	if m.dur == nil {
		return nil
	}
	m.fl.mu.Lock()
	moving := m.fl.moving[id]
	m.fl.mu.Unlock()
	if moving {
		return api.Errorf(errdefs.ErrUnavailable, "sandbox %s is moving to another node; retry", id)
	}
	m.mu.RLock()
	b := m.boxes[id]
	m.mu.RUnlock()
	if b != nil {
		b.dmu.Lock()
		held, fenced := b.ds.epoch, b.ds.fenced
		b.dmu.Unlock()
		tomb := m.tombstone(b)
		stale := fenced != nil || (held != 0 && (owner != m.dur.Node || held != epoch))
		if !stale && !tomb {
			return nil
		}
		if !tomb {
			m.drop(b, "another node took it over")
		}
	}
	return m.load(ctx, id, b)
}

// load adds the stored record of id as a standby box in place of old (nil:
// only if id is unknown).
func (m *Manager) load(ctx context.Context, id string, old *box) error {
	var r Record
	var err error
	if rr, ok := m.cfg.Meta.(RecordReader); ok {
		r, err = rr.Sandbox(ctx, id)
	} else {
		err = api.Errorf(errdefs.ErrNotFound, "sandbox %s has no record", id)
		var recs []Record
		if recs, err = m.cfg.Meta.Sandboxes(ctx); err == nil {
			err = api.Errorf(errdefs.ErrNotFound, "sandbox %s has no record", id)
			for _, x := range recs {
				if x.ID == id {
					r, err = x, nil
				}
			}
		}
	}
	if errdefs.IsNotFound(err) {
		return nil // the lookup says 404
	}
	if err != nil {
		return err
	}
	m.addRecord(r, old)
	return nil
}

func (m *Manager) addRecord(r Record, old *box) {
	r.State = api.StateStandby
	r.Config.Limits = fillLimits(r.Config.Limits, m.cfg.DefaultLimits)
	b := m.newBox(r)
	m.fl.mu.Lock()
	b.ds.seq = m.fl.seqs[r.ID]
	m.fl.mu.Unlock()
	m.mu.Lock()
	if m.boxes[r.ID] == old && !m.closed {
		m.boxes[r.ID] = b
	}
	m.mu.Unlock()
	if old != nil {
		m.fl.mu.Lock()
		if m.fl.tombs[r.ID] == old {
			delete(m.fl.tombs, r.ID)
		}
		m.fl.mu.Unlock()
	}
}

// drop forgets b without publishing anything (another node owns it): what
// runs in it is cancelled, its memory freed, its log records abandoned
// and counted as lost.
func (m *Manager) drop(b *box, why string) {
	if !m.bury(b, true) {
		return // already
	}
	b.dmu.Lock()
	if b.ds.fenced == nil {
		b.ds.fenced = api.Errorf(errdefs.ErrUnavailable, "sandbox %s moved to another node (%s); retry", b.id, why)
	}
	seq := b.ds.seq
	b.dmu.Unlock()
	m.fl.mu.Lock()
	if m.fl.seqs == nil {
		m.fl.seqs = map[string]uint64{}
	}
	m.fl.seqs[b.id] = max(m.fl.seqs[b.id], seq)
	m.fl.mu.Unlock()
	m.commits.Forget(b.id)
	n, err := m.dur.Log.Abandon(b.id)
	if err != nil {
		m.log.Warn("cannot abandon the write log of a dropped sandbox", "sandbox", b.id, "err", err)
	}
	m.fl.lost.Add(int64(n))
	m.fl.dropped.Add(1)
	if n > 0 {
		m.log.Error("fleet: dropped a sandbox another node owns; writes acked only at local are lost",
			"sandbox", b.id, "why", why, "lost_records", n)
	} else {
		m.log.Warn("fleet: dropped a sandbox another node owns", "sandbox", b.id, "why", why)
	}
}

// Revalidate checks every sandbox this process holds a claim on against
// the store and drops those claimed by someone else since (a node whose
// lease lapsed calls it before acknowledging writes again). It returns
// how many it dropped.
func (m *Manager) Revalidate(ctx context.Context) (int, error) {
	if m.dur == nil {
		return 0, nil
	}
	n := 0
	for _, b := range m.allBoxes() {
		b.dmu.Lock()
		held, fenced := b.ds.epoch, b.ds.fenced
		b.dmu.Unlock()
		if (held == 0 && fenced == nil) || m.tombstone(b) {
			continue
		}
		h, err := m.meta.Head(ctx, b.id)
		if errdefs.IsNotFound(err) {
			m.drop(b, "deleted elsewhere")
			n++
			continue
		}
		if err != nil {
			return n, err
		}
		if fenced != nil || h.Owner != m.dur.Node || h.Epoch != held {
			m.drop(b, fmt.Sprintf("owner is %q at epoch %d, this node held epoch %d", h.Owner, h.Epoch, held))
			n++
		}
	}
	return n, nil
}

// DropFenced drops every sandbox whose commit was fenced.
func (m *Manager) DropFenced() int {
	n := 0
	for _, b := range m.allBoxes() {
		b.dmu.Lock()
		fenced := b.ds.fenced
		b.dmu.Unlock()
		if fenced != nil && !m.tombstone(b) {
			m.drop(b, fenced.Error())
			n++
		}
	}
	return n
}

// Sync loads the records other nodes created and forgets the unclaimed
// copies of records they deleted, so a listing on any node shows the
// fleet's sandboxes.
func (m *Manager) Sync(ctx context.Context) error {
	if m.dur == nil {
		return nil
	}
	recs, err := m.cfg.Meta.Sandboxes(ctx)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, r := range recs {
		have[r.ID] = true
		m.mu.RLock()
		known := m.boxes[r.ID] != nil
		m.mu.RUnlock()
		if !known {
			m.addRecord(r, nil)
		}
	}
	for _, b := range m.allBoxes() {
		if have[b.id] {
			continue
		}
		b.mu.Lock()
		standby := b.state == api.StateStandby
		b.mu.Unlock()
		if standby && b.created.Before(m.now().Add(-time.Second)) {
			m.mu.Lock()
			if m.boxes[b.id] == b {
				delete(m.boxes, b.id)
			}
			m.mu.Unlock()
		}
	}
	return nil
}

// Owned lists the sandboxes this process holds a claim on.
func (m *Manager) Owned() []string {
	var out []string
	for _, b := range m.allBoxes() {
		if _, e := b.owned(); e != 0 {
			out = append(out, b.id)
		}
	}
	return out
}

// Evict hands sandbox id off (drain): it is committed and hibernated,
// its ownership released in the store and it leaves this node's memory;
// meanwhile requests for it get 503 (retry), after it any node may claim
// it. A sandbox busy past ctx stays (an error).
func (m *Manager) Evict(ctx context.Context, id string) (err error) {
	if m.dur == nil {
		return errors.New("sandbox: evict needs durability")
	}
	m.fl.mu.Lock()
	if m.fl.moving == nil {
		m.fl.moving = map[string]bool{}
	}
	m.fl.moving[id] = true
	m.fl.mu.Unlock()
	defer func() {
		m.fl.mu.Lock()
		delete(m.fl.moving, id)
		m.fl.mu.Unlock()
	}()
	m.mu.RLock()
	b := m.boxes[id]
	m.mu.RUnlock()
	if b != nil {
		// No new use from here (a request that found b before the mark
		// gets 503 and is routed again); what is in flight finishes
		// and is committed by the hibernate.
		if !m.bury(b, false) {
			return nil // handed off or dropped already
		}
		defer func() {
			if err != nil { // not handed off: it keeps serving here
				m.fl.mu.Lock()
				delete(m.fl.tombs, id)
				m.fl.mu.Unlock()
				b.mu.Lock()
				b.closed = false
				b.mu.Unlock()
			}
		}()
		for {
			err := b.hibernate(ctx, false)
			if err == nil || errdefs.IsNotFound(err) {
				break
			}
			if errors.Is(err, ErrFenced) {
				m.fl.mu.Lock()
				delete(m.fl.tombs, id) // so drop buries and counts it
				m.fl.mu.Unlock()
				m.drop(b, err.Error())
				return nil
			}
			if !errdefs.IsFailedPrecondition(err) {
				return fmt.Errorf("cannot hibernate %s to hand it off: %w", id, err)
			}
			select { // busy: operations in flight
			case <-ctx.Done():
				return fmt.Errorf("cannot hand off %s: %w (%v)", id, ctx.Err(), err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	h, err := m.meta.Head(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if h.Owner == m.dur.Node {
		if err := m.meta.Release(ctx, id, m.dur.Node, h.Epoch); err != nil && !errors.Is(err, ErrFenced) {
			return fmt.Errorf("cannot release %s: %w", id, err)
		}
	}
	if b != nil {
		b.dmu.Lock()
		seq := b.ds.seq
		b.dmu.Unlock()
		m.fl.mu.Lock()
		if m.fl.seqs == nil {
			m.fl.seqs = map[string]uint64{}
		}
		m.fl.seqs[id] = max(m.fl.seqs[id], seq)
		m.fl.mu.Unlock()
		m.commits.Forget(id) // b stays in the map as a tombstone
	}
	return nil
}

func (m *Manager) allBoxes() []*box {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		out = append(out, b)
	}
	return out
}

// Holds reports whether this process holds sandbox id's claim at epoch
// (and is not fenced): while the node's lease is held, nobody else can
// have claimed it since, so a peer's forward needs no store read.
func (m *Manager) Holds(id string, epoch uint64) bool {
	if m.dur == nil || epoch == 0 {
		return false
	}
	m.mu.RLock()
	b := m.boxes[id]
	m.mu.RUnlock()
	if b == nil {
		return false
	}
	_, e := b.owned()
	return e == epoch
}

// Forget drops this node's copy of a sandbox the store no longer has
// (deleted through another node), so the lookup says 404.
func (m *Manager) Forget(id string) {
	if m.dur == nil {
		return
	}
	m.mu.Lock()
	b := m.boxes[id]
	if b != nil {
		delete(m.boxes, id)
	}
	m.mu.Unlock()
	if b != nil {
		b.kill()
		m.commits.Forget(id)
	}
}

// TakeOverer is a store that can claim a sandbox only from an owner whose
// lease expired (fleet.Store).
type TakeOverer interface {
	TakeOver(ctx context.Context, sandbox, node string, seen uint64) (uint64, error)
}

// claim makes this node the owner at seen+1. On a fleet node (a write gate
// installed) it never takes a sandbox from a live owner, whatever path
// resumed it (MCP, a request that bypassed routing): that is a
// *FencedError naming the owner.
func (m *Manager) claim(ctx context.Context, heads Heads, id string, seen uint64) (uint64, error) {
	if t, ok := m.meta.(TakeOverer); ok && m.fl.gate.Load() != nil {
		return t.TakeOver(ctx, id, m.dur.Node, seen)
	}
	return heads.Claim(ctx, id, m.dur.Node, seen)
}
