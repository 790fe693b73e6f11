package sandbox

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Record is what outlives a sandbox's memory: its configuration and its last
// StateRef. Meta stores one per sandbox.
type Record struct {
	ID          string            `json:"id"`
	Tenant      string            `json:"tenant"`
	Config      api.CreateRequest `json:"config"` // normalised: defaults filled in
	ImageDigest string            `json:"image_digest"`
	// StateRef is the last hibernated state ("" = fresh from the image).
	StateRef  string    `json:"state_ref,omitempty"`
	State     string    `json:"state"`
	Parent    string    `json:"parent,omitempty"`
	Snapshot  string    `json:"snapshot,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// SnapshotRecord is a named, immutable StateRef owned by a tenant.
type SnapshotRecord struct {
	Tenant    string            `json:"tenant"`
	Name      string            `json:"name"`
	Sandbox   string            `json:"sandbox"`
	Config    api.CreateRequest `json:"config"`
	Image     string            `json:"image_digest"`
	StateRef  string            `json:"state_ref"`
	CreatedAt time.Time         `json:"created_at"`
}

// Meta stores records. Implementations: memMeta (here) and boltmeta.
// Missing records: Delete returns nil; CreateSnapshot of an existing
// (tenant, name) returns an error matching errdefs.ErrAlreadyExists.
type Meta interface {
	PutSandbox(ctx context.Context, r Record) error
	DeleteSandbox(ctx context.Context, id string) error
	Sandboxes(ctx context.Context) ([]Record, error)
	CreateSnapshot(ctx context.Context, s SnapshotRecord) error
	DeleteSnapshot(ctx context.Context, tenant, name string) error
	Snapshots(ctx context.Context) ([]SnapshotRecord, error)
}

// memMeta keeps records in memory (tests, and a Manager without --data).
type memMeta struct {
	mu    sync.Mutex
	boxes map[string]Record
	snaps map[[2]string]SnapshotRecord
}

// NewMemMeta returns a Meta that forgets everything with the process.
func NewMemMeta() Meta {
	return &memMeta{boxes: map[string]Record{}, snaps: map[[2]string]SnapshotRecord{}}
}

func (m *memMeta) PutSandbox(_ context.Context, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.boxes[r.ID] = r
	return nil
}

func (m *memMeta) DeleteSandbox(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.boxes, id)
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
