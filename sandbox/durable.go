package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wlog"
)

// Durable turns on the write path of DESIGN.md "Durability": every exec
// and file call's net change goes to the node's write log before a
// `local` ack, a committer persists and publishes generations in the
// background, and a restart replays the log on top of the last one.
type Durable struct {
	// Node is this node's stable id (the owner name in Heads).
	Node string
	// Log is the node's open write log, not yet replayed: New replays
	// it. The Manager does not close it.
	Log *wlog.Log
	// Default is the ack level of a sandbox that does not choose one
	// ("" = local).
	Default string
	// Commit tunes the committer (thresholds: committer.DefaultMaxBytes,
	// committer.DefaultMaxDelay).
	Commit committer.Options
	// Budget bounds the uncommitted bytes (durable_budget.go).
	Budget Budget

	loadKick chan struct{} // an exec ran: the load custody may be stale (durable_custody.go)
}

// custodyTTL is how long an upload's custody protects its objects; a
// commit takes far less (it is renewed by no one yet: a commit that
// outlives it starts over).
const custodyTTL = 10 * time.Minute

// durableState is a box's write-path position. Guarded by box.dmu.
type durableState struct {
	epoch uint64 // owner epoch held (0: not claimed by this process)
	gen   uint64 // head generation the next commit builds on
	seq   uint64 // last sequence number appended to the log
	// snap is the delta at seq (a fork sharing every node): the next
	// record is encoded against it and a commit persists it, so a
	// generation holds exactly the records up to its Seq.
	snap *vfs.FS
	// based: snap's chain starts at a committed state. A live fork's
	// does not (its delta is its parent's live one): its records carry
	// BaseGen unbased and its acks wait for a commit.
	based  bool
	chain  uint64 // counts chain starts, so a commit marks only its own chain based
	fenced error
	// states holds the shell state last logged per session.
	states map[string][]byte
}

// unbased is the BaseGen of records that no generation can replay.
const unbased = ^uint64(0)

// startChain makes fsys, just loaded from b's head (or fresh, or a live
// fork when based is false), the start of b's record chain.
func (ds *durableState) startChain(fsys *vfs.FS, seq uint64, based bool) {
	ds.snap, ds.based = fsys.Fork(), based
	ds.chain++
	ds.seq = max(ds.seq, seq)
	ds.states = nil
}

// levelFor resolves a request's level against b's default.
func (m *Manager) levelFor(b *box, req string) (string, error) {
	if err := api.CheckDurability(req); err != nil {
		return "", err
	}
	if req == "" {
		req = b.cfg.Durability
	}
	if req == "" && m.dur != nil {
		req = m.dur.Default
	}
	if req == "" {
		req = api.DurabilityMemory
	}
	if req != api.DurabilityMemory && m.dur == nil {
		return "", api.Errorf(errdefs.ErrFailedPrecondition, "durability %q needs a write log, and this node has none (memory only)", req)
	}
	return req, nil
}

// Payload of a write-log record (docs/format.md "Write log payload"):
//
//	'S' version(1) uvarint(n) n × (uvarint len, session name, uvarint len, shell state) change record
const (
	payloadMagic   = 'S'
	payloadVersion = 1
)

func encodePayload(states map[string][]byte, changes []byte) []byte {
	n := len(changes) + 8
	for k, v := range states {
		n += len(k) + len(v) + 20
	}
	b := make([]byte, 0, n)
	b = append(b, payloadMagic, payloadVersion)
	b = binary.AppendUvarint(b, uint64(len(states)))
	for k, v := range states {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return append(b, changes...)
}

var errPayload = errors.New("sandbox: malformed write-log payload")

func decodePayload(b []byte) (map[string][]byte, []byte, error) {
	if len(b) < 3 || b[0] != payloadMagic {
		return nil, nil, errPayload
	}
	if b[1] != payloadVersion {
		return nil, nil, fmt.Errorf("%w: version %d, this build reads %d", errPayload, b[1], payloadVersion)
	}
	b = b[2:]
	next := func() ([]byte, bool) {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, false
		}
		v := b[k : k+int(l)]
		b = b[k+int(l):]
		return v, true
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, errPayload
	}
	b = b[k:]
	states := map[string][]byte{}
	for range n {
		name, ok1 := next()
		st, ok2 := next()
		if !ok1 || !ok2 {
			return nil, nil, errPayload
		}
		states[string(name)] = st
	}
	return states, b, nil
}

