package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/vfs"
)

// GC (DESIGN.md "Durability"): mark from every root, then sweep the
// objects of the sandbox layer (StateRef documents, session states, vfs
// packs; never images) that were unmarked in two consecutive runs at
// least Grace apart. Roots: every head, every retained generation, every
// snapshot, every sandbox record's StateRef, the keys of unexpired custody,
// and, for the sandboxes running in this process, the StateRefs they were
// loaded from and the generation their delta last persisted or loaded
// (vfs reuses its packs). The sweep runs with this process's uploads held
// off (gcState.uploads) and after marking again what moved meanwhile;
// nothing is swept while another node's custody is unexpired.

// Defaults of GCOptions.
const (
	// DefaultGCGrace is the least time between the first run that sees
	// an object unmarked and the run that deletes it: longer than an
	// upload's custody (custodyTTL), so an upload that outlived its
	// custody has started over before its objects can go.
	DefaultGCGrace = time.Hour
	// DefaultGCInterval between serve's periodic runs.
	DefaultGCInterval = 15 * time.Minute
)

// gcPrefixes are the key prefixes the collector may delete under.
var gcPrefixes = []string{"staterefs/", "sessions/", "vfs/pack/"}

// gcStateKey holds the candidates between runs (in the blob store, so
// any node's collector continues where the last one stopped).
const gcStateKey = "gc/state.json"

// GCOptions tune one run.
type GCOptions struct {
	DryRun bool          // report what would be deleted, delete nothing
	Grace  time.Duration // 0: DefaultGCGrace
}

// GCStats says what one run did.
type GCStats struct {
	Roots      int   `json:"roots"`      // StateRefs marked from
	Marked     int   `json:"marked"`     // objects reachable
	Objects    int   `json:"objects"`    // objects under the collected prefixes
	Candidates int   `json:"candidates"` // unmarked, kept for a later run
	Swept      int   `json:"swept"`      // deleted (or, dry, deletable)
	SweptBytes int64 `json:"swept_bytes"`
	// Held says why deletable objects were kept ("" when none were).
	Held string `json:"held,omitempty"`
}

// GCLocker is a metadata store that can hold the fleet-wide collector
// lock (meta/postgres: an advisory lock). Without it, one process is the
// only collector (bbolt's file lock already makes it so).
type GCLocker interface {
	// LockGC takes the lock if free and returns its release; held by
	// another collector: an error matching ErrGCBusy.
	LockGC(ctx context.Context) (unlock func(), err error)
}

// ErrGCBusy: another collector runs.
var ErrGCBusy = fmt.Errorf("another garbage collection is running: %w", errdefs.ErrConflict)

// gcState is the Manager's share of GC.
type gcState struct {
	run     sync.Mutex   // one run at a time in this process
	uploads sync.RWMutex // uploads hold it read; a sweep write
}

// gcBlobs is what the collector needs of the blob store.
type gcBlobs interface {
	List(ctx context.Context, prefix string, fn func(key string, size int64) error) error
	Delete(ctx context.Context, key string) error
}

type gcRecord struct {
	Version int              `json:"v"`
	Seen    map[string]int64 `json:"seen"` // key -> unix nanos of the first run that found it unmarked
}

// CollectGarbage runs one collection.
func (m *Manager) CollectGarbage(ctx context.Context, o GCOptions) (GCStats, error) {
	var st GCStats
	if m.dur == nil {
		return st, api.Errorf(errdefs.ErrFailedPrecondition, "garbage collection needs the durable write path (heads and generations)")
	}
	bl, ok := m.cfg.Blobs.(gcBlobs)
	if !ok {
		return st, api.Errorf(errdefs.ErrFailedPrecondition, "the blob store cannot list and delete objects (%T)", m.cfg.Blobs)
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGCGrace
	}
	m.gc.run.Lock()
	defer m.gc.run.Unlock()
	if l, ok := m.cfg.Meta.(GCLocker); ok {
		unlock, err := l.LockGC(ctx)
		if err != nil {
			return st, err
		}
		defer unlock()
	}
	if err := m.RetainAll(ctx); err != nil {
		return st, fmt.Errorf("gc: retention: %w", err)
	}
	mk := &marker{m: m, blobs: m.cfg.Blobs, marked: map[string]bool{}, refs: map[string]bool{}}
	if err := mk.roots(ctx); err != nil {
		return st, err
	}
	if err := mk.live(ctx); err != nil {
		return st, err
	}
	// Hold this process's uploads off, mark what moved since, then sweep.
	return collect(ctx, gcRun{blobs: bl, log: m.log, mk: mk, o: o, remark: func(ctx context.Context) (string, error) {
		m.gc.uploads.Lock()
		return m.gcHeld(ctx, mk)
	}, unlock: m.gc.uploads.Unlock})
}

