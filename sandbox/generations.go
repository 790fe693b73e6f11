package sandbox

import (
	"context"
	"slices"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Retained generations (DESIGN.md "Durability"): Heads keeps a record of
// every published generation until retention forgets it; a sandbox lists
// them, and a new sandbox can start from any of them. A generation stays
// while it is the head, among the last Retention.KeepLast, younger than
// Retention.KeepFor, or pinned: a snapshot of it, a sandbox made from it
// (from_generation, or a fork of a standby sandbox that has not committed
// its own yet). GC keeps the objects of every retained generation.

var _ api.Generations = (*tenantView)(nil)

func (m *Manager) needGenerations() error {
	if m.dur == nil {
		return api.Errorf(errdefs.ErrFailedPrecondition, "this node keeps no generations (no write log: memory only)")
	}
	return nil
}

// ListGenerations lists sandbox id's retained generations, oldest first.
func (t *tenantView) ListGenerations(ctx context.Context, id string) ([]api.Generation, error) {
	m := t.m
	if err := m.needGenerations(); err != nil {
		return nil, err
	}
	if _, err := t.box(id); err != nil {
		return nil, err
	}
	h, err := m.meta.Head(ctx, id)
	if err != nil {
		return nil, err
	}
	gens, err := m.meta.Generations(ctx, id)
	if err != nil {
		return nil, err
	}
	pins := m.pins()
	out := make([]api.Generation, 0, len(gens))
	for _, g := range gens {
		out = append(out, api.Generation{Number: g.Number, CreatedAt: g.CreatedAt, Epoch: g.Epoch,
			Head: g.Number == h.Generation, PinnedBy: pins.of(id, g)})
	}
	return out, nil
}

// pinSet is what pins generations: by StateRef (snapshots, sandboxes
// still at the state they were made from) and by number (from_generation).
type pinSet struct {
	byRef map[string][]string
	byGen map[api.GenerationRef][]string
	refOf map[string]string // pinning sandbox -> its origin (to skip a sandbox's own)
}

func (m *Manager) pins() pinSet {
	p := pinSet{byRef: map[string][]string{}, byGen: map[api.GenerationRef][]string{}, refOf: map[string]string{}}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, s := range m.snaps {
		p.byRef[s.StateRef] = append(p.byRef[s.StateRef], "snapshot:"+s.Name)
	}
	for id, b := range m.boxes {
		if fg := b.cfg.FromGeneration; fg != nil {
			p.byGen[*fg] = append(p.byGen[*fg], "sandbox:"+id)
		}
		if b.origin != "" && b.parent != "" {
			p.byRef[b.origin] = append(p.byRef[b.origin], "sandbox:"+id)
		}
	}
	return p
}

// of returns what pins generation g of sandbox.
func (p pinSet) of(sandbox string, g Generation) []string {
	var out []string
	for _, who := range p.byRef[g.Ref] {
		if who != "sandbox:"+sandbox {
			out = append(out, who)
		}
	}
	for _, who := range p.byGen[api.GenerationRef{Sandbox: sandbox, Generation: g.Number}] {
		if !slices.Contains(out, who) {
			out = append(out, who)
		}
	}
	return out
}

// createFromGeneration makes a standby sandbox whose state is a retained
// generation of another sandbox of the tenant, with that sandbox's
// configuration under the request's own fields.
func (t *tenantView) createFromGeneration(ctx context.Context, req api.CreateRequest) (api.Sandbox, error) {
	m := t.m
	if err := m.needGenerations(); err != nil {
		return api.Sandbox{}, err
	}
	from := *req.FromGeneration
	if req.Snapshot != "" {
		return api.Sandbox{}, api.Errorf(api.ErrUnprocessable, "from_generation and snapshot: a sandbox starts from one of them")
	}
	if from.Sandbox == "" || from.Generation == 0 {
		return api.Sandbox{}, api.Errorf(api.ErrUnprocessable, "from_generation needs a sandbox and a generation number (1 or more)")
	}
	src, err := t.box(from.Sandbox)
	if err != nil {
		return api.Sandbox{}, err
	}
	g, err := m.meta.Generation(ctx, src.id, from.Generation)
	if err != nil {
		return api.Sandbox{}, err
	}
	if req.Image != "" && req.Image != src.cfg.Image && req.Image != src.imageDigest {
		return api.Sandbox{}, api.Errorf(api.ErrUnprocessable, "sandbox %s is of image %s, not %s", src.id, src.cfg.Image, req.Image)
	}
	base := withoutMounts(src.cfg) // volumes.go: it asks for its own
	if req.Env != nil {
		base.Env = req.Env
	}
	if req.Cwd != "" {
		base.Cwd = req.Cwd
	}
	if req.Labels != nil {
		base.Labels = req.Labels
	}
	if req.Limits != (api.Limits{}) {
		base.Limits = req.Limits
	}
	if req.StandbyAfter != 0 {
		base.StandbyAfter = req.StandbyAfter
	}
	if req.Durability != "" {
		base.Durability = req.Durability
	}
	if req.Retention != nil {
		base.Retention = req.Retention
	}
	base.TTL, base.Snapshot, base.FromGeneration = req.TTL, "", &from
	if base, err = m.normalise(base); err != nil {
		return api.Sandbox{}, err
	}
	r := Record{ID: newID("sb-"), Tenant: t.tenant, Config: base, ImageDigest: src.imageDigest,
		State: api.StateStandby, StateRef: g.Ref, Parent: src.id, CreatedAt: m.now()}
	b := m.newBox(r)
	if err := m.add(ctx, b); err != nil {
		return api.Sandbox{}, err
	}
	return b.info(), nil
}

// retentionOf is b's policy with the defaults filled in.
func retentionOf(b *box) api.Retention {
	var r api.Retention
	if b.cfg.Retention != nil {
		r = *b.cfg.Retention
	}
	return r.WithDefaults()
}

// retainAfter runs b's retention after generation number was published:
// on every max(1, KeepLast/2)th generation and at standby, so a busy
// sandbox's list stays within about 1.5 × KeepLast plus the young ones.
func (m *Manager) retainAfter(ctx context.Context, b *box, number uint64, standby bool) {
	pol := retentionOf(b)
	if !standby && number%uint64(max(1, pol.KeepLast/2)) != 0 {
		return
	}
	if n, err := m.retain(ctx, b.id, pol); err != nil {
		m.log.Warn("retention failed", "sandbox", b.id, "err", err)
	} else if n > 0 {
		m.log.Debug("retention forgot generations", "sandbox", b.id, "count", n)
	}
}

// retain forgets the generation records of sandbox that pol and the pins
// no longer keep, and returns how many.
func (m *Manager) retain(ctx context.Context, sandbox string, pol api.Retention) (int, error) {
	gens, err := m.meta.Generations(ctx, sandbox)
	if err != nil || len(gens) <= pol.KeepLast {
		return 0, err
	}
	h, err := m.meta.Head(ctx, sandbox)
	if err != nil {
		return 0, err
	}
	pins := m.pins()
	now := time.Now()
	n := 0
	for _, g := range gens[:len(gens)-pol.KeepLast] {
		if g.Number == h.Generation || len(pins.of(sandbox, g)) > 0 ||
			(pol.KeepFor > 0 && now.Sub(g.CreatedAt) < pol.KeepFor.Std()) {
			continue
		}
		if err := m.meta.DeleteGeneration(ctx, sandbox, g.Number); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// RetainAll runs every sandbox's retention (GC runs it before marking).
func (m *Manager) RetainAll(ctx context.Context) error {
	if m.dur == nil {
		return nil
	}
	m.mu.RLock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.RUnlock()
	for _, b := range boxes {
		if _, err := m.retain(ctx, b.id, retentionOf(b)); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	return nil
}
