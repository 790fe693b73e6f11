package vfs

import (
	"math/bits"
	"sync/atomic"
)

// hnode is one node of a persistent hash array mapped trie (16-way). Nodes
// are never modified after they are published: an insert or delete copies
// the nodes on the path from the root (16 slots each), so a write into a
// 10,000-entry directory copies about four small nodes, not the entries.
// 16-way rather than 32: half the bytes copied per write, which is what
// the garbage collector charges for (BenchmarkNewEntry, dir=10000).
//
// A node loaded from a blob store starts as a placeholder (lz != nil) whose
// content is fetched and verified on first touch.
type hnode[K comparable, V any] struct {
	bitmap uint32
	slots  []hslot[K, V]
	lz     *lazyNode[K, V]
	memo   atomic.Pointer[memo] // blob id once persisted
	// owner is the unpublished tree version that created the node; that
	// version may change the node in place (a transient), which saves the
	// second path copy when one operation changes several entries.
	owner *tree
}

// hslot holds an entry or a child. The key's hash is not stored (it is
// recomputed when a slot moves down a level): 8 bytes less per slot is 20%
// less copying per write (BenchmarkNewEntry).
type hslot[K comparable, V any] struct {
	key   K
	val   V
	child *hnode[K, V]
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

func (n *hnode[K, V]) lookup(key K, h uint64) (V, bool) {
	var zero V
	shift := uint(0)
	for n != nil {
		n = n.load()
		if shift >= hlimit {
			for i := range n.slots {
				if n.slots[i].key == key {
					return n.slots[i].val, true
				}
			}
			return zero, false
		}
		bit := uint32(1) << ((h >> shift) & hmask)
		if n.bitmap&bit == 0 {
			return zero, false
		}
		s := &n.slots[bits.OnesCount32(n.bitmap&(bit-1))]
		if s.child != nil {
			n = s.child
			shift += hbits
			continue
		}
		if s.key == key {
			return s.val, true
		}
		return zero, false
	}
	return zero, false
}

// insert returns a new root with key set to val and whether key was new.
// Nodes owned by owner (non-nil) are changed in place.
func (n *hnode[K, V]) insert(key K, h uint64, val V, shift uint, owner *tree) (*hnode[K, V], bool) {
	if n == nil {
		nn := &hnode[K, V]{slots: []hslot[K, V]{{key: key, val: val}}, owner: owner}
		if shift < hlimit {
			nn.bitmap = 1 << ((h >> shift) & hmask)
		}
		return nn, true
	}
	n = n.load()
	mine := owner != nil && n.owner == owner
	if shift >= hlimit {
		for i := range n.slots {
			if n.slots[i].key == key {
				nn := n
				if !mine {
					nn = &hnode[K, V]{slots: append([]hslot[K, V](nil), n.slots...), owner: owner}
				}
				nn.slots[i].val = val
				return nn, false
			}
		}
		nn := &hnode[K, V]{slots: make([]hslot[K, V], len(n.slots), len(n.slots)+1), owner: owner}
		copy(nn.slots, n.slots)
		nn.slots = append(nn.slots, hslot[K, V]{key: key, val: val})
		return nn, true
	}
	bit := uint32(1) << ((h >> shift) & hmask)
	idx := bits.OnesCount32(n.bitmap & (bit - 1))
	if n.bitmap&bit == 0 {
		nn := &hnode[K, V]{bitmap: n.bitmap | bit, slots: make([]hslot[K, V], len(n.slots)+1), owner: owner}
		copy(nn.slots, n.slots[:idx])
		nn.slots[idx] = hslot[K, V]{key: key, val: val}
		copy(nn.slots[idx+1:], n.slots[idx:])
		if mine {
			n.bitmap, n.slots = nn.bitmap, nn.slots
			return n, true
		}
		return nn, true
	}
	nn := n
	if !mine {
		nn = &hnode[K, V]{bitmap: n.bitmap, slots: append([]hslot[K, V](nil), n.slots...), owner: owner}
	}
	s := &nn.slots[idx]
	if s.child != nil {
		c, added := s.child.insert(key, h, val, shift+hbits, owner)
		s.child = c
		return nn, added
	}
	if s.key == key {
		s.val = val
		return nn, false
	}
	// Two keys share this slot: push both one level down.
	c, _ := (*hnode[K, V])(nil).insert(s.key, hashKey(s.key), s.val, shift+hbits, owner)
	c, _ = c.insert(key, h, val, shift+hbits, owner)
	*s = hslot[K, V]{child: c}
	return nn, true
}

// remove returns a new root without key and whether key was present.
func (n *hnode[K, V]) remove(key K, h uint64, shift uint) (*hnode[K, V], bool) {
	if n == nil {
		return nil, false
	}
	n = n.load()
	if shift >= hlimit {
		for i := range n.slots {
			if n.slots[i].key == key {
				if len(n.slots) == 1 {
					return nil, true
				}
				nn := &hnode[K, V]{slots: make([]hslot[K, V], 0, len(n.slots)-1)}
				nn.slots = append(nn.slots, n.slots[:i]...)
				nn.slots = append(nn.slots, n.slots[i+1:]...)
				return nn, true
			}
		}
		return n, false
	}
	bit := uint32(1) << ((h >> shift) & hmask)
	if n.bitmap&bit == 0 {
		return n, false
	}
	idx := bits.OnesCount32(n.bitmap & (bit - 1))
	s := n.slots[idx]
	if s.child != nil {
		c, removed := s.child.remove(key, h, shift+hbits)
		if !removed {
			return n, false
		}
		if c != nil {
			c = c.load()
			if len(c.slots) == 1 && c.slots[0].child == nil {
				// Collapse a single-entry child into this slot; the parent
				// level collapses further when this node is left with one.
				nn := &hnode[K, V]{bitmap: n.bitmap, slots: append([]hslot[K, V](nil), n.slots...)}
				nn.slots[idx] = c.slots[0]
				return nn, true
			}
			nn := &hnode[K, V]{bitmap: n.bitmap, slots: append([]hslot[K, V](nil), n.slots...)}
			nn.slots[idx].child = c
			return nn, true
		}
		return n.without(bit, idx), true
	}
	if s.key != key {
		return n, false
	}
	return n.without(bit, idx), true
}

func (n *hnode[K, V]) without(bit uint32, idx int) *hnode[K, V] {
	if len(n.slots) == 1 {
		return nil
	}
	nn := &hnode[K, V]{bitmap: n.bitmap &^ bit, slots: make([]hslot[K, V], 0, len(n.slots)-1)}
	nn.slots = append(nn.slots, n.slots[:idx]...)
	nn.slots = append(nn.slots, n.slots[idx+1:]...)
	return nn
}

// each calls fn for every entry until fn returns false.
func (n *hnode[K, V]) each(fn func(K, V) bool) bool {
	if n == nil {
		return true
	}
	n = n.load()
	for i := range n.slots {
		s := &n.slots[i]
		if s.child != nil {
			if !s.child.each(fn) {
				return false
			}
		} else if !fn(s.key, s.val) {
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
