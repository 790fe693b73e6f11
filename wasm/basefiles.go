package wasm

import (
	"io/fs"
	"sync"
	"weak"

	"github.com/warren-sandbox/warren/vfs"
)

// baseFiles remembers the content hash of module files that are in a
// sandbox's image, not its delta: those bytes are immutable (the base is
// a content-addressed EROFS image), so while the file is not copied up
// its hash holds and the module need not be read or hashed again. A file
// in the delta is always read and hashed: its bytes may change at any
// time, with any timestamps.
type baseFiles struct {
	mu sync.Mutex
	m  map[baseKey]baseEntry
}

// maxBaseFiles bounds the table; past it, it starts again empty.
const maxBaseFiles = 4096

type baseKey struct {
	fs   weak.Pointer[vfs.FS] // a finished sandbox's FS is not kept alive
	path string
}

type baseEntry struct {
	ino  uint64
	size int64
	key  cacheKey
}

// imageFile returns path with every symlink resolved when that file is
// in the image, not the delta ("" otherwise).
func imageFile(fsys *vfs.FS, path string) string {
	real, err := fsys.Realpath(path)
	if err != nil {
		return ""
	}
	if di, err := fsys.DeltaEntry(real); err != nil || di.InDelta || di.Whiteout {
		return ""
	}
	return real
}

func ino(fi fs.FileInfo) uint64 {
	if s, ok := fi.Sys().(*vfs.Stat); ok {
		return s.Ino
	}
	return 0
}

// lookup returns the remembered hash of path when it is still the same
// image file; nil otherwise.
func (b *baseFiles) lookup(fsys *vfs.FS, path string, fi fs.FileInfo) *cacheKey {
	real := imageFile(fsys, path)
	if real == "" {
		return nil
	}
	b.mu.Lock()
	e, ok := b.m[baseKey{weak.Make(fsys), real}]
	b.mu.Unlock()
	if !ok || e.ino != ino(fi) || e.size != fi.Size() {
		return nil
	}
	return &e.key
}

// remember notes path's hash if the file is in the image.
func (b *baseFiles) remember(fsys *vfs.FS, path string, fi fs.FileInfo, key cacheKey) {
	real := imageFile(fsys, path)
	if real == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= maxBaseFiles {
		b.m = map[baseKey]baseEntry{}
	}
	b.m[baseKey{weak.Make(fsys), real}] = baseEntry{ino: ino(fi), size: fi.Size(), key: key}
}
