package vfs

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"
)

// ChunkCache holds chunk data that has left the chunks themselves: a
// committed chunk (stored by every lineage that refers to it) drops its
// bytes into the cache, and a read of it looks there before it fetches a
// stored copy. Keys are chunk ids (sha256 of the bytes); Get returns nil
// on a miss. The cache may forget anything at any time; what it returns
// must be the bytes Put under that id (a disk tier verifies them). The
// returned slice is never written to. Package chunkcache implements it
// (memory + disk, LRU).
type ChunkCache interface {
	Get(sum [32]byte) []byte
	Put(sum [32]byte, b []byte)
}

var chunkCacheV atomic.Pointer[chunkCacheBox]

type chunkCacheBox struct{ c ChunkCache }

// SetChunkCache installs the process's chunk cache (nil: none). Without
// one, chunk data stays in memory as long as a file refers to it (the
// behaviour of a library user that never configured a cache); with one,
// committed chunks leave memory and are read back through it. Set it once,
// before sandboxes run: chunks committed without a cache keep their data.
func SetChunkCache(c ChunkCache) {
	if c == nil {
		chunkCacheV.Store(nil)
		return
	}
	chunkCacheV.Store(&chunkCacheBox{c})
}

func currentChunkCache() ChunkCache {
	if b := chunkCacheV.Load(); b != nil {
		return b.c
	}
	return nil
}

// FetchTimeout bounds one fetch of an evicted chunk (retries of the store
// included): a read of it fails with EIO after this long, so a script
// reading while the store is down gets an error, not a hang.
var fetchTimeout atomic.Int64

func init() { fetchTimeout.Store(int64(20 * time.Second)) }

// SetFetchTimeout sets the bound of one chunk fetch (default 20 s).
func SetFetchTimeout(d time.Duration) {
	if d > 0 {
		fetchTimeout.Store(int64(d))
	}
}

// ChunkStats counts chunk reads that missed memory (process-wide).
type ChunkStats struct {
	Fetches     int64 // fetches from the blob store (a read-ahead range counts once)
	FetchBytes  int64
	FetchErrors int64
	CacheHits   int64 // reads served by the ChunkCache
	Released    int64 // chunks whose bytes left memory after a commit
	// CacheMemoryBytes and CacheDiskBytes are what the ChunkCache holds,
	// when it reports its sizes (chunkcache does).
	CacheMemoryBytes, CacheDiskBytes int64
}

// Add adds o's counters and sizes to s (a front summing its workers).
func (s *ChunkStats) Add(o ChunkStats) {
	s.Fetches += o.Fetches
	s.FetchBytes += o.FetchBytes
	s.FetchErrors += o.FetchErrors
	s.CacheHits += o.CacheHits
	s.Released += o.Released
	s.CacheMemoryBytes += o.CacheMemoryBytes
	s.CacheDiskBytes += o.CacheDiskBytes
}

var chunkStats struct {
	fetches, fetchBytes, fetchErrors, hits, released atomic.Int64
}

// ReadChunkStats returns the process's counters.
func ReadChunkStats() ChunkStats {
	s := ChunkStats{Fetches: chunkStats.fetches.Load(), FetchBytes: chunkStats.fetchBytes.Load(),
		FetchErrors: chunkStats.fetchErrors.Load(), CacheHits: chunkStats.hits.Load(), Released: chunkStats.released.Load()}
	if c, ok := currentChunkCache().(interface{ Sizes() (memory, disk int64) }); ok {
		s.CacheMemoryBytes, s.CacheDiskBytes = c.Sizes()
	}
	return s
}

// bytes returns the chunk's data: held, cached, or fetched from a stored
// copy and verified against the chunk's id. A failure panics with a
// loadError (EIO at the operation); it is not remembered, so a read after
// the store came back succeeds.
func (c *chunk) bytes() []byte {
	if p := c.data.Load(); p != nil {
		return *p
	}
	b, err := c.load(true)
	if err != nil {
		panic(&loadError{err: err})
	}
	return b
}

