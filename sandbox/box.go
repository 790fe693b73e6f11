package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
)

// box is one sandbox. Fields above mu never change after creation.
type box struct {
	m           *Manager
	id, tenant  string
	cfg         api.CreateRequest
	imageDigest string
	parent      string
	snapshot    string
	origin      string // the StateRef it was made from (pins that generation: generations.go)
	created     time.Time
	// mem is the sandbox's memory budget, shared by all its sessions and
	// background processes (api.Limits.MaxMemoryBytes).
	mem *commands.Memory

	mu         sync.Mutex
	state      string // api.StateRunning, StateStandby or StateDeleted
	ref        string // last StateRef ("" = fresh from the image)
	fs         *vfs.FS
	sessions   map[string]*session
	active     int // execs, file calls, processes and forks in flight
	lastActive time.Time
	runCtx     context.Context // cancelled on delete and shutdown
	runCancel  context.CancelFunc
	closed     bool // the manager is shutting down: no more resumes or execs
	procs      map[int]*process
	nextPID    int
	ws         *native.Workspace // the native workspace (nil until an ELF exec)
	wsFS       *vfs.FS           // the filesystem ws syncs with
	vols       []*boxVolume      // volumes mounted in fs (volumes.go)
	drives     []*boxDrive       // drives mounted in fs (drives.go)

	net *egress.Sandbox // its egress (nil: the node has none); network.go

	nmu           sync.Mutex   // serialises creating the native workspace
	nativeRunning atomic.Int32 // native commands in flight

	// The write path (durable.go). Lock order: cmu, then mu, then dmu.
	cmu sync.Mutex // one commit or hibernate at a time
	dmu sync.Mutex
	ds  durableState
	bs  budgetState // durable_budget.go
}

// session is one named shell session. lock is a one-slot semaphore: execs
// queue on it (with their context) and run one at a time.
type session struct {
	name     string
	lock     chan struct{}
	in       Interp // nil until first use after create or resume
	stateKey string // blob key of the serialized state to restore from
	restore  []byte // or the state itself (replayed from the write log)
}

func newSession(name string) *session {
	return &session{name: name, lock: make(chan struct{}, 1)}
}

func (s *session) acquire(ctx context.Context) error {
	select {
	case s.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for session %q: %w", s.name, context.Cause(ctx))
	}
}

func (s *session) unlock() { <-s.lock }

func (m *Manager) newBox(r Record) *box {
	b := &box{
		m: m, id: r.ID, tenant: r.Tenant, cfg: r.Config, imageDigest: r.ImageDigest,
		parent: r.Parent, snapshot: r.Snapshot, origin: r.StateRef, created: r.CreatedAt,
		state: r.State, ref: r.StateRef, lastActive: m.now(), procs: map[int]*process{},
		mem: commands.NewMemory(r.Config.Limits.MaxMemoryBytes),
	}
	b.runCtx, b.runCancel = context.WithCancel(context.Background())
	m.newNet(b)
	return b
}

func (b *box) record() Record {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.recordLocked()
}

func (b *box) recordLocked() Record {
	cfg := b.cfg
	cfg.Network = b.networkPolicy() // changed at run time by PUT .../network
	return Record{
		ID: b.id, Tenant: b.tenant, Config: cfg, ImageDigest: b.imageDigest,
		StateRef: b.ref, State: b.state, Parent: b.parent, Snapshot: b.snapshot,
		CreatedAt: b.created,
	}
}

func (b *box) info() api.Sandbox {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := api.Sandbox{
		ID: b.id, State: b.state, Image: b.imageDigest, Labels: b.cfg.Labels, Env: b.cfg.Env,
		Cwd: b.cfg.Cwd, User: b.cfg.User, Hostname: b.cfg.Hostname, Limits: b.cfg.Limits,
		StandbyAfter: b.cfg.StandbyAfter, TTL: b.cfg.TTL, CreatedAt: b.created,
		LastActive: b.lastActive, Parent: b.parent, Snapshot: b.snapshot,
		Durability: b.cfg.Durability, Security: b.cfg.Security, Network: b.networkPolicy(), Commands: b.cfg.Commands,
		Volumes: b.cfg.Volumes, Drives: b.cfg.Drives,
	}
	if s.Security == "" { // a record from before the field
		s.Security = api.SecurityDefault
	}
	if s.Commands == "" {
		s.Commands = defaultCommands
	}
	s.Node, s.Epoch = b.owned() // fleet.go
	if b.state == api.StateStandby && b.ref != "" {
		s.StateRef = "sha256:" + b.ref
	}
	for name := range b.sessions {
		s.Sessions = append(s.Sessions, name)
	}
	sort.Strings(s.Sessions)
	if b.fs != nil {
		u := b.fs.Usage()
		s.DiskBytes, s.DiskInodes = u.Bytes, u.Inodes
	}
	return s
}

