package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// Defaults (docs/fleet.md "Timing").
const (
	DefaultLease    = 10 * time.Second
	DefaultCapacity = 1000
	// K is the number of random candidates placement compares.
	K = 2
)

// Config configures a Node.
type Config struct {
	Store   Store
	Manager *sandbox.Manager
	// ID is the node id (the Manager's owner name); Address the URL peers
	// forward to (http://host:port).
	ID, Address string
	// Capacity is how many running sandboxes the node is sized for
	// (default DefaultCapacity).
	Capacity int
	Labels   map[string]string
	// Lease is the lease's time to live (default DefaultLease); the node
	// renews every Lease/4 and closes its write gate Margin before the
	// lease could expire (default Lease/4).
	Lease, Margin time.Duration
	// CacheTTL bounds how long an owner lookup is reused (default 2s;
	// LISTEN/NOTIFY invalidates sooner).
	CacheTTL time.Duration
	Logger   *slog.Logger
}

// Node is one running member of a fleet.
type Node struct {
	cfg  Config
	boot string
	log  *slog.Logger
	t0   time.Time // monotonic base of validUntil

	// validUntil is the local monotonic time (since t0) before which no
	// other node can see this node's lease expired.
	validUntil atomic.Int64
	open       atomic.Bool // renewed and revalidated since the last lapse
	fenced     atomic.Pointer[error]
	draining   atomic.Bool

	mu      sync.Mutex
	cache   map[string]cached
	members []Member

	takeovers, forwarded, misdirected atomic.Int64
	stop                              context.CancelFunc
	done                              sync.WaitGroup
}

type cached struct {
	o  Owner
	at time.Time
}

