// Package recache is a bounded, concurrency-safe LRU cache for compiled
// patterns (grep, sed, expr): a script that runs `grep root` ten thousand
// times compiles it once. Scripts are untrusted, so the cache is bounded
// both in entries and in an estimate of the bytes it holds (pattern text
// plus compiled program), and an entry too large for its share is simply
// not kept.
package recache

import (
	"regexp"
	"regexp/syntax"
	"sync"
	"unsafe"
)

// Cache maps string keys to values of type V with least-recently-used
// eviction. The zero value is not usable; call New.
type Cache[V any] struct {
	mu         sync.Mutex
	m          map[string]*entry[V]
	head       entry[V] // sentinel: head.next is the most recently used
	bytes      int
	maxEntries int
	maxBytes   int
}

type entry[V any] struct {
	key        string
	val        V
	cost       int
	prev, next *entry[V]
}

// New returns a cache holding at most maxEntries values whose costs sum to
// at most maxBytes.
func New[V any](maxEntries, maxBytes int) *Cache[V] {
	c := &Cache[V]{m: make(map[string]*entry[V]), maxEntries: maxEntries, maxBytes: maxBytes}
	c.head.next, c.head.prev = &c.head, &c.head
	return c
}

// Get returns the value stored under key. The key is a byte slice so a
// caller can assemble it in a stack buffer: the lookup does not allocate.
func (c *Cache[V]) Get(key []byte) (V, bool) {
	c.mu.Lock()
	e, ok := c.m[string(key)]
	if !ok {
		c.mu.Unlock()
		var zero V
		return zero, false
	}
	if c.head.next != e {
		c.unlink(e)
		c.pushFront(e)
	}
	v := e.val
	c.mu.Unlock()
	return v, true
}

// GetString is Get for a key already held as a string.
func (c *Cache[V]) GetString(key string) (V, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	if !ok {
		c.mu.Unlock()
		var zero V
		return zero, false
	}
	if c.head.next != e {
		c.unlink(e)
		c.pushFront(e)
	}
	v := e.val
	c.mu.Unlock()
	return v, true
}

// Add stores v under key, charged cost bytes (plus the key's length).
// A value costing more than an eighth of the byte budget is not kept, so
// one huge pattern cannot flush everything else.
func (c *Cache[V]) Add(key string, v V, cost int) {
	cost += len(key) + entryOverhead
	if cost > c.maxBytes/8 || c.maxEntries <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		// A concurrent miss compiled the same pattern: keep one.
		c.unlink(old)
		c.bytes -= old.cost
		delete(c.m, key)
	}
	e := &entry[V]{key: key, val: v, cost: cost}
	c.m[key] = e
	c.pushFront(e)
	c.bytes += cost
	for len(c.m) > c.maxEntries || c.bytes > c.maxBytes {
		last := c.head.prev
		c.unlink(last)
		c.bytes -= last.cost
		delete(c.m, last.key)
	}
}

// Len returns the number of entries and their total cost.
func (c *Cache[V]) Len() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes
}

func (c *Cache[V]) unlink(e *entry[V]) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

func (c *Cache[V]) pushFront(e *entry[V]) {
	e.next = c.head.next
	e.prev = &c.head
	c.head.next.prev = e
	c.head.next = e
}

// entryOverhead approximates an entry's fixed cost (entry, map slot,
// *regexp.Regexp header).
const entryOverhead = 256

// instBytes is the in-memory size of one compiled instruction.
const instBytes = int(unsafe.Sizeof(syntax.Inst{}))

// Cost estimates the memory a compiled Go regexp holds: its program's
// instructions and their rune tables, twice (regexp keeps a one-pass copy
// of some programs). A pattern as short as `\pL{1000}` compiles to
// megabytes, so pattern length alone would not bound the cache. An
// expression that does not parse costs 0 (it is never cached anyway).
func Cost(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	n := 0
	for i := range prog.Inst {
		n += instBytes + 4*len(prog.Inst[i].Rune)
	}
	return 2 * n
}

// regexps caches Go expressions compiled with leftmost-longest matching.
var regexps = New[*regexp.Regexp](256, 4<<20)

// CompileLongest is regexp.Compile followed by Longest (POSIX matching),
// cached. The result is shared: callers must not call Longest or
// otherwise change it (a *regexp.Regexp is safe for concurrent matching).
func CompileLongest(expr string) (*regexp.Regexp, error) {
	if re, ok := regexps.GetString(expr); ok {
		return re, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	re.Longest()
	regexps.Add(expr, re, Cost(expr))
	return re, nil
}
