package vfs

import (
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	maxHops = 40
	maxName = 255
	maxPath = 4096
)

// walk resolves paths against one tree. In write mode every base directory it
// descends into is copied up, so the directory an operation changes is always
// a table inode with an explicit entry in its parent.
type walk struct {
	f     *FS
	t     *tree
	write bool
	now   int64
	// dirs[i] is the i-th directory from the root on the current path and
	// names[i-1] its name; dirs[0] is the root.
	dirs  []*inode
	names []string
	dbuf  [12]*inode
	nbuf  [12]string
}

// loc is a resolved path.
type loc struct {
	dir   *inode // directory holding name; nil when the path ends in "/", "." or ".."
	name  string
	in    *inode // the entry, nil when absent
	slash bool   // the path had a trailing slash
	dot   bool   // the path ends in "/", "." or ".." (in is that directory)
}

// walkPool recycles walks: a walk does not fit on the stack (escape
// analysis loses it in the resolver), and Stat/Open are hot.
var walkPool = sync.Pool{New: func() any { return new(walk) }}

func getWalk(f *FS, t *tree, write bool) *walk {
	w := walkPool.Get().(*walk)
	w.init(f, t, write)
	return w
}

func putWalk(w *walk) {
	clear(w.dbuf[:])
	clear(w.nbuf[:])
	*w = walk{}
	walkPool.Put(w)
}

func (w *walk) init(f *FS, t *tree, write bool) {
	w.f, w.t, w.write = f, t, write
	w.dirs = w.dbuf[:0]
	w.names = w.nbuf[:0]
	if write {
		w.now = f.nowNano()
	}
}

func (w *walk) reset() {
	w.dirs = append(w.dirs[:0], w.t.get(w.t.root))
	w.names = w.names[:0]
}

