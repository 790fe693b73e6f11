package vfs

import (
	"crypto/sha256"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"weak"
)

// File data is a list of extents. An extent is a slice of one of:
//   - extMem: bytes written since the file was last sealed (not yet hashed);
//   - extChunk: a content-addressed chunk, shared by every file, fork and
//     sandbox of the process that holds the same bytes;
//   - extBase: a range of the base file the inode was copied up from;
//   - extZero: a hole.
//
// A write replaces the written range with a new mem extent and keeps slices
// of its neighbours, so a write into the middle of a large base file reads
// nothing and copies nothing but the extent list. Sealing (on Close of a
// written handle and on Persist) cuts runs of mem extents into chunks with
// the content-defined chunker below.
const (
	extMem uint8 = iota
	extChunk
	extBase
	extZero
)

type extent struct {
	off  int64 // file offset (recomputed on every write)
	n    int64
	kind uint8
	coff int64  // offset into mem / chunk / base file
	mem  []byte // extMem
	ch   *chunk // extChunk
}

// memMax bounds a mem extent, so an append copies at most this much.
const memMax = 64 << 10

// Chunker parameters (docs/format.md, "Chunking"). Gear-hash content-defined
// chunking with FastCDC's normalised masks.
const (
	chunkMin  = 16 << 10
	chunkAvg  = 64 << 10
	chunkMax  = 256 << 10
	maskSmall = 0x0000d9f003530000 // 18 bits set: harder to cut before avg
	maskLarge = 0x0000d90003530000 // 14 bits set: easier to cut after avg
)

var gear [256]uint64

func init() {
	// Fixed table from a splitmix64 stream; part of the format.
	x := uint64(0x9e3779b97f4a7c15)
	for i := range gear {
		x += 0x9e3779b97f4a7c15
		gear[i] = inoHash(x)
	}
}

// cdcCut returns the length of the next chunk of b; b holds either at least
// chunkMax bytes or the rest of the stream.
func cdcCut(b []byte) int {
	n := len(b)
	if n <= chunkMin {
		return n
	}
	if n > chunkMax {
		n = chunkMax
	}
	var h uint64
	i := chunkMin
	norm := chunkAvg
	if norm > n {
		norm = n
	}
	for ; i < norm; i++ {
		h = h<<1 + gear[b[i]]
		if h&maskSmall == 0 {
			return i + 1
		}
	}
	for ; i < n; i++ {
		h = h<<1 + gear[b[i]]
		if h&maskLarge == 0 {
			return i + 1
		}
	}
	return n
}

// chunk is immutable content named by its sha256. Its bytes are held in
// data while some lineage that refers to it has no stored copy of it (the
// chunk was written here and not yet committed); once every such lineage
// has stored it, and a ChunkCache is installed, data is dropped and reads
// go through the cache to a stored copy (chunkread.go).
type chunk struct {
	sum  [32]byte
	n    int64
	data atomic.Pointer[[]byte]

	fetch sync.Mutex // one fetch of an evicted chunk at a time
	// aheadErr is a read-ahead's failure, left for the reader that waited
	// on it (it reports that instead of waiting out a second fetch).
	aheadErr atomic.Pointer[aheadFailure]

	mu   sync.Mutex
	locs []chunkLoc // stored copies, per lineage and store
	// holders are the lineages that took the chunk while it was held in
	// memory and had no stored copy of their own then: data stays until
	// each has one (or is gone), so an interned chunk never loses its only
	// copy because another sandbox committed it.
	holders []weak.Pointer[lineage]
}

// chunkLoc is a stored copy of a chunk: lineage lin may reference it in
// src at at; ld (if set) is a loader that can fetch it.
type chunkLoc struct {
	lin *lineage
	src BlobStore
	ld  *loader
	at  blobLoc
}

