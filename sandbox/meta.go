package sandbox

import (
	"context"
	"errors"
	"fmt"
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

// Meta stores records. Implementations: memMeta (here), boltmeta and
// meta/postgres; all pass sandbox/metatest.
//
//   - PutSandbox creates or replaces the record with r.ID (never the head:
//     see Heads).
//   - DeleteSandbox of a missing record returns nil; it also deletes the
//     sandbox's head and generation records.
//   - Sandboxes returns every record ordered by ID (bytewise).
//   - CreateSnapshot of an existing (tenant, name) returns an error
//     matching errdefs.ErrAlreadyExists and changes nothing.
//   - DeleteSnapshot of a missing snapshot returns nil.
//   - Snapshots returns every snapshot ordered by (tenant, name).
//
// Times are kept to the microsecond (PostgreSQL's precision) and come back
// in UTC.
type Meta interface {
	PutSandbox(ctx context.Context, r Record) error
	DeleteSandbox(ctx context.Context, id string) error
	Sandboxes(ctx context.Context) ([]Record, error)
	CreateSnapshot(ctx context.Context, s SnapshotRecord) error
	DeleteSnapshot(ctx context.Context, tenant, name string) error
	Snapshots(ctx context.Context) ([]SnapshotRecord, error)
}

// DurableMeta is everything a node with durable sandboxes needs from its
// metadata store: records, heads and fencing, upload custody and node
// leases. memMeta, boltmeta and meta/postgres implement all of it.
type DurableMeta interface {
	Meta
	Heads
	Custody
	Nodes
}

// Head is a sandbox's ownership and committed state, one per sandbox
// record. A fresh record has no owner (Owner "", Epoch 0) and no commit
// (Generation 0, Ref "", CommitID "").
type Head struct {
	Sandbox string `json:"sandbox"`
	// Owner is the node id allowed to publish; "" when released or never
	// claimed.
	Owner string `json:"owner,omitempty"`
	// Epoch counts claims: every Claim raises it by one, so a node that
	// was taken over holds a smaller epoch than the record and is fenced.
	Epoch uint64 `json:"epoch"`
	// Generation is the number of the last published generation.
	Generation uint64 `json:"generation"`
	// Ref is the StateRef key of that generation; CommitID its commit id.
	Ref      string `json:"ref,omitempty"`
	CommitID string `json:"commit_id,omitempty"`
}

// Generation is one published, immutable version of a sandbox.
type Generation struct {
	Sandbox string `json:"sandbox"`
	// Number is 1 for a sandbox's first commit, and one more than its
	// predecessor after.
	Number uint64 `json:"number"`
	// Ref is the StateRef key this generation published.
	Ref string `json:"ref"`
	// Parent is the StateRef key the commit was built on (the previous
	// head's, or the fork or snapshot the sandbox came from; "" = fresh
	// from the image). Stored as given.
	Parent string `json:"parent,omitempty"`
	// Epoch is the owner epoch that published it.
	Epoch uint64 `json:"epoch"`
	// CommitID is chosen by the committer, unique across all sandboxes;
	// it makes a retried Publish idempotent.
	CommitID  string    `json:"commit_id"`
	CreatedAt time.Time `json:"created_at"` // the store's clock
}

// Commit asks Publish to move a head.
type Commit struct {
	Sandbox string
	Node    string // must be the head's Owner
	Epoch   uint64 // must be the head's Epoch
	// Base is the head generation the commit was built on; the new
	// generation is Base+1.
	Base     uint64
	Ref      string // required
	Parent   string
	CommitID string // required
}

// Heads is ownership and the head compare-and-swap (fencing).
//
// Every method runs in one transaction. A sandbox is known to Heads exactly
// while its record exists (Meta.PutSandbox); for an unknown sandbox every
// method below returns an error matching errdefs.ErrNotFound, except
// DeleteGeneration (nil).
type Heads interface {
	// Head returns the sandbox's head.
	Head(ctx context.Context, sandbox string) (Head, error)
	// ListHeads returns every head ordered by sandbox id (GC roots, and a
	// node finding what it owns after a restart).
	ListHeads(ctx context.Context) ([]Head, error)
	// Claim makes node the owner at epoch seen+1 and returns that epoch,
	// if the head's epoch is still seen (the caller read it with Head and
	// decided to take over, e.g. because the owner's lease expired).
	// Otherwise someone claimed first: ErrFenced, nothing changes.
	// Claiming a sandbox the node already owns also raises the epoch
	// (a new incarnation; a write log of the old epoch is abandoned).
	Claim(ctx context.Context, sandbox, node string, seen uint64) (uint64, error)
	// Release clears the owner (keeping the epoch) if node still owns the
	// sandbox at epoch; otherwise ErrFenced. Releasing an unowned sandbox
	// at its current epoch returns nil.
	Release(ctx context.Context, sandbox, node string, epoch uint64) error
	// Publish moves the head to c.Ref as generation c.Base+1 and records
	// that generation, only if the head's Owner, Epoch and Generation are
	// c.Node, c.Epoch and c.Base. If a generation with c.CommitID exists
	// for this sandbox with the same Ref, the commit already landed:
	// Publish returns that generation and nil (a retry after a lost
	// reply), whoever owns the sandbox now. The same CommitID on another
	// sandbox or ref is an error matching errdefs.ErrAlreadyExists.
	// Any other mismatch is a *FencedError (errors.Is ErrFenced): the
	// caller must stop writing the sandbox and never retry blindly.
	Publish(ctx context.Context, c Commit) (Generation, error)
	// Generations returns the sandbox's retained generations, ascending.
	Generations(ctx context.Context, sandbox string) ([]Generation, error)
	// Generation returns one; a missing number matches errdefs.ErrNotFound.
	Generation(ctx context.Context, sandbox string, number uint64) (Generation, error)
	// DeleteGeneration forgets a generation record (retention). Missing:
	// nil. The head's own generation cannot be deleted: an error matching
	// errdefs.ErrFailedPrecondition.
	DeleteGeneration(ctx context.Context, sandbox string, number uint64) error
}

// ErrFenced is what a publish, claim or lease renewal from a writer that
// lost its right gets. errors.Is(err, ErrFenced) and
// errors.Is(err, errdefs.ErrFailedPrecondition) both hold, so the API maps
// it to 409 Conflict ("failed_precondition").
var ErrFenced = fmt.Errorf("fenced: %w", errdefs.ErrFailedPrecondition)

// FencedError says why a write was refused and what the store holds now.
type FencedError struct {
	Sandbox string
	Reason  string // e.g. "owner is node b at epoch 7, not node a at epoch 6"
	Head    Head   // the head at the time of the refusal (zero for leases)
}

func (e *FencedError) Error() string {
	if e.Sandbox == "" {
		return "fenced: " + e.Reason
	}
	return fmt.Sprintf("fenced: sandbox %s: %s", e.Sandbox, e.Reason)
}

// Is makes a FencedError match ErrFenced and errdefs.ErrFailedPrecondition.
func (e *FencedError) Is(target error) bool {
	return target == ErrFenced || errors.Is(ErrFenced, target)
}

// Fenced builds the *FencedError Publish returns for c against head h.
// Implementations share it so the reasons read the same everywhere.
func Fenced(c Commit, h Head) *FencedError {
	var why string
	switch {
	case h.Owner != c.Node || h.Epoch != c.Epoch:
		owner := "no owner"
		if h.Owner != "" {
			owner = "owner is node " + h.Owner
		}
		why = fmt.Sprintf("%s at epoch %d, not node %s at epoch %d", owner, h.Epoch, c.Node, c.Epoch)
	default:
		why = fmt.Sprintf("head is at generation %d, the commit was built on %d", h.Generation, c.Base)
	}
	return &FencedError{Sandbox: c.Sandbox, Reason: why, Head: h}
}

// CheckCommit rejects a malformed Commit before any store is touched.
func CheckCommit(c Commit) error {
	switch {
	case c.Sandbox == "":
		return api.Errorf(errdefs.ErrInvalidArgument, "commit: no sandbox")
	case c.Node == "":
		return api.Errorf(errdefs.ErrInvalidArgument, "commit of %s: no node", c.Sandbox)
	case c.Ref == "":
		return api.Errorf(errdefs.ErrInvalidArgument, "commit of %s: no ref", c.Sandbox)
	case c.CommitID == "":
		return api.Errorf(errdefs.ErrInvalidArgument, "commit of %s: no commit id", c.Sandbox)
	case c.Epoch == 0:
		return api.Errorf(errdefs.ErrInvalidArgument, "commit of %s: epoch 0 (claim the sandbox first)", c.Sandbox)
	}
	return nil
}

// CustodyRecord holds objects of an upload in flight: GC treats the keys
// of every unexpired record as roots, so an upload may write packs before
// anything references them.
type CustodyRecord struct {
	Upload  string   `json:"upload"` // unique id chosen by the uploader
	Node    string   `json:"node"`
	Sandbox string   `json:"sandbox"`
	Epoch   uint64   `json:"epoch"`
	Keys    []string `json:"keys"` // blob store keys being written
	// Expires is set by the store from its own clock (AddCustody,
	// RenewCustody); a value given to AddCustody is ignored.
	Expires time.Time `json:"expires"`
}

// Custody records in-flight uploads. Expiry is judged on the store's clock
// (PostgreSQL's now() for a fleet), never the caller's. A custody row
// does not need a sandbox record (the sandbox may be deleted mid-upload).
type Custody interface {
	// AddCustody records c with expiry now+ttl and returns the expiry.
	// An existing upload id: errdefs.ErrAlreadyExists.
	AddCustody(ctx context.Context, c CustodyRecord, ttl time.Duration) (time.Time, error)
	// RenewCustody moves the expiry to now+ttl. Missing (released):
	// errdefs.ErrNotFound. Already expired: ErrCustodyExpired, since GC may
	// have stopped protecting its keys; the upload must start over.
	RenewCustody(ctx context.Context, upload string, ttl time.Duration) (time.Time, error)
	// AddCustodyKeys adds keys to an unexpired record (an upload names
	// each object before it writes it). Missing: errdefs.ErrNotFound;
	// expired: ErrCustodyExpired.
	AddCustodyKeys(ctx context.Context, upload string, keys []string) error
	// ReleaseCustody deletes the record (after the head moved, or on
	// failure). Missing: nil.
	ReleaseCustody(ctx context.Context, upload string) error
	// ListCustody returns the unexpired records ordered by upload id.
	ListCustody(ctx context.Context) ([]CustodyRecord, error)
	// ExpireCustody deletes expired records and returns how many.
	ExpireCustody(ctx context.Context) (int, error)
}

// ErrCustodyExpired: a renewal came after the expiry.
var ErrCustodyExpired = fmt.Errorf("custody expired: %w", errdefs.ErrFailedPrecondition)

// NodeRecord is one node of a fleet and its lease.
type NodeRecord struct {
	ID string `json:"id"`
	// BootID names one start of the node's process; a new start takes
	// the record over and the old one's renewals are fenced.
	BootID  string    `json:"boot_id"`
	Address string    `json:"address"`
	Expires time.Time `json:"expires"` // lease expiry, the store's clock
	// Live reports Expires > now on the store's clock at read time.
	Live bool `json:"live"`
}

// Nodes holds node leases, on the store's clock.
type Nodes interface {
	// Join records (or takes over) node n.ID with boot n.BootID and
	// address n.Address, leased until now+ttl, which it returns. The last
	// boot to join wins: a process restarted after a crash need not wait.
	Join(ctx context.Context, n NodeRecord, ttl time.Duration) (time.Time, error)
	// RenewLease extends the lease of node id at boot to now+ttl. Missing:
	// errdefs.ErrNotFound. Another boot holds it: a *FencedError (a newer
	// process of the same node id joined; this one must stop). An expired
	// lease of the same boot is renewed (ownership is fenced by head
	// epochs, not by leases).
	RenewLease(ctx context.Context, id, boot string, ttl time.Duration) (time.Time, error)
	// Leave deletes the record if boot still holds it. Missing: nil;
	// another boot: a *FencedError.
	Leave(ctx context.Context, id, boot string) error
	// ListNodes returns every node ordered by id, live or not.
	ListNodes(ctx context.Context) ([]NodeRecord, error)
}

// CheckTTL rejects a lease or custody time to live that cannot work.
func CheckTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return api.Errorf(errdefs.ErrInvalidArgument, "time to live %v: must be positive", ttl)
	}
	return nil
}