// pathOf returns the canonical path of the current directory plus name.
func (w *walk) pathOf(name string) string {
	var b strings.Builder
	for _, n := range w.names {
		b.WriteByte('/')
		b.WriteString(n)
	}
	if name != "" {
		b.WriteByte('/')
		b.WriteString(name)
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// Resolution modes for the last component.
const (
	rNoFollow = iota // lstat: a trailing slash still follows a symlink
	rFollow          // stat, open
	rParent          // unlink, rename, create: the last component as it is
	rCreate          // open with O_CREAT: follow, leave a trailing slash to the caller
)

func (w *walk) resolve(p string, mode int) (loc, errno) {
	if p == "" {
		return loc{}, syscall.ENOENT
	}
	if len(p) > maxPath {
		return loc{}, syscall.ENAMETOOLONG
	}
	w.reset()
	hops := 0
	rest := p
	for {
		i := 0
		for i < len(rest) && rest[i] == '/' {
			i++
		}
		rest = rest[i:]
		cur := w.dirs[len(w.dirs)-1]
		if rest == "" {
			return loc{in: cur, dot: true, slash: true}, 0
		}
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			j = len(rest)
		}
		name := rest[:j]
		rest = rest[j:]
		last := strings.TrimLeft(rest, "/") == ""
		slash := rest != ""
		switch name {
		case ".":
			if last {
				return loc{in: cur, dot: true, slash: slash}, 0
			}
			continue
		case "..":
			if len(w.dirs) > 1 {
				w.dirs = w.dirs[:len(w.dirs)-1]
				w.names = w.names[:len(w.names)-1]
				if w.write {
					d := w.dirs[len(w.dirs)-1]
					w.dirs[len(w.dirs)-1] = w.t.get(d.ino)
				}
			}
			if last {
				return loc{in: w.dirs[len(w.dirs)-1], dot: true, slash: slash}, 0
			}
			continue
		}
		if len(name) > maxName {
			return loc{}, syscall.ENAMETOOLONG
		}
		if last && slash && mode == rCreate {
			// open(O_CREAT) refuses a trailing slash before the lookup.
			return loc{dir: cur, name: name, slash: true}, 0
		}
		child := w.lookup(cur, name)
		if child == nil {
			if last {
				return loc{dir: cur, name: name, slash: slash}, 0
			}
			return loc{}, syscall.ENOENT
		}
		if last && mode == rParent {
			return loc{dir: cur, name: name, in: child, slash: slash}, 0
		}
		if child.mode&fs.ModeSymlink != 0 && (!last || mode == rFollow || mode == rCreate || slash) {
			hops++
			if hops > maxHops {
				return loc{}, syscall.ELOOP
			}
			if child.target == "" {
				return loc{}, syscall.ENOENT
			}
			if last && slash {
				rest = child.target + "/"
			} else {
				rest = child.target + rest
			}
			if child.target[0] == '/' {
				w.reset()
			}
			continue
		}
		if last {
			if slash && !child.isDir() && mode != rCreate {
				return loc{}, syscall.ENOTDIR
			}
			return loc{dir: cur, name: name, in: child, slash: slash}, 0
		}
		if !child.isDir() {
			return loc{}, syscall.ENOTDIR
		}
		if w.write && child.synth {
			child = w.copyUp(cur.ino, name, child)
		}
		w.dirs = append(w.dirs, child)
		w.names = append(w.names, name)
	}
}

// lookup finds name in directory d: its delta entries, then the base.
func (w *walk) lookup(d *inode, name string) *inode {
	if d.entries != nil {
		if de, ok := d.entries.lookup(name, strHash(name)); ok {
			if de.whiteout {
				return nil
			}
			return w.t.get(de.ino)
		}
	}
	if !d.merged() || w.f.base == nil {
		return nil
	}
	in := w.f.baseInode(joinBase(d.origin, name))
	if in == nil {
		return nil
	}
	// A base entry already copied up (or a base hard link of one) is the
	// table's inode.
	if tin := w.t.get(in.ino); tin != nil {
		return tin
	}
	return in
}

// copyUp puts a base inode into the table with an explicit entry in its
// parent directory (a table inode).
func (w *walk) copyUp(parent uint64, name string, in *inode) *inode {
	c := in.clone()
	c.parent, c.name = parent, name
	w.t.put(c)
	w.t.setEntry(parent, name, dirent{ino: c.ino, typ: c.mode.Type()})
	return c
}

// materialize makes l.in a table inode and returns it.
func (w *walk) materialize(l *loc) *inode {
	if l.in.synth {
		l.in = w.copyUp(l.dir.ino, l.name, l.in)
	}
	return w.t.get(l.in.ino)
}

func joinBase(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// baseInode builds an inode for base path p, or nil if p is not in the base.
func (f *FS) baseInode(p string) *inode {
	var fi fs.FileInfo
	var err error
	if f.rl != nil {
		fi, err = f.rl.Lstat(p)
	} else {
		fi, err = fs.Stat(f.base, p)
	}
	if err != nil {
		return nil
	}
	in := &inode{synth: true}
	in.mode = fi.Mode()
	in.size = fi.Size()
	in.mtime = fi.ModTime().UnixNano()
	in.atime, in.ctime = in.mtime, in.mtime
	in.origin = p
	in.nlink = 1
	if in.mode.IsDir() {
		in.nlink = 2
		in.size = 0
	}
	switch st := fi.Sys().(type) {
	case *Stat:
		in.ino, in.nlink, in.uid, in.gid, in.rdev = st.Ino, st.Nlink, st.Uid, st.Gid, st.Rdev
		if !st.Atime.IsZero() {
			in.atime = st.Atime.UnixNano()
		}
		if !st.Ctime.IsZero() {
			in.ctime = st.Ctime.UnixNano()
		}
	case *syscall.Stat_t:
		in.ino, in.nlink, in.uid, in.gid, in.rdev = st.Ino, uint32(st.Nlink), st.Uid, st.Gid, st.Rdev
		in.atime = time.Unix(st.Atim.Unix()).UnixNano()
		in.ctime = time.Unix(st.Ctim.Unix()).UnixNano()
	}
	if in.ino == 0 || in.ino >= firstIno {
		in.ino = strHash(p) | 1<<63
	}
	switch {
	case in.mode.IsRegular():
		if in.size > 0 {
			in.ext = []extent{{n: in.size, kind: extBase}}
		}
	case in.mode&fs.ModeSymlink != 0:
		if f.rl != nil {
			in.target, _ = f.rl.ReadLink(p)
		}
		in.size = int64(len(in.target))
	}
	return in
}

// firstIno is the first inode number the delta allocates; base inode numbers
// below it are kept, others are replaced by a hash of the base path.
const firstIno = 1 << 40
