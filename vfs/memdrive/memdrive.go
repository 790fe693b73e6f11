// Package memdrive is an in-memory vfs.RemoteFS with the semantics the
// contract documents (vfs/remote.go): one process-local tree, safe for
// concurrent use, with advisory locks shared by every handle on it. Tests
// mount it where a shared drive would be mounted (vfs.FS.MountRemote), so
// that the mount, the shell and the commands can be tested over a remote
// tree without the drive package's store behind it.
package memdrive

import (
	"context"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/vfs"
)

// Drive is the tree. The zero value is not usable: call New.
type Drive struct {
	// NoStat makes FileInfo.Sys() nil, as a RemoteFS that keeps no inode
	// numbers answers (the mount then makes them up).
	NoStat bool

	mu    sync.Mutex
	root  *node
	next  uint64
	used  int64
	quota int64
	wake  chan struct{} // closed and replaced when a lock is released
}

type node struct {
	ino   uint64
	dir   bool
	perm  fs.FileMode
	data  []byte
	mtime time.Time
	atime time.Time
	kids  map[string]*node
	// advisory locks: holders of a shared lock, or the exclusive one
	shared map[*File]bool
	excl   *File
}

// New returns an empty drive holding at most quota bytes (0: no limit).
func New(quota int64) *Drive {
	d := &Drive{quota: quota, next: 2, wake: make(chan struct{})}
	now := time.Now()
	d.root = &node{ino: 1, dir: true, perm: 0o755, mtime: now, atime: now, kids: map[string]*node{}}
	return d
}

var _ vfs.RemoteFS = (*Drive)(nil)

func perr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// lookup finds name (d.mu held); parent is its directory when that exists.
func (d *Drive) lookup(name string) (n, parent *node, base string, err error) {
	if name == "/" {
		return d.root, nil, "/", nil
	}
	if !strings.HasPrefix(name, "/") || path.Clean(name) != name {
		return nil, nil, "", syscall.EINVAL
	}
	cur := d.root
	parts := strings.Split(name[1:], "/")
	for i, p := range parts {
		if !cur.dir {
			return nil, nil, "", syscall.ENOTDIR
		}
		next := cur.kids[p]
		if i == len(parts)-1 {
			return next, cur, p, nil
		}
		if next == nil {
			return nil, nil, "", syscall.ENOENT
		}
		cur = next
	}
	panic("unreachable")
}

func (d *Drive) get(op, name string) (*node, error) {
	n, _, _, err := d.lookup(name)
	if err != nil {
		return nil, perr(op, name, err)
	}
	if n == nil {
		return nil, perr(op, name, syscall.ENOENT)
	}
	return n, nil
}

type info struct {
	name string
	size int64
	mode fs.FileMode
	mt   time.Time
	st   *vfs.Stat
}

func (fi *info) Name() string       { return fi.name }
func (fi *info) Size() int64        { return fi.size }
func (fi *info) Mode() fs.FileMode  { return fi.mode }
func (fi *info) ModTime() time.Time { return fi.mt }
func (fi *info) IsDir() bool        { return fi.mode.IsDir() }
func (fi *info) Sys() any {
	if fi.st == nil {
		return nil
	}
	return fi.st
}

func (d *Drive) info(n *node, name string) *info {
	fi := &info{name: name, size: int64(len(n.data)), mode: n.perm, mt: n.mtime}
	if n.dir {
		fi.mode |= fs.ModeDir
		fi.size = 4096
	}
	if !d.NoStat {
		fi.st = &vfs.Stat{Ino: n.ino, Nlink: 1, Atime: n.atime, Ctime: n.mtime, Blocks: (int64(len(n.data)) + 511) / 512}
		if n.dir {
			fi.st.Nlink = 2
		}
	}
	return fi
}

func (d *Drive) Stat(name string) (fs.FileInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.get("stat", name)
	if err != nil {
		return nil, err
	}
	return d.info(n, path.Base(name)), nil
}