func (b *box) stateAndUsage() (string, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fs != nil {
		return b.state, b.fs.Usage().Bytes
	}
	return b.state, 0
}

func notFound(id string) error { return api.Errorf(errdefs.ErrNotFound, "sandbox %q not found", id) }

// use makes b running (resuming it if in standby) and counts one operation
// in flight until release is called.
func (b *box) use(ctx context.Context) (release func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.resumeLocked(ctx); err != nil {
		return nil, err
	}
	b.dmu.Lock()
	fenced := b.ds.fenced
	b.dmu.Unlock()
	if fenced != nil {
		return nil, fenced
	}
	b.active++
	b.lastActive = b.m.now()
	return b.release, nil
}

func (b *box) release() {
	b.volumesAfterCall() // the call's volume writes are committed when it answers
	b.mu.Lock()
	b.active--
	b.lastActive = b.m.now()
	b.mu.Unlock()
}

// resume makes b running; a running b is left as is (idempotent).
func (b *box) resume(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	before := b.state
	err := b.resumeLocked(ctx)
	b.lastActive = b.m.now()
	if err == nil {
		b.m.resumeEvent(b, before)
	}
	return err
}

func (b *box) vfsOptions(ctx context.Context) (vfs.Options, error) {
	img, err := b.m.cfg.Images.Lookup(ctx, b.tenant, b.imageDigest)
	if err != nil {
		return vfs.Options{}, fmt.Errorf("cannot open image %s: %w", b.imageDigest, err)
	}
	return vfs.Options{Base: img.FS, MaxBytes: b.cfg.Limits.DiskBytes, MaxInodes: b.cfg.Limits.DiskInodes}, nil
}

func (b *box) resumeLocked(ctx context.Context) error { return b.resumeWithLocked(ctx, true) }

// mountAllLocked mounts b's volumes, then its drives, into fsys.
func (b *box) mountAllLocked(ctx context.Context, fsys *vfs.FS) error {
	if err := b.mountVolumesLocked(ctx, fsys); err != nil {
		return err
	}
	if err := b.mountDrivesLocked(ctx, fsys); err != nil {
		b.vols = nil // not committed: nothing was written yet
		return err
	}
	return nil
}

// resumeWithLocked is resumeLocked; volumes false leaves b's volumes
// unmounted (recovery mounts them after replaying the write log).
func (b *box) resumeWithLocked(ctx context.Context, volumes bool) error {
	switch {
	case b.state == api.StateDeleted:
		return notFound(b.id)
	case b.closed:
		return api.Errorf(errdefs.ErrUnavailable, "warren is shutting down")
	case b.state == api.StateRunning:
		return nil
	}
	opts, err := b.vfsOptions(ctx)
	if err != nil {
		return err
	}
	sessions := map[string]*session{}
	var fsys *vfs.FS
	ref, seq, fromHead := b.ref, uint64(0), false
	if b.m.dur != nil {
		h, err := b.m.claimLocked(ctx, b)
		if err != nil {
			return err
		}
		if h.Generation > 0 {
			ref, fromHead = h.Ref, true
		}
	}
	if ref == "" {
		fsys = vfs.New(opts)
	} else {
		doc, err := b.m.loadState(ctx, ref)
		if err != nil {
			return err
		}
		fsys, err = b.m.cfg.Deltas.Load(ctx, opts, doc.Delta)
		if err != nil {
			return fmt.Errorf("cannot load the delta of %s: %w", b.id, err)
		}
		for name, key := range doc.Sessions {
			s := newSession(name)
			s.stateKey = key
			sessions[name] = s
		}
		if fromHead {
			// A snapshot's or a parent's Seq counts another
			// sandbox's records.
			seq = doc.Seq
		}
	}
	if b.m.dur != nil {
		b.dmu.Lock()
		b.ds.startChain(fsys, seq, true)
		b.dmu.Unlock()
		b.m.armBudget(b, fsys, fsys.Usage().Bytes)
	}
	if volumes {
		if err := b.mountAllLocked(ctx, fsys); err != nil {
			return err
		}
	}
	b.ref = ref
	b.fs, b.sessions, b.state = fsys, sessions, api.StateRunning
	b.m.resumes.Add(1)
	return nil
}

