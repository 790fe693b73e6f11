// Package chunkcache is a node's bounded cache of chunk data in front of
// the blob store: a memory tier and a disk tier, each least recently used
// out first, keyed by the chunk's sha256. The vfs drops the bytes of
// committed chunks into it and reads evicted chunks back through it
// (vfs.ChunkCache); what falls out of both tiers is fetched from the blob
// store again. A chunk read from disk is verified against its id, so a
// damaged cache file is a miss, never wrong data.
package chunkcache

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Defaults for `warren serve --chunk-cache-memory` and `--chunk-cache-disk`.
const (
	DefaultMemory = 256 << 20
	DefaultDisk   = 4 << 30
)

// Options size a cache. A zero size turns that tier off; Dir is needed
// for a disk tier.
type Options struct {
	Memory int64
	Disk   int64
	Dir    string
	Logger *slog.Logger
}

// Cache is safe for concurrent use.
type Cache struct {
	mem  tier
	disk tier
	dir  string
	log  *slog.Logger

	// Chunks leaving memory are written to disk by one goroutine, so a
	// reader that evicts never waits for a write. pending holds them
	// meanwhile (Get finds them); a full queue drops the chunk.
	wmu     sync.Mutex
	pending map[[32]byte][]byte
	queue   chan [32]byte
	done    chan struct{}
	closed  bool

	stats struct {
		memHits, diskHits, misses, diskErrors, dropped atomic.Int64
	}
}

// tier is one LRU of entries bounded by bytes. For the memory tier an
// entry holds its bytes; for the disk tier only its size.
type tier struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	m     map[[32]byte]*list.Element
	lru   list.List // front: most recently used
}

type entry struct {
	sum [32]byte
	n   int64
	b   []byte // memory tier only
}

const queueLen = 16 // chunks waiting for the disk writer (at most 4 MiB)

// Open makes a cache. The disk tier starts empty: Dir is emptied (it is a
// cache; every chunk in it is also in the blob store).
func Open(o Options) (*Cache, error) {
	if o.Memory < 0 || o.Disk < 0 {
		return nil, fmt.Errorf("chunkcache: negative size (memory %d, disk %d)", o.Memory, o.Disk)
	}
	c := &Cache{dir: o.Dir, log: o.Logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.mem = tier{max: o.Memory, m: map[[32]byte]*list.Element{}}
	c.disk = tier{max: o.Disk, m: map[[32]byte]*list.Element{}}
	if o.Disk > 0 {
		if o.Dir == "" {
			return nil, errors.New("chunkcache: a disk tier needs a directory")
		}
		if err := os.RemoveAll(o.Dir); err != nil {
			return nil, fmt.Errorf("chunkcache: cannot empty %s: %w", o.Dir, err)
		}
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("chunkcache: %w", err)
		}
		c.pending = map[[32]byte][]byte{}
		c.queue = make(chan [32]byte, queueLen)
		c.done = make(chan struct{})
		go c.writer()
	}
	return c, nil
}

// Close stops the disk writer (queued chunks are dropped). The files stay
// until the next Open.
func (c *Cache) Close() error {
	if c.queue == nil {
		return nil
	}
	c.wmu.Lock()
	if c.closed {
		c.wmu.Unlock()
		return nil
	}
	c.closed = true
	close(c.queue)
	c.wmu.Unlock()
	<-c.done
	return nil
}

// Get returns the chunk's bytes, or nil.
func (c *Cache) Get(sum [32]byte) []byte {
	if b := c.mem.get(sum); b != nil {
		c.stats.memHits.Add(1)
		return b
	}
	if c.disk.max == 0 {
		c.stats.misses.Add(1)
		return nil
	}
	c.wmu.Lock()
	b := c.pending[sum]
	c.wmu.Unlock()
	if b == nil && c.disk.has(sum) {
		b = c.readFile(sum)
	}
	if b == nil {
		c.stats.misses.Add(1)
		return nil
	}
	c.stats.diskHits.Add(1)
	c.putMem(sum, b)
	return b
}

// Put adds the chunk's bytes (which it keeps; they are never changed).
func (c *Cache) Put(sum [32]byte, b []byte) {
	if len(b) == 0 {
		return
	}
	if c.mem.max == 0 {
		c.toDisk(sum, b)
		return
	}
	c.putMem(sum, b)
}

func (c *Cache) putMem(sum [32]byte, b []byte) {
	for _, ev := range c.mem.put(sum, int64(len(b)), b) {
		c.toDisk(ev.sum, ev.b)
	}
}