// ack makes the writes b holds now durable at level and says what was
// reached. sess, when set, is the session that just ran (its lock held)
// whose shell state goes into the record.
func (m *Manager) ack(ctx context.Context, b *box, level string, sess *session) (api.Ack, error) {
	if err := m.gateErr(); err != nil { // a fleet node without its lease (fleet.go)
		return api.Ack{}, err
	}
	m.kickLoads()
	if level == api.DurabilityMemory || m.dur == nil {
		b.dmu.Lock()
		err := b.ds.fenced
		b.dmu.Unlock()
		return api.Ack{Durability: api.DurabilityMemory}, err
	}
	var state []byte
	if sess != nil && sess.in != nil {
		st, err := sess.in.MarshalState()
		if err != nil {
			return api.Ack{}, fmt.Errorf("cannot serialize session %q: %w", sess.name, err)
		}
		state = st
	}
	b.mu.Lock()
	fsys := b.fs
	b.mu.Unlock()
	if fsys == nil {
		return api.Ack{}, notFound(b.id)
	}
	b.dmu.Lock()
	ds := &b.ds
	if ds.fenced != nil {
		b.dmu.Unlock()
		return api.Ack{}, ds.fenced
	}
	if ds.snap == nil {
		ds.startChain(fsys, 0, false) // cannot happen for a running box; be safe
	}
	snap := fsys.Fork()
	sameState := state == nil || string(ds.states[sess.name]) == string(state)
	seq := ds.seq
	based := ds.based
	if snap.Usage().Bytes-ds.snap.Usage().Bytes > maxLoggedGrowth {
		// Too big for the log: commit it instead.
		b.dmu.Unlock()
		return m.commitNow(ctx, b, snap, sess, state)
	}
	if snap.Mark() != ds.snap.Mark() || !sameState {
		changes, _, err := snap.Changes(ds.snap.Mark())
		if err != nil {
			b.dmu.Unlock()
			return api.Ack{}, fmt.Errorf("cannot encode the change of %s: %w", b.id, err)
		}
		var states map[string][]byte
		if !sameState {
			states = map[string][]byte{sess.name: state}
		}
		payload := encodePayload(states, changes)
		seq = ds.seq + 1
		baseGen := ds.gen
		if !based {
			baseGen = unbased
		}
		rec := wlog.Record{Sandbox: b.id, Epoch: ds.epoch, BaseGen: baseGen, Seq: seq, Payload: payload}
		if err := m.dur.Log.Append(ctx, rec); err != nil {
			b.dmu.Unlock()
			if errors.Is(err, wlog.ErrTooLarge) {
				return m.commitNow(ctx, b, snap, sess, state)
			}
			return api.Ack{}, fmt.Errorf("cannot log the write of %s: %w", b.id, err)
		}
		ds.seq, ds.snap = seq, snap
		if !sameState {
			if ds.states == nil {
				ds.states = map[string][]byte{}
			}
			ds.states[sess.name] = state
		}
		b.dmu.Unlock()
		m.commits.Logged(b.id, seq, len(payload))
	} else {
		b.dmu.Unlock()
	}
	if level == api.DurabilityLocal && based {
		if err := m.gateErr(); err != nil {
			return api.Ack{}, err
		}
		return api.Ack{Durability: api.DurabilityLocal}, nil
	}
	// committed, or local on a chain no generation starts: wait for the
	// commit that covers seq.
	if seq == 0 {
		r, err := m.commitBox(ctx, b)
		if err != nil {
			return api.Ack{}, err
		}
		return api.Ack{Durability: api.DurabilityCommitted, Generation: r.Generation}, nil
	}
	g, err := m.commits.Wait(ctx, b.id, seq)
	if err != nil {
		return api.Ack{}, err
	}
	return api.Ack{Durability: api.DurabilityCommitted, Generation: g}, nil
}

