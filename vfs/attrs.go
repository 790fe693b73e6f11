package vfs

import (
	"io/fs"
	"sort"
	"syscall"
	"time"
)

// Attributes of existing entries: mode, owner, times, size, extended
// attributes (split from fs.go, which holds the tree operations).

// modify applies fn to the inode name resolves to (following symlinks
// unless follow is false).
func (f *FS) modify(op, name string, follow int, fn func(c *inode) error) error {
	if g, rel, m, err := f.mountedWrite(op, name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			// Only reached by a call remotemount.go does not handle.
			return perr(op, name, syscall.ENOTSUP)
		}
		return mountErr(g.modify(op, rel, follow, fn), name, m)
	}
	return f.update(op, name, func(w *walk) error {
		l, e := w.resolve(name, follow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		var c *inode
		if l.dot {
			c = w.t.get(l.in.ino).clone()
		} else {
			c = w.materialize(&l).clone()
		}
		if err := fn(c); err != nil {
			return err
		}
		c.ctime = w.now
		w.t.put(c)
		return nil
	})
}

const permBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

func (f *FS) Chmod(name string, mode fs.FileMode) error {
	if _, rel, m, err := f.mountedWrite("chmod", name); err != nil {
		return err
	} else if m != nil && m.rfs != nil {
		p, _ := rpath(rel)
		return m.rerr("chmod", name, m.rfs.Chmod(p, mode&permBits))
	}
	return f.modify("chmod", name, rFollow, func(c *inode) error {
		c.mode = c.mode&^permBits | mode&permBits
		return nil
	})
}

func chown(c *inode, uid, gid int) {
	if uid >= 0 {
		c.uid = uint32(uid)
	}
	if gid >= 0 {
		c.gid = uint32(gid)
	}
}

func (f *FS) Chown(name string, uid, gid int) error {
	if _, rel, m, err := f.mountedWrite("chown", name); err != nil {
		return err
	} else if m != nil && m.rfs != nil {
		return m.rexists("chown", name, rel) // accepted, not kept: remotemount.go
	}
	return f.modify("chown", name, rFollow, func(c *inode) error { chown(c, uid, gid); return nil })
}

func (f *FS) Lchown(name string, uid, gid int) error {
	if _, rel, m, err := f.mountedWrite("lchown", name); err != nil {
		return err
	} else if m != nil && m.rfs != nil {
		return m.rexists("lchown", name, rel)
	}
	return f.modify("lchown", name, rNoFollow, func(c *inode) error { chown(c, uid, gid); return nil })
}

// Chtimes sets atime and mtime; a zero time leaves that time unchanged.
func (f *FS) Chtimes(name string, atime, mtime time.Time) error {
	if _, rel, m, err := f.mountedWrite("chtimes", name); err != nil {
		return err
	} else if m != nil && m.rfs != nil {
		return m.rchtimes(name, rel, atime, mtime)
	}
	return f.modify("chtimes", name, rFollow, func(c *inode) error {
		if !atime.IsZero() {
			c.atime = atime.UnixNano()
		}
		if !mtime.IsZero() {
			c.mtime = mtime.UnixNano()
		}
		return nil
	})
}

func (f *FS) Truncate(name string, size int64) error {
	if g, rel, m, err := f.mountedWrite("truncate", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			if size < 0 {
				return perr("truncate", name, syscall.EINVAL)
			}
			p, _ := rpath(rel)
			return m.rerr("truncate", name, m.rfs.Truncate(p, size))
		}
		return mountErr(g.Truncate(rel, size), name, m)
	}
	if size < 0 {
		return perr("truncate", name, syscall.EINVAL)
	}
	return f.update("truncate", name, func(w *walk) error {
		l, e := w.resolve(name, rFollow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		if l.in.isDir() {
			return syscall.EISDIR
		}
		if !l.in.mode.IsRegular() {
			return syscall.EINVAL
		}
		c := w.materialize(&l).clone()
		truncInode(c, size, w.now)
		w.t.put(c)
		return nil
	})
}

func truncInode(c *inode, size, now int64) {
	c.ext = truncExt(c.ext, c.size, size)
	c.size = size
	c.mtime, c.ctime = now, now
}

// ---- xattrs ----

const (
	maxXattrName  = 255
	maxXattrValue = 64 << 10
)

func (f *FS) GetXattr(name, attr string) ([]byte, error) {
	if g, rel, m := f.mountedRead(name); m != nil {
		if m.rfs != nil {
			return nil, perr("getxattr", name, syscall.ENOTSUP)
		}
		v, err := g.GetXattr(rel, attr)
		return v, mountErr(err, name, m)
	}
	var v []byte
	err := f.view("getxattr", name, func(w *walk) error {
		l, e := w.resolve(name, rFollow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		for _, x := range l.in.xattrs {
			if x.name == attr {
				v = append([]byte(nil), x.value...)
				return nil
			}
		}
		return syscall.ENODATA
	})
	return v, err
}

func (f *FS) SetXattr(name, attr string, value []byte) error {
	if g, rel, m, err := f.mountedWrite("setxattr", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			return perr("setxattr", name, syscall.ENOTSUP)
		}
		return mountErr(g.SetXattr(rel, attr, value), name, m)
	}
	if attr == "" || len(attr) > maxXattrName {
		return perr("setxattr", name, syscall.ERANGE)
	}
	if len(value) > maxXattrValue {
		return perr("setxattr", name, syscall.E2BIG)
	}
	return f.modify("setxattr", name, rFollow, func(c *inode) error {
		xs := make([]xattr, 0, len(c.xattrs)+1)
		v := append([]byte(nil), value...)
		done := false
		for _, x := range c.xattrs {
			if x.name == attr {
				x.value, done = v, true
			}
			xs = append(xs, x)
		}
		if !done {
			xs = append(xs, xattr{attr, v})
			sort.Slice(xs, func(i, j int) bool { return xs[i].name < xs[j].name })
		}
		c.xattrs = xs
		return nil
	})
}

func (f *FS) ListXattr(name string) ([]string, error) {
	if g, rel, m := f.mountedRead(name); m != nil {
		if m.rfs != nil {
			return nil, perr("listxattr", name, syscall.ENOTSUP)
		}
		v, err := g.ListXattr(rel)
		return v, mountErr(err, name, m)
	}
	var names []string
	err := f.view("listxattr", name, func(w *walk) error {
		l, e := w.resolve(name, rFollow)
		if e != 0 {
			return e
		}
		if l.in == nil {
			return syscall.ENOENT
		}
		for _, x := range l.in.xattrs {
			names = append(names, x.name)
		}
		return nil
	})
	return names, err
}

func (f *FS) RemoveXattr(name, attr string) error {
	if g, rel, m, err := f.mountedWrite("removexattr", name); err != nil {
		return err
	} else if m != nil {
		if m.rfs != nil {
			return perr("removexattr", name, syscall.ENOTSUP)
		}
		return mountErr(g.RemoveXattr(rel, attr), name, m)
	}
	return f.modify("removexattr", name, rFollow, func(c *inode) error {
		for i, x := range c.xattrs {
			if x.name == attr {
				xs := make([]xattr, 0, len(c.xattrs)-1)
				xs = append(xs, c.xattrs[:i]...)
				c.xattrs = append(xs, c.xattrs[i+1:]...)
				return nil
			}
		}
		return syscall.ENODATA
	})
}
