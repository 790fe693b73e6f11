package vfs

import (
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// FS is one sandbox's filesystem: Base under a copy-on-write delta.
type FS struct {
	opts      Options
	base      fs.FS
	rl        fs.ReadLinkFS
	mu        sync.Mutex // serialises writers; readers use cur
	cur       atomic.Pointer[tree]
	maxBytes  atomic.Int64
	maxInodes atomic.Int64
	owner     atomic.Uint64 // uid<<32 | gid of new entries (Options.Uid/Gid, SetOwner)

	openMu sync.Mutex
	open   map[uint64]int32 // inodes with open handles (kept while unlinked)

	lin     *lineage                     // shared with forks: what Persist may reuse
	lastGen atomic.Pointer[genMemo]      // the generation last persisted or loaded
	gate    atomic.Pointer[func() error] // SetWriteGate

	mmu    sync.Mutex              // serialises Mount and Unmount
	mounts atomic.Pointer[[]mount] // mount.go; longest path first
	qname  atomic.Pointer[string]  // names its quota in errors once mounted
	inoTag atomic.Uint64           // mixed into reported inode numbers once mounted

	lockMu sync.Mutex
	locks  map[uint64]*lockState // flock.go: advisory locks by inode
}

// New returns an FS over opts.Base with an empty delta.
func New(opts Options) *FS {
	f := newFS(opts)
	t := &tree{nextIno: firstIno}
	var root *inode
	if f.base != nil {
		root = f.baseInode(".")
		if root != nil && !root.isDir() {
			root = nil
		}
	}
	if root == nil {
		now := f.nowNano()
		root = &inode{inodeData: inodeData{mode: fs.ModeDir | 0o755, nlink: 2,
			atime: now, mtime: now, ctime: now, uid: opts.Uid, gid: opts.Gid}}
		root.ino = t.newIno()
	} else {
		root = root.clone()
	}
	t.put(root)
	t.root = root.ino
	t.usage = Usage{}
	f.cur.Store(t)
	return f
}

func newFS(opts Options) *FS {
	f := &FS{opts: opts, base: opts.Base, lin: &lineage{}}
	if rl, ok := opts.Base.(fs.ReadLinkFS); ok {
		f.rl = rl
	}
	f.maxBytes.Store(opts.MaxBytes)
	f.maxInodes.Store(opts.MaxInodes)
	f.SetOwner(opts.Uid, opts.Gid)
	return f
}

func (f *FS) nowNano() int64 {
	if f.opts.Now != nil {
		return f.opts.Now().UnixNano()
	}
	return time.Now().UnixNano()
}

// Fork returns an independent copy in O(1): it shares the current tree.
func (f *FS) Fork() *FS {
	g := &FS{opts: f.opts, base: f.base, rl: f.rl, lin: f.lin}
	g.maxBytes.Store(f.maxBytes.Load())
	g.maxInodes.Store(f.maxInodes.Load())
	g.owner.Store(f.owner.Load())
	g.cur.Store(f.cur.Load())
	return g
}

// SetOwner makes uid and gid the owner of the entries created from now on
// (Options.Uid and Gid at first): a sandbox's files belong to the user its
// sessions run as, as the files a process creates belong to its user, so
// that ls -l, stat and test -w say what they would on Linux.
func (f *FS) SetOwner(uid, gid uint32) { f.owner.Store(uint64(uid)<<32 | uint64(gid)) }

// newOwner is the owner of an entry created now.
func (f *FS) newOwner() (uid, gid uint32) {
	o := f.owner.Load()
	return uint32(o >> 32), uint32(o)
}

// Snapshot is Fork: a frozen copy that shares every node.
func (f *FS) Snapshot() *FS { return f.Fork() }

// Usage reports what the delta holds.
func (f *FS) Usage() Usage { return f.cur.Load().usage }

// SetQuota changes the delta's limits (0 = unlimited).
func (f *FS) SetQuota(maxBytes, maxInodes int64) {
	f.maxBytes.Store(maxBytes)
	f.maxInodes.Store(maxInodes)
}

// Quota reports the delta's limits (0 = unlimited), for df.
func (f *FS) Quota() (maxBytes, maxInodes int64) {
	return f.maxBytes.Load(), f.maxInodes.Load()
}

// QuotaError is the Err of a PathError for an operation refused by a quota;
// it unwraps to ENOSPC (bytes) or EDQUOT (inodes).
type QuotaError struct {
	Errno syscall.Errno
	Limit string // "bytes" or "inodes"
	Max   int64
	Want  int64
	// Name is the mounted tree whose quota it is ("" = the delta itself).
	Name string
}

func (e *QuotaError) Error() string {
	if e.Name != "" {
		return e.Name + " " + e.Limit + " quota exceeded (" + itoa(e.Want) + " > " + itoa(e.Max) + "): " + e.Errno.Error()
	}
	return "delta " + e.Limit + " quota exceeded (" + itoa(e.Want) + " > " + itoa(e.Max) + "): " + e.Errno.Error()
}
func (e *QuotaError) Unwrap() error { return e.Errno }

func itoa(n int64) string {
	var b [24]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

func perr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// loadError is raised (as a panic) when a lazily loaded node cannot be
// fetched or verified; every public entry point turns it into an error.
type loadError struct{ err error }

func catchLoad(errp *error, op, name string) {
	if r := recover(); r != nil {
		le, ok := r.(*loadError)
		if !ok {
			panic(r)
		}
		*errp = perr(op, name, &ioError{le.err})
	}
}

// ioError is EIO carrying its cause.
type ioError struct{ cause error }

func (e *ioError) Error() string { return "input/output error: " + e.cause.Error() }
func (e *ioError) Unwrap() []error {
	return []error{syscall.EIO, e.cause}
}

// update runs fn on a private copy of the tree in write mode and publishes
// the result if fn succeeds and no quota is exceeded.
func (f *FS) update(op, name string, fn func(w *walk) error) error {
	if err := f.passGate(op, name); err != nil {
		return err
	}
	_, _, err := f.apply(op, name, fn, false, nil)
	return err
}

// apply is update's work under the lock, the gate passed: fn on a private
// copy of the tree, published if fn succeeds and no quota is exceeded,
// then done (if any), still under the lock. hold: with a write gate
// installed, the copy is returned unpublished (t) with the tree it was
// made from (old), for updateFirst to ask the gate.
func (f *FS) apply(op, name string, fn func(w *walk) error, hold bool, done func()) (old, t *tree, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer catchLoad(&err, op, name)
	old = f.cur.Load()
	t = new(tree)
	*t = *old
	w := getWalk(f, t, true)
	defer putWalk(w)
	if err := fn(w); err != nil {
		if _, ok := err.(*fs.PathError); ok {
			return nil, nil, err
		}
		return nil, nil, perr(op, name, err)
	}
	if hold && f.gate.Load() != nil {
		return old, t, nil
	}
	return nil, nil, f.publish(op, name, old, t, done)
}

// publish makes t (a copy of old) the current tree unless a quota is
// exceeded, then runs done; f.mu is held.
func (f *FS) publish(op, name string, old, t *tree, done func()) error {
	if err := f.checkQuota(old, t); err != nil {
		return perr(op, name, err)
	}
	f.cur.Store(t)
	if done != nil {
		done()
	}
	return nil
}

// updateFirst is update for an operation whose walk may find that it
// adds nothing (an O_NOFIFO open that meets a fifo): fn runs before the
// write gate is asked, and an error of fn ends it, nothing published and
// no gate asked. Otherwise the gate is asked outside the lock as update
// does (it may block while a commit of a fork runs), and fn's copy is
// published if the tree is still the one it was made from, else fn runs
// again on the current one: one walk in the common case, gate or not.
// So fn must change nothing outside the walk's tree (it may run twice,
// its copy may be dropped); done runs under the lock once it is
// published. The copy's timestamps are those of its walk, before the gate.
func (f *FS) updateFirst(op, name string, fn func(w *walk) error, done func()) error {
	old, t, err := f.apply(op, name, fn, true, done)
	if err != nil || t == nil {
		return err
	}
	if err := f.passGate(op, name); err != nil {
		return err
	}
	if ok, err := f.publishIf(op, name, old, t, done); ok {
		return err
	}
	_, _, err = f.apply(op, name, fn, false, done)
	return err
}

// publishIf publishes t if the current tree is still old (ok).
func (f *FS) publishIf(op, name string, old, t *tree, done func()) (ok bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur.Load() != old {
		return false, nil
	}
	return true, f.publish(op, name, old, t, done)
}

func (f *FS) checkQuota(old, t *tree) error {
	if m := f.maxBytes.Load(); m > 0 && t.usage.Bytes > m && t.usage.Bytes > old.usage.Bytes {
		return &QuotaError{Errno: syscall.ENOSPC, Limit: "bytes", Max: m, Want: t.usage.Bytes, Name: f.quotaName()}
	}
	if m := f.maxInodes.Load(); m > 0 && t.usage.Inodes > m && t.usage.Inodes > old.usage.Inodes {
		return &QuotaError{Errno: syscall.EDQUOT, Limit: "inodes", Max: m, Want: t.usage.Inodes, Name: f.quotaName()}
	}
	return nil
}

// view runs fn on the current tree (read-only).
func (f *FS) view(op, name string, fn func(w *walk) error) (err error) {
	defer catchLoad(&err, op, name)
	w := getWalk(f, f.cur.Load(), false)
	defer putWalk(w)
	if err := fn(w); err != nil {
		if _, ok := err.(*fs.PathError); ok {
			return err
		}
		return perr(op, name, err)
	}
	return nil
}

func (f *FS) isOpen(ino uint64) bool {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	return f.open[ino] > 0
}

func (f *FS) addOpen(ino uint64, d int32) int32 {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	if f.open == nil {
		f.open = map[uint64]int32{}
	}
	n := f.open[ino] + d
	if n <= 0 {
		delete(f.open, ino)
	} else {
		f.open[ino] = n
	}
	return n
}

// ---- metadata ----

type fileInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime int64
	st    Stat
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(0, fi.mtime) }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

func (in *inode) info(name string) *fileInfo {
	fi := &fileInfo{name: name, size: in.size, mode: in.mode, mtime: in.mtime}
	fi.st = Stat{Ino: in.ino, Nlink: in.nlink, Uid: in.uid, Gid: in.gid, Rdev: in.rdev,
		Atime: time.Unix(0, in.atime), Ctime: time.Unix(0, in.ctime)}
	if in.isDir() {
		fi.size = 4096
	}
	fi.st.Blocks = (in.size + 511) / 512
	return fi
}

func baseName(l *loc, p string) string {
	if l.name != "" {
		return l.name
	}
	// "/", "." or "..": the last real component, or "/".
	for len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			if i == len(p)-1 {
				return "/"
			}
			return p[i+1:]
		}
	}
	return p
}