// addLoc records a stored copy (a later copy of the same lineage and
// store replaces the loader of an earlier one that had none).
func (c *chunk) addLoc(l chunkLoc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.locs {
		if x.lin == l.lin && sameStore(x.src, l.src) {
			if x.ld == nil && l.ld != nil {
				c.locs[i].ld = l.ld
			}
			return
		}
	}
	c.locs = append(c.locs, l)
}

// locFor returns where lineage lin stored the chunk in dst.
func (c *chunk) locFor(dst BlobStore, lin *lineage) (blobLoc, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.locs {
		if x.lin == lin && sameStore(x.src, dst) {
			return x.at, true
		}
	}
	return blobLoc{}, false
}

func (c *chunk) storedByLocked(lin *lineage) bool {
	for _, x := range c.locs {
		if x.lin == lin {
			return true
		}
	}
	return false
}

// holdLocked records that lin has just taken the chunk from memory (it
// wrote or replayed data). Unless lin already stored the chunk and no
// other lineage holds it (then data goes to the cache: it returns true),
// the chunk keeps data until every holder stored it. The caller holds
// c.mu.
func (c *chunk) holdLocked(data []byte, lin *lineage) (toCache bool) {
	stored := lin != nil && c.storedByLocked(lin)
	if lin != nil && !stored && !slices.ContainsFunc(c.holders, func(h weak.Pointer[lineage]) bool { return h.Value() == lin }) {
		c.holders = append(c.holders, weak.Make(lin))
	}
	if c.data.Load() != nil {
		return false
	}
	if stored && len(c.holders) == 0 && currentChunkCache() != nil {
		return true // rewritten data this lineage has stored: no need to hold it
	}
	c.data.Store(&data)
	return false
}

// chunkTable deduplicates chunks across the process (the intern table). It
// holds weak pointers, so a chunk lives exactly as long as some file
// refers to it.
var chunkTable = struct {
	sync.Mutex
	m map[[32]byte]weak.Pointer[chunk]
}{m: map[[32]byte]weak.Pointer[chunk]{}}

// internChunk returns the process's chunk for data (which it may keep),
// taken by lineage lin (nil: no lineage, e.g. a persist's own chunking of
// an unsealed file, whose lineage stores it right away).
func internChunk(data []byte, lin *lineage) *chunk {
	sum := sha256.Sum256(data)
	chunkTable.Lock()
	var c *chunk
	if wp, ok := chunkTable.m[sum]; ok {
		c = wp.Value()
	}
	if c == nil || c.n != int64(len(data)) {
		c = internLocked(&chunk{sum: sum, n: int64(len(data))})
	}
	chunkTable.Unlock()
	c.mu.Lock()
	toCache := c.holdLocked(data, lin)
	c.mu.Unlock()
	if toCache {
		currentChunkCache().Put(sum, data)
	}
	return c
}

// internLoaded returns the process's chunk for sum, recording that ld's
// lineage has it at at. A walk with ld.visit set (Reachable) does not
// intern.
func internLoaded(sum [32]byte, at blobLoc, ld *loader) *chunk {
	l := chunkLoc{lin: ld.lin, src: ld.src, ld: ld, at: at}
	if ld.visit != nil {
		return &chunk{sum: sum, n: at.n, locs: []chunkLoc{l}}
	}
	chunkTable.Lock()
	var c *chunk
	if wp, ok := chunkTable.m[sum]; ok {
		c = wp.Value()
	}
	if c == nil {
		c = internLocked(&chunk{sum: sum, n: at.n})
	}
	chunkTable.Unlock()
	if c.n != at.n {
		// A reference that disagrees with the chunk's real length: keep it
		// apart, so its read fails on its own.
		c = &chunk{sum: sum, n: at.n}
	}
	c.addLoc(l)
	return c
}

func internLocked(c *chunk) *chunk {
	chunkTable.m[c.sum] = weak.Make(c)
	runtime.AddCleanup(c, func(sum [32]byte) {
		chunkTable.Lock()
		if cur, ok := chunkTable.m[sum]; ok && cur.Value() == nil {
			delete(chunkTable.m, sum)
		}
		chunkTable.Unlock()
	}, c.sum)
	return c
}

