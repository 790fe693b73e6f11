package workerpool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/store/dir"
)

// gcRootsPath serves a worker's sandbox.GCRoots (the secret as for stats).
const gcRootsPath = "/internal/gc/roots"

// CollectGarbage runs one collection over the shared blob store with the
// roots of every worker (its metadata, custody and running sandboxes,
// asked over its socket): the front is the node's only collector (it
// holds DATA/meta.db, so `warren gc` cannot open the directory). A worker
// that is down or restarting has roots nobody can read, so the run stops
// before it sweeps: when any worker is not up, when one does not answer,
// and when one restarted between the two gatherings.
func (p *Pool) CollectGarbage(ctx context.Context, o sandbox.GCOptions) (sandbox.GCStats, error) {
	p.gcMu.Lock()
	defer p.gcMu.Unlock()
	var sopts []dir.Option
	if !p.opts.Fsync {
		sopts = append(sopts, dir.WithoutSync())
	}
	blobs, err := dir.Open(filepath.Join(p.opts.Data, "blobs"), sopts...)
	if err != nil {
		return sandbox.GCStats{}, err
	}
	defer blobs.Close()
	var first []*generation
	roots := func(ctx context.Context) ([]sandbox.GCRoots, error) {
		gens := make([]*generation, len(p.workers))
		for i, w := range p.workers {
			w.mu.Lock()
			gens[i] = w.gen
			w.mu.Unlock()
			if gens[i] == nil {
				return nil, fmt.Errorf("gc: worker %d is down (%s): its roots are unknown, nothing is swept", w.index, w.unavailable())
			}
			if first != nil && first[i] != gens[i] {
				return nil, fmt.Errorf("gc: worker %d restarted during the run: nothing is swept", w.index)
			}
		}
		out := make([]sandbox.GCRoots, len(p.workers))
		for i, w := range p.workers {
			r, err := w.gcRoots(ctx, gens[i])
			if err != nil {
				return nil, fmt.Errorf("gc: worker %d: %w; nothing is swept", w.index, err)
			}
			out[i] = r
		}
		// Still the same processes after they answered: a worker that
		// died mid-answer gave roots from before its death at best.
		for i, w := range p.workers {
			w.mu.Lock()
			g := w.gen
			w.mu.Unlock()
			if g != gens[i] {
				return nil, fmt.Errorf("gc: worker %d restarted during the run: nothing is swept", w.index)
			}
		}
		if first == nil {
			first = gens
		}
		return out, nil
	}
	return sandbox.CollectGarbageFrom(ctx, blobs, roots, o, p.log)
}

// RunGC runs CollectGarbage every interval until ctx ends (serve).
func (p *Pool) RunGC(ctx context.Context, interval time.Duration, o sandbox.GCOptions) {
	if interval <= 0 {
		interval = sandbox.DefaultGCInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.closed:
			return
		case <-t.C:
		}
		if _, err := p.CollectGarbage(ctx, o); err != nil && ctx.Err() == nil && !p.closing.Load() {
			p.log.Warn("gc failed; the next run tries again", "err", err)
		}
	}
}

// gcRoots asks generation g of w for its roots.
func (w *worker) gcRoots(ctx context.Context, g *generation) (sandbox.GCRoots, error) {
	var r sandbox.GCRoots
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://worker"+gcRootsPath, nil)
	if err != nil {
		return r, err
	}
	req.Header.Set("Authorization", "Bearer "+g.secret)
	resp, err := g.hc.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return r, fmt.Errorf("roots: %s: %s", resp.Status, msg)
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return r, fmt.Errorf("roots: %w", err)
	}
	return r, nil
}