// gcRun is one collection's sweep: list, mark again (remark, after which
// nothing this collector cannot see may publish), sweep what stayed
// unmarked for two runs a grace apart.
type gcRun struct {
	blobs gcBlobs
	log   interface {
		Info(string, ...any)
		Warn(string, ...any)
	}
	mk     *marker
	o      GCOptions
	remark func(ctx context.Context) (held string, err error)
	unlock func() // after the sweep (nil: nothing to let go)
}

func collect(ctx context.Context, r gcRun) (GCStats, error) {
	var st GCStats
	mk, o, bl := r.mk, r.o, r.blobs
	prev, err := gcLoad(ctx, mk.blobs, r.log)
	if err != nil {
		return st, err
	}
	now := time.Now()
	type obj struct {
		key  string
		size int64
	}
	var objs []obj
	for _, p := range gcPrefixes {
		if err := bl.List(ctx, p, func(k string, n int64) error { objs = append(objs, obj{k, n}); return nil }); err != nil {
			return st, fmt.Errorf("gc: cannot list %s: %w", p, err)
		}
	}
	st.Objects = len(objs)
	held, err := r.remark(ctx)
	if r.unlock != nil {
		defer r.unlock()
	}
	if err != nil {
		return st, err
	}
	st.Roots, st.Marked = len(mk.refs), len(mk.marked)
	next := gcRecord{Version: 1, Seen: map[string]int64{}}
	for _, ob := range objs {
		if mk.marked[ob.key] {
			continue
		}
		first, seen := prev.Seen[ob.key]
		if !seen || now.Sub(time.Unix(0, first)) < o.Grace || held != "" {
			if !seen {
				first = now.UnixNano()
			}
			next.Seen[ob.key] = first
			st.Candidates++
			continue
		}
		st.Swept++
		st.SweptBytes += ob.size
		if o.DryRun {
			next.Seen[ob.key] = first
			continue
		}
		if err := bl.Delete(ctx, ob.key); err != nil {
			next.Seen[ob.key] = first
			r.log.Warn("gc: cannot delete", "key", ob.key, "err", err)
		}
	}
	if held != "" && st.Candidates > 0 {
		st.Held = held
	}
	if err := gcSave(ctx, mk.blobs, next); err != nil {
		return st, err
	}
	r.log.Info("gc", "dry_run", o.DryRun, "roots", st.Roots, "marked", st.Marked, "objects", st.Objects,
		"candidates", st.Candidates, "swept", st.Swept, "swept_bytes", st.SweptBytes, "held", st.Held)
	return st, nil
}

// gcHeld marks the roots again, custody first (docs/format.md "Garbage
// collection ordering": an upload whose custody is gone by now has
// published), and says why the sweep is held ("" when it is not).
// Custody protects exactly its keys; only a record naming none yet (an
// upload that has written nothing, or a writer from before keys) holds
// the whole sweep.
func (m *Manager) gcHeld(ctx context.Context, mk *marker) (string, error) {
	cs, err := m.meta.ListCustody(ctx)
	if err != nil {
		return "", fmt.Errorf("gc: cannot list custody: %w", err)
	}
	if err := mk.roots(ctx); err != nil {
		return "", err
	}
	return keylessHeld(cs), nil
}

func keylessHeld(cs []CustodyRecord) string {
	var keyless []CustodyRecord
	for _, c := range cs {
		if len(c.Keys) == 0 {
			keyless = append(keyless, c)
		}
	}
	if len(keyless) == 0 {
		return ""
	}
	return fmt.Sprintf("%d upload(s) in flight naming no objects yet (custody of %s on node %s)", len(keyless), keyless[0].Upload, keyless[0].Node)
}

