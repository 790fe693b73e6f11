package vfs

import (
	"container/list"
	"sync"
)

// packCache keeps whole packs read by loaders (a generation's last pack,
// and every pack of a store that cannot read a range), bounded by bytes,
// least recently used out first. Packs in it were verified against their
// id, so every loader may share them.
var packCache = struct {
	sync.Mutex
	m     map[[32]byte]*list.Element // of *cachedPack
	lru   list.List                  // front: most recently used
	bytes int64
}{m: map[[32]byte]*list.Element{}}

type cachedPack struct {
	id [32]byte
	b  []byte
}

const packCacheMax = 64 << 20

func cacheGet(id [32]byte) []byte {
	packCache.Lock()
	defer packCache.Unlock()
	e := packCache.m[id]
	if e == nil {
		return nil
	}
	packCache.lru.MoveToFront(e)
	return e.Value.(*cachedPack).b
}

func cachePut(id [32]byte, b []byte) {
	if len(b) > packCacheMax/4 {
		return
	}
	packCache.Lock()
	defer packCache.Unlock()
	if packCache.m[id] != nil {
		return
	}
	for packCache.bytes+int64(len(b)) > packCacheMax && packCache.lru.Len() > 0 {
		old := packCache.lru.Back()
		cp := packCache.lru.Remove(old).(*cachedPack)
		delete(packCache.m, cp.id)
		packCache.bytes -= int64(len(cp.b))
	}
	packCache.m[id] = packCache.lru.PushFront(&cachedPack{id: id, b: b})
	packCache.bytes += int64(len(b))
}

// DropCaches forgets every whole pack the process keeps, so the next read
// of one goes to its store (for measuring cold paths; the chunk cache, if
// any, is the caller's to replace).
func DropCaches() {
	packCache.Lock()
	defer packCache.Unlock()
	clear(packCache.m)
	packCache.lru.Init()
	packCache.bytes = 0
}