type entry struct{ fi *info }

func (e entry) Name() string               { return e.fi.name }
func (e entry) IsDir() bool                { return e.fi.IsDir() }
func (e entry) Type() fs.FileMode          { return e.fi.mode.Type() }
func (e entry) Info() (fs.FileInfo, error) { return e.fi, nil }

func (d *Drive) list(n *node) []fs.DirEntry {
	out := make([]fs.DirEntry, 0, len(n.kids))
	for name, k := range n.kids {
		out = append(out, entry{d.info(k, name)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

func (d *Drive) ReadDir(name string) ([]fs.DirEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.get("readdirent", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, perr("readdirent", name, syscall.ENOTDIR)
	}
	return d.list(n), nil
}

func (d *Drive) create(parent *node, base string, dir bool, perm fs.FileMode) *node {
	now := time.Now()
	n := &node{ino: d.next, dir: dir, perm: perm & fs.ModePerm, mtime: now, atime: now}
	d.next++
	if dir {
		n.kids = map[string]*node{}
	}
	parent.kids[base] = n
	parent.mtime = now
	return n
}

func (d *Drive) OpenFile(name string, flag int, perm fs.FileMode) (vfs.RemoteFile, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, parent, base, err := d.lookup(name)
	if err != nil {
		return nil, perr("open", name, err)
	}
	acc := flag & vfs.O_ACCMODE
	switch {
	case n == nil && flag&vfs.O_CREATE == 0:
		return nil, perr("open", name, syscall.ENOENT)
	case n == nil && !parent.dir:
		return nil, perr("open", name, syscall.ENOTDIR)
	case n == nil:
		n = d.create(parent, base, false, perm)
	case flag&(vfs.O_CREATE|vfs.O_EXCL) == vfs.O_CREATE|vfs.O_EXCL:
		return nil, perr("open", name, syscall.EEXIST)
	case n.dir && (acc != vfs.O_RDONLY || flag&vfs.O_TRUNC != 0):
		return nil, perr("open", name, syscall.EISDIR)
	case flag&vfs.O_TRUNC != 0 && acc != vfs.O_RDONLY:
		d.used -= int64(len(n.data))
		n.data, n.mtime = nil, time.Now()
	}
	return &File{d: d, n: n, name: name, flag: flag}, nil
}

func (d *Drive) Mkdir(name string, perm fs.FileMode) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, parent, base, err := d.lookup(name)
	switch {
	case err != nil:
		return perr("mkdir", name, err)
	case n != nil:
		return perr("mkdir", name, syscall.EEXIST)
	case !parent.dir:
		return perr("mkdir", name, syscall.ENOTDIR)
	}
	d.create(parent, base, true, perm)
	return nil
}

func (d *Drive) Remove(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, parent, base, err := d.lookup(name)
	switch {
	case err != nil:
		return perr("remove", name, err)
	case n == nil:
		return perr("remove", name, syscall.ENOENT)
	case parent == nil:
		return perr("remove", name, syscall.EBUSY)
	case n.dir && len(n.kids) > 0:
		return perr("remove", name, syscall.ENOTEMPTY)
	}
	delete(parent.kids, base)
	parent.mtime = time.Now()
	d.used -= int64(len(n.data)) // an open handle keeps the data; it is no longer charged
	return nil
}

func (d *Drive) Rename(oldname, newname string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	on, op, ob, err := d.lookup(oldname)
	if err != nil {
		return perr("rename", oldname, err)
	}
	if on == nil {
		return perr("rename", oldname, syscall.ENOENT)
	}
	if op == nil {
		return perr("rename", oldname, syscall.EBUSY)
	}
	if strings.HasPrefix(newname, oldname+"/") {
		return perr("rename", oldname, syscall.EINVAL)
	}
	nn, np, nb, err := d.lookup(newname)
	switch {
	case err != nil:
		return perr("rename", newname, err)
	case np == nil:
		return perr("rename", newname, syscall.EBUSY)
	case !np.dir:
		return perr("rename", newname, syscall.ENOTDIR)
	case nn == on:
		return nil
	case nn != nil && nn.dir && !on.dir:
		return perr("rename", newname, syscall.EISDIR)
	case nn != nil && nn.dir:
		return perr("rename", newname, syscall.EEXIST) // a directory is not replaced
	case nn != nil && on.dir:
		return perr("rename", newname, syscall.ENOTDIR)
	case nn != nil:
		d.used -= int64(len(nn.data))
	}
	delete(op.kids, ob)
	np.kids[nb] = on
	op.mtime, np.mtime = time.Now(), time.Now()
	return nil
}

func (d *Drive) Chmod(name string, mode fs.FileMode) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.get("chmod", name)
	if err != nil {
		return err
	}
	n.perm = mode & fs.ModePerm
	return nil
}

func (d *Drive) Chtimes(name string, atime, mtime time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.get("chtimes", name)
	if err != nil {
		return err
	}
	n.atime, n.mtime = atime, mtime
	return nil
}

func (d *Drive) Truncate(name string, size int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.get("truncate", name)
	if err != nil {
		return err
	}
	return d.truncate(n, name, size)
}

func (d *Drive) truncate(n *node, name string, size int64) error {
	if n.dir {
		return perr("truncate", name, syscall.EISDIR)
	}
	if size < 0 {
		return perr("truncate", name, syscall.EINVAL)
	}
	if err := d.charge(name, size-int64(len(n.data))); err != nil {
		return err
	}
	if size <= int64(len(n.data)) {
		n.data = n.data[:size:size]
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
	n.mtime = time.Now()
	return nil
}

// charge adds delta bytes to the usage, refusing to pass the quota.
func (d *Drive) charge(name string, delta int64) error {
	if d.quota > 0 && delta > 0 && d.used+delta > d.quota {
		return perr("write", name, &vfs.QuotaError{Errno: syscall.ENOSPC, Limit: "bytes", Max: d.quota, Want: d.used + delta})
	}
	d.used += delta
	return nil
}

func (d *Drive) Usage() (used, quota int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.used, d.quota
}

// File is an open handle: it holds the node, so it survives rename and
// remove.
type File struct {
	d      *Drive
	n      *node
	name   string
	flag   int
	off    int64
	closed bool
	ents   []fs.DirEntry
	read   bool
}

func (h *File) check(op string) error {
	if h.closed {
		return perr(op, h.name, fs.ErrClosed)
	}
	return nil
}

func (h *File) Read(p []byte) (int, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	n, err := h.readAt(p, h.off)
	h.off += int64(n)
	if err == nil && n == 0 && len(p) > 0 {
		err = io.EOF
	}
	return n, err
}

func (h *File) ReadAt(p []byte, off int64) (int, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	n, err := h.readAt(p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

func (h *File) readAt(p []byte, off int64) (int, error) {
	if err := h.check("read"); err != nil {
		return 0, err
	}
	if h.n.dir {
		return 0, perr("read", h.name, syscall.EISDIR)
	}
	if off < 0 {
		return 0, perr("read", h.name, syscall.EINVAL)
	}
	if off >= int64(len(h.n.data)) {
		return 0, nil
	}
	return copy(p, h.n.data[off:]), nil
}

func (h *File) Write(p []byte) (int, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if h.flag&vfs.O_APPEND != 0 {
		h.off = int64(len(h.n.data))
	}
	n, err := h.writeAt(p, h.off)
	h.off += int64(n)
	return n, err
}

func (h *File) WriteAt(p []byte, off int64) (int, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	return h.writeAt(p, off)
}

func (h *File) writeAt(p []byte, off int64) (int, error) {
	if err := h.check("write"); err != nil {
		return 0, err
	}
	if h.flag&vfs.O_ACCMODE == vfs.O_RDONLY {
		return 0, perr("write", h.name, syscall.EBADF)
	}
	if off < 0 {
		return 0, perr("write", h.name, syscall.EINVAL)
	}
	end := off + int64(len(p))
	if grow := end - int64(len(h.n.data)); grow > 0 {
		if err := h.d.charge(h.name, grow); err != nil {
			return 0, err
		}
		h.n.data = append(h.n.data, make([]byte, grow)...)
	}
	copy(h.n.data[off:], p)
	h.n.mtime = time.Now()
	return len(p), nil
}

func (h *File) Seek(offset int64, whence int) (int64, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.check("seek"); err != nil {
		return 0, err
	}
	abs := offset
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		abs += h.off
	case io.SeekEnd:
		abs += int64(len(h.n.data))
	default:
		return 0, perr("seek", h.name, syscall.EINVAL)
	}
	if abs < 0 {
		return 0, perr("seek", h.name, syscall.EINVAL)
	}
	if abs == 0 {
		h.read, h.ents = false, nil
	}
	h.off = abs
	return abs, nil
}

func (h *File) Truncate(size int64) error {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.check("truncate"); err != nil {
		return err
	}
	return h.d.truncate(h.n, h.name, size)
}

func (h *File) Stat() (fs.FileInfo, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.check("stat"); err != nil {
		return nil, err
	}
	return h.d.info(h.n, path.Base(h.name)), nil
}

func (h *File) ReadDir(n int) ([]fs.DirEntry, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.check("readdirent"); err != nil {
		return nil, err
	}
	if !h.n.dir {
		return nil, perr("readdirent", h.name, syscall.ENOTDIR)
	}
	if !h.read {
		h.ents, h.read = h.d.list(h.n), true
	}
	rest := h.ents
	if n > 0 {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		rest = rest[:min(n, len(rest))]
	}
	h.ents = h.ents[len(rest):]
	return rest, nil
}

func (h *File) Close() error {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.check("close"); err != nil {
		return err
	}
	h.closed = true
	h.d.release(h)
	close(h.d.wake) // a wait of h itself ends (ErrClosed)
	h.d.wake = make(chan struct{})
	return nil
}

// release drops h's lock (d.mu held) and wakes the waiters.
func (d *Drive) release(h *File) {
	n := h.n
	if n.excl != h && !n.shared[h] {
		return
	}
	if n.excl == h {
		n.excl = nil
	}
	delete(n.shared, h)
	close(d.wake)
	d.wake = make(chan struct{})
}

// Flock is flock(2) over every handle of the drive: a handle holds one
// lock, a conversion drops it first when it has to wait, as on Linux.
func (h *File) Flock(ctx context.Context, how int) error {
	op := how &^ vfs.LOCK_NB
	if op != vfs.LOCK_SH && op != vfs.LOCK_EX && op != vfs.LOCK_UN {
		return perr("flock", h.name, syscall.EINVAL)
	}
	d := h.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := h.check("flock"); err != nil {
		return err
	}
	if op == vfs.LOCK_UN {
		d.release(h)
		return nil
	}
	n := h.n
	for {
		free := n.excl == nil || n.excl == h
		if op == vfs.LOCK_EX {
			for o := range n.shared {
				if o != h {
					free = false
				}
			}
		}
		if free {
			n.excl = nil
			delete(n.shared, h)
			if op == vfs.LOCK_EX {
				n.excl = h
			} else {
				if n.shared == nil {
					n.shared = map[*File]bool{}
				}
				n.shared[h] = true
			}
			return nil
		}
		d.release(h)
		if how&vfs.LOCK_NB != 0 {
			return perr("flock", h.name, syscall.EWOULDBLOCK)
		}
		wake := d.wake
		d.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			d.mu.Lock()
			return perr("flock", h.name, syscall.EINTR)
		}
		d.mu.Lock()
		if err := h.check("flock"); err != nil {
			return err
		}
	}
}
