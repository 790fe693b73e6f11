package vfs

import (
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Remote mounts: a RemoteFS (a shared drive) grafted into the mount table
// with MountRemote. It is routed exactly as a mounted FS (longest prefix,
// lexically), and every path operation under the mount point goes to the
// RemoteFS. What differs from a mounted FS:
//
//   - Symlink, Link, Mknod (but for a plain empty file) and the xattr calls
//     are ENOTSUP: a RemoteFS has none of them. Readlink of an existing
//     entry is EINVAL (not a symlink), as on Linux.
//   - Chown and Lchown succeed and change nothing (the entry keeps the
//     owner the RemoteFS reports), as vfat mounted with "quiet" does: the
//     drive has one owner, and cp -p, cp -a, tar x and rsync -a, run as
//     root, would otherwise fail on every file (GNU cp reports "failed to
//     preserve ownership" and exits 1). A missing entry is still ENOENT.
//   - A handle (*File) delegates to the RemoteFile; Flock goes to it.
//     After Unmount an open handle keeps working on its RemoteFile (it
//     holds the RemoteFile, not the path), as for a mounted FS.
//   - Inode numbers come from the RemoteFS's *Stat (or a hash of the
//     path when it gives none), tagged in their top 16 bits per mount.
//   - The sandbox's write gate does not apply (the drive keeps its own
//     quota: Usage).

// MountRemote grafts r at dir (created in this FS if missing), under the
// same rules as Mount: dir is absolute, not "/", not already a mount point
// and not inside a mount.
func (f *FS) MountRemote(dir string, r RemoteFS, opts MountOptions) error {
	if r == nil {
		return perr("mount", dir, syscall.EINVAL)
	}
	return f.graft(dir, mount{rfs: r, opts: opts, tag: (mountTags.Add(1)%0xffff + 1) << 48})
}

// rpath is the RemoteFS's name for rel (clean) and whether rel ended in a
// slash (the entry must then be a directory).
func rpath(rel string) (string, bool) {
	return path.Clean("/" + rel), strings.HasSuffix(rel, "/") && rel != "/"
}

// rerr rewrites a RemoteFS error to name the caller's path (as mountErr
// does); an error that is not a PathError gets one.
func (m *mount) rerr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return mountErr(err, name, m)
	}
	return mountErr(perr(op, name, err), name, m)
}

// remoteInfo is a RemoteFS FileInfo seen through the mount: its name is
// the caller's and its Sys a tagged *Stat.
type remoteInfo struct {
	fs.FileInfo
	name string
	st   Stat
}

func (fi *remoteInfo) Name() string { return fi.name }
func (fi *remoteInfo) Sys() any     { return &fi.st }

// info wraps fi for the caller; rel is fi's clean RemoteFS path (for an
// inode number when the RemoteFS gives none) and name its base name.
func (m *mount) info(fi fs.FileInfo, rel, name string) fs.FileInfo {
	ri := &remoteInfo{FileInfo: fi, name: name}
	if st, ok := fi.Sys().(*Stat); ok && st != nil {
		ri.st = *st
	} else {
		h := fnv.New64a()
		io.WriteString(h, rel)
		ri.st = Stat{Ino: h.Sum64(), Nlink: 1, Atime: fi.ModTime(), Ctime: fi.ModTime(),
			Blocks: (fi.Size() + 511) / 512}
		if fi.IsDir() {
			ri.st.Nlink = 2
		}
	}
	ri.st.Ino = ri.st.Ino&(1<<48-1) | m.tag
	return ri
}

func (m *mount) rstat(op, name, rel string) (fs.FileInfo, error) {
	p, slash := rpath(rel)
	fi, err := m.rfs.Stat(p)
	if err != nil {
		return nil, m.rerr(op, name, err)
	}
	if slash && !fi.IsDir() {
		return nil, perr(op, name, syscall.ENOTDIR)
	}
	return m.info(fi, p, baseName(&loc{}, name)), nil
}

// remoteEntry is a RemoteFS DirEntry whose Info is tagged.
type remoteEntry struct {
	fs.DirEntry
	m   *mount
	rel string
}

func (e *remoteEntry) Info() (fs.FileInfo, error) {
	fi, err := e.DirEntry.Info()
	if err != nil {
		return nil, err
	}
	return e.m.info(fi, e.rel, e.Name()), nil
}
func (e *remoteEntry) String() string { return fs.FormatDirEntry(e) }

