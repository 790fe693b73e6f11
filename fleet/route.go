package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// Route says where a request goes: served here (Local) or forwarded to
// Node at Address, which should own the sandbox at Epoch.
type Route struct {
	Local   bool
	Node    string
	Address string
	Epoch   uint64
	// TookOver: this node just claimed the sandbox (it was unowned or
	// its owner's lease had expired).
	TookOver bool
}

// Query is what a request tells Route.
type Query struct {
	// Fresh skips the owner cache (a retry after a 421).
	Fresh bool
	// Forwarded: a peer sent the request expecting this node to own the
	// sandbox at Epoch; it is never forwarded again (an owner elsewhere
	// is ErrMisdirected).
	Forwarded bool
	Epoch     uint64
	// Authorize, if set, must pass before this node claims anything for
	// the request (an unauthenticated caller moves no sandbox).
	Authorize func() error
}

// Route decides where a request for sandbox id goes.
func (n *Node) Route(ctx context.Context, id string, q Query) (Route, error) {
	if err := n.AckAllowed(); err != nil {
		return Route{}, err
	}
	forwarded := q.Forwarded
	if forwarded && n.cfg.Manager.Holds(id, q.Epoch) {
		// Our claim at that epoch, and our lease held: no one else can
		// have taken it.
		return Route{Local: true, Node: n.cfg.ID, Epoch: q.Epoch}, nil
	}
	// A draining node's own claims are going away: never trust its cache.
	o, err := n.owner(ctx, id, q.Fresh || forwarded || n.draining.Load())
	if errdefs.IsNotFound(err) {
		n.cfg.Manager.Forget(id) // deleted elsewhere: the local lookup says 404
		return Route{Local: true}, nil
	}
	if err != nil {
		return Route{}, fmt.Errorf("cannot find the owner of %s: %w", id, err)
	}
	for try := 0; ; try++ {
		switch {
		case o.Node == n.cfg.ID:
			return Route{Local: true, Node: o.Node, Epoch: o.Epoch}, n.cfg.Manager.Prepare(ctx, id, o.Node, o.Epoch)
		case o.Node != "" && o.Live:
			if forwarded {
				return Route{}, misdirected(id, o)
			}
			return Route{Node: o.Node, Address: o.Address, Epoch: o.Epoch}, nil
		case n.draining.Load():
			// Unowned, but this node is emptying: another node takes it.
			if forwarded {
				return Route{}, api.Errorf(errdefs.ErrUnavailable, "sandbox %s: node %s is draining; retry", id, n.cfg.ID)
			}
			return n.placeRoute(nil, true)
		case try > 0:
			return Route{}, api.Errorf(errdefs.ErrUnavailable, "sandbox %s: its owner keeps changing; retry", id)
		}
		// Nobody holds it: claim it here, in one statement that checks
		// the owner's lease on the database's clock.
		if q.Authorize != nil {
			if err := q.Authorize(); err != nil {
				return Route{}, err
			}
		}
		e, err := n.cfg.Store.TakeOver(ctx, id, n.cfg.ID, o.Epoch)
		if err == nil {
			n.takeovers.Add(1)
			n.Invalidate(id)
			if o.Node != "" {
				n.log.Warn("fleet: took over a sandbox whose owner's lease expired", "sandbox", id, "from", o.Node, "epoch", e)
			}
			if err := n.cfg.Manager.Prepare(ctx, id, n.cfg.ID, e); err != nil {
				return Route{}, err
			}
			return Route{Local: true, Node: n.cfg.ID, Epoch: e, TookOver: true}, nil
		}
		if !errors.Is(err, sandbox.ErrFenced) {
			return Route{}, err
		}
		// Another node won the race (or the owner came back): follow it.
		if o, err = n.owner(ctx, id, true); err != nil {
			return Route{}, err
		}
	}
}

// ErrMisdirected: a forwarded request reached a node that does not own the
// sandbox (HTTP 421; the sender refreshes its route and retries once).
var ErrMisdirected = errors.New("misdirected")

func misdirected(id string, o Owner) error {
	return fmt.Errorf("%w: sandbox %s is owned by node %s at epoch %d", ErrMisdirected, id, o.Node, o.Epoch)
}

// Place picks the node for a new sandbox (power of K choices over load;
// docs/fleet.md "Placement").
func (n *Node) Place(ctx context.Context, selector map[string]string) (Route, error) {
	if err := n.AckAllowed(); err != nil {
		return Route{}, err
	}
	if len(selector) > 64 {
		return Route{}, api.Errorf(api.ErrUnprocessable, "node_selector has %d labels (max 64)", len(selector))
	}
	for k, v := range selector {
		if k == "" || len(k) > 63 || len(v) > 256 {
			return Route{}, api.Errorf(api.ErrUnprocessable, "node_selector label %q: want a key of 1-63 bytes and a value of at most 256", k)
		}
	}
	return n.placeRoute(selector, false)
}

func (n *Node) placeRoute(selector map[string]string, notSelf bool) (Route, error) {
	n.mu.Lock()
	ms := append([]Member(nil), n.members...)
	n.mu.Unlock()
	var cands []Member
	for _, m := range ms {
		if !m.Live || m.Draining || (notSelf && m.ID == n.cfg.ID) || !matches(m.Labels, selector) {
			continue
		}
		if m.ID == n.cfg.ID {
			// Our own numbers are current; the list is up to Lease/4 old.
			m.Load, m.Capacity, m.Labels = n.cfg.Manager.Stats().Running, n.cfg.Capacity, n.cfg.Labels
			if n.draining.Load() {
				continue
			}
		}
		cands = append(cands, m)
	}
	if len(cands) == 0 {
		if len(selector) > 0 {
			return Route{}, api.Errorf(errdefs.ErrUnavailable, "no live node carries the labels of node_selector %v", selector)
		}
		return Route{}, api.Errorf(errdefs.ErrUnavailable, "no live node can take a sandbox now; retry")
	}
	m := choose(cands, K, randIntN)
	if m.ID == n.cfg.ID {
		return Route{Local: true, Node: m.ID}, nil
	}
	return Route{Node: m.ID, Address: m.Address}, nil
}