// maxLoggedGrowth is the growth of a delta since its last record above
// which a durable write is committed rather than logged: the log is for
// many small fsyncs, a generation for bulk data (and a record must fit
// wlog's payload bound, 64 MiB).
const maxLoggedGrowth = 32 << 20

// commitNow makes snap (b's delta after a write too big to log) the
// start of a new chain and commits it; the write is acked as committed.
// Records logged meanwhile chain from snap but no generation holds its
// start until this commit lands, so they are unbased (never replayed;
// their acks wait for a commit).
func (m *Manager) commitNow(ctx context.Context, b *box, snap *vfs.FS, sess *session, state []byte) (api.Ack, error) {
	b.dmu.Lock()
	b.ds.snap, b.ds.based = snap, false
	b.ds.chain++
	if sess != nil && state != nil {
		if b.ds.states == nil {
			b.ds.states = map[string][]byte{}
		}
		b.ds.states[sess.name] = state
	}
	b.dmu.Unlock()
	r, err := m.commitBox(ctx, b)
	if err != nil {
		return api.Ack{}, err
	}
	return api.Ack{Durability: api.DurabilityCommitted, Generation: r.Generation}, nil
}

// commitFunc is the committer's CommitFunc.
func (m *Manager) commitFunc(ctx context.Context, id string) (committer.Result, error) {
	m.mu.RLock()
	b := m.boxes[id]
	m.mu.RUnlock()
	if b == nil {
		return committer.Result{}, nil
	}
	return m.commitBox(ctx, b)
}

// commitBox publishes the delta at b's last logged record (and the shell
// states logged with it) as a generation.
func (m *Manager) commitBox(ctx context.Context, b *box) (committer.Result, error) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	b.mu.Lock()
	if b.state != api.StateRunning || b.fs == nil {
		b.mu.Unlock()
		// Hibernated (committed then) or deleted.
		return m.commits.Position(b.id), nil
	}
	states := map[string]sessionState{}
	for name, s := range b.sessions {
		if s.stateKey != "" {
			states[name] = sessionState{key: s.stateKey}
		}
	}
	parent := b.ref
	b.mu.Unlock()
	b.dmu.Lock()
	if b.ds.fenced != nil {
		err := b.ds.fenced
		b.dmu.Unlock()
		return committer.Result{}, err
	}
	snap, seq, chain := b.ds.snap, b.ds.seq, b.ds.chain
	if pos := m.commits.Position(b.id); b.ds.based && pos.Seq == seq && seq > 0 {
		b.dmu.Unlock()
		return pos, nil // nothing logged since
	}
	for name, st := range b.ds.states {
		states[name] = sessionState{bytes: st}
	}
	b.dmu.Unlock()
	if snap == nil {
		return committer.Result{}, nil
	}
	ref, r, err := m.publish(ctx, b, snap, states, seq, parent, chain)
	if err != nil {
		return r, err
	}
	// Recorded under b.mu, so a delete (which marks b deleted first,
	// under b.mu) cannot be undone by this write.
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == api.StateDeleted {
		return r, nil
	}
	b.ref = ref
	if err := m.cfg.Meta.PutSandbox(ctx, b.recordLocked()); err != nil {
		m.log.Warn("cannot record the committed StateRef", "sandbox", b.id, "err", err)
	}
	return r, nil
}

type sessionState struct {
	bytes []byte
	key   string
}

