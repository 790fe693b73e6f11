package vfs

import (
	"bytes"
	"container/list"
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

// packBuf is a pack being filled: its blobs are kept as segments (chunk
// data is not copied); id is set once it is sealed.
type packBuf struct {
	segs   [][]byte
	size   int64
	id     [32]byte
	sealed bool
}

func (pb *packBuf) add(b []byte) {
	pb.segs = append(pb.segs, b)
	pb.size += int64(len(b))
}

func (pb *packBuf) hash() [32]byte {
	h := sha256.New()
	for _, b := range pb.segs {
		h.Write(b)
	}
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// segReader reads a pack's segments in order.
type segReader struct {
	segs [][]byte
	off  int
}

func (r *segReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		m := copy(p[n:], r.segs[0][r.off:])
		n += m
		r.off += m
		if r.off == len(r.segs[0]) {
			r.segs, r.off = r.segs[1:], 0
		}
	}
	if n == 0 && len(r.segs) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *segReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(r.segs) > 0 {
		m, err := w.Write(r.segs[0][r.off:])
		total += int64(m)
		r.off += m
		if err != nil {
			return total, err
		}
		r.segs, r.off = r.segs[1:], 0
	}
	return total, nil
}

// ploc is a loc during a persist: in a pack of this persist (pb != nil)
// or in an existing one.
type ploc struct {
	pb  *packBuf
	at  blobLoc
	sum [32]byte
}

func (l ploc) resolve() blobLoc {
	if l.pb != nil {
		return blobLoc{pack: l.pb.id, off: l.at.off, n: l.at.n}
	}
	return l.at
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

func (p *persister) generation(t *tree) (Ref, error) {
	var table ploc
	if t.inodes != nil {
		var err error
		if table, err = p.table(t.inodes); err != nil {
			return Ref{}, err
		}
	}
	if p.open.size > finalMax {
		p.seal()
	}
	var r refs
	var body []byte
	body = binary.AppendUvarint(body, t.root)
	body = binary.AppendUvarint(body, t.nextIno)
	body = binary.AppendVarint(body, t.usage.Bytes)
	body = binary.AppendVarint(body, t.usage.Inodes)
	if t.inodes == nil {
		body = append(body, 0)
	} else {
		body = append(body, 1)
		body = p.appendRef(body, &r, table)
	}
	gen := r.node(blobGeneration, body)
	trailer := binary.LittleEndian.AppendUint32(nil, uint32(len(gen)))
	trailer = append(trailer, genMagic...)
	obj := p.open
	obj.add(gen)
	obj.add(trailer)
	// Every pack the generation names is stored before the pack that
	// holds it.
	p.wg.Wait()
	if p.werr != nil {
		return Ref{}, p.werr
	}
	id := obj.hash()
	if err := p.dst.Put(p.ctx, packKey(id), &segReader{segs: obj.segs}); err != nil {
		return Ref{}, fmt.Errorf("vfs: persist: cannot store %s: %w", packKey(id), err)
	}
	obj.id, obj.sealed = id, true
	p.stats.Packs++
	p.stats.PackBytes += obj.size
	return Ref{Root: id}, nil
}

// seal hashes the open pack and writes it in the background.
func (p *persister) seal() {
	pb := p.open
	p.open = &packBuf{}
	if pb.size == 0 {
		return
	}
	pb.id = pb.hash()
	pb.sealed = true
	p.stats.Packs++
	p.stats.PackBytes += pb.size
	p.wg.Add(1)
	p.sem <- struct{}{}
	go func() {
		defer p.wg.Done()
		defer func() { <-p.sem }()
		err := p.dst.Put(p.ctx, packKey(pb.id), &segReader{segs: pb.segs})
		if err != nil {
			p.mu.Lock()
			if p.werr == nil {
				p.werr = fmt.Errorf("vfs: persist: cannot store %s: %w", packKey(pb.id), err)
			}
			p.mu.Unlock()
		}
	}()
}

func (p *persister) maybeSeal() {
	if p.open.size >= packTarget {
		p.seal()
	}
}

// place appends a blob whose id is sum to the open pack.
func (p *persister) place(b []byte, sum [32]byte) ploc {
	l := ploc{pb: p.open, at: blobLoc{off: p.open.size, n: int64(len(b))}, sum: sum}
	p.open.add(b)
	return l
}

// refs collects the pack table of one node.
type refs struct{ ids [][32]byte }

func (r *refs) index(id [32]byte) uint64 {
	for i := range r.ids {
		if r.ids[i] == id {
			return uint64(i + 1)
		}
	}
	r.ids = append(r.ids, id)
	return uint64(len(r.ids))
}

// node returns type, version, the pack table, then body.
func (r *refs) node(typ byte, body []byte) []byte {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+32*len(r.ids)+len(body))
	b = append(b, typ, FormatVersion)
	b = binary.AppendUvarint(b, uint64(len(r.ids)))
	for _, id := range r.ids {
		b = append(b, id[:]...)
	}
	return append(b, body...)
}

// appendRef appends a reference: pack index (0 = the pack holding the
// referring node, which is the open pack), offset, length, blob id.
func (p *persister) appendRef(b []byte, r *refs, l ploc) []byte {
	var k uint64
	if l.pb == nil || l.pb != p.open {
		k = r.index(l.resolve().pack)
	}
	b = binary.AppendUvarint(b, k)
	b = binary.AppendUvarint(b, uint64(l.at.off))
	b = binary.AppendUvarint(b, uint64(l.at.n))
	return append(b, l.sum[:]...)
}

// cached returns where a node already is in dst for this lineage.
func cached[K comparable, V any](n *hnode[K, V], dst BlobStore, lin *lineage) (ploc, bool) {
	if n.lz != nil && n.lz.ld.lin == lin && sameStore(n.lz.ld.src, dst) {
		return ploc{at: n.lz.at, sum: n.lz.sum}, true
	}
	if m := n.memo.Load(); m != nil && m.lin == lin && sameStore(m.store, dst) {
		return ploc{at: m.at, sum: m.sum}, true
	}
	return ploc{}, false
}

func (p *persister) table(n *hnode[uint64, *inode]) (ploc, error) {
	return persistTrie(p, n, blobTable, p.prepInode, func(b []byte, r *refs, _ uint64, in *inode) []byte {
		return p.inode(b, r, in)
	})
}

func (p *persister) dir(n *hnode[string, dirent]) (ploc, error) {
	return persistTrie(p, n, blobDir, nil, func(b []byte, _ *refs, name string, de dirent) []byte {
		b = appendString(b, name)
		b = binary.AppendUvarint(b, de.ino)
		b = binary.AppendUvarint(b, uint64(de.typ))
		if de.whiteout {
			return append(b, 1)
		}
		return append(b, 0)
	})
}

func (p *persister) child(c any) (ploc, error) {
	switch c := c.(type) {
	case *hnode[uint64, *inode]:
		return p.table(c)
	case *hnode[string, dirent]:
		return p.dir(c)
	}
	panic("vfs: unknown trie type")
}

// persistTrie stores a trie node after its children (a node's id depends
// on theirs) in two passes: the first stores everything the node refers
// to, the second encodes it. No pack is sealed between the second pass and
// placing the node, so "same pack" references stay true.
func persistTrie[K comparable, V any](p *persister, n *hnode[K, V], typ byte,
	prep func(V) error, entry func([]byte, *refs, K, V) []byte) (ploc, error) {
	if l, ok := p.done[n]; ok {
		return l, nil
	}
	if l, ok := cached(n, p.dst, p.lin); ok {
		p.done[n] = l
		p.stats.Skipped++
		return l, nil
	}
	orig := n
	n = n.load()
	kids := make(map[*hnode[K, V]]ploc, len(n.kids))
	for _, c := range n.kids {
		l, err := p.child(c)
		if err != nil {
			return ploc{}, err
		}
		kids[c] = l
	}
	if prep != nil {
		for i := range n.entries {
			if err := prep(n.entries[i].val); err != nil {
				return ploc{}, err
			}
		}
	}
	p.maybeSeal()
	var r refs
	body := binary.AppendUvarint(nil, uint64(n.datamap|n.nodemap))
	body = binary.AppendUvarint(body, uint64(n.slotCount()))
	n.eachSlot(func(e *hentry[K, V], c *hnode[K, V]) {
		if c != nil {
			body = append(body, 1)
			body = p.appendRef(body, &r, kids[c])
			return
		}
		body = append(body, 0)
		body = entry(body, &r, e.key, e.val)
	})
	b := r.node(typ, body)
	l := p.place(b, sha256.Sum256(b))
	p.stats.Nodes++
	p.stats.NodeBytes += int64(len(b))
	p.done[orig] = l
	store, lin := p.dst, p.lin
	p.memos = append(p.memos, func() {
		orig.memo.Store(&memo{sum: l.sum, store: store, lin: lin, at: l.resolve()})
	})
	return l, nil
}

// sealedExt returns in's extents cut into chunks (unsealed data, from a
// handle still open for writing, is chunked for the blob only; the
// chunking is deterministic).
func (p *persister) sealedExt(in *inode) []extent {
	if in.size <= inlineMax || sealed(in.ext) {
		return in.ext
	}
	if e, ok := p.ext[in]; ok {
		return e
	}
	e := sealExt(in.ext)
	p.ext[in] = e
	return e
}

// prepInode stores what an inode refers to: its directory trie, its chunks.
func (p *persister) prepInode(in *inode) error {
	switch {
	case in.isDir():
		if in.entries != nil {
			_, err := p.dir(in.entries)
			return err
		}
	case in.mode.IsRegular():
		for _, e := range p.sealedExt(in) {
			if e.kind == extChunk {
				p.putChunk(e.ch)
			}
		}
	}
	return nil
}

func (p *persister) putChunk(c *chunk) {
	if _, ok := p.chunks[c.sum]; ok {
		return
	}
	if at, ok := c.locFor(p.dst, p.lin); ok {
		p.chunks[c.sum] = ploc{at: at, sum: c.sum}
		p.stats.Skipped++
		return
	}
	data := c.bytes()
	p.maybeSeal()
	l := p.place(data, c.sum)
	p.chunks[c.sum] = l
	p.stats.Chunks++
	p.stats.ChunkData += int64(len(data))
	store, lin := p.dst, p.lin
	p.memos = append(p.memos, func() { c.addLoc(chunkLoc{lin: lin, src: store, at: l.resolve()}) })
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// inode appends the encoding of in (docs/format.md, "Inode"); prepInode
// has stored what it refers to.
func (p *persister) inode(b []byte, r *refs, in *inode) []byte {
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
			return append(b, 0)
		}
		b = append(b, 1)
		return p.appendRef(b, r, p.done[in.entries])
	case in.mode&fs.ModeSymlink != 0:
		return appendString(b, in.target)
	case in.mode.IsRegular():
		ext := p.sealedExt(in)
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
				b = p.appendRef(b, r, p.chunks[e.ch.sum])
			}
		}
	}
	return b
}

