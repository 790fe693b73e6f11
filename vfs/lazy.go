package vfs

import "sync"

// lazyNode is a trie node not yet fetched from the blob store.
type lazyNode[K comparable, V any] struct {
	sum    [32]byte
	ld     *loader
	decode func(ld *loader, b []byte) (*hnode[K, V], error)
	once   sync.Once
	n      *hnode[K, V]
	err    error
}

func (l *lazyNode[K, V]) get() *hnode[K, V] {
	l.once.Do(func() {
		b, err := l.ld.fetch(l.sum)
		if err == nil {
			l.n, err = l.decode(l.ld, b)
		}
		l.err = err
	})
	if l.err != nil {
		panic(&loadError{err: l.err})
	}
	return l.n
}
