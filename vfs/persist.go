package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// FormatVersion is the version of the persisted format (docs/format.md).
const FormatVersion = 1

// Ref names one persisted generation of a delta: the sha256 of its
// generation blob.
type Ref struct{ Root [32]byte }

func (r Ref) String() string { return "vfs1:" + hex.EncodeToString(r.Root[:]) }

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r.Root == [32]byte{} }

// ParseRef parses the String form of a Ref.
func ParseRef(s string) (Ref, error) {
	var r Ref
	h, ok := strings.CutPrefix(s, "vfs1:")
	if !ok {
		return r, fmt.Errorf("vfs: ref %q: want prefix vfs1:", s)
	}
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 32 {
		return r, fmt.Errorf("vfs: ref %q: want 64 hex digits", s)
	}
	copy(r.Root[:], b)
	return r, nil
}

func nodeKey(sum [32]byte) string  { return "vfs/node/" + hex.EncodeToString(sum[:]) }
func chunkKey(sum [32]byte) string { return "vfs/chunk/" + hex.EncodeToString(sum[:]) }

// Node blob types (first byte; the second is FormatVersion).
const (
	blobGeneration = 'G'
	blobTable      = 'T'
	blobDir        = 'D'
)

// memo records that a node was persisted to (or loaded from) a store.
type memo struct {
	sum   [32]byte
	store BlobStore
}