// cached returns the chunk's data if it is held or cached, without a
// fetch.
func (c *chunk) cached() []byte {
	if p := c.data.Load(); p != nil {
		return *p
	}
	if cc := currentChunkCache(); cc != nil {
		if b := cc.Get(c.sum); b != nil && int64(len(b)) == c.n {
			return b
		}
	}
	return nil
}

func (c *chunk) load(count bool) ([]byte, error) {
	cc := currentChunkCache()
	if cc != nil {
		if b := cc.Get(c.sum); b != nil && int64(len(b)) == c.n {
			if count {
				chunkStats.hits.Add(1)
			}
			return b, nil
		}
	}
	c.fetch.Lock()
	defer c.fetch.Unlock()
	if p := c.data.Load(); p != nil {
		return *p, nil
	}
	if e := c.aheadErr.Swap(nil); e != nil && time.Since(e.at) < time.Second {
		return nil, e.err // the read-ahead this reader waited on failed just now
	}
	if cc != nil {
		if b := cc.Get(c.sum); b != nil && int64(len(b)) == c.n {
			return b, nil
		}
	}
	c.mu.Lock()
	locs := append([]chunkLoc(nil), c.locs...)
	c.mu.Unlock()
	// Try every copy, the newest first: another lineage's pack may be gone
	// (GC) while this one's is not. The first failure is the one reported.
	var first error
	for i := len(locs) - 1; i >= 0; i-- {
		l := locs[i]
		if l.ld == nil {
			continue
		}
		b, err := l.ld.readTimed(l.at, c.sum, "chunk")
		if err == nil {
			if cc != nil {
				cc.Put(c.sum, b)
			} else {
				c.data.Store(&b) // no cache: held from now on, as before
			}
			return b, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = fmt.Errorf("vfs: chunk %x has no stored copy", c.sum[:8])
	}
	return nil, first
}

// readTimed is read under the fetch timeout, counted.
func (ld *loader) readTimed(l blobLoc, sum [32]byte, what string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ld.ctx, time.Duration(fetchTimeout.Load()))
	defer cancel()
	b, err := ld.readCtx(ctx, l, sum, what)
	chunkStats.fetches.Add(1)
	if err != nil {
		chunkStats.fetchErrors.Add(1)
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("vfs: %s %x: the blob store did not answer within %s (the data is committed; it was evicted from this node's cache): %w",
				what, sum[:8], time.Duration(fetchTimeout.Load()), err)
		}
		return nil, err
	}
	chunkStats.fetchBytes.Add(int64(len(b)))
	return b, nil
}

// release drops the chunk's bytes into the cache once every lineage that
// took it from memory has a stored copy it can read back. Called after a
// persist recorded its copies.
func (c *chunk) release() {
	cc := currentChunkCache()
	if cc == nil {
		return
	}
	c.mu.Lock()
	keep := c.holders[:0]
	for _, h := range c.holders {
		if l := h.Value(); l != nil && !c.storedByLocked(l) {
			keep = append(keep, h)
		}
	}
	clear(c.holders[len(keep):])
	c.holders = keep
	readable := false
	for _, l := range c.locs {
		if l.ld != nil {
			readable = true
			break
		}
	}
	var p *[]byte
	if len(keep) == 0 && readable {
		p = c.data.Swap(nil)
	}
	c.mu.Unlock()
	if p != nil {
		cc.Put(c.sum, *p)
		chunkStats.released.Add(1)
	}
}

// Read-ahead: a read that had to fetch a chunk also fetches the chunks
// that follow it in the file, when they lie next to each other in one
// pack (a file written sequentially is packed in order), with one ranged
// GET of up to readAheadBytes, in the background. Each chunk is verified
// on its own before it enters the cache.
const (
	readAheadBytes = 4 << 20
	readAheadMax   = 2 // read-aheads in flight in the process
)

var readAheadSem = make(chan struct{}, readAheadMax)

