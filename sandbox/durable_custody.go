package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/vfs"
)

// Custody with keys (docs/format.md "Publish ordering", "Garbage
// collection ordering"): a commit names every object in its custody record
// before it writes it (vfs.WithBeforePut, called by the persist for each
// pack and by putBlob for session states and StateRefs), plus the StateRef
// it builds on; a collector anywhere protects exactly those keys, and
// sweeps the rest of the store meanwhile.
//
// A node also holds one "load" custody naming what its running sandboxes
// loaded lazily (their StateRefs and the generation each delta last
// persisted or loaded), renewed every loadRefresh under a new upload id
// (the old one released after the new one is recorded), so a collector on
// another node never deletes an object a sandbox here may still fetch
// (an evicted chunk, a node not touched yet).

// loadRefresh is how often the load custody is rewritten; far below the
// GC grace (1 h) a sweep needs between two runs.
const loadRefresh = time.Minute

// loadPrefix starts the upload id of a load custody.
const loadPrefix = "load/"

// custodyContext returns ctx under which every object written is first
// added to upload's custody record.
func (m *Manager) custodyContext(ctx context.Context, upload string) context.Context {
	heads := m.meta.(DurableMeta)
	return vfs.WithBeforePut(ctx, func(ctx context.Context, key string) error {
		if err := heads.AddCustodyKeys(ctx, upload, []string{key}); err != nil {
			return fmt.Errorf("cannot take custody of %s: %w", key, err)
		}
		return nil
	})
}

// custodyBase is the initial key list of a commit's custody: the StateRef
// the commit builds on (its delta reuses that generation's packs).
func custodyBase(parent string) []string {
	if parent == "" {
		return nil
	}
	return []string{"staterefs/" + parent}
}

// loadKeys lists what the running sandboxes here loaded or last persisted.
func (m *Manager) loadKeys() []string {
	m.mu.RLock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.RUnlock()
	set := map[string]bool{}
	for _, b := range boxes {
		var fss []*vfs.FS
		b.mu.Lock()
		if b.fs != nil {
			for _, r := range []string{b.ref, b.origin} {
				if r != "" {
					set["staterefs/"+r] = true
				}
			}
			fss = append(fss, b.fs)
		}
		b.mu.Unlock()
		b.dmu.Lock()
		if b.ds.snap != nil {
			fss = append(fss, b.ds.snap)
		}
		b.dmu.Unlock()
		for _, f := range fss {
			if r, ok := f.LastGeneration(); ok {
				set[r.Key()] = true
			}
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var loadSeq atomic.Uint64

// refreshLoadCustody records keys under a new upload id and then releases
// the previous one; it returns the id now held ("" for no keys). On a
// failure it keeps prev (still valid until its expiry) and reports false.
func (m *Manager) refreshLoadCustody(ctx context.Context, prev string, keys []string) (string, bool) {
	heads := m.meta.(DurableMeta)
	id := ""
	if len(keys) > 0 {
		id = fmt.Sprintf("%s%s/%d-%d", loadPrefix, m.dur.Node, time.Now().UnixNano(), loadSeq.Add(1))
		if _, err := heads.AddCustody(ctx, CustodyRecord{Upload: id, Node: m.dur.Node, Sandbox: "-", Keys: keys}, custodyTTL); err != nil {
			m.log.Warn("cannot record the load custody", "err", err)
			return prev, false
		}
	}
	if prev != "" {
		if err := heads.ReleaseCustody(ctx, prev); err != nil {
			m.log.Warn("cannot release the old load custody", "upload", prev, "err", err)
		}
	}
	return id, true
}

// kickLoads tells holdLoads that a sandbox ran (it may have loaded a
// StateRef the load custody does not name yet).
func (m *Manager) kickLoads() {
	if m.dur == nil {
		return
	}
	select {
	case m.dur.loadKick <- struct{}{}:
	default:
	}
}

// loadKickEvery bounds how often kicks rewrite the load custody.
const loadKickEvery = time.Second

// holdLoads keeps the load custody until the manager stops: rewritten
// every loadRefresh, and within loadKickEvery of an exec when its keys
// changed.
func (m *Manager) holdLoads() {
	held, heldKeys := "", "\x00" // nothing recorded yet
	refresh := func(force bool) {
		keys := m.loadKeys()
		joined := strings.Join(keys, "\n")
		if !force && joined == heldKeys {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if id, ok := m.refreshLoadCustody(ctx, held, keys); ok {
			held, heldKeys = id, joined
		}
	}
	t := time.NewTicker(loadRefresh)
	defer t.Stop()
	for {
		refresh(true)
	wait:
		select {
		case <-m.stop:
			if held != "" {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				m.meta.(DurableMeta).ReleaseCustody(ctx, held)
				cancel()
			}
			return
		case <-t.C:
		case <-m.dur.loadKick:
			select { // coalesce the kicks of a busy node
			case <-m.stop:
			case <-time.After(loadKickEvery):
			}
			refresh(false)
			goto wait
		}
	}
}

// isLoadCustody reports whether c is a node's load custody.
func isLoadCustody(c CustodyRecord) bool { return strings.HasPrefix(c.Upload, loadPrefix) }