// ---- loading ----

// loader fetches and verifies blobs for a lazily loaded FS.
type loader struct {
	ctx context.Context
	src BlobStore
	lin *lineage
	// visit, if set, sees every reference decoded (Reachable).
	visit func(blobLoc)
}

// Load opens generation ref of src as a new FS over opts.Base. Only the
// pack holding the generation record is read now; every other node and
// chunk is fetched and verified when first touched. A missing or corrupt
// blob later makes the operation that touched it fail with EIO naming the
// blob.
func Load(ctx context.Context, opts Options, src BlobStore, ref Ref) (*FS, error) {
	f := newFS(opts)
	ld := &loader{ctx: context.WithoutCancel(ctx), src: src, lin: f.lin}
	t, err := loadGeneration(ctx, ld, ref)
	if err != nil {
		return nil, err
	}
	f.cur.Store(t)
	f.lastGen.Store(&genMemo{t: t, store: src, ref: ref})
	return f, nil
}

func loadGeneration(ctx context.Context, ld *loader, ref Ref) (*tree, error) {
	b, err := ld.whole(ctx, ref.Root)
	if err != nil {
		return nil, err
	}
	gen, err := genRecord(b)
	if err != nil {
		return nil, fmt.Errorf("vfs: generation %s: %w", ref, err)
	}
	t, err := decodeGeneration(ld, ref.Root, gen)
	if err != nil {
		return nil, fmt.Errorf("vfs: generation %s: %w", ref, err)
	}
	return t, nil
}

