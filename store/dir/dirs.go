package dir

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// dirCache keeps directories under ROOT open, so Put, Get and GetRange
// reach an object with one openat/renameat relative to its fan-out
// directory instead of resolving every path component through os.Root
// again (an openat and a close per component). A directory is opened once,
// through os.Root, so a symlink planted in ROOT cannot lead out; afterwards
// the descriptor pins the directory itself, and a symlink swapped in for it
// later is never looked at. Objects are then opened with O_NOFOLLOW.
//
// The store never removes directories; if someone else does, an operation
// in the dead directory fails with ENOENT, and the caller drops the entry
// (forget) and retries once.
type dirCache struct {
	root *os.Root
	mu   sync.Mutex
	m    map[string]*dirEntry
	done bool // closed
}

// dirCacheMax bounds the descriptors held: the 256 fan-out directories of
// one content-addressed prefix (vfs/pack/) fit twice over.
const dirCacheMax = 512

type dirEntry struct {
	f    *os.File
	fd   int
	refs int  // operations using fd: it is closed only at zero
	dead bool // evicted or forgotten: close when refs drop to zero
}

func newDirCache(root *os.Root) *dirCache {
	return &dirCache{root: root, m: make(map[string]*dirEntry)}
}

// get returns an open entry for dir (relative to ROOT), opening it if
// needed; mkdirs, when set, is called to make the directory if it is
// missing. The caller must release the entry.
func (c *dirCache) get(dir string, mkdirs func(string) error) (*dirEntry, error) {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return nil, os.ErrClosed
	}
	if e := c.m[dir]; e != nil {
		e.refs++
		c.mu.Unlock()
		return e, nil
	}
	c.mu.Unlock()

	f, err := c.root.Open(dir)
	if err != nil && mkdirs != nil && errors.Is(err, fs.ErrNotExist) {
		if err = mkdirs(dir); err == nil {
			f, err = c.root.Open(dir)
		}
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		if err == nil {
			err = &fs.PathError{Op: "open", Path: dir, Err: errNotDir}
		}
		return nil, err
	}
	e := &dirEntry{f: f, fd: int(f.Fd()), refs: 1}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		f.Close()
		return nil, os.ErrClosed
	}
	if old := c.m[dir]; old != nil { // another goroutine opened it meanwhile
		f.Close()
		old.refs++
		return old, nil
	}
	if len(c.m) >= dirCacheMax {
		for k, o := range c.m { // random order: evicts an arbitrary entry
			delete(c.m, k)
			c.retire(o)
			if len(c.m) < dirCacheMax {
				break
			}
		}
	}
	c.m[dir] = e
	return e, nil
}

var errNotDir = errors.New("not a directory")

func (c *dirCache) release(e *dirEntry) {
	c.mu.Lock()
	e.refs--
	if e.dead && e.refs == 0 {
		e.f.Close()
	}
	c.mu.Unlock()
}

// forget drops e (its directory was removed under the store), so the next
// get opens the path again.
func (c *dirCache) forget(dir string, e *dirEntry) {
	c.mu.Lock()
	if c.m[dir] == e {
		delete(c.m, dir)
		c.retire(e)
	}
	c.mu.Unlock()
}

// retire marks e dead, closing it now if unused. c.mu is held.
func (c *dirCache) retire(e *dirEntry) {
	e.dead = true
	if e.refs == 0 {
		e.f.Close()
	}
}

func (c *dirCache) close() {
	c.mu.Lock()
	c.done = true
	for k, e := range c.m {
		delete(c.m, k)
		c.retire(e)
	}
	c.mu.Unlock()
}