// marker marks from roots; a second call marks only what is new.
type marker struct {
	m      *Manager // nil for a collector without sandboxes (CollectGarbageFrom)
	blobs  Blobs
	marked map[string]bool
	refs   map[string]bool // StateRefs and vfs refs walked
}

func (mk *marker) roots(ctx context.Context) error {
	m := mk.m
	cs, err := m.meta.ListCustody(ctx)
	if err != nil {
		return fmt.Errorf("gc: cannot list custody: %w", err)
	}
	for _, c := range cs {
		for _, k := range c.Keys {
			if err := mk.custodyKey(ctx, c, k); err != nil {
				return err
			}
		}
	}
	heads, err := m.meta.ListHeads(ctx)
	if err != nil {
		return fmt.Errorf("gc: cannot list heads: %w", err)
	}
	for _, h := range heads {
		if err := mk.stateRef(ctx, h.Ref); err != nil {
			return err
		}
		gens, err := m.meta.Generations(ctx, h.Sandbox)
		if err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("gc: generations of %s: %w", h.Sandbox, err)
		}
		for _, g := range gens {
			if err := mk.stateRef(ctx, g.Ref); err != nil {
				return err
			}
		}
	}
	snaps, err := m.cfg.Meta.Snapshots(ctx)
	if err != nil {
		return fmt.Errorf("gc: cannot list snapshots: %w", err)
	}
	for _, s := range snaps {
		if err := mk.stateRef(ctx, s.StateRef); err != nil {
			return err
		}
	}
	if err := mk.volumeRoots(ctx); err != nil {
		return err
	}
	recs, err := m.cfg.Meta.Sandboxes(ctx)
	if err != nil {
		return fmt.Errorf("gc: cannot list sandboxes: %w", err)
	}
	for _, r := range recs {
		if err := mk.stateRef(ctx, r.StateRef); err != nil {
			return err
		}
	}
	return nil
}

