package vfs

import "sync"

// lazyNode is a trie node not yet fetched from the blob store: the blob
// sum, stored at at.
type lazyNode[K comparable, V any] struct {
	sum    [32]byte
	at     blobLoc
	ld     *loader
	decode func(ld *loader, self [32]byte, b []byte) (*hnode[K, V], error)
	once   sync.Once
	n      *hnode[K, V]
	err    error
}

func (l *lazyNode[K, V]) get() *hnode[K, V] {
	l.once.Do(func() {
		b, err := l.ld.read(l.at, l.sum, "node")
		if err == nil {
			l.n, err = l.decode(l.ld, l.at.pack, b)
		}
		l.err = err
	})
	if l.err != nil {
		panic(&loadError{err: l.err})
	}
	return l.n
}
