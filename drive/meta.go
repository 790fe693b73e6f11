package drive

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Meta is where drives keep their metadata: one record per drive and,
// per drive, its entries (inodes), advisory locks and mount leases. Every
// filesystem operation is one Update or View; package drive holds the
// filesystem's logic (path walks, rename checks, quota) once, over Tx, so
// a backend only stores rows. Implementations: drive/boltmeta (one node,
// any number of processes), drive/pgmeta (a fleet).
type Meta interface {
	// CreateDrive records a new drive and its root directory (ID RootID).
	// A drive of that tenant and name already existing: an error matching
	// errdefs.ErrAlreadyExists.
	CreateDrive(ctx context.Context, r Record) error
	// Drive returns the record of tenant's drive name. Missing: an error
	// matching errdefs.ErrNotFound.
	Drive(ctx context.Context, tenant, name string) (Record, error)
	// Drives lists tenant's drives by name ("" lists every tenant's).
	Drives(ctx context.Context, tenant string) ([]Record, error)
	// Update runs fn in one read-write transaction on drive id, serialised
	// with every other Update of that drive (on any node): fn sees the
	// latest committed state and its writes commit together or not at all.
	// fn's error aborts the transaction and is returned as is. A missing
	// drive: an error matching errdefs.ErrNotFound.
	Update(ctx context.Context, id string, fn func(Tx) error) error
	// View runs fn in one read-only transaction: a consistent snapshot.
	View(ctx context.Context, id string, fn func(Tx) error) error
	Close() error
}

// Tx is one transaction on one drive. Lookups of a missing row return an
// error matching ErrNoEntry.
type Tx interface {
	// Record is the drive's record as of this transaction.
	Record() (Record, error)
	// SetUsed records the drive's bytes in use.
	SetUsed(used int64) error
	// SetQuota changes the drive's quota.
	SetQuota(quota int64) error
	// SetSweeps records the count of sweeps that doomed chunks.
	SetSweeps(n uint64) error
	// NewID returns an entry id never handed out before in this drive.
	NewID() (uint64, error)
	Entry(id uint64) (Entry, error)
	Lookup(parent uint64, name string) (Entry, error)
	// Children returns parent's entries sorted by name.
	Children(parent uint64) ([]Entry, error)
	// HasChildren reports whether parent has any entry.
	HasChildren(parent uint64) (bool, error)
	// Put inserts or replaces the entry with e.ID. The caller has checked
	// that (Parent, Name) is free or is e's own.
	Put(e Entry) error
	DeleteEntry(id uint64) error
	// Locks returns the lock rows on inode, expired ones included.
	Locks(inode uint64) ([]Lock, error)
	PutLock(l Lock) error
	DeleteLock(inode uint64, owner string) error
	// Mounts returns the mount leases, expired ones included.
	Mounts() ([]Mount, error)
	PutMount(m Mount) error
	DeleteMount(id string) error
	// DeleteDrive removes the drive's record and all its rows.
	DeleteDrive() error
	// Entries calls fn for every entry of the drive (the sweep's marking).
	Entries(fn func(Entry) error) error
	// Garbage returns the sweep's rows: all of them (sums nil) or those
	// of sums.
	Garbage(sums [][32]byte) ([]Garbage, error)
	PutGarbage(g Garbage) error
	DeleteGarbage(sum [32]byte) error
	// Now is the store's clock, which decides lock and lease expiry (the
	// database's on PostgreSQL, so the nodes' clocks need not agree).
	Now() (time.Time, error)
}

// ErrNoEntry is returned (wrapped) by Tx lookups of a missing row. It
// matches fs.ErrNotExist.
var ErrNoEntry error = noEntry{}

type noEntry struct{}

func (noEntry) Error() string        { return "no such entry" }
func (noEntry) Is(target error) bool { return target == fs.ErrNotExist }

// RootID is the id of every drive's root directory.
const RootID uint64 = 1

// Record describes one drive.
type Record struct {
	ID     string // random hex; names the blob prefix drives/<ID>/
	Tenant string
	Name   string
	Quota  int64 // bytes; 0: none
	Used   int64 // bytes of file content (logical sizes)
	// Sweeps counts the sweeps that doomed chunks: a commit that sees it
	// moved since its file was opened checks its chunks are still stored.
	Sweeps    uint64
	CreatedAt time.Time
}

// Entry is one file or directory: an inode-style row. A rename changes
// one row (Parent, Name), whatever the size of the tree under it.
type Entry struct {
	ID      uint64
	Parent  uint64 // 0 for the root
	Name    string
	Dir     bool
	Mode    fs.FileMode // permission bits only
	Size    int64
	MTime   time.Time
	Version uint64 // bumped by every change of content or attributes
	Chunks  []Chunk
}

// Chunk is one ChunkSize slot of a file: the sha256 of its stored bytes
// (zero: a hole, all zeros) and their length, at most ChunkSize. A slot's
// content is its bytes followed by zeros up to ChunkSize or the file's end.
type Chunk struct {
	Sum [32]byte
	Len uint32
}

// Hole reports whether the slot holds no stored bytes.
func (c Chunk) Hole() bool { return c.Sum == [32]byte{} }

// Lock is one holder's advisory lock on an inode.
type Lock struct {
	Inode     uint64
	Owner     string // the open file holding it (flock(2) locks belong to open files)
	Exclusive bool
	Expires   time.Time
}

// Garbage is the sweep's row for a stored chunk that no entry referred to
// when it looked: since when, and whether the sweep is deleting it now
// (Doomed: a commit that needs it must upload it again after the sweep).
type Garbage struct {
	Sum       [32]byte
	FirstSeen time.Time
	Doomed    bool
}

// Mount is one Drive instance's lease on its drive.
type Mount struct {
	ID      string
	Expires time.Time
}

const chunkRecord = 36 // sha256 + uint32 length

// MarshalChunks encodes a chunk list for a backend to store as bytes.
func MarshalChunks(cs []Chunk) []byte {
	b := make([]byte, 0, len(cs)*chunkRecord)
	for _, c := range cs {
		b = append(b, c.Sum[:]...)
		b = binary.BigEndian.AppendUint32(b, c.Len)
	}
	return b
}

// UnmarshalChunks decodes MarshalChunks's bytes.
func UnmarshalChunks(b []byte) ([]Chunk, error) {
	if len(b)%chunkRecord != 0 {
		return nil, fmt.Errorf("corrupt chunk list: %d bytes is not a multiple of %d", len(b), chunkRecord)
	}
	if len(b) == 0 {
		return nil, nil
	}
	cs := make([]Chunk, len(b)/chunkRecord)
	for i := range cs {
		r := b[i*chunkRecord:]
		copy(cs[i].Sum[:], r[:32])
		cs[i].Len = binary.BigEndian.Uint32(r[32:36])
		if cs[i].Len > ChunkSize {
			return nil, fmt.Errorf("corrupt chunk list: chunk %d is %d bytes, more than %d", i, cs[i].Len, ChunkSize)
		}
	}
	return cs, nil
}

// IsNoEntry reports whether err is a Tx lookup of a missing row.
func IsNoEntry(err error) bool { return errors.Is(err, ErrNoEntry) }
