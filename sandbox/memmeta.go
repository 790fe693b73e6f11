package sandbox

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// memMeta keeps records in memory (tests, and a Manager without --data).
// One mutex serialises everything, which is what makes Publish a
// compare-and-swap.
type memMeta struct {
	mu      sync.Mutex
	now     func() time.Time
	boxes   map[string]Record
	heads   map[string]Head
	gens    map[string][]Generation // ascending by number
	commits map[string]Generation   // by commit id
	snaps   map[[2]string]SnapshotRecord
	custody map[string]CustodyRecord
	nodes   map[string]NodeRecord
	vols    map[[2]string]VolumeRecord // memmeta_volumes.go
}

// NewMemMeta returns a DurableMeta that forgets everything with the process.
func NewMemMeta() DurableMeta {
	return &memMeta{
		now:     time.Now,
		boxes:   map[string]Record{},
		heads:   map[string]Head{},
		gens:    map[string][]Generation{},
		commits: map[string]Generation{},
		snaps:   map[[2]string]SnapshotRecord{},
		custody: map[string]CustodyRecord{},
		nodes:   map[string]NodeRecord{},
	}
}

func (m *memMeta) PutSandbox(_ context.Context, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.CreatedAt = StoreTime(r.CreatedAt)
	m.boxes[r.ID] = r
	if _, ok := m.heads[r.ID]; !ok {
		m.heads[r.ID] = Head{Sandbox: r.ID}
	}
	return nil
}

func (m *memMeta) DeleteSandbox(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.boxes, id)
	delete(m.heads, id)
	for _, g := range m.gens[id] {
		delete(m.commits, g.CommitID)
	}
	delete(m.gens, id)
	return nil
}

func (m *memMeta) Sandboxes(context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Record, 0, len(m.boxes))
	for _, r := range m.boxes {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *memMeta) CreateSnapshot(_ context.Context, s SnapshotRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{s.Tenant, s.Name}
	if _, ok := m.snaps[k]; ok {
		return api.Errorf(errdefs.ErrAlreadyExists, "snapshot %q already exists", s.Name)
	}
	s.CreatedAt = StoreTime(s.CreatedAt)
	m.snaps[k] = s
	return nil
}

func (m *memMeta) DeleteSnapshot(_ context.Context, tenant, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.snaps, [2]string{tenant, name})
	return nil
}

func (m *memMeta) Snapshots(context.Context) ([]SnapshotRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]SnapshotRecord, 0, len(m.snaps))
	for _, s := range m.snaps {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tenant != out[j].Tenant {
			return out[i].Tenant < out[j].Tenant
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func unknownSandbox(id string) error {
	return api.Errorf(errdefs.ErrNotFound, "sandbox %s has no record", id)
}

func (m *memMeta) Head(_ context.Context, sandbox string) (Head, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.heads[sandbox]
	if !ok {
		return Head{}, unknownSandbox(sandbox)
	}
	return h, nil
}

func (m *memMeta) ListHeads(context.Context) ([]Head, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Head, 0, len(m.heads))
	for _, h := range m.heads {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sandbox < out[j].Sandbox })
	return out, nil
}