// stateDoc is the document a StateRef names (stored under staterefs/HEX).
type stateDoc struct {
	Version  int               `json:"v"`
	Image    string            `json:"image"`    // base image digest
	Delta    string            `json:"delta"`    // the vfs's persisted root
	Sessions map[string]string `json:"sessions"` // name -> blob key of its shell state
	// Seq is the last write-log sequence number the state holds, and
	// Epoch the owner epoch that wrote it (durable commits only): a
	// restart replays that epoch's records after Seq on top.
	Seq   uint64 `json:"seq,omitempty"`
	Epoch uint64 `json:"epoch,omitempty"`
}

const stateDocVersion = 1

func (m *Manager) loadState(ctx context.Context, ref string) (stateDoc, error) {
	var doc stateDoc
	rc, err := m.cfg.Blobs.Get(ctx, "staterefs/"+ref)
	if err != nil {
		return doc, fmt.Errorf("cannot read StateRef %s: %w", ref, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 16<<20))
	if err != nil {
		return doc, fmt.Errorf("cannot read StateRef %s: %w", ref, err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("corrupt StateRef %s: %w", ref, err)
	}
	if doc.Version != stateDocVersion {
		return doc, fmt.Errorf("StateRef %s has version %d; this warren reads %d", ref, doc.Version, stateDocVersion)
	}
	return doc, nil
}

// putBlob stores data content-addressed under prefix and returns its hex.
func (m *Manager) putBlob(ctx context.Context, prefix string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	if err := vfs.BeforePut(ctx, prefix+h); err != nil { // custody first (durable_custody.go)
		return "", err
	}
	// Content-addressed: a blob already there is this blob. A stat costs
	// a tenth of a create on ext4, and idle sessions rarely change.
	if ok, err := m.cfg.Blobs.Has(ctx, prefix+h); err == nil && ok {
		return h, nil
	}
	if err := m.cfg.Blobs.Put(ctx, prefix+h, bytes.NewReader(data)); err != nil {
		return "", fmt.Errorf("cannot store %s%s: %w", prefix, h, err)
	}
	return h, nil
}

// persist writes fsys and the sessions' states and returns the StateRef.
// The sessions must be idle (locked or unreachable by execs).
func (m *Manager) persist(ctx context.Context, image string, fsys *vfs.FS, sessions map[string]*session) (string, error) {
	doc := stateDoc{Version: stateDocVersion, Image: image, Sessions: map[string]string{}}
	for name, s := range sessions {
		if s.in == nil {
			if s.stateKey != "" {
				doc.Sessions[name] = s.stateKey
			}
			continue
		}
		st, err := s.in.MarshalState()
		if err != nil {
			return "", fmt.Errorf("cannot serialize session %q: %w", name, err)
		}
		h, err := m.putBlob(ctx, "sessions/", st)
		if err != nil {
			return "", err
		}
		doc.Sessions[name] = "sessions/" + h
	}
	return m.putDoc(ctx, doc, fsys)
}

// putDoc persists fsys's delta into doc and stores doc as a StateRef.
func (m *Manager) putDoc(ctx context.Context, doc stateDoc, fsys *vfs.FS) (string, error) {
	delta, err := m.cfg.Deltas.Persist(ctx, fsys)
	if err != nil {
		return "", fmt.Errorf("cannot persist the filesystem: %w", err)
	}
	doc.Delta = delta
	data, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	return m.putBlob(ctx, "staterefs/", data)
}

// hibernate persists b and drops its interpreters and filesystem. With
// idleOnly (the standby timer) it does nothing unless b is still idle.
func (b *box) hibernate(ctx context.Context, idleOnly bool) error {
	// Background jobs cannot be kept in a StateRef: they end first, with
	// the reason recorded in their processes (jobs.go). The standby timer
	// ends them only when the sandbox allows it (idleLocked).
	reason := "hibernate"
	b.mu.Lock()
	idle, active := b.idleLocked(b.m.now()), b.active
	busy := b.state == api.StateRunning && active > 0
	b.mu.Unlock()
	switch {
	case idleOnly && !idle:
		return nil
	case idleOnly:
		reason = "standby"
	case busy:
		// An exec in flight: refused (as below) without ending any job.
		return api.Errorf(errdefs.ErrFailedPrecondition, "sandbox %s is busy (%d operations in flight)", b.id, active)
	}
	if err := b.stopJobs(ctx, reason); err != nil {
		return err
	}
	var ws *native.Workspace
	defer func() {
		if ws != nil {
			ws.Close()
		}
	}()
	b.cmu.Lock()
	defer b.cmu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case api.StateDeleted:
		return notFound(b.id)
	case api.StateStandby:
		return nil
	}
	if b.active > 0 {
		if idleOnly {
			return nil
		}
		return api.Errorf(errdefs.ErrFailedPrecondition, "sandbox %s is busy (%d operations in flight)", b.id, b.active)
	}
	if idleOnly && !b.idleLocked(b.m.now()) {
		return nil
	}
	if n := b.liveJobsLocked(); n > 0 {
		// Started after stopJobs looked (an exec that just ended).
		if idleOnly {
			return nil
		}
		return api.Errorf(errdefs.ErrFailedPrecondition, "sandbox %s is busy (%d background jobs just started); try again", b.id, n)
	}
	if b.ws != nil {
		// Its last harvest ran at the end of the last native exec, and
		// none runs now (active == 0): the vfs holds everything.
		ws = b.takeWorkspaceLocked()
	}
	if err := b.dropVolumesLocked(ctx); err != nil {
		return err
	}
	b.dropDrivesLocked()
	var ref string
	var err error
	if b.m.dur != nil {
		ref, err = b.commitForStandbyLocked(ctx)
	} else {
		ref, err = b.m.persist(ctx, b.imageDigest, b.fs, b.sessions)
	}
	if err != nil {
		return err
	}
	b.ref, b.state, b.fs, b.sessions = ref, api.StateStandby, nil, nil
	b.disarmBudget()
	b.m.hibernates.Add(1)
	if err := b.m.cfg.Meta.PutSandbox(ctx, b.recordLocked()); err != nil {
		return fmt.Errorf("cannot record hibernated sandbox: %w", err)
	}
	return nil
}