// genRecord returns the generation record at the end of a pack.
func genRecord(b []byte) ([]byte, error) {
	if len(b) < 8 || string(b[len(b)-4:]) != genMagic {
		return nil, fmt.Errorf("%w: pack does not end with a generation record", ErrMalformed)
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > int64(len(b)-8) {
		return nil, fmt.Errorf("%w: generation record length %d exceeds the pack", ErrMalformed, n)
	}
	return b[int64(len(b)-8)-n : len(b)-8], nil
}

// packCache keeps whole packs read by loaders (a generation's last pack,
// and every pack of a store that cannot read a range), bounded by bytes,
// least recently used out first. Packs in it were verified against their
// id, so every loader may share them.
var packCache = struct {
	sync.Mutex
	m     map[[32]byte]*list.Element // of *cachedPack
	lru   list.List                  // front: most recently used
	bytes int64
}{m: map[[32]byte]*list.Element{}}

type cachedPack struct {
	id [32]byte
	b  []byte
}

const packCacheMax = 64 << 20

func cacheGet(id [32]byte) []byte {
	packCache.Lock()
	defer packCache.Unlock()
	e := packCache.m[id]
	if e == nil {
		return nil
	}
	packCache.lru.MoveToFront(e)
	return e.Value.(*cachedPack).b
}

func cachePut(id [32]byte, b []byte) {
	if len(b) > packCacheMax/4 {
		return
	}
	packCache.Lock()
	defer packCache.Unlock()
	if packCache.m[id] != nil {
		return
	}
	for packCache.bytes+int64(len(b)) > packCacheMax && packCache.lru.Len() > 0 {
		old := packCache.lru.Back()
		cp := packCache.lru.Remove(old).(*cachedPack)
		delete(packCache.m, cp.id)
		packCache.bytes -= int64(len(cp.b))
	}
	packCache.m[id] = packCache.lru.PushFront(&cachedPack{id: id, b: b})
	packCache.bytes += int64(len(b))
}

// whole reads a pack, verifies it against its id and caches it.
func (ld *loader) whole(ctx context.Context, id [32]byte) ([]byte, error) {
	if b := cacheGet(id); b != nil {
		return b, nil
	}
	key := packKey(id)
	rc, err := ld.src.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot get %s: %w", key, err)
	}
	defer rc.Close()
	return ld.readWhole(rc, id)
}