// choose is power-of-k choices: k distinct candidates drawn at random,
// the least loaded (running / capacity) wins; ties keep the first drawn.
func choose(cands []Member, k int, intn func(int) int) Member {
	k = min(k, len(cands))
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	best := -1
	for i := range k {
		j := i + intn(len(idx)-i)
		idx[i], idx[j] = idx[j], idx[i]
		if best < 0 || load(cands[idx[i]]) < load(cands[best]) {
			best = idx[i]
		}
	}
	return cands[best]
}

func load(m Member) float64 { return float64(m.Load) / float64(max(m.Capacity, 1)) }

func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Peer returns the advertised address of node id (live or not).
func (n *Node) Peer(ctx context.Context, id string) (Member, error) {
	ms, err := n.cfg.Store.Members(ctx, false)
	if err != nil {
		return Member{}, err
	}
	for _, m := range ms {
		if m.ID == id {
			return m, nil
		}
	}
	return Member{}, api.Errorf(errdefs.ErrNotFound, "node %s is not in the fleet", id)
}

// Members lists the fleet's nodes (for `warren node ls`).
func (n *Node) Members(ctx context.Context) ([]Member, error) { return n.cfg.Store.Members(ctx, true) }

// DrainResult says what a drain moved.
type DrainResult struct {
	Node     string   `json:"node"`
	Released int      `json:"released"`
	Failed   []string `json:"failed,omitempty"`
}

// Drain stops placement on this node and hands every sandbox it holds
// off: commit, hibernate, release (sandbox.Manager.Evict). Requests for
// them go to other nodes from then on. The node stays a member (draining)
// until it leaves.
func (n *Node) Drain(ctx context.Context) (DrainResult, error) {
	n.draining.Store(true)
	if err := n.publishStatus(ctx); err != nil {
		n.log.Warn("fleet: cannot record draining", "err", err)
	}
	ids := map[string]bool{}
	for _, id := range n.cfg.Manager.Owned() {
		ids[id] = true
	}
	heads, err := n.cfg.Store.ListHeads(ctx)
	if err != nil {
		return DrainResult{Node: n.cfg.ID}, err
	}
	for _, h := range heads {
		if h.Owner == n.cfg.ID {
			ids[h.Sandbox] = true
		}
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Strings(list)
	res := DrainResult{Node: n.cfg.ID}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	t0 := time.Now()
	for _, id := range list {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := n.cfg.Manager.Evict(ctx, id)
			n.Invalidate(id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				n.log.Warn("fleet: drain: cannot hand a sandbox off", "sandbox", id, "err", err)
				res.Failed = append(res.Failed, id)
				return
			}
			res.Released++
		}()
	}
	wg.Wait()
	sort.Strings(res.Failed)
	n.log.Info("fleet: drained", "node", n.cfg.ID, "released", res.Released, "failed", len(res.Failed), "took", time.Since(t0))
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("drain of node %s: %d sandboxes could not be handed off", n.cfg.ID, len(res.Failed))
	}
	return res, nil
}

// Stop ends the lease loops (the record stays until it expires or Leave).
func (n *Node) Stop() {
	n.stop()
	n.done.Wait()
}

// Leave stops the loops and removes the node's record.
func (n *Node) Leave(ctx context.Context) error {
	n.Stop()
	n.cfg.Manager.SetWriteGate(nil)
	return n.cfg.Store.Leave(ctx, n.cfg.ID, n.boot)
}

// Stats are the node's routing counters, for /metrics.
type Stats struct {
	Takeovers, Forwarded, Misdirected int64
	// LostRecords: write-log records (acked at local at most) of
	// sandboxes this node dropped because another node took them over.
	LostRecords, Dropped int64
	Live                 bool // the write gate is open
}

// Stats returns the counters.
func (n *Node) Stats() Stats {
	f := n.cfg.Manager.FleetStats()
	return Stats{Takeovers: n.takeovers.Load(), Forwarded: n.forwarded.Load(), Misdirected: n.misdirected.Load(),
		LostRecords: f.LostRecords, Dropped: f.Dropped, Live: n.AckAllowed() == nil}
}

// Sync makes this node's listing show the fleet's sandboxes.
func (n *Node) Sync(ctx context.Context) error { return n.cfg.Manager.Sync(ctx) }

// Counted records one forward (misdirected: the owner answered 421).
func (n *Node) Counted(misdirected bool) {
	n.forwarded.Add(1)
	if misdirected {
		n.misdirected.Add(1)
	}
}

var randIntN = rand.IntN

// Lost returns a channel closed once node no longer holds sandbox id with
// a live lease (checked every lease/4 against the store), so a forward to
// a node that stopped answering (a partition, SIGSTOP) ends with a
// retryable error instead of waiting on it forever. It stops with ctx.
func (n *Node) Lost(ctx context.Context, id, node string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		t := time.NewTicker(n.cfg.Lease / 4)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			o, err := n.cfg.Store.Owner(ctx, id)
			if ctx.Err() != nil {
				return
			}
			if err == nil && o.Live && o.Node == node {
				continue
			}
			if err != nil && !errdefs.IsNotFound(err) {
				continue // the store is unreachable: no verdict
			}
			n.Invalidate(id)
			close(ch)
			return
		}
	}()
	return ch
}
