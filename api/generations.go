package api

import (
	"context"
	"time"
)

// Generation is one committed, retained version of a sandbox (README
// "Durability"): GET /v1/sandboxes/{id}/generations lists them, and
// CreateRequest.FromGeneration starts a sandbox from one.
type Generation struct {
	Number    uint64    `json:"number"`
	CreatedAt time.Time `json:"created_at"`
	// Epoch is the owner epoch that published it.
	Epoch uint64 `json:"epoch"`
	// Head: the sandbox's current generation (never dropped by retention).
	Head bool `json:"head,omitempty"`
	// PinnedBy names what keeps it past its retention: "snapshot:NAME"
	// for a snapshot of it, "sandbox:ID" for a sandbox made from it (a
	// fork, or a create from_generation).
	PinnedBy []string `json:"pinned_by,omitempty"`
}

// GenerationRef names a sandbox's generation (CreateRequest.FromGeneration).
type GenerationRef struct {
	Sandbox    string `json:"sandbox"`
	Generation uint64 `json:"generation"`
}

// Retention is which generations of a sandbox stay listed (and their data
// kept from GC) besides the head and the pinned ones: the last KeepLast,
// and any younger than KeepFor. Zero fields take DefaultRetention's;
// KeepFor negative keeps none by age.
type Retention struct {
	KeepLast int      `json:"keep_last,omitempty"`
	KeepFor  Duration `json:"keep_for,omitempty"`
}

// DefaultRetention: the last 10 generations, and every one of the last hour.
var DefaultRetention = Retention{KeepLast: 10, KeepFor: Duration(time.Hour)}

// WithDefaults fills r's zero fields from DefaultRetention.
func (r Retention) WithDefaults() Retention {
	if r.KeepLast == 0 {
		r.KeepLast = DefaultRetention.KeepLast
	}
	if r.KeepFor == 0 {
		r.KeepFor = DefaultRetention.KeepFor
	}
	return r
}

// CheckRetention refuses a policy that cannot work.
func CheckRetention(r Retention) error {
	if r.KeepLast < 0 || r.KeepLast > 100000 {
		return Errorf(ErrUnprocessable, "retention keep_last %d: want 1..100000 (0: the default, %d)", r.KeepLast, DefaultRetention.KeepLast)
	}
	return nil
}

// Generations is implemented by Services whose sandboxes are durable (the
// manager with a write log, and the client). The server answers 501 for
// GET /v1/sandboxes/{id}/generations on a Service without it.
type Generations interface {
	ListGenerations(ctx context.Context, id string) ([]Generation, error)
}