// publish stores snap and states as a StateRef holding log records up to
// seq, and moves b's head to it: custody first, then the uploads, then
// Publish (fenced: b stops), then custody released and the log trimmed.
// The caller holds b.cmu; publish takes only b.dmu.
//
// A published snap starts chain: if b's chain is still that one, its
// records are based from now on (set before waiters wake).
func (m *Manager) publish(ctx context.Context, b *box, snap *vfs.FS, states map[string]sessionState, seq uint64, parent string, chain uint64) (string, committer.Result, error) {
	heads := m.meta.(DurableMeta)
	m.gc.uploads.RLock() // a GC sweep waits for the head to move (gc.go)
	defer m.gc.uploads.RUnlock()
	b.dmu.Lock()
	epoch, base := b.ds.epoch, b.ds.gen
	b.dmu.Unlock()
	upload := newID("up-")
	if _, err := heads.AddCustody(ctx, CustodyRecord{Upload: upload, Node: m.dur.Node, Sandbox: b.id, Epoch: epoch, Keys: custodyBase(parent)}, custodyTTL); err != nil {
		return "", committer.Result{}, fmt.Errorf("cannot take custody of the commit of %s: %w", b.id, err)
	}
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		if err := heads.ReleaseCustody(context.WithoutCancel(ctx), upload); err != nil {
			m.log.Warn("cannot release custody", "upload", upload, "err", err)
		}
	}
	defer release()
	// Every object is named in the custody before it is written, so a
	// collector protects exactly these (durable_custody.go).
	ctx = m.custodyContext(ctx, upload)
	doc := stateDoc{Version: stateDocVersion, Image: b.imageDigest, Sessions: map[string]string{}, Seq: seq, Epoch: epoch}
	for name, st := range states {
		if st.bytes == nil {
			doc.Sessions[name] = st.key
			continue
		}
		h, err := m.putBlob(ctx, "sessions/", st.bytes)
		if err != nil {
			return "", committer.Result{}, err
		}
		doc.Sessions[name] = "sessions/" + h
	}
	ref, err := m.putDoc(ctx, doc, snap)
	if err != nil {
		return "", committer.Result{}, err
	}
	// An upload that outlived its custody may have lost objects to a
	// collector (its grace is longer than a custody): it must not
	// publish; the committer starts it over.
	if _, err := heads.RenewCustody(ctx, upload, custodyTTL); err != nil {
		return "", committer.Result{}, fmt.Errorf("commit of %s: its upload outlived its custody; starting over: %w", b.id, err)
	}
	c := Commit{Sandbox: b.id, Node: m.dur.Node, Epoch: epoch, Base: base, Ref: ref, Parent: parent, CommitID: newID("c-")}
	var g Generation
	for try := 0; ; try++ {
		g, err = heads.Publish(ctx, c)
		if err == nil || errors.Is(err, ErrFenced) || try == 2 || ctx.Err() != nil {
			break
		}
		// Retried with the same commit id: if the last try landed
		// and only its reply was lost, this one says so.
		time.Sleep(time.Duration(100*(try+1)) * time.Millisecond)
	}
	if errors.Is(err, ErrFenced) {
		b.dmu.Lock()
		if b.ds.fenced == nil {
			b.ds.fenced = fmt.Errorf("sandbox %s: another node took it over; its writes here are refused: %w", b.id, err)
		}
		ferr := b.ds.fenced
		b.dmu.Unlock()
		// Counted before Fail wakes the waiters: a caller told its
		// commit was fenced must find it in the stats.
		m.fencedCount.Add(1)
		m.commits.Fail(b.id, ferr)
		m.log.Error("commit fenced: this node stops writing the sandbox", "sandbox", b.id, "err", err)
		return "", committer.Result{}, ferr
	}
	if err != nil {
		return "", committer.Result{}, fmt.Errorf("cannot publish the commit of %s: %w", b.id, err)
	}
	b.dmu.Lock()
	b.ds.gen = g.Number
	if b.ds.chain == chain {
		b.ds.based = true
	}
	b.dmu.Unlock()
	b.bs.cbytes.Store(snap.Usage().Bytes)
	r := committer.Result{Seq: seq, Generation: g.Number}
	m.commitCount.Add(1) // before the waiters wake, as for fenced
	m.commits.Committed(b.id, r)
	release() // custody goes before the trim (docs/format.md "Publish ordering")
	if err := m.dur.Log.Trim(b.id, seq); err != nil {
		m.log.Warn("cannot trim the write log", "sandbox", b.id, "err", err)
	}
	m.retainAfter(ctx, b, g.Number, false)
	return ref, r, nil
}