func (m *memMeta) Claim(_ context.Context, sandbox, node string, seen uint64) (uint64, error) {
	if node == "" {
		return 0, api.Errorf(errdefs.ErrInvalidArgument, "claim of %s: no node", sandbox)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.heads[sandbox]
	if !ok {
		return 0, unknownSandbox(sandbox)
	}
	if h.Epoch != seen {
		return 0, ClaimFenced(sandbox, node, seen, h)
	}
	h.Owner, h.Epoch = node, h.Epoch+1
	m.heads[sandbox] = h
	return h.Epoch, nil
}

func (m *memMeta) Release(_ context.Context, sandbox, node string, epoch uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.heads[sandbox]
	if !ok {
		return unknownSandbox(sandbox)
	}
	if h.Epoch == epoch && h.Owner == "" {
		return nil
	}
	if h.Owner != node || h.Epoch != epoch {
		return Fenced(Commit{Sandbox: sandbox, Node: node, Epoch: epoch}, h)
	}
	h.Owner = ""
	m.heads[sandbox] = h
	return nil
}

func (m *memMeta) Publish(_ context.Context, c Commit) (Generation, error) {
	if err := CheckCommit(c); err != nil {
		return Generation{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.heads[c.Sandbox]
	if !ok {
		return Generation{}, unknownSandbox(c.Sandbox)
	}
	var landed *Generation
	if g, ok := m.commits[c.CommitID]; ok {
		landed = &g
	}
	done, err := PublishRule(c, h, landed)
	if err != nil || done {
		if done {
			return *landed, nil
		}
		return Generation{}, err
	}
	g := Generation{
		Sandbox: c.Sandbox, Number: c.Base + 1, Ref: c.Ref, Parent: c.Parent,
		Epoch: c.Epoch, CommitID: c.CommitID, CreatedAt: StoreTime(m.now()),
	}
	h.Generation, h.Ref, h.CommitID = g.Number, g.Ref, g.CommitID
	m.heads[c.Sandbox] = h
	m.gens[c.Sandbox] = append(m.gens[c.Sandbox], g)
	m.commits[c.CommitID] = g
	return g, nil
}

func (m *memMeta) Generations(_ context.Context, sandbox string) ([]Generation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.heads[sandbox]; !ok {
		return nil, unknownSandbox(sandbox)
	}
	return slices.Clone(m.gens[sandbox]), nil
}

func (m *memMeta) Generation(_ context.Context, sandbox string, number uint64) (Generation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.heads[sandbox]; !ok {
		return Generation{}, unknownSandbox(sandbox)
	}
	for _, g := range m.gens[sandbox] {
		if g.Number == number {
			return g, nil
		}
	}
	return Generation{}, NoGeneration(sandbox, number)
}

func (m *memMeta) DeleteGeneration(_ context.Context, sandbox string, number uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.heads[sandbox]
	if !ok {
		return nil
	}
	if h.Generation == number && number != 0 {
		return HeadGenerationPinned(sandbox, number)
	}
	gs := m.gens[sandbox]
	for i, g := range gs {
		if g.Number == number {
			delete(m.commits, g.CommitID)
			m.gens[sandbox] = slices.Delete(gs, i, i+1)
			break
		}
	}
	return nil
}

func (m *memMeta) AddCustody(_ context.Context, c CustodyRecord, ttl time.Duration) (time.Time, error) {
	if err := CheckCustody(c, ttl); err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.custody[c.Upload]; ok {
		return time.Time{}, api.Errorf(errdefs.ErrAlreadyExists, "upload %q already has custody", c.Upload)
	}
	c.Keys = slices.Clone(c.Keys)
	c.Expires = StoreTime(m.now().Add(ttl))
	m.custody[c.Upload] = c
	return c.Expires, nil
}

func (m *memMeta) RenewCustody(_ context.Context, upload string, ttl time.Duration) (time.Time, error) {
	if err := CheckTTL(ttl); err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.custody[upload]
	if !ok {
		return time.Time{}, NoCustody(upload)
	}
	now := m.now()
	if !c.Expires.After(now) {
		return time.Time{}, CustodyExpired(upload, c.Expires)
	}
	c.Expires = StoreTime(now.Add(ttl))
	m.custody[upload] = c
	return c.Expires, nil
}

func (m *memMeta) AddCustodyKeys(_ context.Context, upload string, keys []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.custody[upload]
	if !ok {
		return NoCustody(upload)
	}
	if !c.Expires.After(m.now()) {
		return CustodyExpired(upload, c.Expires)
	}
	c.Keys = append(slices.Clone(c.Keys), keys...)
	m.custody[upload] = c
	return nil
}

func (m *memMeta) ReleaseCustody(_ context.Context, upload string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.custody, upload)
	return nil
}

func (m *memMeta) ListCustody(context.Context) ([]CustodyRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []CustodyRecord
	for _, c := range m.custody {
		if c.Expires.After(now) {
			c.Keys = slices.Clone(c.Keys)
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Upload < out[j].Upload })
	return out, nil
}

func (m *memMeta) ExpireCustody(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now, n := m.now(), 0
	for k, c := range m.custody {
		if !c.Expires.After(now) {
			delete(m.custody, k)
			n++
		}
	}
	return n, nil
}

func (m *memMeta) Join(_ context.Context, n NodeRecord, ttl time.Duration) (time.Time, error) {
	if err := CheckNode(n, ttl); err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n.Expires, n.Live = StoreTime(m.now().Add(ttl)), false
	m.nodes[n.ID] = n
	return n.Expires, nil
}

func (m *memMeta) RenewLease(_ context.Context, id, boot string, ttl time.Duration) (time.Time, error) {
	if err := CheckTTL(ttl); err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[id]
	if !ok {
		return time.Time{}, NoNode(id)
	}
	if n.BootID != boot {
		return time.Time{}, NodeFenced(id, boot, n.BootID)
	}
	n.Expires = StoreTime(m.now().Add(ttl))
	m.nodes[id] = n
	return n.Expires, nil
}

func (m *memMeta) Leave(_ context.Context, id, boot string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[id]
	if !ok {
		return nil
	}
	if n.BootID != boot {
		return NodeFenced(id, boot, n.BootID)
	}
	delete(m.nodes, id)
	return nil
}

func (m *memMeta) ListNodes(context.Context) ([]NodeRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	out := make([]NodeRecord, 0, len(m.nodes))
	for _, n := range m.nodes {
		n.Live = n.Expires.After(now)
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].ID, out[j].ID) < 0 })
	return out, nil
}
