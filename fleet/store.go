package fleet

import (
	"context"

	"github.com/warren-sandbox/warren/sandbox"
)

// Status is what placement reads about a node besides its lease: written
// by the node with every renewal.
type Status struct {
	Node     string            `json:"node"`
	Boot     string            `json:"boot_id"`
	Capacity int               `json:"capacity"` // sandboxes it is sized for (> 0)
	Load     int               `json:"load"`     // running sandboxes now
	Labels   map[string]string `json:"labels,omitempty"`
	Draining bool              `json:"draining,omitempty"`
}

// Member is one node as `warren node ls` shows it: lease, status and the
// number of sandboxes whose head names it as owner.
type Member struct {
	sandbox.NodeRecord
	Capacity int               `json:"capacity"`
	Load     int               `json:"load"`
	Labels   map[string]string `json:"labels,omitempty"`
	Draining bool              `json:"draining,omitempty"`
	Owned    int               `json:"owned"`
}

// Owner is where a sandbox lives now: its head's owner and epoch joined
// with that node's lease (judged on the store's clock).
type Owner struct {
	Sandbox  string
	Node     string // "" when released or never claimed
	Address  string // the owner's advertised URL ("" if it has no record)
	Epoch    uint64
	Live     bool // the owner's lease is unexpired
	Draining bool
}

// Store is what a fleet needs from the shared metadata store beyond
// sandbox.DurableMeta (meta/postgres implements it). Every decision about
// time is the store's clock.
type Store interface {
	sandbox.DurableMeta
	// SetStatus records s for node s.Node if boot s.Boot holds its lease
	// (else a *sandbox.FencedError).
	SetStatus(ctx context.Context, s Status) error
	// Members lists every node with its status, by id; owned adds the
	// number of sandboxes each owns (a count over the sandboxes table:
	// for `warren node ls`, not for placement's every-renewal refresh).
	Members(ctx context.Context, owned bool) ([]Member, error)
	// Owner returns sandbox's owner; an unknown sandbox matches
	// errdefs.ErrNotFound.
	Owner(ctx context.Context, sandbox string) (Owner, error)
	// TakeOver is Claim restricted to a sandbox nobody holds: in one
	// statement it makes node the owner at seen+1 if the epoch is still
	// seen and the owner is "", node itself, or a node whose lease has
	// expired. Otherwise a *sandbox.FencedError and nothing changes.
	TakeOver(ctx context.Context, sandbox, node string, seen uint64) (uint64, error)
	// WatchOwners calls fn with the id of every sandbox whose owner
	// changes, until ctx ends or the connection fails (its error).
	WatchOwners(ctx context.Context, ready func(), fn func(sandbox string)) error
}
