package shell

import (
	"cmp"
	"maps"
	"slices"
)

// keyOrder reproduces the order in which bash 5.2 lists an associative
// array's keys (${!a[@]}, ${a[@]}, declare -p, for loops): scripts print
// them, so a different order is a different answer. Bash keeps the keys
// in a hash table (hashlib.c): 1024 buckets chosen by the low bits of the
// 32-bit FNV-1 hash of the key, a new key pushed at the head of its
// bucket's chain, the table grown 4x when an insert finds as many entries
// as twice the buckets (rehashing walks the old buckets in order and
// pushes each entry at the head of its new chain, which reverses it), and
// the listing walks the buckets in order, each chain from its head.
//
// Rather than holding 1024+ buckets per array, keyOrder keeps for each key
// when it was inserted (the table's epoch: how many times it had grown,
// and a sequence number) and derives the chains from that when listed.
type keyOrder struct {
	at      map[string]uint64 // key -> epoch<<48 | sequence
	entries int               // bash's nentries: grows on insert, shrinks on unset
	buckets uint32
	epoch   uint64
	seq     uint64
}

const (
	bashAssocBuckets = 1024
	orderEpochShift  = 48
)

func newKeyOrder() *keyOrder {
	return &keyOrder{at: map[string]uint64{}, buckets: bashAssocBuckets}
}

func (o *keyOrder) clone() *keyOrder {
	if o == nil {
		return nil
	}
	n := *o
	n.at = make(map[string]uint64, len(o.at))
	for k, x := range o.at {
		n.at[k] = x
	}
	return &n
}

// insert records a key new to the array (a key already there keeps its
// place, as a bash assignment to it does).
func (o *keyOrder) insert(k string) {
	if _, ok := o.at[k]; ok {
		return
	}
	if o.entries >= 2*int(o.buckets) && o.buckets < 1<<30 {
		o.buckets *= 4
		o.epoch++
	}
	o.seq++
	o.at[k] = o.epoch<<orderEpochShift | o.seq
	o.entries++
}

func (o *keyOrder) remove(k string) {
	if _, ok := o.at[k]; ok {
		delete(o.at, k)
		o.entries--
	}
}

// flush empties the table as bash's assoc_flush does on a compound
// assignment (a=(...)): its size stays.
func (o *keyOrder) flush() {
	clear(o.at)
	o.entries = 0
}

// noteKey records k, just added to v's map, in v's key order (started
// here, over the keys already there in sorted order, for a map set by a
// path that bypassed it).
func (v *Var) noteKey(k string) {
	if v.ord == nil {
		v.ord = newKeyOrder()
		for _, x := range slices.Sorted(maps.Keys(v.Map)) {
			if x != k {
				v.ord.insert(x)
			}
		}
	}
	v.ord.insert(k)
}

// insertionOrder is the keys in the order they were inserted (those
// without a record last, sorted): inserting them again in this order into
// a new table gives the same listing when none was unset in between.
func (v *Var) insertionOrder() []string {
	keys := slices.Sorted(maps.Keys(v.Map))
	if v.ord == nil {
		return keys
	}
	slices.SortStableFunc(keys, func(a, b string) int {
		x, okA := v.ord.at[a]
		y, okB := v.ord.at[b]
		switch {
		case okA && okB:
			return cmp.Compare(x, y)
		case okA:
			return -1
		case okB:
			return 1
		}
		return 0
	})
	return keys
}

func fnv1(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h *= 16777619
		h ^= uint32(s[i])
	}
	return h
}

type orderEnt struct {
	k      string
	bucket uint32
	at     uint64
}

// sortKeys orders keys, the array's keys, as bash lists them. Keys the
// order has no record of (set by a path that bypassed it) follow, sorted.
func (o *keyOrder) sortKeys(keys []string) []string {
	known := make([]orderEnt, 0, len(keys))
	var unknown []string
	for _, k := range keys {
		if at, ok := o.at[k]; ok {
			known = append(known, orderEnt{k, fnv1(k) & (o.buckets - 1), at})
		} else {
			unknown = append(unknown, k)
		}
	}
	// by bucket, then newest epoch first, newest first
	slices.SortFunc(known, func(a, b orderEnt) int {
		if c := cmp.Compare(a.bucket, b.bucket); c != 0 {
			return c
		}
		return cmp.Compare(b.at, a.at)
	})
	out := make([]string, 0, len(keys))
	for i := 0; i < len(known); {
		j := i + 1
		for j < len(known) && known[j].bucket == known[i].bucket {
			j++
		}
		out = append(out, chain(known[i:j], o.epoch)...)
		i = j
	}
	slices.Sort(unknown)
	return append(out, unknown...)
}

// chain is one bucket's chain at epoch e, given its entries newest first:
// the entries inserted since the table last grew (newest first), then,
// reversed, the chain that growth rehashed (the same rule one epoch
// earlier).
func chain(ents []orderEnt, e uint64) []string {
	i := 0
	for i < len(ents) && ents[i].at>>orderEpochShift == e {
		i++
	}
	out := make([]string, 0, len(ents))
	for _, x := range ents[:i] {
		out = append(out, x.k)
	}
	if i == len(ents) || e == 0 {
		return out
	}
	older := chain(ents[i:], e-1)
	slices.Reverse(older)
	return append(out, older...)
}