func (b *box) idleLocked(now time.Time) bool {
	sa := b.cfg.StandbyAfter.Std()
	return b.state == api.StateRunning && b.active == 0 && sa > 0 && now.Sub(b.lastActive) >= sa &&
		(b.cfg.StandbyWithJobs || b.liveJobsLocked() == 0)
}

type dueKind int

const (
	dueNothing dueKind = iota
	dueStandby
	dueExpire
)

func (b *box) due(now time.Time) dueKind {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == api.StateDeleted {
		return dueNothing
	}
	if ttl := b.cfg.TTL.Std(); ttl > 0 && !now.Before(b.created.Add(ttl)) {
		return dueExpire
	}
	if b.idleLocked(now) {
		return dueStandby
	}
	return dueNothing
}

// kill makes b deleted: what runs is cancelled, memory is dropped.
func (b *box) kill() error {
	b.mu.Lock()
	if b.state == api.StateDeleted {
		b.mu.Unlock()
		return notFound(b.id)
	}
	b.state = api.StateDeleted
	b.runCancel()
	for _, p := range b.procs {
		if p.job != nil {
			p.job.Stop("deleted")
		}
	}
	if err := b.dropVolumesLocked(context.Background()); err != nil {
		b.m.log.Warn("delete: a volume's last writes were not committed", "sandbox", b.id, "err", err)
	}
	b.dropDrivesLocked()
	b.fs, b.sessions = nil, nil
	b.disarmBudget()
	ws := b.takeWorkspaceLocked()
	b.mu.Unlock()
	if ws != nil {
		// Kills its processes and removes its mounts and cgroups now, so a
		// delete leaves nothing on the host.
		if err := ws.Close(); err != nil {
			return fmt.Errorf("cannot tear down the native workspace of %s: %w", b.id, err)
		}
	}
	return nil
}

