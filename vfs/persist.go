package vfs

// Persisting a delta to a blob store and loading it back, by concern:
// persist.go (the API, Ref, shared types), pack.go (packs being filled and
// written), encode.go (nodes and inodes to bytes), load.go (fetching and
// verifying blobs), packcache.go (whole packs shared by loaders),
// decode.go (bytes to nodes), reachable.go (what a generation needs, for
// GC). docs/format.md is the format these implement.

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
)

// BlobStore is what the vfs needs of a blob store (package store implements
// it). Keys are the strings described in docs/format.md. Get of a missing
// key returns an error satisfying errors.Is(err, fs.ErrNotExist). Put of an
// existing key must leave it readable (blobs are content-addressed, so the
// bytes are the same).
type BlobStore interface {
	Put(ctx context.Context, key string, r io.Reader) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Has(ctx context.Context, key string) (bool, error)
}

// RangeGetter is an optional interface of a BlobStore: GetRange returns n
// bytes of the object under key starting at off (S3's Range header). The
// loader uses it to fetch one blob out of a pack. Without it the loader
// uses Get and, if the reader is an io.ReaderAt (an *os.File from
// store/dir), reads the range from it; otherwise it reads the whole pack
// once and keeps it in a bounded cache.
type RangeGetter interface {
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error)
}

// FormatVersion is the version of the persisted format (docs/format.md).
const FormatVersion = 2

const refPrefix = "vfs2:"

// Ref names one persisted generation of a delta: the sha256 of the pack
// object that ends with its generation record.
type Ref struct{ Root [32]byte }

func (r Ref) String() string { return refPrefix + hex.EncodeToString(r.Root[:]) }

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r.Root == [32]byte{} }

// ParseRef parses the String form of a Ref.
func ParseRef(s string) (Ref, error) {
	var r Ref
	h, ok := strings.CutPrefix(s, refPrefix)
	if !ok {
		return r, fmt.Errorf("vfs: ref %q: want prefix %s (format version %d)", s, refPrefix, FormatVersion)
	}
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 32 {
		return r, fmt.Errorf("vfs: ref %q: want 64 hex digits", s)
	}
	copy(r.Root[:], b)
	return r, nil
}

// Key returns the blob store key of the pack object holding the
// generation (GC treats it as the generation's root).
func (r Ref) Key() string { return packKey(r.Root) }

func packKey(sum [32]byte) string { return "vfs/pack/" + hex.EncodeToString(sum[:]) }

// Blob types (first byte of a node; the second is FormatVersion).
const (
	blobGeneration = 'G'
	blobTable      = 'T'
	blobDir        = 'D'
)

// genMagic ends a pack that holds a generation record (docs/format.md).
const genMagic = "vfG2"

// Pack sizing. A pack is sealed (hashed and handed to a writer) once it
// holds packTarget bytes; packs are written concurrently while encoding
// goes on. The last pack carries the generation record if it holds at most
// finalMax bytes (one object for a small generation, the hibernate case);
// a larger one is written as a plain pack and the generation gets a pack
// of its own, so Load never reads more than finalMax bytes up front.
const (
	packTarget   = 4 << 20
	finalMax     = 1 << 20
	packWriters  = 4
	maxPack      = 64 << 20 // the largest pack a reader accepts
	maxPackTable = 1 << 16  // pack ids one node may name
)

// blobLoc is where a blob is stored: n bytes at off in the pack object named
// by pack (the sha256 of the pack).
type blobLoc struct {
	pack   [32]byte
	off, n int64
}

// lineage identifies an FS and its forks. A persist references blobs only
// in packs written (or loaded) by its own lineage, whose heads and
// snapshots keep them from the garbage collector.
type lineage struct{ _ byte }

// memo records that a node was persisted to (or loaded from) a store.
type memo struct {
	sum   [32]byte
	store BlobStore
	lin   *lineage
	at    blobLoc
}

func sameStore(a, b BlobStore) bool {
	if a == nil || b == nil {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// genMemo remembers the generation last persisted from one tree version.
type genMemo struct {
	t     *tree
	store BlobStore
	ref   Ref
}

// PersistStats says what a Persist wrote.
type PersistStats struct {
	Nodes, Chunks        int   // blobs written (inside packs)
	NodeBytes, ChunkData int64 // bytes of those blobs
	Skipped              int   // blobs already stored by this lineage, not written again
	Packs                int   // objects written (packs, the last one with the generation)
	PackBytes            int64 // bytes of those objects
}

// Persist writes the delta's new chunks and nodes to dst (skipping blobs
// this FS lineage stored there before) and returns the Ref naming this
// generation. The FS stays usable and may change meanwhile; the Ref names
// the version at the call.
func (f *FS) Persist(ctx context.Context, dst BlobStore) (Ref, error) {
	ref, _, err := f.PersistStats(ctx, dst)
	return ref, err
}

// persister writes one generation.
type persister struct {
	ctx    context.Context
	dst    BlobStore
	lin    *lineage
	open   *packBuf
	done   map[any]ploc        // trie nodes handled in this persist
	chunks map[[32]byte]ploc   // chunks handled in this persist
	ext    map[*inode][]extent // sealed extents of unsealed files
	memos  []func()
	stats  PersistStats
	ld     *loader // reads back what this persist stored (reader)

	wg   sync.WaitGroup
	sem  chan struct{}
	mu   sync.Mutex
	werr error
}

// PersistStats is Persist reporting what it wrote.
func (f *FS) PersistStats(ctx context.Context, dst BlobStore) (ref Ref, st PersistStats, err error) {
	t := f.cur.Load()
	if m := f.lastGen.Load(); m != nil && m.t == t && sameStore(m.store, dst) {
		return m.ref, st, nil
	}
	p := &persister{ctx: ctx, dst: dst, lin: f.lin, open: &packBuf{},
		done: map[any]ploc{}, chunks: map[[32]byte]ploc{}, ext: map[*inode][]extent{},
		sem: make(chan struct{}, packWriters)}
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(*loadError)
			if !ok {
				panic(r)
			}
			p.wg.Wait()
			err = fmt.Errorf("vfs: persist: %w", le.err)
		}
	}()
	ref, err = p.generation(t)
	if err != nil {
		p.wg.Wait()
		return ref, p.stats, err
	}
	for _, m := range p.memos {
		m()
	}
	f.lastGen.Store(&genMemo{t: t, store: dst, ref: ref})
	return ref, p.stats, nil
}