func sameStore(a, b BlobStore) bool {
	if a == nil || b == nil {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// persister writes one generation.
type persister struct {
	ctx     context.Context
	dst     BlobStore
	chunks  map[[32]byte]bool
	keys    map[string]bool
	pending []pendingBlob
	memos   []func() // run once everything is stored
	stats   PersistStats
}

type pendingBlob struct {
	key   string
	data  []byte
	chunk bool
}

// PersistStats says what a Persist wrote.
type PersistStats struct {
	Nodes, Chunks        int   // blobs written
	NodeBytes, ChunkData int64 // bytes written
	Skipped              int   // blobs already present
}

// Persist writes the delta's new chunks and nodes to dst (skipping blobs
// already there) and returns the Ref naming this generation. The FS stays
// usable and may change meanwhile; the Ref names the version at the call.
func (f *FS) Persist(ctx context.Context, dst BlobStore) (Ref, error) {
	ref, _, err := f.PersistStats(ctx, dst)
	return ref, err
}

// PersistStats is Persist reporting what it wrote.
func (f *FS) PersistStats(ctx context.Context, dst BlobStore) (ref Ref, st PersistStats, err error) {
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(*loadError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("vfs: persist: %w", le.err)
		}
	}()
	t := f.cur.Load()
	p := &persister{ctx: ctx, dst: dst, chunks: map[[32]byte]bool{}, keys: map[string]bool{}}
	var b []byte
	b = append(b, blobGeneration, FormatVersion)
	b = binary.AppendUvarint(b, t.root)
	b = binary.AppendUvarint(b, t.nextIno)
	b = binary.AppendVarint(b, t.usage.Bytes)
	b = binary.AppendVarint(b, t.usage.Inodes)
	if t.inodes == nil {
		b = append(b, 0)
	} else {
		sum, err := p.table(t.inodes)
		if err != nil {
			return ref, p.stats, err
		}
		b = append(b, 1)
		b = append(b, sum[:]...)
	}
	// Everything the generation names is stored before the generation.
	if err := p.flush(); err != nil {
		return ref, p.stats, err
	}
	sum := p.put(b)
	if err := p.flush(); err != nil {
		return ref, p.stats, err
	}
	for _, m := range p.memos {
		m()
	}
	return Ref{Root: sum}, p.stats, nil
}

// persistWorkers bounds concurrent Has/Put calls: a directory store spends
// its time in fsync, which overlaps well.
const persistWorkers = 16

// flush stores the pending blobs (in any order, concurrently).
func (p *persister) flush() error {
	pending := p.pending
	p.pending = nil
	if len(pending) == 0 {
		return nil
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		next int
		ferr error
	)
	work := func() {
		defer wg.Done()
		for {
			mu.Lock()
			if next >= len(pending) || ferr != nil {
				mu.Unlock()
				return
			}
			pb := pending[next]
			next++
			mu.Unlock()
			ok, err := p.dst.Has(p.ctx, pb.key)
			if err == nil && !ok {
				err = p.dst.Put(p.ctx, pb.key, bytes.NewReader(pb.data))
			}
			mu.Lock()
			switch {
			case err != nil:
				if ferr == nil {
					ferr = fmt.Errorf("vfs: persist: cannot store %s: %w", pb.key, err)
				}
			case ok:
				p.stats.Skipped++
			case pb.chunk:
				p.stats.Chunks++
				p.stats.ChunkData += int64(len(pb.data))
			default:
				p.stats.Nodes++
				p.stats.NodeBytes += int64(len(pb.data))
			}
			mu.Unlock()
		}
	}
	n := min(persistWorkers, len(pending))
	wg.Add(n)
	for i := 0; i < n; i++ {
		go work()
	}
	wg.Wait()
	return ferr
}

// put queues a node blob and returns its id.
func (p *persister) put(b []byte) [32]byte {
	sum := sha256.Sum256(b)
	key := nodeKey(sum)
	if !p.keys[key] {
		p.keys[key] = true
		p.pending = append(p.pending, pendingBlob{key: key, data: b})
	}
	return sum
}

func (p *persister) putChunk(c *chunk) {
	if p.chunks[c.sum] {
		return
	}
	p.chunks[c.sum] = true
	if c.ld != nil && sameStore(c.ld.src, p.dst) {
		return
	}
	p.pending = append(p.pending, pendingBlob{key: chunkKey(c.sum), data: c.bytes(), chunk: true})
}

// cached returns the id of a node already in dst.
func cached[K comparable, V any](n *hnode[K, V], dst BlobStore) ([32]byte, bool) {
	if n.lz != nil && sameStore(n.lz.ld.src, dst) {
		return n.lz.sum, true
	}
	if m := n.memo.Load(); m != nil && sameStore(m.store, dst) {
		return m.sum, true
	}
	return [32]byte{}, false
}

func (p *persister) table(n *hnode[uint64, *inode]) ([32]byte, error) {
	if sum, ok := cached(n, p.dst); ok {
		return sum, nil
	}
	n = n.load()
	b := []byte{blobTable, FormatVersion}
	b, err := encodeTrie(p, b, n, func(b []byte, ino uint64, in *inode) ([]byte, error) {
		return p.inode(b, in)
	})
	if err != nil {
		return [32]byte{}, err
	}
	sum := p.put(b)
	p.memos = append(p.memos, func() { n.memo.Store(&memo{sum: sum, store: p.dst}) })
	return sum, nil
}

func (p *persister) dir(n *hnode[string, dirent]) ([32]byte, error) {
	if sum, ok := cached(n, p.dst); ok {
		return sum, nil
	}
	n = n.load()
	b := []byte{blobDir, FormatVersion}
	b, err := encodeTrie(p, b, n, func(b []byte, name string, de dirent) ([]byte, error) {
		b = appendString(b, name)
		b = binary.AppendUvarint(b, de.ino)
		b = binary.AppendUvarint(b, uint64(de.typ))
		if de.whiteout {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	})
	if err != nil {
		return [32]byte{}, err
	}
	sum := p.put(b)
	p.memos = append(p.memos, func() { n.memo.Store(&memo{sum: sum, store: p.dst}) })
	return sum, nil
}

// encodeTrie appends a trie node: bitmap, slot count, then per slot a tag
// (0 entry, 1 child) and the entry or the child's 32-byte id.
func encodeTrie[K comparable, V any](p *persister, b []byte, n *hnode[K, V],
	entry func([]byte, K, V) ([]byte, error)) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(n.bitmap))
	b = binary.AppendUvarint(b, uint64(len(n.slots)))
	for i := range n.slots {
		s := &n.slots[i]
		if s.child != nil {
			var sum [32]byte
			var err error
			switch c := any(s.child).(type) {
			case *hnode[uint64, *inode]:
				sum, err = p.table(c)
			case *hnode[string, dirent]:
				sum, err = p.dir(c)
			}
			if err != nil {
				return nil, err
			}
			b = append(b, 1)
			b = append(b, sum[:]...)
			continue
		}
		b = append(b, 0)
		var err error
		if b, err = entry(b, s.key, s.val); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// inode appends the encoding of in (docs/format.md, "Inode").
func (p *persister) inode(b []byte, in *inode) ([]byte, error) {
	b = binary.AppendUvarint(b, in.ino)
	b = binary.AppendUvarint(b, uint64(in.mode))
	b = binary.AppendUvarint(b, uint64(in.uid))
	b = binary.AppendUvarint(b, uint64(in.gid))
	b = binary.AppendUvarint(b, uint64(in.nlink))
	b = binary.AppendUvarint(b, in.rdev)
	b = binary.AppendVarint(b, in.size)
	b = binary.AppendVarint(b, in.atime)
	b = binary.AppendVarint(b, in.mtime)
	b = binary.AppendVarint(b, in.ctime)
	b = appendString(b, in.origin)
	var flags byte
	if in.opaque {
		flags |= 1
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, in.parent)
	b = appendString(b, in.name)
	b = binary.AppendUvarint(b, uint64(len(in.xattrs)))
	for _, x := range in.xattrs {
		b = appendString(b, x.name)
		b = appendString(b, string(x.value))
	}
	switch {
	case in.isDir():
		if in.entries == nil {
			return append(b, 0), nil
		}
		sum, err := p.dir(in.entries)
		if err != nil {
			return nil, err
		}
		b = append(b, 1)
		return append(b, sum[:]...), nil
	case in.mode&fs.ModeSymlink != 0:
		return appendString(b, in.target), nil
	case in.mode.IsRegular():
		ext := in.ext
		if in.size > inlineMax {
			// Unsealed data (a handle still open for writing) is chunked
			// for the blob only; the chunking is deterministic.
			ext = sealExt(ext)
		}
		b = binary.AppendUvarint(b, uint64(len(ext)))
		for _, e := range ext {
			b = append(b, e.kind)
			b = binary.AppendUvarint(b, uint64(e.n))
			if e.kind == extMem {
				b = binary.AppendUvarint(b, 0)
			} else {
				b = binary.AppendUvarint(b, uint64(e.coff))
			}
			switch e.kind {
			case extMem:
				b = append(b, e.mem[e.coff:e.coff+e.n]...)
			case extChunk:
				p.putChunk(e.ch)
				b = append(b, e.ch.sum[:]...)
				b = binary.AppendUvarint(b, uint64(e.ch.n))
			}
		}
	}
	return b, nil
}

// ---- loading ----

// loader fetches and verifies blobs for a lazily loaded FS.
type loader struct {
	ctx context.Context
	src BlobStore
}

// Load opens generation ref of src as a new FS over opts.Base. Only the
// generation blob is read now; every other node and chunk is fetched and
// verified when first touched. A missing or corrupt blob later makes the
// operation that touched it fail with EIO naming the blob.
func Load(ctx context.Context, opts Options, src BlobStore, ref Ref) (*FS, error) {
	ld := &loader{ctx: context.WithoutCancel(ctx), src: src}
	b, err := ld.fetchCtx(ctx, ref.Root)
	if err != nil {
		return nil, err
	}
	t, err := decodeGeneration(ld, b)
	if err != nil {
		return nil, fmt.Errorf("vfs: generation %s: %w", ref, err)
	}
	f := newFS(opts)
	f.cur.Store(t)
	return f, nil
}

func (ld *loader) fetch(sum [32]byte) ([]byte, error) { return ld.fetchCtx(ld.ctx, sum) }

func (ld *loader) fetchCtx(ctx context.Context, sum [32]byte) ([]byte, error) {
	return ld.get(ctx, nodeKey(sum), sum, -1)
}

func (ld *loader) fetchChunk(sum [32]byte, n int64) ([]byte, error) {
	return ld.get(ld.ctx, chunkKey(sum), sum, n)
}

// maxBlob bounds what a single blob may hold, so a hostile store cannot
// make the loader allocate without limit.
const maxBlob = 64 << 20

func (ld *loader) get(ctx context.Context, key string, sum [32]byte, n int64) ([]byte, error) {
	rc, err := ld.src.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot get blob %s: %w", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxBlob+1))
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot read blob %s: %w", key, err)
	}
	if len(b) > maxBlob {
		return nil, fmt.Errorf("vfs: blob %s is larger than %d bytes", key, maxBlob)
	}
	if got := sha256.Sum256(b); got != sum {
		return nil, &CorruptError{Key: key, Got: got}
	}
	if n >= 0 && int64(len(b)) != n {
		return nil, fmt.Errorf("vfs: chunk %s has %d bytes, its reference says %d", key, len(b), n)
	}
	return b, nil
}

// CorruptError is a blob whose content does not match its name.
type CorruptError struct {
	Key string
	Got [32]byte
}

func (e *CorruptError) Error() string {
	return "vfs: blob " + e.Key + " is corrupt: its content hashes to " + hex.EncodeToString(e.Got[:])
}

// ErrMalformed is wrapped by every error about a blob that hashes right but
// does not decode.
var ErrMalformed = errors.New("malformed node")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", ErrMalformed, what)
	}
	d.b = nil
}