// baseReader reads a range of a base file.
type baseReader func(path string, p []byte, off int64) error

// readExt copies file bytes at off into p (p must lie within size).
func readExt(ext []extent, p []byte, off int64, rb baseReader, origin string) error {
	i := sort.Search(len(ext), func(i int) bool { return ext[i].off+ext[i].n > off })
	for len(p) > 0 && i < len(ext) {
		e := &ext[i]
		in := off - e.off
		m := e.n - in
		if m > int64(len(p)) {
			m = int64(len(p))
		}
		dst := p[:m]
		switch e.kind {
		case extMem:
			copy(dst, e.mem[e.coff+in:])
		case extChunk:
			b := e.ch.cached()
			if b == nil {
				readAhead(ext, i)
				b = e.ch.bytes()
			} else if in == 0 {
				aheadOf(ext, i)
			}
			copy(dst, b[e.coff+in:])
		case extZero:
			clear(dst)
		case extBase:
			if err := rb(origin, dst, e.coff+in); err != nil {
				return err
			}
		}
		p = p[m:]
		off += m
		i++
	}
	clear(p)
	return nil
}

// slice returns the part [a, b) of e (offsets relative to e).
func (e extent) slice(a, b int64) extent {
	e.coff += a
	e.n = b - a
	return e
}

// writeExt returns new extents with p written at off; size is the old size.
func writeExt(ext []extent, size, off int64, p []byte) []extent {
	end := off + int64(len(p))
	out := make([]extent, 0, len(ext)+3)
	var i int
	for i = 0; i < len(ext) && ext[i].off+ext[i].n <= off; i++ {
		out = append(out, ext[i])
	}
	if off > size {
		out = append(out, extent{n: off - size, kind: extZero})
	}
	var right []extent
	for ; i < len(ext); i++ {
		e := ext[i]
		if e.off < off {
			out = append(out, e.slice(0, off-e.off))
		}
		if e.off+e.n > end {
			if e.off < end {
				right = append(right, e.slice(end-e.off, e.n))
			} else {
				right = append(right, e)
			}
		}
	}
	// Coalesce with a small mem extent on the left, so appends in small
	// pieces do not grow the list.
	if k := len(out) - 1; k >= 0 && out[k].kind == extMem && out[k].n+int64(len(p)) <= memMax {
		l := out[k]
		buf := make([]byte, l.n+int64(len(p)))
		copy(buf, l.mem[l.coff:l.coff+l.n])
		copy(buf[l.n:], p)
		out[k] = extent{n: int64(len(buf)), kind: extMem, mem: buf}
	} else {
		for len(p) > 0 {
			m := min(len(p), memMax)
			buf := make([]byte, m)
			copy(buf, p)
			out = append(out, extent{n: int64(m), kind: extMem, mem: buf})
			p = p[m:]
		}
	}
	out = append(out, right...)
	return reoff(out)
}

func reoff(ext []extent) []extent {
	var off int64
	for i := range ext {
		ext[i].off = off
		off += ext[i].n
	}
	return ext
}

// truncExt returns extents for a file cut or extended to size.
func truncExt(ext []extent, old, size int64) []extent {
	if size == old {
		return ext
	}
	if size > old {
		out := make([]extent, len(ext), len(ext)+1)
		copy(out, ext)
		return reoff(append(out, extent{n: size - old, kind: extZero}))
	}
	out := make([]extent, 0, len(ext))
	for _, e := range ext {
		if e.off >= size {
			break
		}
		if e.off+e.n > size {
			e = e.slice(0, size-e.off)
		}
		out = append(out, e)
	}
	return reoff(out)
}

// sealAfter is how many unsealed (mem) bytes a file holds before a write
// seals them into chunks.
const sealAfter = 4 << 20

// memBytes is the bytes of ext's mem extents.
func memBytes(ext []extent) int64 {
	var n int64
	for i := range ext {
		if ext[i].kind == extMem {
			n += ext[i].n
		}
	}
	return n
}