// toDisk queues a chunk for the disk tier.
func (c *Cache) toDisk(sum [32]byte, b []byte) {
	if c.disk.max == 0 || int64(len(b)) > c.disk.max || c.disk.has(sum) {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed || c.pending[sum] != nil {
		return
	}
	select {
	case c.queue <- sum:
		c.pending[sum] = b
	default:
		c.stats.dropped.Add(1)
	}
}

func (c *Cache) writer() {
	defer close(c.done)
	for sum := range c.queue {
		c.wmu.Lock()
		b := c.pending[sum]
		c.wmu.Unlock()
		if err := c.writeFile(sum, b); err != nil {
			c.stats.diskErrors.Add(1)
			c.log.Warn("chunk cache: cannot write to disk", "err", err)
		} else {
			for _, ev := range c.disk.put(sum, int64(len(b)), nil) {
				if err := os.Remove(c.path(ev.sum)); err != nil && !errors.Is(err, os.ErrNotExist) {
					c.log.Warn("chunk cache: cannot remove", "err", err)
				}
			}
		}
		c.wmu.Lock()
		delete(c.pending, sum)
		c.wmu.Unlock()
	}
}

func (c *Cache) path(sum [32]byte) string {
	h := hex.EncodeToString(sum[:])
	return filepath.Join(c.dir, h[:2], h)
}

func (c *Cache) writeFile(sum [32]byte, b []byte) error {
	p := c.path(sum)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, p)
}

// readFile reads and verifies a disk entry; a bad one is dropped.
func (c *Cache) readFile(sum [32]byte) []byte {
	b, err := os.ReadFile(c.path(sum))
	if err == nil && sha256.Sum256(b) == sum {
		c.disk.touch(sum)
		return b
	}
	if err == nil {
		err = fmt.Errorf("content does not hash to its name")
	}
	c.stats.diskErrors.Add(1)
	c.log.Warn("chunk cache: dropping a bad disk entry", "chunk", hex.EncodeToString(sum[:8]), "err", err)
	c.disk.remove(sum)
	os.Remove(c.path(sum))
	return nil
}

func (t *tier) get(sum [32]byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[sum]
	if e == nil {
		return nil
	}
	t.lru.MoveToFront(e)
	return e.Value.(*entry).b
}

func (t *tier) has(sum [32]byte) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[sum] != nil
}

func (t *tier) touch(sum [32]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.m[sum]; e != nil {
		t.lru.MoveToFront(e)
	}
}

func (t *tier) remove(sum [32]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.m[sum]; e != nil {
		t.bytes -= t.lru.Remove(e).(*entry).n
		delete(t.m, sum)
	}
}

// put adds an entry and returns the ones it pushed out.
func (t *tier) put(sum [32]byte, n int64, b []byte) []*entry {
	if n > t.max {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.m[sum]; e != nil {
		t.lru.MoveToFront(e)
		return nil
	}
	var out []*entry
	for t.bytes+n > t.max && t.lru.Len() > 0 {
		ev := t.lru.Remove(t.lru.Back()).(*entry)
		delete(t.m, ev.sum)
		t.bytes -= ev.n
		out = append(out, ev)
	}
	t.m[sum] = t.lru.PushFront(&entry{sum: sum, n: n, b: b})
	t.bytes += n
	return out
}

// Stats is a snapshot of the cache's counters and sizes.
type Stats struct {
	MemoryBytes, DiskBytes   int64
	MemoryChunks, DiskChunks int
	MemoryHits, DiskHits     int64
	Misses                   int64
	DiskErrors               int64 // failed writes and bad entries dropped
	Dropped                  int64 // chunks not written to disk (queue full)
}

// Sizes returns the bytes each tier holds (vfs.ReadChunkStats reports them).
func (c *Cache) Sizes() (memory, disk int64) {
	c.mem.mu.Lock()
	memory = c.mem.bytes
	c.mem.mu.Unlock()
	c.disk.mu.Lock()
	disk = c.disk.bytes
	c.disk.mu.Unlock()
	return memory, disk
}

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	var s Stats
	c.mem.mu.Lock()
	s.MemoryBytes, s.MemoryChunks = c.mem.bytes, len(c.mem.m)
	c.mem.mu.Unlock()
	c.disk.mu.Lock()
	s.DiskBytes, s.DiskChunks = c.disk.bytes, len(c.disk.m)
	c.disk.mu.Unlock()
	s.MemoryHits, s.DiskHits = c.stats.memHits.Load(), c.stats.diskHits.Load()
	s.Misses, s.DiskErrors, s.Dropped = c.stats.misses.Load(), c.stats.diskErrors.Load(), c.stats.dropped.Load()
	return s
}