func (f *FS) stat(op, name string, follow int) (_ fs.FileInfo, err error) {
	if g, rel, m := f.mountedRead(name); m != nil {
		if m.rfs != nil {
			return m.rstat(op, name, rel)
		}
		fi, err := g.stat(op, rel, follow)
		return fi, mountErr(err, name, m)
	}
	// No closure here: Stat is the shell's hottest call and the walk stays
	// on the stack.
	defer catchLoad(&err, op, name)
	w := getWalk(f, f.cur.Load(), false)
	defer putWalk(w)
	l, e := w.resolve(name, follow)
	if e == 0 && l.in == nil {
		e = syscall.ENOENT
	}
	if e != 0 {
		return nil, perr(op, name, e)
	}
	return f.tagged(l.in.info(baseName(&l, name))), nil
}

func (f *FS) Stat(name string) (fs.FileInfo, error)  { return f.stat("stat", name, rFollow) }
func (f *FS) Lstat(name string) (fs.FileInfo, error) { return f.stat("lstat", name, rNoFollow) }

// ---- directories ----

type dirEntry struct {
	name string
	typ  fs.FileMode
	ino  uint64
	f    *FS
	t    *tree
	dir  *inode
}

func (d *dirEntry) Name() string      { return d.name }
func (d *dirEntry) IsDir() bool       { return d.typ.IsDir() }
func (d *dirEntry) Type() fs.FileMode { return d.typ }
func (d *dirEntry) String() string    { return fs.FormatDirEntry(d) }
func (d *dirEntry) Info() (fi fs.FileInfo, err error) {
	defer catchLoad(&err, "lstat", d.name)
	var w walk
	w.init(d.f, d.t, false)
	in := w.lookup(d.dir, d.name)
	if in == nil {
		return nil, perr("lstat", d.name, syscall.ENOENT)
	}
	return d.f.tagged(in.info(d.name)), nil
}

