package vfs

import (
	"math/bits"
	"slices"
	"sync/atomic"
)

// hnode is one node of a persistent hash array mapped trie (16-way) in
// CHAMP layout: a node keeps its entries and its children in two compact
// arrays, each in bitmap order. Nodes are never modified after they are
// published: an insert or delete copies the nodes on the path from the
// root. Because children are bare pointers (8 bytes) and entries sit in
// their own array, the inner nodes of a large directory copy 16 pointers,
// not 16 entries: a new entry in a 10,000-entry directory copies about
// 1 KB of trie (BenchmarkNewEntry reports B/op).
//
// A node loaded from a blob store starts as a placeholder (lz != nil) whose
// content is fetched and verified on first touch.
type hnode[K comparable, V any] struct {
	datamap uint32 // bit i set: slot i holds an entry (in entries)
	nodemap uint32 // bit i set: slot i holds a child (in kids)
	entries []hentry[K, V]
	kids    []*hnode[K, V]
	lz      *lazyNode[K, V]
	memo    atomic.Pointer[memo] // where the node was persisted
	// owner is the unpublished tree version that created the node; that
	// version may change the node in place (a transient), which saves the
	// second path copy when one operation changes several entries. A node
	// with an owner has slices of its own (never shared with another node).
	owner *tree
}

// hentry is one key and its value. The key's hash is not stored (it is
// recomputed when an entry moves down a level): smaller entries are less
// copying per write.
type hentry[K comparable, V any] struct {
	key K
	val V
}

const (
	hbits  = 4
	hmask  = 1<<hbits - 1
	hlimit = 64 // shift at and beyond which a node is a collision list
)

// load returns the node's content, fetching it if it is a placeholder.
func (n *hnode[K, V]) load() *hnode[K, V] {
	if n.lz == nil {
		return n
	}
	return n.lz.get()
}

func index(bitmap, bit uint32) int { return bits.OnesCount32(bitmap & (bit - 1)) }

// at returns what slot bit holds: an entry, a child or neither.
func (n *hnode[K, V]) at(bit uint32) (*hentry[K, V], *hnode[K, V]) {
	switch {
	case n.datamap&bit != 0:
		return &n.entries[index(n.datamap, bit)], nil
	case n.nodemap&bit != 0:
		return nil, n.kids[index(n.nodemap, bit)]
	}
	return nil, nil
}

// eachSlot calls fn for every slot in bitmap order (entries of a
// collision node in list order), which is the persisted order.
func (n *hnode[K, V]) eachSlot(fn func(e *hentry[K, V], child *hnode[K, V])) {
	bm := n.datamap | n.nodemap
	if bm == 0 {
		for i := range n.entries {
			fn(&n.entries[i], nil)
		}
		return
	}
	for bm != 0 {
		bit := bm & -bm
		bm &^= bit
		fn(n.at(bit))
	}
}

// slotCount is the number of persisted slots.
func (n *hnode[K, V]) slotCount() int { return len(n.entries) + len(n.kids) }

func (n *hnode[K, V]) lookup(key K, h uint64) (V, bool) {
	var zero V
	shift := uint(0)
	for n != nil {
		n = n.load()
		if shift >= hlimit || n.datamap|n.nodemap == 0 {
			for i := range n.entries {
				if n.entries[i].key == key {
					return n.entries[i].val, true
				}
			}
			return zero, false
		}
		bit := uint32(1) << ((h >> shift) & hmask)
		if n.datamap&bit != 0 {
			if e := &n.entries[index(n.datamap, bit)]; e.key == key {
				return e.val, true
			}
			return zero, false
		}
		if n.nodemap&bit == 0 {
			return zero, false
		}
		n = n.kids[index(n.nodemap, bit)]
		shift += hbits
	}
	return zero, false
}

// own returns n if owner may change it in place, else a copy that owner
// owns (slices included, with room for growE more entries and growK more
// children, so the caller's insert does not copy them again).
func (n *hnode[K, V]) own(owner *tree, growE, growK int) *hnode[K, V] {
	if owner != nil && n.owner == owner {
		return n
	}
	nn := &hnode[K, V]{datamap: n.datamap, nodemap: n.nodemap, owner: owner}
	if len(n.entries)+growE > 0 {
		nn.entries = append(make([]hentry[K, V], 0, len(n.entries)+growE), n.entries...)
	}
	if len(n.kids)+growK > 0 {
		nn.kids = append(make([]*hnode[K, V], 0, len(n.kids)+growK), n.kids...)
	}
	return nn
}