func (ld *loader) readWhole(rc io.Reader, id [32]byte) ([]byte, error) {
	key := packKey(id)
	b, err := io.ReadAll(io.LimitReader(rc, maxPack+1))
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot read %s: %w", key, err)
	}
	if len(b) > maxPack {
		return nil, fmt.Errorf("vfs: pack %s is larger than %d bytes", key, maxPack)
	}
	if got := sha256.Sum256(b); got != id {
		return nil, &CorruptError{Key: key, Got: got}
	}
	cachePut(id, b)
	return b, nil
}

// read fetches the blob at l and verifies it against sum. what names the
// blob kind for errors ("node", "chunk"). The result is the caller's.
func (ld *loader) read(l blobLoc, sum [32]byte, what string) ([]byte, error) {
	key := packKey(l.pack)
	if l.off < 0 || l.n <= 0 || l.n > maxBlob || l.off > maxPack {
		return nil, fmt.Errorf("vfs: %s %x: bad range %d+%d in %s", what, sum[:8], l.off, l.n, key)
	}
	var b []byte
	if p := cacheGet(l.pack); p != nil {
		if l.off+l.n > int64(len(p)) {
			return nil, fmt.Errorf("vfs: %s %x: range %d+%d beyond the end of %s (%d bytes): %w",
				what, sum[:8], l.off, l.n, key, len(p), ErrMalformed)
		}
		b = bytes.Clone(p[l.off : l.off+l.n])
	} else {
		var err error
		if b, err = ld.fetchRange(l); err != nil {
			return nil, err
		}
	}
	if got := sha256.Sum256(b); got != sum {
		return nil, &CorruptError{Key: key, Got: got, Blob: sum, Off: l.off, N: l.n, Kind: what}
	}
	return b, nil
}