// shutdown cancels what runs in b, waits for it to stop, and hibernates.
func (b *box) shutdown(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.runCancel()
	for _, p := range b.procs {
		if p.job != nil {
			p.job.Stop("shutdown")
		}
	}
	ws := b.takeWorkspaceLocked()
	b.mu.Unlock()
	if ws != nil {
		// Its processes die with it; their execs end and release.
		ws.Close()
	}
	for {
		b.mu.Lock()
		busy := b.active > 0 && b.state == api.StateRunning
		b.mu.Unlock()
		if !busy {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("operations still in flight: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
	err := b.hibernate(ctx, false)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if errors.Is(err, ErrFenced) {
		// Another node owns it now: nothing of it is this node's to keep.
		b.m.log.Warn("shutdown: dropping a sandbox another node took over", "sandbox", b.id, "err", err)
		return nil
	}
	return err
}

// liveCopy locks every session, forks the filesystem and the sessions n
// times, and unlocks. b must be in use (running).
func (b *box) liveCopy(ctx context.Context, n int) ([]*vfs.FS, []map[string]*session, error) {
	b.mu.Lock()
	fsys := b.fs
	names := make([]string, 0, len(b.sessions))
	for name := range b.sessions {
		names = append(names, name)
	}
	sort.Strings(names) // one lock order, so two forks never deadlock
	ss := make([]*session, len(names))
	for i, name := range names {
		ss[i] = b.sessions[name]
	}
	b.mu.Unlock()
	if fsys == nil {
		return nil, nil, notFound(b.id)
	}
	for i, s := range ss {
		if err := s.acquire(ctx); err != nil {
			for _, s := range ss[:i] {
				s.unlock()
			}
			return nil, nil, err
		}
	}
	defer func() {
		for _, s := range ss {
			s.unlock()
		}
	}()
	fss := make([]*vfs.FS, n)
	sessions := make([]map[string]*session, n)
	for i := range n {
		fss[i] = fsys.Fork()
		sessions[i] = map[string]*session{}
		for _, s := range ss {
			c := newSession(s.name)
			c.stateKey = s.stateKey
			if s.in != nil {
				c.in = s.in.Fork(fss[i])
			}
			sessions[i][s.name] = c
		}
	}
	return fss, sessions, nil
}

// fork makes count children of b.
func (b *box) fork(ctx context.Context, count int) ([]*box, error) {
	now := b.m.now()
	child := func() *box {
		c := b.m.newBox(Record{
			ID: newID("sb-"), Tenant: b.tenant, Config: withoutMounts(b.cfg), ImageDigest: b.imageDigest,
			Parent: b.id, Snapshot: b.snapshot, CreatedAt: now,
		})
		c.procs = map[int]*process{}
		if b.net != nil && c.net != nil { // children keep the parent's policy and secrets
			c.net.SetPolicy(b.net.Policy())
			c.net.SetSecrets(b.net.Secrets())
		}
		return c
	}
	// A standby parent forks without resuming: children share its StateRef.
	b.mu.Lock()
	if b.state == api.StateDeleted {
		b.mu.Unlock()
		return nil, notFound(b.id)
	}
	if b.state == api.StateStandby {
		ref := b.ref
		b.mu.Unlock()
		out := make([]*box, count)
		for i := range out {
			out[i] = child()
			out[i].state, out[i].ref = api.StateStandby, ref
		}
		return out, nil
	}
	b.mu.Unlock()

	release, err := b.use(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	fss, sessions, err := b.liveCopy(ctx, count)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	ref := b.ref
	b.mu.Unlock()
	if b.m.dur != nil {
		// b.ref moves only after a commit's waiters woke: a write acked
		// at committed just before this fork may be past it. The
		// children's ref is what a crash leaves them: the published head.
		h, err := b.m.meta.(DurableMeta).Head(ctx, b.id)
		if err != nil {
			return nil, fmt.Errorf("cannot read the head of %s to fork it: %w", b.id, err)
		}
		if h.Ref != "" {
			ref = h.Ref
		}
	}
	out := make([]*box, count)
	for i := range out {
		c := child()
		c.state, c.ref, c.fs, c.sessions = api.StateRunning, ref, fss[i], sessions[i]
		out[i] = c
	}
	return out, nil
}

// snapshotRef returns a StateRef of b's current state without stopping it.
func (b *box) snapshotRef(ctx context.Context) (string, error) {
	b.mu.Lock()
	if b.state == api.StateDeleted {
		b.mu.Unlock()
		return "", notFound(b.id)
	}
	if b.state == api.StateStandby && b.ref != "" {
		ref := b.ref
		b.mu.Unlock()
		return ref, nil
	}
	b.mu.Unlock()
	release, err := b.use(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	fss, sessions, err := b.liveCopy(ctx, 1)
	if err != nil {
		return "", err
	}
	return b.m.persist(ctx, b.imageDigest, fss[0], sessions[0])
}

// sessionConfig is what b's sessions are built from.
func (b *box) sessionConfig(fsys *vfs.FS) SessionConfig {
	env := make([]string, 0, len(b.cfg.Env))
	for k, v := range b.cfg.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return SessionConfig{
		FS: fsys, Env: env, Dir: b.cfg.Cwd, Hostname: b.cfg.Hostname, User: b.cfg.User,
		Limits: b.cfg.Limits, Memory: b.mem, Native: b.m.runNative, Net: b.m.sessionNet(), Commands: b.cfg.Commands,
		OnJob: b.m.jobStarted,
	}
}

// interp returns s's interpreter, building or restoring it on first use.
// The caller holds s's lock.
func (b *box) interp(ctx context.Context, s *session, fsys *vfs.FS) (Interp, error) {
	if s.in != nil {
		return s.in, nil
	}
	cfg := b.sessionConfig(fsys)
	if s.restore != nil {
		in, err := b.m.cfg.Interpreters.Restore(cfg, s.restore)
		if err != nil {
			return nil, fmt.Errorf("cannot restore session %q: %w", s.name, err)
		}
		s.in, s.restore = in, nil
		return in, nil
	}
	if s.stateKey == "" {
		in, err := b.m.cfg.Interpreters.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("cannot start session %q: %w", s.name, err)
		}
		s.in = in
		return in, nil
	}
	rc, err := b.m.cfg.Blobs.Get(ctx, s.stateKey)
	if err != nil {
		return nil, fmt.Errorf("cannot read session %q state: %w", s.name, err)
	}
	st, err := io.ReadAll(io.LimitReader(rc, 256<<20))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("cannot read session %q state: %w", s.name, err)
	}
	in, err := b.m.cfg.Interpreters.Restore(cfg, st)
	if err != nil {
		return nil, fmt.Errorf("cannot restore session %q: %w", s.name, err)
	}
	s.in = in
	if b.m.dur != nil {
		// The committed state is the baseline: an exec that leaves it
		// as is logs nothing.
		b.dmu.Lock()
		if _, ok := b.ds.states[s.name]; !ok {
			if b.ds.states == nil {
				b.ds.states = map[string][]byte{}
			}
			b.ds.states[s.name] = st
		}
		b.dmu.Unlock()
	}
	return in, nil
}

// session returns the named session of a running b (created on first use).
func (b *box) session(name string) (*session, *vfs.FS, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != api.StateRunning {
		return nil, nil, notFound(b.id)
	}
	s := b.sessions[name]
	if s == nil {
		if len(b.sessions) >= maxSessions {
			return nil, nil, api.Errorf(errdefs.ErrResourceExhausted, "sandbox %s has %d sessions; the limit is %d", b.id, len(b.sessions), maxSessions)
		}
		s = newSession(name)
		b.sessions[name] = s
	}
	return s, b.fs, nil
}

const maxSessions = 64

var _ = strings.TrimSpace