// Start joins the fleet and keeps the lease; Stop (or Leave) ends it.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	switch {
	case cfg.Store == nil || cfg.Manager == nil:
		return nil, errors.New("fleet: Config needs Store and Manager")
	case cfg.ID == "":
		return nil, errors.New("fleet: no node id")
	case cfg.Address == "":
		return nil, fmt.Errorf("fleet: node %s has no advertised address (--advertise URL)", cfg.ID)
	case cfg.Manager.NodeID() != cfg.ID:
		return nil, fmt.Errorf("fleet: node id %q, but the sandboxes' owner name is %q", cfg.ID, cfg.Manager.NodeID())
	}
	if cfg.Capacity <= 0 {
		cfg.Capacity = DefaultCapacity
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Margin <= 0 || cfg.Margin >= cfg.Lease {
		cfg.Margin = cfg.Lease / 4
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var b [8]byte
	rand.Read(b[:])
	n := &Node{cfg: cfg, boot: "boot-" + hex.EncodeToString(b[:]), log: cfg.Logger, t0: time.Now(), cache: map[string]cached{}}
	sent := time.Since(n.t0)
	if _, err := cfg.Store.Join(ctx, sandbox.NodeRecord{ID: cfg.ID, BootID: n.boot, Address: cfg.Address}, cfg.Lease); err != nil {
		return nil, err
	}
	n.validUntil.Store(int64(sent + cfg.Lease))
	if err := n.publishStatus(ctx); err != nil {
		return nil, err
	}
	n.refreshMembers(ctx)
	n.open.Store(true)
	cfg.Manager.SetWriteGate(n)
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.stop = cancel
	n.done.Add(2)
	go n.renewLoop(lctx)
	go n.watchLoop(lctx)
	n.log.Info("fleet: joined", "node", cfg.ID, "boot", n.boot, "address", cfg.Address, "lease", cfg.Lease, "capacity", cfg.Capacity)
	return n, nil
}

// ID is this node's id; Boot its boot id.
func (n *Node) ID() string   { return n.cfg.ID }
func (n *Node) Boot() string { return n.boot }

// AckAllowed is the write gate (sandbox.WriteGate).
func (n *Node) AckAllowed() error {
	if f := n.fenced.Load(); f != nil {
		return api.Errorf(errdefs.ErrUnavailable, "node %s was replaced by a newer process of the same id: %v", n.cfg.ID, *f)
	}
	left := time.Duration(n.validUntil.Load()) - time.Since(n.t0) - n.cfg.Margin
	if !n.open.Load() || left <= 0 {
		return api.Errorf(errdefs.ErrUnavailable, "node %s has not renewed its lease in time (cut off from the database?): it acknowledges no writes until it has; retry", n.cfg.ID)
	}
	return nil
}

func (n *Node) renewLoop(ctx context.Context) {
	defer n.done.Done()
	t := time.NewTicker(n.cfg.Lease / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n.renew(ctx)
	}
}

// renew extends the lease once; a lapse closes the gate, and a gate closed
// reopens only after the node's claims are checked against the store.
func (n *Node) renew(ctx context.Context) {
	if n.AckAllowed() != nil && n.open.Load() {
		n.open.Store(false)
		n.log.Error("fleet: lease not renewed in time: refusing writes", "node", n.cfg.ID)
	}
	sent := time.Since(n.t0)
	rctx, cancel := context.WithTimeout(ctx, n.cfg.Lease/2)
	_, err := n.cfg.Store.RenewLease(rctx, n.cfg.ID, n.boot, n.cfg.Lease)
	cancel()
	var fe *sandbox.FencedError
	switch {
	case errors.As(err, &fe):
		n.fenced.Store(&err)
		n.open.Store(false)
		n.log.Error("fleet: another process took this node id over; this one stops acknowledging writes", "node", n.cfg.ID, "err", err)
		return
	case errdefs.IsNotFound(err):
		// Removed by hand: join again.
		_, err = n.cfg.Store.Join(ctx, sandbox.NodeRecord{ID: n.cfg.ID, BootID: n.boot, Address: n.cfg.Address}, n.cfg.Lease)
	}
	if err != nil {
		n.log.Warn("fleet: cannot renew the lease", "node", n.cfg.ID, "err", err)
		return
	}
	n.validUntil.Store(int64(sent + n.cfg.Lease))
	if !n.open.Load() {
		// Someone may have taken sandboxes over meanwhile: forget every
		// route and drop the claims that are no longer ours before
		// acknowledging anything again.
		n.flush()
		dropped, err := n.cfg.Manager.Revalidate(ctx)
		if err != nil {
			n.log.Warn("fleet: cannot check this node's claims", "err", err)
			return
		}
		n.open.Store(true)
		n.log.Warn("fleet: lease held again: writes accepted", "node", n.cfg.ID, "dropped_sandboxes", dropped)
	}
	n.cfg.Manager.DropFenced()
	if err := n.publishStatus(ctx); err != nil {
		n.log.Warn("fleet: cannot record the node status", "err", err)
	}
	n.refreshMembers(ctx)
}

func (n *Node) publishStatus(ctx context.Context) error {
	return n.cfg.Store.SetStatus(ctx, Status{Node: n.cfg.ID, Boot: n.boot, Capacity: n.cfg.Capacity,
		Load: n.cfg.Manager.Stats().Running, Labels: n.cfg.Labels, Draining: n.draining.Load()})
}

func (n *Node) refreshMembers(ctx context.Context) {
	ms, err := n.cfg.Store.Members(ctx, false)
	if err != nil {
		n.log.Warn("fleet: cannot list the nodes", "err", err)
		return
	}
	n.mu.Lock()
	n.members = ms
	n.mu.Unlock()
}

// watchLoop invalidates cached owners as the store announces changes; while
// it is not listening, the cache's TTL is the bound.
func (n *Node) watchLoop(ctx context.Context) {
	defer n.done.Done()
	for ctx.Err() == nil {
		err := n.cfg.Store.WatchOwners(ctx, n.flush, n.Invalidate)
		if ctx.Err() != nil {
			return
		}
		n.log.Warn("fleet: owner notifications lost; retrying", "err", err)
		n.flush()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// Invalidate forgets the cached owner of id.
func (n *Node) Invalidate(id string) {
	n.mu.Lock()
	delete(n.cache, id)
	n.mu.Unlock()
}

func (n *Node) flush() {
	n.mu.Lock()
	clear(n.cache)
	n.mu.Unlock()
}

// owner reads id's owner, from the cache unless fresh.
func (n *Node) owner(ctx context.Context, id string, fresh bool) (Owner, error) {
	if !fresh {
		n.mu.Lock()
		c, ok := n.cache[id]
		n.mu.Unlock()
		if ok && time.Since(c.at) < n.cfg.CacheTTL {
			return c.o, nil
		}
	}
	at := time.Now()
	o, err := n.cfg.Store.Owner(ctx, id)
	if err != nil {
		return o, err
	}
	if o.Live && o.Node != "" {
		// Only live owners are cached: an expired or missing one is a
		// takeover, decided against the store every time.
		n.mu.Lock()
		n.cache[id] = cached{o: o, at: at}
		n.mu.Unlock()
	}
	return o, nil
}