// list returns the merged, sorted entries of directory d.
func (w *walk) list(d *inode) ([]*dirEntry, error) {
	var out []*dirEntry
	var hidden map[string]bool
	d.entries.each(func(name string, de dirent) bool {
		if de.whiteout {
			if hidden == nil {
				hidden = map[string]bool{}
			}
			hidden[name] = true
			return true
		}
		out = append(out, &dirEntry{name: name, typ: de.typ, ino: de.ino, f: w.f, t: w.t, dir: d})
		return true
	})
	if d.merged() && w.f.base != nil {
		ents, err := fs.ReadDir(w.f.base, d.origin)
		if err != nil && len(ents) == 0 {
			return nil, &ioError{err}
		}
		for _, e := range ents {
			n := e.Name()
			if hidden[n] {
				continue
			}
			if d.entries != nil {
				if _, ok := d.entries.lookup(n, strHash(n)); ok {
					continue
				}
			}
			out = append(out, &dirEntry{name: n, typ: e.Type(), f: w.f, t: w.t, dir: d})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func (w *walk) isEmpty(d *inode) bool {
	empty := d.entries.each(func(_ string, de dirent) bool { return de.whiteout })
	if !empty {
		return false
	}
	if d.merged() && w.f.base != nil {
		ents, _ := fs.ReadDir(w.f.base, d.origin)
		for _, e := range ents {
			if w.lookup(d, e.Name()) != nil {
				return false
			}
		}
	}
	return true
}

func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if g, rel, m := f.mountedRead(name); m != nil {
		if m.rfs != nil {
			return m.rreadDir(name, rel)
		}
		ents, err := g.ReadDir(rel)
		return ents, mountErr(err, name, m)
	}
	var out []fs.DirEntry
	err := f.view("readdirent", name, func(w *walk) error {
		l, e := w.resolve(name, rFollow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		if !l.in.isDir() {
			return syscall.ENOTDIR
		}
		ents, err := w.list(l.in)
		if err != nil {
			return err
		}
		out = make([]fs.DirEntry, len(ents))
		for i, e := range ents {
			out[i] = e
		}
		return nil
	})
	return out, err
}

// ---- creating entries ----

// create adds a new inode at l (which must not exist) and returns it.
func (w *walk) create(l *loc, mode fs.FileMode) *inode {
	uid, gid := w.f.newOwner()
	in := &inode{inodeData: inodeData{mode: mode, uid: uid, gid: gid, nlink: 1,
		atime: w.now, mtime: w.now, ctime: w.now}}
	in.ino = w.t.newIno()
	in.parent, in.name = l.dir.ino, l.name
	if mode.IsDir() {
		in.nlink = 2
	}
	w.t.put(in)
	w.addEntry(l.dir.ino, l.name, in)
	return in
}

// addEntry links in under name in directory dir, replacing a whiteout.
func (w *walk) addEntry(dir uint64, name string, in *inode) {
	d := w.t.get(dir).clone()
	de := dirent{ino: in.ino, typ: in.mode.Type()}
	d.entries, _ = d.entries.insert(name, strHash(name), de, 0, w.t)
	d.mtime, d.ctime = w.now, w.now
	if in.isDir() {
		d.nlink++
	}
	w.t.put(d)
}

// removeEntry unlinks name from directory dir, leaving a whiteout if the
// base has the name underneath.
func (w *walk) removeEntry(dir uint64, name string, wasDir bool) {
	d := w.t.get(dir).clone()
	if d.merged() && w.f.base != nil && w.f.baseInode(joinBase(d.origin, name)) != nil {
		d.entries, _ = d.entries.insert(name, strHash(name), dirent{whiteout: true}, 0, w.t)
	} else {
		d.entries, _ = d.entries.remove(name, strHash(name), 0)
	}
	d.mtime, d.ctime = w.now, w.now
	if wasDir && d.nlink > 2 {
		d.nlink--
	}
	w.t.put(d)
}

// unrefName drops the link dir/name of in.
func (w *walk) unrefName(in *inode, dir uint64, name string) {
	if tin := w.t.get(in.ino); tin != nil && tin.nlink > 1 && tin.parent == dir && tin.name == name {
		c := tin.clone()
		c.parent, c.name = 0, ""
		w.t.put(c)
	}
	w.unref(in)
}

// unref drops one link of in (a table inode or a base inode).
func (w *walk) unref(in *inode) {
	tin := w.t.get(in.ino)
	if tin == nil {
		return // a base entry: the whiteout is all it takes
	}
	c := tin.clone()
	c.ctime = w.now
	if c.isDir() {
		c.nlink = 0
	} else if c.nlink > 0 {
		c.nlink--
	}
	if c.nlink == 0 && !w.f.isOpen(c.ino) {
		w.t.drop(c.ino)
		return
	}
	w.t.put(c)
}

// parentFor resolves name for creating an entry: the parent must exist.
func (w *walk) parentFor(name string) (loc, error) {
	l, e := w.resolve(name, rParent)
	if e != 0 {
		return l, e
	}
	if l.in != nil || l.dot {
		return l, syscall.EEXIST
	}
	return l, nil
}

func (f *FS) Mkdir(name string, perm fs.FileMode) error {
	if g, rel, m, err := f.mountedWrite("mkdir", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			p, _ := rpath(rel)
			return m.rerr("mkdir", name, m.rfs.Mkdir(p, perm&(permBits)))
		}
		return mountErr(g.Mkdir(rel, perm), name, m)
	}
	return f.update("mkdir", name, func(w *walk) error {
		l, err := w.parentFor(name)
		if err != nil {
			return err
		}
		w.create(&l, fs.ModeDir|perm&(fs.ModePerm|fs.ModeSticky|fs.ModeSetgid|fs.ModeSetuid))
		return nil
	})
}

// MkdirAll creates name and any missing parents, like os.MkdirAll.
func (f *FS) MkdirAll(name string, perm fs.FileMode) error {
	if g, rel, m, err := f.mountedWrite("mkdir", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			return m.rmkdirAll(name, rel, perm&permBits)
		}
		return mountErr(g.MkdirAll(rel, perm), name, m)
	}
	fi, err := f.Stat(name)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return perr("mkdir", name, syscall.ENOTDIR)
	}
	i := len(name)
	for i > 0 && name[i-1] == '/' {
		i--
	}
	j := i
	for j > 0 && name[j-1] != '/' {
		j--
	}
	if j > 1 {
		if err := f.MkdirAll(name[:j-1], perm); err != nil {
			return err
		}
	}
	err = f.Mkdir(name, perm)
	if err != nil {
		if fi, e := f.Lstat(name); e == nil && fi.IsDir() {
			return nil
		}
		return err
	}
	return nil
}