// claim makes this node b's owner if it is not already (create, resume,
// recovery). The caller holds b.mu.
func (m *Manager) claimLocked(ctx context.Context, b *box) (Head, error) {
	heads := m.meta.(DurableMeta)
	h, err := heads.Head(ctx, b.id)
	if err != nil {
		return h, fmt.Errorf("cannot read the head of %s: %w", b.id, err)
	}
	b.dmu.Lock()
	defer b.dmu.Unlock()
	if b.ds.fenced != nil {
		return h, b.ds.fenced
	}
	if b.ds.epoch != 0 {
		if h.Owner != m.dur.Node || h.Epoch != b.ds.epoch {
			b.ds.fenced = fmt.Errorf("sandbox %s: another node took it over; its writes here are refused: %w", b.id, Fenced(Commit{Sandbox: b.id, Node: m.dur.Node, Epoch: b.ds.epoch}, h))
			return h, b.ds.fenced
		}
		return h, nil
	}
	if h.Owner == m.dur.Node && h.Epoch > 0 {
		b.ds.epoch = h.Epoch // this node's own claim from before a restart
	} else {
		e, err := m.claim(ctx, heads, b.id, h.Epoch) // fleet.go: a fleet never claims from a live owner
		if err != nil {
			return h, fmt.Errorf("cannot claim sandbox %s: %w", b.id, err)
		}
		b.ds.epoch = e
		h.Owner, h.Epoch = m.dur.Node, e
	}
	b.ds.gen = h.Generation
	return h, nil
}

// DurableStats are the write path's counters, for /metrics.
type DurableStats struct {
	Log              wlog.Stats
	Commits, Fenced  uint64
	AbandonedRecords int64 // records of sandboxes this node no longer owned at start
	RecoveredRecords int64 // records replayed at start
	Budget           BudgetStats
}

// Add sums o into d (a front adding its workers' counters).
func (d *DurableStats) Add(o DurableStats) {
	d.Log.Appends += o.Log.Appends
	d.Log.Syncs += o.Log.Syncs
	d.Log.Bytes += o.Log.Bytes
	d.Log.Segments += o.Log.Segments
	d.Log.Deleted += o.Log.Deleted
	d.Log.Abandoned += o.Log.Abandoned
	d.Commits += o.Commits
	d.Fenced += o.Fenced
	d.AbandonedRecords += o.AbandonedRecords
	d.RecoveredRecords += o.RecoveredRecords
	d.Budget.Uncommitted += o.Budget.Uncommitted
	d.Budget.Waits += o.Budget.Waits
	d.Budget.Refused += o.Budget.Refused
}

// DurableStats returns the write path's counters (zero without Durable).
func (m *Manager) DurableStats() DurableStats {
	if m.dur == nil {
		return DurableStats{}
	}
	return DurableStats{Log: m.dur.Log.Stats(), Commits: m.commitCount.Load(), Fenced: m.fencedCount.Load(),
		AbandonedRecords: m.abandoned.Load(), RecoveredRecords: m.recovered.Load(), Budget: m.BudgetStats()}
}

// commitForStandbyLocked commits b's whole current state (its sessions
// are idle) before it leaves memory, and returns the StateRef. The caller
// holds b.cmu and b.mu. No record follows (b is dropped), so the
// generation may hold writes beyond the last logged record.
func (b *box) commitForStandbyLocked(ctx context.Context) (string, error) {
	if b.committedLocked() {
		// Nothing since the last commit (a sandbox resumed to be read):
		// no new generation.
		b.dmu.Lock()
		b.ds.snap, b.ds.states = nil, nil
		b.dmu.Unlock()
		return b.ref, nil
	}
	states := map[string]sessionState{}
	for name, s := range b.sessions {
		var st sessionState
		switch {
		case s.in != nil:
			data, err := s.in.MarshalState()
			if err != nil {
				return "", fmt.Errorf("cannot serialize session %q: %w", name, err)
			}
			st.bytes = data
		case s.restore != nil:
			st.bytes = s.restore
		case s.stateKey != "":
			st.key = s.stateKey
		default:
			continue
		}
		states[name] = st
	}
	b.dmu.Lock()
	if b.ds.fenced != nil {
		err := b.ds.fenced
		b.dmu.Unlock()
		return "", err
	}
	snap, seq, chain := b.fs.Fork(), b.ds.seq, b.ds.chain
	b.dmu.Unlock()
	ref, r, err := b.m.publish(ctx, b, snap, states, seq, b.ref, chain)
	if err != nil {
		return "", err
	}
	if r.Generation%uint64(max(1, retentionOf(b).KeepLast/2)) != 0 {
		b.m.retainAfter(ctx, b, r.Generation, true) // publish ran it already otherwise
	}
	b.dmu.Lock()
	b.ds.snap, b.ds.states, b.ds.based = nil, nil, true
	b.dmu.Unlock()
	return ref, nil
}