// NodeFenced is the error RenewLease and Leave return to a replaced boot.
func NodeFenced(id, boot, holder string) *FencedError {
	return &FencedError{Reason: fmt.Sprintf("node %s is held by boot %s, not %s", id, holder, boot)}
}

// PublishRule is Publish's decision for stores that serialise writers
// themselves (memMeta, boltmeta): given the head and the generation already
// recorded under c.CommitID (nil: none), it returns done=true when the
// commit already landed, an error when it must be refused, and false, nil
// when the head may move.
func PublishRule(c Commit, h Head, landed *Generation) (done bool, err error) {
	if landed != nil {
		if landed.Sandbox != c.Sandbox || landed.Ref != c.Ref {
			return false, api.Errorf(errdefs.ErrAlreadyExists, "commit id %q is generation %d of sandbox %s (ref %s)", c.CommitID, landed.Number, landed.Sandbox, landed.Ref)
		}
		return true, nil
	}
	if h.Owner != c.Node || h.Epoch != c.Epoch || h.Generation != c.Base {
		return false, Fenced(c, h)
	}
	return false, nil
}

// StoreTime is how every store keeps a time: UTC, to the microsecond.
func StoreTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// The errors below are shared by the implementations so that every store
// says the same thing in the same words.

// ClaimFenced is Claim's refusal: the epoch moved since the caller read it.
func ClaimFenced(sandbox, node string, seen uint64, h Head) *FencedError {
	return &FencedError{Sandbox: sandbox, Head: h,
		Reason: fmt.Sprintf("node %s claimed from epoch %d, but the sandbox is at epoch %d (owner %q)", node, seen, h.Epoch, h.Owner)}
}