func (f *FS) Symlink(target, linkname string) error {
	if g, rel, m, err := f.mountedWrite("symlink", linkname); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			return perr("symlink", linkname, syscall.ENOTSUP)
		}
		return mountErr(g.Symlink(target, rel), linkname, m)
	}
	return f.update("symlink", linkname, func(w *walk) error {
		l, err := w.parentFor(linkname)
		if err != nil {
			return err
		}
		if l.slash {
			return syscall.ENOENT
		}
		if target == "" {
			return syscall.ENOENT
		}
		if len(target) > maxPath {
			return syscall.ENAMETOOLONG
		}
		in := w.create(&l, fs.ModeSymlink|0o777)
		c := in.clone()
		c.target = target
		c.size = int64(len(target))
		w.t.put(c)
		return nil
	})
}

// Mknod creates a fifo, socket, device node or empty regular file (mode
// carries the type bits).
func (f *FS) Mknod(name string, mode fs.FileMode, dev uint64) error {
	if g, rel, m, err := f.mountedWrite("mknod", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			if mode.Type() != 0 {
				return perr("mknod", name, syscall.ENOTSUP)
			}
			h, err := m.ropen(name, rel, O_WRONLY|O_CREATE|O_EXCL, mode&permBits)
			if err != nil {
				return err
			}
			return h.Close()
		}
		return mountErr(g.Mknod(rel, mode, dev), name, m)
	}
	return f.update("mknod", name, func(w *walk) error {
		typ := mode.Type()
		switch typ {
		case 0, fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		case fs.ModeDir:
			return syscall.EPERM
		default:
			return syscall.EINVAL
		}
		l, err := w.parentFor(name)
		if err != nil {
			return err
		}
		if l.slash {
			return syscall.ENOENT
		}
		in := w.create(&l, typ|mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		if typ&fs.ModeDevice != 0 {
			c := in.clone()
			c.rdev = dev
			w.t.put(c)
		}
		return nil
	})
}