// readAhead starts a background fetch of the chunk extents from ext[i] on.
// It holds each one's fetch lock until its bytes are cached, so a reader
// reaching one of them waits for the read-ahead instead of fetching it
// again.
func readAhead(ext []extent, i int) {
	cc := currentChunkCache()
	if cc == nil {
		return
	}
	type part struct {
		c  *chunk
		at blobLoc
	}
	var ld *loader
	var parts []part
	var total int64
	var last blobLoc
	seen := map[[32]byte]bool{}
	for j := i; j < len(ext) && total < readAheadBytes; j++ {
		e := &ext[j]
		if e.kind != extChunk {
			if e.kind == extZero || e.kind == extMem {
				continue
			}
			break
		}
		c := e.ch
		if seen[c.sum] || c.data.Load() != nil {
			continue
		}
		seen[c.sum] = true
		c.mu.Lock()
		var loc *chunkLoc
		for k := len(c.locs) - 1; k >= 0; k-- {
			if l := c.locs[k]; l.ld != nil && (ld == nil || l.ld.src == ld.src && l.at.pack == last.pack) {
				loc = &c.locs[k]
				break
			}
		}
		var l chunkLoc
		if loc != nil {
			l = *loc
		}
		c.mu.Unlock()
		if loc == nil {
			break
		}
		if ld != nil && l.at.off != last.off+last.n {
			break
		}
		if cc.Get(c.sum) != nil {
			if ld == nil {
				continue // cached: look further
			}
			break
		}
		if ld == nil {
			ld = l.ld
		}
		parts = append(parts, part{c, l.at})
		total += l.at.n
		last = l.at
	}
	if len(parts) < 2 {
		return // one chunk: the reader fetches it itself
	}
	select {
	case readAheadSem <- struct{}{}:
	default:
		return // enough in flight: the reader fetches on its own
	}
	total = 0
	for k, p := range parts {
		if !p.c.fetch.TryLock() {
			parts = parts[:k]
			break
		}
		total += p.at.n
	}
	if len(parts) == 0 {
		<-readAheadSem
		return
	}
	go func() {
		defer func() { <-readAheadSem }()
		defer func() {
			for _, p := range parts {
				p.c.fetch.Unlock()
			}
		}()
		span := blobLoc{pack: parts[0].at.pack, off: parts[0].at.off, n: total}
		ctx, cancel := context.WithTimeout(ld.ctx, time.Duration(fetchTimeout.Load()))
		defer cancel()
		b, err := ld.fetchRangeCtx(ctx, span)
		chunkStats.fetches.Add(1)
		if err != nil {
			chunkStats.fetchErrors.Add(1)
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("vfs: chunk %x: the blob store did not answer within %s (the data is committed; it was evicted from this node's cache): %w",
					parts[0].c.sum[:8], time.Duration(fetchTimeout.Load()), err)
			}
			// The reader waiting on the first part reports this; the
			// others fetch on their own later.
			parts[0].c.aheadErr.Store(&aheadFailure{err, time.Now()})
			return
		}
		chunkStats.fetchBytes.Add(int64(len(b)))
		for _, p := range parts {
			d := b[p.at.off-span.off : p.at.off-span.off+p.at.n]
			if sha256.Sum256(d) != p.c.sum {
				return
			}
			// A copy each: a part kept in the cache must not keep the
			// whole span alive (the cache counts only its own bytes).
			cc.Put(p.c.sum, append([]byte(nil), d...))
		}
	}()
}

// aheadOf keeps a sequential reader ahead of its fetches: entering chunk
// extent i from a cache hit, it starts a read-ahead from half a window on
// if the chunk there is not cached yet.
func aheadOf(ext []extent, i int) {
	if currentChunkCache() == nil {
		return
	}
	at := ext[i].off + readAheadBytes/2
	j := sort.Search(len(ext), func(j int) bool { return ext[j].off+ext[j].n > at })
	if j >= len(ext) || j <= i || ext[j].kind != extChunk || ext[j].ch.cached() != nil {
		return
	}
	readAhead(ext, j)
}

// aheadFailure is a read-ahead's error, for the reader that waited on it.
type aheadFailure struct {
	err error
	at  time.Time
}