// sealed reports whether ext holds no mem extents.
func sealed(ext []extent) bool {
	for i := range ext {
		if ext[i].kind == extMem {
			return false
		}
	}
	return true
}

// sealExt cuts every run of mem extents (with the partial chunk slices
// right next to it, so fragments merge back) into content-defined chunks.
// Whole chunks and base ranges around the run stay as they are, so sealing
// after a small write into a large file hashes about one chunk, not the
// file. Memory use is bounded by one chunkMax window.
//
// A whole chunk shorter than chunkMin next to the run is cut again with it
// too: it is what the last seal left at the end of a file (CDC cuts no
// chunk that short elsewhere), and an append then closed, the shell's
// `echo ... >> log` in a loop, would otherwise leave one more tiny chunk
// per line. 20,000 such appends made 20,000 extents, each append copying
// and scanning them all (2.5 ms an append at the end); merged, an append
// rehashes at most chunkMin bytes and the file has a chunk per ~16 KiB.
func sealExt(ext []extent, lin *lineage) []extent {
	if sealed(ext) {
		return ext
	}
	reopen := func(e *extent) bool {
		return e.kind == extChunk && (e.coff != 0 || e.n != e.ch.n || e.ch.n < chunkMin)
	}
	out := make([]extent, 0, len(ext))
	for i := 0; i < len(ext); {
		if ext[i].kind != extMem {
			j := i + 1
			if !reopen(&ext[i]) || j >= len(ext) || ext[j].kind != extMem {
				out = append(out, ext[i])
				i++
				continue
			}
		}
		j := i
		if ext[j].kind != extMem {
			j++ // a partial or short chunk before the run
		}
		for j < len(ext) && ext[j].kind == extMem {
			j++
		}
		if j < len(ext) && reopen(&ext[j]) {
			j++
		}
		out = chunkRun(out, ext[i:j], lin)
		i = j
	}
	return reoff(out)
}

func chunkRun(out []extent, run []extent, lin *lineage) []extent {
	// The window is as large as the run needs, at most two chunks: a
	// seal after a small append is a few KiB, not 512 KiB to clear.
	var total int64
	for i := range run {
		total += run[i].n
	}
	buf := make([]byte, 0, min(total, 2*chunkMax))
	emit := func(b []byte) {
		d := make([]byte, len(b))
		copy(d, b)
		c := internChunk(d, lin)
		out = append(out, extent{n: int64(len(d)), kind: extChunk, ch: c})
	}
	for _, e := range run {
		var src []byte
		if e.kind == extMem {
			src = e.mem[e.coff : e.coff+e.n]
		} else {
			src = e.ch.bytes()[e.coff : e.coff+e.n]
		}
		buf = append(buf, src...)
		for len(buf) >= chunkMax {
			n := cdcCut(buf)
			emit(buf[:n])
			buf = append(buf[:0], buf[n:]...)
		}
	}
	for len(buf) > 0 {
		n := cdcCut(buf)
		emit(buf[:n])
		buf = buf[n:]
	}
	return out
}

// readBaseAt reads p at off from base file name.
func readBaseAt(base fs.FS, name string, p []byte, off int64) error {
	f, err := base.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return readFileAt(f, p, off)
}

func readFileAt(f fs.File, p []byte, off int64) error {
	if ra, ok := f.(io.ReaderAt); ok {
		n, err := ra.ReadAt(p, off)
		if n == len(p) {
			return nil
		}
		if err == io.EOF {
			clear(p[n:])
			return nil
		}
		return err
	}
	if s, ok := f.(io.Seeker); ok {
		if _, err := s.Seek(off, io.SeekStart); err != nil {
			return err
		}
	} else if _, err := io.CopyN(io.Discard, f, off); err != nil && err != io.EOF {
		return err
	}
	n, err := io.ReadFull(f, p)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		clear(p[n:])
		return nil
	}
	return err
}