func (ld *loader) fetchRange(l blobLoc) ([]byte, error) {
	key := packKey(l.pack)
	if rg, ok := ld.src.(RangeGetter); ok {
		rc, err := rg.GetRange(ld.ctx, key, l.off, l.n)
		if err != nil {
			return nil, fmt.Errorf("vfs: cannot get %s: %w", key, err)
		}
		defer rc.Close()
		b := make([]byte, l.n)
		if _, err := io.ReadFull(rc, b); err != nil {
			return nil, fmt.Errorf("vfs: cannot read %d+%d of %s: %w", l.off, l.n, key, err)
		}
		return b, nil
	}
	b := make([]byte, l.n)
	readAt := func(ra io.ReaderAt) ([]byte, error) {
		if n, err := ra.ReadAt(b, l.off); n != len(b) {
			if err == io.EOF {
				err = fmt.Errorf("range beyond the end: %w", ErrMalformed)
			}
			return nil, fmt.Errorf("vfs: cannot read %d+%d of %s: %w", l.off, l.n, key, err)
		}
		return b, nil
	}
	if n, err, ok := readOpen(ld.src, l.pack, b, l.off); ok {
		if n == len(b) {
			return b, nil
		}
		if err == io.EOF {
			err = fmt.Errorf("range beyond the end: %w", ErrMalformed)
		}
		return nil, fmt.Errorf("vfs: cannot read %d+%d of %s: %w", l.off, l.n, key, err)
	}
	rc, err := ld.src.Get(ld.ctx, key)
	if err != nil {
		return nil, fmt.Errorf("vfs: cannot get %s: %w", key, err)
	}
	if ra, ok := rc.(io.ReaderAt); ok {
		b, err := readAt(ra)
		if !keepOpen(ld.src, l.pack, rc) {
			rc.Close()
		}
		return b, err
	}
	defer rc.Close()
	p, err := ld.readWhole(rc, l.pack)
	if err != nil {
		return nil, err
	}
	if l.off+l.n > int64(len(p)) {
		return nil, fmt.Errorf("vfs: range %d+%d beyond the end of %s (%d bytes): %w", l.off, l.n, key, len(p), ErrMalformed)
	}
	return bytes.Clone(p[l.off : l.off+l.n]), nil
}

// maxBlob bounds what a single blob may hold, so a hostile store cannot
// make the loader allocate without limit.
const maxBlob = 64 << 20

// CorruptError is a blob whose content does not match its name.
type CorruptError struct {
	Key string   // the pack object
	Got [32]byte // hash of what was read
	// Blob, Off, N and Kind name the blob inside the pack ("node",
	// "chunk"); zero when the whole pack did not match its key.
	Blob   [32]byte
	Off, N int64
	Kind   string
}