// insert returns a new root with key set to val and whether key was new.
// Nodes owned by owner (non-nil) are changed in place.
func (n *hnode[K, V]) insert(key K, h uint64, val V, shift uint, owner *tree) (*hnode[K, V], bool) {
	if n == nil {
		nn := &hnode[K, V]{entries: []hentry[K, V]{{key: key, val: val}}, owner: owner}
		if shift < hlimit {
			nn.datamap = 1 << ((h >> shift) & hmask)
		}
		return nn, true
	}
	n = n.load()
	if shift >= hlimit || n.datamap|n.nodemap == 0 {
		for i := range n.entries {
			if n.entries[i].key == key {
				nn := n.own(owner, 0, 0)
				nn.entries[i].val = val
				return nn, false
			}
		}
		nn := n.own(owner, 1, 0)
		nn.entries = append(nn.entries, hentry[K, V]{key: key, val: val})
		if shift < hlimit && len(n.entries) == 0 {
			nn.datamap = 1 << ((h >> shift) & hmask)
		}
		return nn, true
	}
	bit := uint32(1) << ((h >> shift) & hmask)
	switch {
	case n.nodemap&bit != 0:
		i := index(n.nodemap, bit)
		c, added := n.kids[i].insert(key, h, val, shift+hbits, owner)
		nn := n.own(owner, 0, 0)
		nn.kids[i] = c
		return nn, added
	case n.datamap&bit != 0:
		i := index(n.datamap, bit)
		e := n.entries[i]
		if e.key == key {
			nn := n.own(owner, 0, 0)
			nn.entries[i].val = val
			return nn, false
		}
		// Two keys share this slot: push both one level down.
		c, _ := (*hnode[K, V])(nil).insert(e.key, hashKey(e.key), e.val, shift+hbits, owner)
		c, _ = c.insert(key, h, val, shift+hbits, owner)
		nn := n.own(owner, 0, 1)
		nn.entries = slices.Delete(nn.entries, i, i+1)
		nn.datamap &^= bit
		nn.nodemap |= bit
		nn.kids = slices.Insert(nn.kids, index(nn.nodemap, bit), c)
		return nn, true
	}
	nn := n.own(owner, 1, 0)
	nn.datamap |= bit
	nn.entries = slices.Insert(nn.entries, index(nn.datamap, bit), hentry[K, V]{key: key, val: val})
	return nn, true
}

// remove returns a new root without key and whether key was present.
func (n *hnode[K, V]) remove(key K, h uint64, shift uint) (*hnode[K, V], bool) {
	if n == nil {
		return nil, false
	}
	n = n.load()
	if shift >= hlimit || n.datamap|n.nodemap == 0 {
		for i := range n.entries {
			if n.entries[i].key == key {
				if len(n.entries) == 1 {
					return nil, true
				}
				nn := &hnode[K, V]{datamap: n.datamap, entries: slices.Delete(slices.Clone(n.entries), i, i+1)}
				return nn, true
			}
		}
		return n, false
	}
	bit := uint32(1) << ((h >> shift) & hmask)
	switch {
	case n.datamap&bit != 0:
		i := index(n.datamap, bit)
		if n.entries[i].key != key {
			return n, false
		}
		if len(n.entries) == 1 && len(n.kids) == 0 {
			return nil, true
		}
		return &hnode[K, V]{datamap: n.datamap &^ bit, nodemap: n.nodemap,
			entries: slices.Delete(slices.Clone(n.entries), i, i+1), kids: n.kids}, true
	case n.nodemap&bit != 0:
		i := index(n.nodemap, bit)
		c, removed := n.kids[i].remove(key, h, shift+hbits)
		if !removed {
			return n, false
		}
		if c != nil {
			c = c.load()
			if len(c.entries) == 1 && len(c.kids) == 0 {
				// Collapse a single-entry child into this slot; the parent
				// level collapses further when this node is left with one.
				nn := &hnode[K, V]{datamap: n.datamap | bit, nodemap: n.nodemap &^ bit,
					kids: slices.Delete(slices.Clone(n.kids), i, i+1)}
				nn.entries = slices.Insert(slices.Clone(n.entries), index(nn.datamap, bit), c.entries[0])
				return nn, true
			}
			nn := &hnode[K, V]{datamap: n.datamap, nodemap: n.nodemap, entries: n.entries, kids: slices.Clone(n.kids)}
			nn.kids[i] = c
			return nn, true
		}
		if len(n.kids) == 1 && len(n.entries) == 0 {
			return nil, true
		}
		return &hnode[K, V]{datamap: n.datamap, nodemap: n.nodemap &^ bit,
			entries: n.entries, kids: slices.Delete(slices.Clone(n.kids), i, i+1)}, true
	}
	return n, false
}

// each calls fn for every entry until fn returns false.
func (n *hnode[K, V]) each(fn func(K, V) bool) bool {
	if n == nil {
		return true
	}
	n = n.load()
	for i := range n.entries {
		if !fn(n.entries[i].key, n.entries[i].val) {
			return false
		}
	}
	for _, c := range n.kids {
		if !c.each(fn) {
			return false
		}
	}
	return true
}

// hashKey is the trie hash of a key: strHash for names, inoHash for inode
// numbers.
func hashKey[K comparable](k K) uint64 {
	switch v := any(k).(type) {
	case string:
		return strHash(v)
	case uint64:
		return inoHash(v)
	}
	panic("vfs: unsupported trie key type")
}

// strHash is FNV-1a; it is part of the persisted format (docs/format.md),
// so it must never change.
func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// inoHash spreads inode numbers over the trie (splitmix64 finaliser).
func inoHash(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