func (f *FS) Link(oldname, newname string) error {
	if done, err := f.crossing("link", oldname, newname, func(g *FS, o, n string) error { return g.Link(o, n) }); done {
		return err
	}
	return f.update("link", newname, func(w *walk) error {
		ol, e := w.resolve(oldname, rNoFollow)
		if e != 0 {
			return perr("link", oldname, e)
		}
		if ol.in == nil {
			return perr("link", oldname, syscall.ENOENT)
		}
		nl, err := w.parentFor(newname)
		if err != nil {
			return err
		}
		if nl.slash {
			return syscall.ENOENT
		}
		if ol.in.isDir() {
			return syscall.EPERM
		}
		if !ol.dot {
			w.materialize(&ol)
		}
		c := w.t.get(ol.in.ino).clone()
		c.nlink++
		c.ctime = w.now
		w.t.put(c)
		w.addEntry(nl.dir.ino, nl.name, c)
		return nil
	})
}

// ---- removing ----

func (f *FS) Remove(name string) error {
	if f.isMountPoint(name) {
		return perr("remove", name, syscall.EBUSY)
	}
	if g, rel, m, err := f.mountedWrite("remove", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			p, slash := rpath(rel)
			if slash {
				if _, err := m.rstat("remove", name, rel); err != nil {
					return err
				}
			}
			return m.rerr("remove", name, m.rfs.Remove(p))
		}
		return mountErr(g.Remove(rel), name, m)
	}
	return f.update("remove", name, func(w *walk) error {
		l, e := w.resolve(name, rParent)
		if e != 0 {
			return e
		}
		if l.dot {
			switch {
			case l.in.ino == w.t.root && l.name == "" && isRootPath(name):
				return syscall.EBUSY
			case lastIsDotDot(name):
				return syscall.ENOTEMPTY
			default:
				return syscall.EINVAL
			}
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		if l.slash && !l.in.isDir() {
			return syscall.ENOTDIR
		}
		if l.in.isDir() {
			if !w.isEmpty(l.in) {
				return syscall.ENOTEMPTY
			}
		}
		w.removeEntry(l.dir.ino, l.name, l.in.isDir())
		w.unrefName(l.in, l.dir.ino, l.name)
		return nil
	})
}

func isRootPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			return false
		}
	}
	return true
}

func lastIsDotDot(p string) bool {
	for len(p) > 0 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p == ".." || len(p) >= 3 && p[len(p)-3:] == "/.."
}

// RemoveAll removes name and everything under it, like os.RemoveAll: a
// missing name is not an error.
func (f *FS) RemoveAll(name string) error {
	if f.isMountPoint(name) {
		return perr("remove", name, syscall.EBUSY)
	}
	if g, rel, m, err := f.mountedWrite("remove", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			return m.rremoveAll(name, rel)
		}
		return mountErr(g.RemoveAll(rel), name, m)
	}
	if name == "." || len(name) >= 2 && name[len(name)-2:] == "/." {
		return perr("RemoveAll", name, syscall.EINVAL)
	}
	return f.update("unlinkat", name, func(w *walk) error {
		l, e := w.resolve(name, rParent)
		if e == syscall.ENOENT || e == 0 && l.in == nil {
			return nil
		}
		if e != 0 {
			return e
		}
		if l.dot {
			return syscall.EINVAL
		}
		return w.removeTree(l.dir.ino, l.name, l.in, 0)
	})
}

func (w *walk) removeTree(dir uint64, name string, in *inode, depth int) error {
	if depth > maxPath/2 {
		// Only a hostile loaded generation can nest this deep (a loop).
		return syscall.ELOOP
	}
	if in.isDir() {
		if in.synth {
			in = w.copyUp(dir, name, in)
		}
		ents, err := w.list(in)
		if err != nil {
			panic(&loadError{err})
		}
		for _, e := range ents {
			d := w.t.get(in.ino)
			if c := w.lookup(d, e.name); c != nil {
				if err := w.removeTree(in.ino, e.name, c, depth+1); err != nil {
					return err
				}
			}
		}
	}
	w.removeEntry(dir, name, in.isDir())
	w.unrefName(in, dir, name)
	return nil
}