func (e *CorruptError) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("vfs: %s %s at %d+%d in %s is corrupt: its content hashes to %s",
			e.Kind, hex.EncodeToString(e.Blob[:]), e.Off, e.N, e.Key, hex.EncodeToString(e.Got[:]))
	}
	return "vfs: pack " + e.Key + " is corrupt: its content hashes to " + hex.EncodeToString(e.Got[:])
}

// ErrMalformed is wrapped by every error about a blob that hashes right but
// does not decode.
var ErrMalformed = errors.New("malformed node")

type decoder struct {
	b     []byte
	err   error
	self  [32]byte   // the pack holding this node
	packs [][32]byte // its pack table
	ld    *loader
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

// header reads type, version and the pack table.
func (d *decoder) header(typ byte) {
	if t := d.byte1("type"); t != typ && d.err == nil {
		d.err = fmt.Errorf("%w: type %q, want %q", ErrMalformed, t, typ)
	}
	if v := d.byte1("version"); v != FormatVersion && d.err == nil {
		d.err = fmt.Errorf("%w: format version %d, this build reads %d", ErrMalformed, v, FormatVersion)
	}
	np := d.uvarint("pack count")
	if np > uint64(len(d.b)/32) || np > maxPackTable {
		d.fail("pack count")
		return
	}
	d.packs = make([][32]byte, np)
	for i := range d.packs {
		d.packs[i] = d.sum("pack id")
	}
}

// ref reads a reference (docs/format.md, "References").
func (d *decoder) ref(what string) (blobLoc, [32]byte) {
	var l blobLoc
	k := d.uvarint(what + " pack")
	switch {
	case k == 0:
		l.pack = d.self
	case k <= uint64(len(d.packs)):
		l.pack = d.packs[k-1]
	default:
		d.fail(what + " pack index")
	}
	off, n := d.uvarint(what+" offset"), d.uvarint(what+" length")
	if off > maxPack || n == 0 || n > maxBlob {
		d.fail(what + " range")
	}
	l.off, l.n = int64(off), int64(n)
	sum := d.sum(what + " id")
	if d.err == nil && d.ld != nil && d.ld.visit != nil {
		d.ld.visit(l)
	}
	return l, sum
}

func decodeGeneration(ld *loader, self [32]byte, b []byte) (*tree, error) {
	d := &decoder{b: b, self: self, ld: ld}
	d.header(blobGeneration)
	t := &tree{}
	t.root = d.uvarint("root")
	t.nextIno = d.uvarint("next inode")
	t.usage.Bytes = d.varint("usage")
	t.usage.Inodes = d.varint("usage")
	if d.byte1("table flag") == 1 {
		at, sum := d.ref("table")
		t.inodes = &hnode[uint64, *inode]{lz: &lazyNode[uint64, *inode]{sum: sum, at: at, ld: ld, decode: decodeTable}}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}

func decodeTable(ld *loader, self [32]byte, b []byte) (*hnode[uint64, *inode], error) {
	d := &decoder{b: b, self: self, ld: ld}
	d.header(blobTable)
	n := decodeTrie(d, ld, decodeTable, func(d *decoder) (uint64, *inode) {
		in := decodeInode(d, ld)
		return in.ino, in
	})
	return n, d.err
}

func decodeDir(ld *loader, self [32]byte, b []byte) (*hnode[string, dirent], error) {
	d := &decoder{b: b, self: self, ld: ld}
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
	})
	return n, d.err
}