func (d *decoder) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte1(what string) byte {
	if len(d.b) < 1 {
		d.fail(what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n uint64, what string) []byte {
	if uint64(len(d.b)) < n {
		d.fail(what)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str(what string) string {
	return string(d.bytes(d.uvarint(what), what))
}

func (d *decoder) sum(what string) (s [32]byte) {
	copy(s[:], d.bytes(32, what))
	return s
}

func (d *decoder) header(typ byte) {
	if t := d.byte1("type"); t != typ && d.err == nil {
		d.err = fmt.Errorf("%w: type %q, want %q", ErrMalformed, t, typ)
	}
	if v := d.byte1("version"); v != FormatVersion && d.err == nil {
		d.err = fmt.Errorf("%w: format version %d, this build reads %d", ErrMalformed, v, FormatVersion)
	}
}

func decodeGeneration(ld *loader, b []byte) (*tree, error) {
	d := &decoder{b: b}
	d.header(blobGeneration)
	t := &tree{}
	t.root = d.uvarint("root")
	t.nextIno = d.uvarint("next inode")
	t.usage.Bytes = d.varint("usage")
	t.usage.Inodes = d.varint("usage")
	if d.byte1("table flag") == 1 {
		sum := d.sum("table id")
		t.inodes = &hnode[uint64, *inode]{lz: &lazyNode[uint64, *inode]{sum: sum, ld: ld, decode: decodeTable}}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}

func decodeTable(ld *loader, b []byte) (*hnode[uint64, *inode], error) {
	d := &decoder{b: b}
	d.header(blobTable)
	n := decodeTrie(d, ld, decodeTable, func(d *decoder) (uint64, *inode) {
		in := decodeInode(d, ld)
		return in.ino, in
	}, inoHash)
	return n, d.err
}

func decodeDir(ld *loader, b []byte) (*hnode[string, dirent], error) {
	d := &decoder{b: b}
	d.header(blobDir)
	n := decodeTrie(d, ld, decodeDir, func(d *decoder) (string, dirent) {
		name := d.str("name")
		if name == "" || len(name) > maxName || strings.IndexByte(name, '/') >= 0 || name == "." || name == ".." {
			d.fail("entry name")
		}
		var de dirent
		de.ino = d.uvarint("entry inode")
		de.typ = fs.FileMode(d.uvarint("entry type")) & fs.ModeType
		de.whiteout = d.byte1("whiteout") == 1
		return name, de
	}, strHash)
	return n, d.err
}

func decodeTrie[K comparable, V any](d *decoder, ld *loader,
	self func(*loader, []byte) (*hnode[K, V], error),
	entry func(*decoder) (K, V), hash func(K) uint64) *hnode[K, V] {
	n := &hnode[K, V]{}
	bitmap := d.uvarint("bitmap")
	count := d.uvarint("slot count")
	if bitmap >= 1<<(1<<hbits) || count > uint64(len(d.b)) || count == 0 {
		d.fail("slot count")
		return nil
	}
	n.bitmap = uint32(bitmap)
	if bitmap != 0 && uint64(popcount(n.bitmap)) != count {
		d.fail("bitmap")
		return nil
	}
	n.slots = make([]hslot[K, V], count)
	for i := range n.slots {
		s := &n.slots[i]
		switch d.byte1("slot tag") {
		case 0:
			s.key, s.val = entry(d)
		case 1:
			sum := d.sum("child id")
			s.child = &hnode[K, V]{lz: &lazyNode[K, V]{sum: sum, ld: ld, decode: self}}
		default:
			d.fail("slot tag")
		}
		if d.err != nil {
			return nil
		}
	}
	if len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return n
}

func decodeInode(d *decoder, ld *loader) *inode {
	in := &inode{}
	in.ino = d.uvarint("inode number")
	in.mode = fs.FileMode(d.uvarint("mode"))
	in.uid = uint32(d.uvarint("uid"))
	in.gid = uint32(d.uvarint("gid"))
	in.nlink = uint32(d.uvarint("nlink"))
	in.rdev = d.uvarint("rdev")
	in.size = d.varint("size")
	in.atime = d.varint("atime")
	in.mtime = d.varint("mtime")
	in.ctime = d.varint("ctime")
	in.origin = d.str("origin")
	in.opaque = d.byte1("flags")&1 != 0
	in.parent = d.uvarint("parent")
	in.name = d.str("name")
	nx := d.uvarint("xattr count")
	if nx > uint64(len(d.b)) {
		d.fail("xattr count")
		return in
	}
	for i := uint64(0); i < nx && d.err == nil; i++ {
		in.xattrs = append(in.xattrs, xattr{name: d.str("xattr"), value: []byte(d.str("xattr value"))})
	}
	if in.size < 0 {
		d.fail("size")
	}
	switch {
	case in.isDir():
		if d.byte1("entries flag") == 1 {
			sum := d.sum("entries id")
			in.entries = &hnode[string, dirent]{lz: &lazyNode[string, dirent]{sum: sum, ld: ld, decode: decodeDir}}
		}
	case in.mode&fs.ModeSymlink != 0:
		in.target = d.str("symlink target")
	case in.mode.IsRegular():
		ne := d.uvarint("extent count")
		if ne > uint64(len(d.b)) {
			d.fail("extent count")
			return in
		}
		var total int64
		for i := uint64(0); i < ne && d.err == nil; i++ {
			var e extent
			e.kind = d.byte1("extent kind")
			e.n = int64(d.uvarint("extent length"))
			e.coff = int64(d.uvarint("extent offset"))
			if e.n <= 0 || e.coff < 0 || e.n > 1<<50 || e.coff > 1<<50 {
				d.fail("extent length")
				break
			}
			switch e.kind {
			case extMem:
				if e.coff != 0 || e.n > inlineMax {
					d.fail("inline extent")
					break
				}
				e.mem = d.bytes(uint64(e.n), "inline data")
			case extChunk:
				sum := d.sum("chunk id")
				cn := int64(d.uvarint("chunk length"))
				if cn <= 0 || cn > maxBlob || e.coff+e.n > cn {
					d.fail("chunk length")
					break
				}
				e.ch = internSum(sum, cn, nil, ld)
			case extBase, extZero:
			default:
				d.fail("extent kind")
			}
			total += e.n
			in.ext = append(in.ext, e)
		}
		if d.err == nil && total != in.size {
			d.fail("extent lengths (they do not add up to the size)")
		}
		reoff(in.ext)
	}
	return in
}

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