// NoGeneration: a generation number the sandbox does not retain.
func NoGeneration(sandbox string, number uint64) error {
	return api.Errorf(errdefs.ErrNotFound, "sandbox %s has no generation %d", sandbox, number)
}

// HeadGenerationPinned: DeleteGeneration of the head's generation.
func HeadGenerationPinned(sandbox string, number uint64) error {
	return api.Errorf(errdefs.ErrFailedPrecondition, "generation %d is the head of sandbox %s", number, sandbox)
}

// CheckCustody rejects a custody record that cannot protect anything.
func CheckCustody(c CustodyRecord, ttl time.Duration) error {
	if c.Upload == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "custody: no upload id")
	}
	if c.Node == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "custody of upload %s: no node", c.Upload)
	}
	return CheckTTL(ttl)
}

// NoCustody: a renewal of an upload without (or released) custody.
func NoCustody(upload string) error {
	return api.Errorf(errdefs.ErrNotFound, "upload %s has no custody", upload)
}

// CustodyExpired: a renewal after the expiry.
func CustodyExpired(upload string, at time.Time) error {
	return fmt.Errorf("upload %s: custody ended at %s: %w", upload, at.Format(time.RFC3339Nano), ErrCustodyExpired)
}

// CheckNode rejects a node record without an id or boot id.
func CheckNode(n NodeRecord, ttl time.Duration) error {
	if n.ID == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "node: no id")
	}
	if n.BootID == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "node %s: no boot id", n.ID)
	}
	return CheckTTL(ttl)
}

// NoNode: a lease renewal of a node that never joined (or left).
func NoNode(id string) error {
	return api.Errorf(errdefs.ErrNotFound, "node %s has not joined", id)
}