// ---- rename ----

func (f *FS) Rename(oldname, newname string) error {
	if done, err := f.crossing("rename", oldname, newname, func(g *FS, o, n string) error { return g.Rename(o, n) }); done {
		return err
	}
	return f.update("rename", oldname, func(w *walk) error {
		ol, e := w.resolve(oldname, rParent)
		if e != 0 {
			return e
		}
		oldPath := w.pathOf(ol.name)
		nl, e := w.resolve(newname, rParent)
		if e != 0 {
			return perr("rename", newname, e)
		}
		if ol.dot || nl.dot {
			return syscall.EBUSY
		}
		if ol.in == nil {
			return syscall.ENOENT
		}
		newPath := w.pathOf(nl.name)
		if !ol.in.isDir() && (ol.slash || nl.slash) {
			return syscall.ENOTDIR
		}
		if ol.in.isDir() && len(newPath) > len(oldPath) && newPath[:len(oldPath)+1] == oldPath+"/" {
			return syscall.EINVAL
		}
		dst := nl.in
		if dst != nil && len(oldPath) > len(newPath) && oldPath[:len(newPath)+1] == newPath+"/" {
			return syscall.ENOTEMPTY
		}
		if dst != nil {
			if dst.ino == ol.in.ino {
				return nil
			}
			switch {
			case ol.in.isDir() && !dst.isDir():
				return syscall.ENOTDIR
			case !ol.in.isDir() && dst.isDir():
				return syscall.EISDIR
			case dst.isDir() && !w.isEmpty(dst):
				return syscall.ENOTEMPTY
			}
		}
		src := w.materialize(&ol)
		srcDir := ol.dir.ino
		dstDir := nl.dir.ino
		w.removeEntry(srcDir, ol.name, src.isDir())
		if dst != nil {
			d := w.t.get(dstDir).clone()
			if dst.isDir() && d.nlink > 2 {
				d.nlink--
			}
			w.t.put(d)
			w.unrefName(dst, dstDir, nl.name)
		}
		w.addEntry(dstDir, nl.name, src)
		c := w.t.get(src.ino).clone()
		c.ctime = w.now
		if c.parent == srcDir && c.name == ol.name || c.nlink <= 1 {
			c.parent, c.name = dstDir, nl.name
		}
		w.t.put(c)
		return nil
	})
}