func decodeTrie[K comparable, V any](d *decoder, ld *loader,
	self func(*loader, [32]byte, []byte) (*hnode[K, V], error),
	entry func(*decoder) (K, V)) *hnode[K, V] {
	if d.err != nil {
		return nil
	}
	n := &hnode[K, V]{}
	bitmap := d.uvarint("bitmap")
	count := d.uvarint("slot count")
	if bitmap >= 1<<(1<<hbits) || count > uint64(len(d.b)) || count == 0 {
		d.fail("slot count")
		return nil
	}
	bm := uint32(bitmap)
	if bitmap != 0 && uint64(popcount(bm)) != count {
		d.fail("bitmap")
		return nil
	}
	for i := uint64(0); i < count; i++ {
		bit := bm & -bm // 0 in a collision node
		bm &^= bit
		switch d.byte1("slot tag") {
		case 0:
			k, v := entry(d)
			n.entries = append(n.entries, hentry[K, V]{key: k, val: v})
			n.datamap |= bit
		case 1:
			if bit == 0 {
				d.fail("slot tag (a child in a collision node)")
				break
			}
			at, sum := d.ref("child")
			n.kids = append(n.kids, &hnode[K, V]{lz: &lazyNode[K, V]{sum: sum, at: at, ld: ld, decode: self}})
			n.nodemap |= bit
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
			at, sum := d.ref("entries")
			in.entries = &hnode[string, dirent]{lz: &lazyNode[string, dirent]{sum: sum, at: at, ld: ld, decode: decodeDir}}
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
				at, sum := d.ref("chunk")
				if d.err != nil || e.coff+e.n > at.n {
					d.fail("chunk length")
					break
				}
				e.ch = internLoaded(sum, at, ld)
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

// Reachable calls fn with the key of every blob store object that
// generation ref needs: the pack holding its generation record first, then
// every pack holding one of its nodes or chunks, each once. It reads every
// node of the generation (not the chunks). Any error (a missing or
// corrupt object, or fn's) stops the walk and is returned: a sweeper must
// then delete nothing.
func Reachable(ctx context.Context, src BlobStore, ref Ref, fn func(key string) error) (err error) {
	seen := map[[32]byte]bool{}
	var ferr error
	emit := func(pack [32]byte) {
		if seen[pack] || ferr != nil {
			return
		}
		seen[pack] = true
		ferr = fn(packKey(pack))
	}
	// Lazy loads run without ctx's cancellation (a ranged read needs a
	// plain reader); the walk checks ctx between nodes.
	ld := &loader{ctx: context.WithoutCancel(ctx), src: src, lin: &lineage{}, visit: func(l blobLoc) { emit(l.pack) }}
	emit(ref.Root)
	if ferr != nil {
		return ferr
	}
	t, err := loadGeneration(ctx, ld, ref)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(*loadError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("vfs: reachable from %s: %w", ref, le.err)
		}
	}()
	visited := map[blobLoc]bool{}
	var walkDir func(n *hnode[string, dirent]) error
	var walkTable func(n *hnode[uint64, *inode]) error
	enter := func(lz bool, at blobLoc) bool {
		if !lz {
			return true
		}
		if visited[at] {
			return false
		}
		visited[at] = true
		return true
	}
	walkDir = func(n *hnode[string, dirent]) error {
		if n == nil || !enter(n.lz != nil, lzLoc(n)) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		n = n.load()
		for _, c := range n.kids {
			if err := walkDir(c); err != nil {
				return err
			}
		}
		return ferr
	}
	walkTable = func(n *hnode[uint64, *inode]) error {
		if n == nil || !enter(n.lz != nil, lzLoc(n)) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		n = n.load()
		for _, c := range n.kids {
			if err := walkTable(c); err != nil {
				return err
			}
		}
		for _, e := range n.entries {
			if e.val != nil && e.val.entries != nil {
				if err := walkDir(e.val.entries); err != nil {
					return err
				}
			}
		}
		return ferr
	}
	if err := walkTable(t.inodes); err != nil {
		return err
	}
	return ferr
}

func lzLoc[K comparable, V any](n *hnode[K, V]) blobLoc {
	if n.lz == nil {
		return blobLoc{}
	}
	return n.lz.at
}