func (m *mount) entries(dir string, ents []fs.DirEntry) []fs.DirEntry {
	out := make([]fs.DirEntry, len(ents))
	for i, e := range ents {
		out[i] = &remoteEntry{DirEntry: e, m: m, rel: path.Join(dir, e.Name())}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

func (m *mount) rreadDir(name, rel string) ([]fs.DirEntry, error) {
	p, _ := rpath(rel)
	ents, err := m.rfs.ReadDir(p)
	if err != nil {
		return nil, m.rerr("readdirent", name, err)
	}
	return m.entries(p, ents), nil
}

func (m *mount) ropen(name, rel string, flag int, perm fs.FileMode) (*File, error) {
	p, slash := rpath(rel)
	if slash || flag&O_DIRECTORY != 0 {
		fi, err := m.rfs.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return nil, perr("open", name, syscall.ENOTDIR)
		case err != nil && flag&O_CREATE != 0 && errors.Is(err, fs.ErrNotExist):
			return nil, perr("open", name, syscall.EISDIR)
		case err != nil:
			return nil, m.rerr("open", name, err)
		}
	}
	rf, err := m.rfs.OpenFile(p, flag&^(O_NOFOLLOW|O_DIRECTORY), perm&permBits)
	if err != nil {
		return nil, m.rerr("open", name, err)
	}
	h := &File{name: name, flag: flag, rf: rf, rm: m, rp: p}
	if fi, err := rf.Stat(); err == nil {
		h.dir = fi.IsDir()
	}
	return h, nil
}

func (m *mount) rmkdirAll(name, rel string, perm fs.FileMode) error {
	p, _ := rpath(rel)
	fi, err := m.rfs.Stat(p)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return perr("mkdir", name, syscall.ENOTDIR)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return m.rerr("mkdir", name, err)
	}
	if d := path.Dir(p); d != p {
		if err := m.rmkdirAll(path.Dir(strings.TrimSuffix(name, "/")), d, perm); err != nil {
			return err
		}
	}
	if err := m.rfs.Mkdir(p, perm); err != nil {
		if fi, e := m.rfs.Stat(p); e == nil && fi.IsDir() {
			return nil // made meanwhile, by another sandbox
		}
		return m.rerr("mkdir", name, err)
	}
	return nil
}

// rremoveAll removes rel and everything under it: depth first, one Remove
// per entry (a RemoteFS removes only files and empty directories).
func (m *mount) rremoveAll(name, rel string) error {
	p, _ := rpath(rel)
	fi, err := m.rfs.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return m.rerr("unlinkat", name, err)
	}
	if fi.IsDir() {
		ents, err := m.rfs.ReadDir(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return m.rerr("unlinkat", name, err)
		}
		for _, e := range ents {
			if err := m.rremoveAll(path.Join(name, e.Name()), path.Join(p, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := m.rfs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return m.rerr("unlinkat", name, err)
	}
	return nil
}

func (m *mount) rrename(oldname, o, n string) error {
	op, _ := rpath(o)
	np, _ := rpath(n)
	if strings.HasPrefix(np, op+"/") {
		return perr("rename", oldname, syscall.EINVAL)
	}
	if op == np {
		_, err := m.rfs.Stat(op)
		return m.rerr("rename", oldname, err)
	}
	return m.rerr("rename", oldname, m.rfs.Rename(op, np))
}

// rchtimes sets the times; a zero time keeps the current one (the vfs's
// Chtimes contract), which a RemoteFS is not asked to know.
func (m *mount) rchtimes(name, rel string, atime, mtime time.Time) error {
	p, _ := rpath(rel)
	if atime.IsZero() || mtime.IsZero() {
		fi, err := m.rfs.Stat(p)
		if err != nil {
			return m.rerr("chtimes", name, err)
		}
		if mtime.IsZero() {
			mtime = fi.ModTime()
		}
		if atime.IsZero() {
			atime = fi.ModTime()
			if st, ok := fi.Sys().(*Stat); ok && st != nil && !st.Atime.IsZero() {
				atime = st.Atime
			}
		}
	}
	return m.rerr("chtimes", name, m.rfs.Chtimes(p, atime, mtime))
}

func (m *mount) rreadFile(name, rel string) ([]byte, error) {
	h, err := m.ropen(name, rel, O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if h.dir {
		return nil, perr("read", name, syscall.EISDIR)
	}
	var size int64
	if fi, err := h.rf.Stat(); err == nil {
		size = fi.Size()
	}
	b := make([]byte, 0, size+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := h.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (m *mount) rwriteFile(name, rel string, data []byte, perm fs.FileMode) error {
	h, err := m.ropen(name, rel, O_WRONLY|O_CREATE|O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = h.Write(data)
	if err1 := h.Close(); err == nil {
		err = err1
	}
	return err
}

// rexists is the check of calls that only need the entry to exist (chown,
// readlink, realpath).
func (m *mount) rexists(op, name, rel string) error {
	_, err := m.rstat(op, name, rel)
	return err
}

// ---- handles ----

// remoteCall runs fn on the handle's RemoteFile with h.mu held, after the
// checks every handle call makes, and rewrites its error to h's path.
func (h *File) remoteCall(op string, fn func(rf RemoteFile) error) error {
	if h.closed {
		return perr(op, h.name, fs.ErrClosed)
	}
	err := fn(h.rf)
	if err == nil || err == io.EOF {
		return err
	}
	return h.rm.rerr(op, h.name, err)
}

func (h *File) remoteRead(p []byte, off int64, at bool) (n int, err error) {
	if h.flag&O_ACCMODE == O_WRONLY {
		return 0, perr("read", h.name, syscall.EBADF)
	}
	err = h.remoteCall("read", func(rf RemoteFile) error {
		var e error
		if at {
			n, e = rf.ReadAt(p, off)
		} else {
			n, e = rf.Read(p)
		}
		return e
	})
	return n, err
}

func (h *File) remoteWrite(p []byte, off int64, at bool) (n int, err error) {
	if h.flag&O_ACCMODE == O_RDONLY {
		return 0, perr("write", h.name, syscall.EBADF)
	}
	err = h.remoteCall("write", func(rf RemoteFile) error {
		var e error
		if at {
			n, e = rf.WriteAt(p, off)
		} else {
			n, e = rf.Write(p)
		}
		return e
	})
	return n, err
}