// ---- symlinks, attributes ----

func (f *FS) Readlink(name string) (string, error) {
	if g, rel, m := f.mountedRead(name); m != nil {
		if m.rfs != nil {
			if err := m.rexists("readlink", name, rel); err != nil {
				return "", err
			}
			return "", perr("readlink", name, syscall.EINVAL)
		}
		t, err := g.Readlink(rel)
		return t, mountErr(err, name, m)
	}
	var target string
	err := f.view("readlink", name, func(w *walk) error {
		l, e := w.resolve(name, rNoFollow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		if l.in.mode&fs.ModeSymlink == 0 {
			return syscall.EINVAL
		}
		target = l.in.target
		return nil
	})
	return target, err
}

// Realpath resolves every symlink and ".." in name to an absolute clean path.
func (f *FS) Realpath(name string) (string, error) {
	if g, rel, m := f.mountedRead(name); m != nil {
		if m.rfs != nil {
			if err := m.rexists("realpath", name, rel); err != nil {
				return "", err
			}
			p, _ := rpath(rel)
			return realpathMounted(m, p, nil)
		}
		p, err := g.Realpath(rel)
		return realpathMounted(m, p, mountErr(err, name, m))
	}
	var p string
	err := f.view("realpath", name, func(w *walk) error {
		l, e := w.resolve(name, rFollow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		if l.dot {
			p = w.pathOf("")
		} else {
			p = w.pathOf(l.name)
		}
		return nil
	})
	return p, err
}

// ---- whole files ----

func (f *FS) ReadFile(name string) ([]byte, error) {
	if g, rel, m := f.mountedRead(name); m != nil {
		if m.rfs != nil {
			return m.rreadFile(name, rel)
		}
		b, err := g.ReadFile(rel)
		return b, mountErr(err, name, m)
	}
	var data []byte
	err := f.view("open", name, func(w *walk) error {
		l, e := w.resolve(name, rFollow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		if l.in.isDir() {
			return perr("read", name, syscall.EISDIR)
		}
		data = make([]byte, l.in.size)
		return f.readInode(l.in, data, 0)
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// readInode reads p at off from in's content (p within size).
func (f *FS) readInode(in *inode, p []byte, off int64) error {
	if len(in.ext) == 1 && in.ext[0].kind == extMem {
		copy(p, in.ext[0].mem[in.ext[0].coff+off:])
		return nil
	}
	var bf fs.File
	defer func() {
		if bf != nil {
			bf.Close()
		}
	}()
	err := readExt(in.ext, p, off, func(path string, q []byte, o int64) error {
		if bf == nil {
			var err error
			if bf, err = f.base.Open(path); err != nil {
				return err
			}
		}
		return readFileAt(bf, q, o)
	}, in.origin)
	if err != nil {
		return &ioError{err}
	}
	return nil
}

func (f *FS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if g, rel, m, err := f.mountedWrite("write", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			return m.rwriteFile(name, rel, data, perm)
		}
		return mountErr(g.WriteFile(rel, data, perm), name, m)
	}
	h, err := f.OpenFile(name, O_WRONLY|O_CREATE|O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = h.Write(data)
	if err1 := h.Close(); err == nil {
		err = err1
	}
	return err
}