// live marks what the sandboxes in memory here loaded and what their
// deltas may still reuse. It runs before the sweep takes gc.uploads (a
// hibernate holds b.mu while it uploads): what changes after is a head
// or a snapshot by the time an upload lets go of gc.uploads.
func (mk *marker) live(ctx context.Context) error {
	m := mk.m
	m.mu.RLock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.RUnlock()
	for _, b := range boxes {
		b.mu.Lock()
		refs := []string{b.ref, b.origin}
		var fss []*vfs.FS
		if b.fs != nil {
			fss = append(fss, b.fs)
		}
		b.mu.Unlock()
		b.dmu.Lock()
		if b.ds.snap != nil {
			fss = append(fss, b.ds.snap)
		}
		b.dmu.Unlock()
		for _, r := range refs {
			if err := mk.stateRef(ctx, r); err != nil {
				return err
			}
		}
		for _, f := range fss {
			if r, ok := f.LastGeneration(); ok {
				if err := mk.delta(ctx, r.String()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// custodyKey marks key k of custody c: the object itself and, for a
// StateRef (the generation an upload builds on, or one a node loaded) or
// a load custody's generation pack, everything it reaches. A key whose
// object is not written yet is only marked.
func (mk *marker) custodyKey(ctx context.Context, c CustodyRecord, k string) error {
	mk.marked[k] = true
	hexRef, isDoc := strings.CutPrefix(k, "staterefs/")
	genHex, isGen := strings.CutPrefix(k, "vfs/pack/")
	if !isDoc && !(isGen && isLoadCustody(c)) || isDoc && mk.refs["s:"+hexRef] || isGen && mk.refs["d:vfs2:"+genHex] {
		return nil // nothing to walk, or walked already
	}
	if ok, err := mk.blobs.Has(ctx, k); err != nil {
		return fmt.Errorf("gc: custody %s: %w", c.Upload, err)
	} else if !ok {
		return nil
	}
	if isDoc {
		return mk.stateRef(ctx, hexRef)
	}
	return mk.delta(ctx, "vfs2:"+genHex)
}

// stateRef marks StateRef ref's document, session states and delta. A
// missing document is an error (a root that names nothing means the
// metadata and the store disagree: sweep nothing).
func (mk *marker) stateRef(ctx context.Context, ref string) error {
	if ref == "" || mk.refs["s:"+ref] {
		return nil
	}
	doc, err := loadStateFrom(ctx, mk.blobs, ref)
	if err != nil {
		return fmt.Errorf("gc: root %s: %w", ref, err)
	}
	mk.refs["s:"+ref] = true
	mk.marked["staterefs/"+ref] = true
	for _, k := range doc.Sessions {
		mk.marked[k] = true
	}
	return mk.delta(ctx, doc.Delta)
}

func (mk *marker) delta(ctx context.Context, ref string) error {
	if ref == "" || mk.refs["d:"+ref] {
		return nil
	}
	r, err := vfs.ParseRef(ref)
	if err != nil {
		return fmt.Errorf("gc: delta %q: %w", ref, err)
	}
	src, ok := mk.blobs.(vfs.BlobStore)
	if !ok {
		return fmt.Errorf("gc: the blob store (%T) cannot be read by vfs", mk.blobs)
	}
	if err := vfs.Reachable(ctx, src, r, func(k string) error { mk.marked[k] = true; return nil }); err != nil {
		return fmt.Errorf("gc: delta %s: %w", ref, err)
	}
	mk.refs["d:"+ref] = true
	return nil
}

func gcLoad(ctx context.Context, blobs Blobs, log interface{ Warn(string, ...any) }) (gcRecord, error) {
	rec := gcRecord{Seen: map[string]int64{}}
	rc, err := blobs.Get(ctx, gcStateKey)
	if errors.Is(err, fs.ErrNotExist) || errdefs.IsNotFound(err) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("gc: cannot read %s: %w", gcStateKey, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err != nil {
		// A torn or foreign state: start over (objects are only delayed).
		log.Warn("gc: unreadable state; every unmarked object starts its grace again", "err", err)
		return gcRecord{Seen: map[string]int64{}}, nil
	}
	if rec.Seen == nil {
		rec.Seen = map[string]int64{}
	}
	return rec, nil
}

func gcSave(ctx context.Context, blobs Blobs, rec gcRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := blobs.Put(ctx, gcStateKey, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("gc: cannot write %s: %w", gcStateKey, err)
	}
	return nil
}

// RunGC runs CollectGarbage every interval until ctx ends (serve).
func (m *Manager) RunGC(ctx context.Context, interval time.Duration, o GCOptions) {
	if interval <= 0 {
		interval = DefaultGCInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := m.CollectGarbage(ctx, o); err != nil && ctx.Err() == nil {
			m.log.Warn("gc failed; the next run tries again", "err", err)
		}
	}
}

// loadStateFrom reads StateRef ref's document from blobs (Manager's
// loadState without a Manager).
func loadStateFrom(ctx context.Context, blobs Blobs, ref string) (stateDoc, error) {
	var doc stateDoc
	rc, err := blobs.Get(ctx, "staterefs/"+ref)
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

// GCRoots are one Manager's roots, for a collector in another process
// (the front of worker mode gathers every worker's): custody first, read
// before the rest (the ordering rule), then every StateRef its metadata
// names and the StateRefs and generations its running sandboxes hold.
type GCRoots struct {
	Custody   []CustodyRecord `json:"custody"`
	StateRefs []string        `json:"staterefs"`
	Deltas    []string        `json:"deltas"` // vfs refs (generations a delta reuses)
}

// GCRoots runs retention and returns this Manager's roots (no marking:
// the collector walks them over the shared blob store).
func (m *Manager) GCRoots(ctx context.Context) (GCRoots, error) {
	var r GCRoots
	if m.dur == nil {
		return r, api.Errorf(errdefs.ErrFailedPrecondition, "garbage collection needs the durable write path (heads and generations)")
	}
	if err := m.RetainAll(ctx); err != nil {
		return r, fmt.Errorf("gc: retention: %w", err)
	}
	cs, err := m.meta.ListCustody(ctx)
	if err != nil {
		return r, fmt.Errorf("gc: cannot list custody: %w", err)
	}
	r.Custody = cs
	heads, err := m.meta.ListHeads(ctx)
	if err != nil {
		return r, fmt.Errorf("gc: cannot list heads: %w", err)
	}
	for _, h := range heads {
		r.StateRefs = append(r.StateRefs, h.Ref)
		gens, err := m.meta.Generations(ctx, h.Sandbox)
		if err != nil && !errdefs.IsNotFound(err) {
			return r, fmt.Errorf("gc: generations of %s: %w", h.Sandbox, err)
		}
		for _, g := range gens {
			r.StateRefs = append(r.StateRefs, g.Ref)
		}
	}
	snaps, err := m.cfg.Meta.Snapshots(ctx)
	if err != nil {
		return r, fmt.Errorf("gc: cannot list snapshots: %w", err)
	}
	for _, s := range snaps {
		r.StateRefs = append(r.StateRefs, s.StateRef)
	}
	recs, err := m.cfg.Meta.Sandboxes(ctx)
	if err != nil {
		return r, fmt.Errorf("gc: cannot list sandboxes: %w", err)
	}
	for _, rec := range recs {
		r.StateRefs = append(r.StateRefs, rec.StateRef)
	}
	// Volumes are trees of their own: a collector elsewhere (offline
	// warren gc over DATA's node, the front of worker mode) must keep them.
	if vm, ok := m.cfg.Meta.(VolumeMeta); ok {
		vs, err := vm.ListVolumes(ctx)
		if err != nil {
			return r, fmt.Errorf("gc: cannot list volumes: %w", err)
		}
		for _, v := range vs {
			if v.Ref != "" {
				r.Deltas = append(r.Deltas, v.Ref)
			}
		}
	}
	m.mu.RLock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.RUnlock()
	for _, b := range boxes {
		b.mu.Lock()
		r.StateRefs = append(r.StateRefs, b.ref, b.origin)
		var fss []*vfs.FS
		if b.fs != nil {
			fss = append(fss, b.fs)
		}
		b.mu.Unlock()
		b.dmu.Lock()
		if b.ds.snap != nil {
			fss = append(fss, b.ds.snap)
		}
		b.dmu.Unlock()
		for _, f := range fss {
			if g, ok := f.LastGeneration(); ok {
				r.Deltas = append(r.Deltas, g.String())
			}
		}
	}
	return r, nil
}

// mark marks from roots gathered elsewhere.
func (mk *marker) mark(ctx context.Context, r GCRoots) error {
	for _, c := range r.Custody {
		for _, k := range c.Keys {
			if err := mk.custodyKey(ctx, c, k); err != nil {
				return err
			}
		}
	}
	for _, ref := range r.StateRefs {
		if err := mk.stateRef(ctx, ref); err != nil {
			return err
		}
	}
	for _, d := range r.Deltas {
		if err := mk.delta(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// CollectGarbageFrom runs one collection over blobs for a collector that
// holds no sandboxes of its own: roots gathers every metadata store's
// roots (it is called twice, before the listing and after; an error from
// either call, such as a store that cannot answer, means nothing is
// swept). The caller makes it the only collector of blobs.
func CollectGarbageFrom(ctx context.Context, blobs store.Store, roots func(ctx context.Context) ([]GCRoots, error), o GCOptions, log *slog.Logger) (GCStats, error) {
	var st GCStats
	bl, ok := blobs.(gcBlobs)
	if !ok {
		return st, api.Errorf(errdefs.ErrFailedPrecondition, "the blob store cannot list and delete objects (%T)", blobs)
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGCGrace
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mk := &marker{blobs: blobs, marked: map[string]bool{}, refs: map[string]bool{}}
	markAll := func(ctx context.Context) (string, error) {
		rs, err := roots(ctx)
		if err != nil {
			return "", err
		}
		var cs []CustodyRecord
		for _, r := range rs {
			if err := mk.mark(ctx, r); err != nil {
				return "", err
			}
			cs = append(cs, r.Custody...)
		}
		return keylessHeld(cs), nil
	}
	if _, err := markAll(ctx); err != nil {
		return st, err
	}
	return collect(ctx, gcRun{blobs: bl, log: log, mk: mk, o: o, remark: markAll})
}
