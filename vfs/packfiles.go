package vfs

import (
	"io"
	"reflect"
	"sync"
)

// openPacks keeps a few pack readers that can read a range (store/dir's
// *os.File) open across blob reads, so a cold load opens each pack once
// rather than once per blob. Process-wide and small: many sandboxes must
// not hold many descriptors. A reader is closed when it is evicted and no
// read is using it.
var openPacks = struct {
	sync.Mutex
	m    map[openKey]*openPack
	tick uint64
}{m: map[openKey]*openPack{}}

const openPacksMax = 32

type openKey struct {
	src  BlobStore // only stores of a comparable type are cached
	pack [32]byte
}

type openPack struct {
	ra    io.ReaderAt
	c     io.Closer
	users int
	used  uint64
	dead  bool
}

func cacheable(src BlobStore) bool {
	t := reflect.TypeOf(src)
	return t != nil && t.Comparable()
}

// readOpen reads p at off from an open reader of pack in src, if one is
// cached; ok is false if none is.
func readOpen(src BlobStore, pack [32]byte, p []byte, off int64) (n int, err error, ok bool) {
	if !cacheable(src) {
		return 0, nil, false
	}
	k := openKey{src, pack}
	openPacks.Lock()
	op := openPacks.m[k]
	if op == nil {
		openPacks.Unlock()
		return 0, nil, false
	}
	op.users++
	openPacks.tick++
	op.used = openPacks.tick
	openPacks.Unlock()
	n, err = op.ra.ReadAt(p, off)
	openPacks.Lock()
	op.users--
	if op.dead && op.users == 0 {
		op.c.Close()
	}
	openPacks.Unlock()
	return n, err, true
}

// keepOpen caches rc (which is an io.ReaderAt) for later reads of pack in
// src; it reports false (and the caller closes rc) if it is not kept.
func keepOpen(src BlobStore, pack [32]byte, rc io.ReadCloser) bool {
	ra, ok := rc.(io.ReaderAt)
	if !ok || !cacheable(src) {
		return false
	}
	k := openKey{src, pack}
	openPacks.Lock()
	defer openPacks.Unlock()
	if openPacks.m[k] != nil {
		return false
	}
	for len(openPacks.m) >= openPacksMax {
		var oldK openKey
		var old *openPack
		for k, op := range openPacks.m {
			if old == nil || op.used < old.used {
				oldK, old = k, op
			}
		}
		delete(openPacks.m, oldK)
		old.dead = true
		if old.users == 0 {
			old.c.Close()
		}
	}
	openPacks.tick++
	openPacks.m[k] = &openPack{ra: ra, c: rc, used: openPacks.tick}
	return true
}

// closeOpenPacks closes every cached reader (tests; a store being closed).
func closeOpenPacks() {
	openPacks.Lock()
	defer openPacks.Unlock()
	for k, op := range openPacks.m {
		delete(openPacks.m, k)
		op.dead = true
		if op.users == 0 {
			op.c.Close()
		}
	}
}