// adopt claims a sandbox just recorded on this node. A live fork child
// (running, its delta its parent's live one) starts an unbased chain.
func (m *Manager) adopt(ctx context.Context, b *box) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != api.StateRunning || b.fs == nil {
		return nil // claimed when it resumes
	}
	if _, err := m.claimLocked(ctx, b); err != nil {
		return err
	}
	b.dmu.Lock()
	if b.ds.snap == nil {
		b.ds.startChain(b.fs, 0, false)
	}
	b.dmu.Unlock()
	if b.bs.fs.Load() != b.fs {
		m.armBudget(b, b.fs, 0) // a live fork: nothing of its delta is committed as its own
	}
	return nil
}

// startDurable replays the write log: each sandbox this node still owns
// at the records' epoch is loaded from its head and the records after the
// head's sequence number are applied, in order; the records of a sandbox
// the node no longer owns are abandoned (counted, logged).
func (m *Manager) startDurable(ctx context.Context) error {
	d := *m.cfg.Durable
	dm, ok := m.cfg.Meta.(DurableMeta)
	switch {
	case !ok:
		return errors.New("sandbox: durability needs a metadata store with heads (a DurableMeta)")
	case d.Node == "":
		return errors.New("sandbox: durability needs a node id")
	case d.Log == nil:
		return errors.New("sandbox: durability needs a write log")
	}
	if d.Default == "" {
		d.Default = api.DurabilityLocal
	}
	if err := api.CheckDurability(d.Default); err != nil {
		return err
	}
	if d.Commit.Logger == nil {
		d.Commit.Logger = m.log
	}
	d.Budget = d.Budget.withDefaults()
	d.loadKick = make(chan struct{}, 1)
	m.dur, m.meta = &d, dm
	recs := map[string][]wlog.Record{}
	var order []string
	st, err := d.Log.Replay(ctx, func(r wlog.Record) error {
		if _, ok := recs[r.Sandbox]; !ok {
			order = append(order, r.Sandbox)
		}
		recs[r.Sandbox] = append(recs[r.Sandbox], r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot replay the write log: %w", err)
	}
	if st.TornBytes > 0 {
		m.log.Warn("write log: cut a torn tail (never acknowledged)", "bytes", st.TornBytes, "records", st.TornRecords)
	}
	m.commits = committer.New(m.commitFunc, d.Commit)
	go m.holdLoads()
	for _, id := range order {
		if err := m.recoverBox(ctx, id, recs[id]); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) recoverBox(ctx context.Context, id string, rs []wlog.Record) error {
	last := rs[len(rs)-1].Seq
	b := m.boxes[id]
	if b == nil {
		// Deleted: its records are moot.
		return m.dur.Log.Trim(id, last)
	}
	h, err := m.meta.Head(ctx, id)
	if err != nil {
		return fmt.Errorf("recovery of %s: cannot read its head: %w", id, err)
	}
	b.ds.seq = 0
	if h.Owner != m.dur.Node {
		n, err := m.dur.Log.Abandon(id)
		m.abandoned.Add(int64(n))
		m.log.Warn("write log: abandoned the records of a sandbox another node owns", "sandbox", id, "owner", h.Owner, "epoch", h.Epoch, "records", n)
		b.ds.seq = last
		return err
	}
	if h.Generation > 0 {
		doc, err := m.loadState(ctx, h.Ref)
		if err != nil {
			return fmt.Errorf("recovery of %s: %w", id, err)
		}
		if doc.Seq >= last {
			// Everything logged is committed (a clean hibernate or
			// shutdown): the sandbox stays in standby.
			b.ds.seq = last
			m.commits.Committed(id, committer.Result{Seq: last, Generation: h.Generation})
			return m.dur.Log.Trim(id, last)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state = api.StateStandby
	// The volumes mount after the replay: the logged run made their mount
	// points, and a mkdir now would move the base the records were made
	// against (the first would not apply, and every later one be lost).
	if err := b.resumeWithLocked(ctx, false); err != nil {
		return fmt.Errorf("recovery of %s: %w", id, err)
	}
	if err := m.replayLocked(b, h, rs, last); err != nil {
		return err
	}
	if err := b.mountAllLocked(ctx, b.fs); err != nil {
		return fmt.Errorf("recovery of %s: %w", id, err)
	}
	return nil
}

// replayLocked applies b's logged records after its head's Seq (b.mu
// held, b just resumed from its head without volumes).
func (m *Manager) replayLocked(b *box, h Head, rs []wlog.Record, last uint64) error {
	id := b.id
	b.dmu.Lock()
	defer b.dmu.Unlock()
	from := b.ds.seq // the head's Seq
	applied, skipped := 0, 0
	var bytes int
	for i, r := range rs {
		if r.Seq <= from {
			continue
		}
		if r.Epoch != h.Epoch || r.BaseGen == unbased {
			// An older incarnation's, or a chain no generation starts
			// (never acknowledged before a commit covered it).
			skipped++
			continue
		}
		states, changes, err := decodePayload(r.Payload)
		if err == nil {
			err = b.fs.ApplyChanges(changes)
		}
		if err != nil {
			lost := len(rs) - i
			m.abandoned.Add(int64(lost))
			m.log.Error("write log: a record does not apply; the sandbox keeps what came before it", "sandbox", id, "seq", r.Seq, "records_lost", lost, "err", err)
			break
		}
		for name, st := range states {
			s := b.sessions[name]
			if s == nil {
				s = newSession(name)
				b.sessions[name] = s
			}
			s.in, s.restore, s.stateKey = nil, st, ""
			if b.ds.states == nil {
				b.ds.states = map[string][]byte{}
			}
			b.ds.states[name] = st
		}
		applied++
		bytes += len(r.Payload)
	}
	if skipped > 0 {
		m.abandoned.Add(int64(skipped))
		m.log.Warn("write log: dropped records of an older epoch or an uncommitted fork", "sandbox", id, "records", skipped)
	}
	b.ds.snap, b.ds.seq = b.fs.Fork(), last
	if from > 0 {
		if err := m.dur.Log.Trim(id, from); err != nil {
			return err
		}
	}
	m.recovered.Add(int64(applied))
	if applied > 0 {
		m.commits.Logged(id, last, bytes)
		m.log.Info("write log: recovered sandbox", "sandbox", id, "records", applied, "generation", h.Generation)
	} else {
		m.commits.Committed(id, committer.Result{Seq: last, Generation: h.Generation})
		if err := m.dur.Log.Trim(id, last); err != nil {
			return err
		}
	}
	return nil
}

// committedLocked reports whether b's head generation already holds all
// of b: no delta or shell-state change since. The caller holds b.mu.
func (b *box) committedLocked() bool {
	b.dmu.Lock()
	ds := b.ds
	b.dmu.Unlock()
	pos := b.m.commits.Position(b.id)
	if !ds.based || ds.snap == nil || ds.gen == 0 || pos.Generation != ds.gen || pos.Seq < ds.seq ||
		b.ref == "" || b.fs.Mark() != ds.snap.Mark() {
		return false
	}
	for name, s := range b.sessions {
		if s.in == nil {
			continue
		}
		st, err := s.in.MarshalState()
		if err != nil || string(st) != string(ds.states[name]) {
			return false
		}
	}
	return true
}
