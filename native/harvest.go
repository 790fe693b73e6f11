package native

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/vfs"
	"golang.org/x/sys/unix"
)

// harvest copies what changed in upper/ since it was last seen into the vfs.
//
// A change the tree's quota refuses (a volume's size, the delta's bytes or
// inodes) is not kept, and not lost silently either: the path gets its
// content from before the harvest back, in the vfs and in the host
// directory (so both sides agree again), the harvest goes on with the other
// paths, and it returns a *QuotaRefusal naming what was not kept.
func (s *syncState) harvest(w *Workspace) error {
	if s.fs == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ufd, err := unix.Open(s.upper, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open upper: %w", err)
	}
	defer unix.Close(ufd)
	// O(1): the tree as it was, for putting back what the quota refuses.
	h := &harvester{s: s, w: w, base: w.r.cfg.UIDBase, count: w.r.cfg.UIDCount, before: s.fs.Fork()}
	if err := h.dir(ufd, "/"); err != nil {
		return err
	}
	if s.at != "" {
		// A volume's root is its tmpfs root, not an entry of a directory.
		if err := h.rootAttrs(ufd); err != nil {
			return err
		}
	}
	if h.refusal == nil {
		return nil
	}
	if err := h.revert(); err != nil {
		return err
	}
	return h.refusal
}

// QuotaRefusal is how a harvest ends when a quota refused some of what
// native processes wrote: each of Paths has its previous content again, in
// the vfs and in the native tier's view; everything else was kept.
type QuotaRefusal struct {
	Paths []string // as the sandbox sees them
	Err   error    // the first refusal: a *fs.PathError around a *vfs.QuotaError
}

func (e *QuotaRefusal) Error() string {
	ps := e.Paths
	more := ""
	if len(ps) > 5 {
		ps, more = ps[:5], fmt.Sprintf(" and %d more", len(e.Paths)-5)
	}
	return fmt.Sprintf("%v; not kept (the previous content is back): %s%s", e.Err, strings.Join(ps, ", "), more)
}

func (e *QuotaRefusal) Unwrap() error { return e.Err }

// isQuota reports whether err is a quota's refusal.
func isQuota(err error) bool {
	var qe *vfs.QuotaError
	return errors.As(err, &qe)
}

// copyBufs recycles copy buffers: io.Copy into an *os.File allocates 32 KiB
// per call, which dominated BenchmarkSync/files-1000.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copyData copies src to dst through a pooled buffer (the wrappers hide
// ReadFrom/WriteTo so the buffer is really used).
func copyData(dst io.Writer, src io.Reader) error {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	_, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, *bp)
	return err
}

// errRaced: an upper entry changed type or vanished between stat and open.
var errRaced = errors.New("entry changed during harvest")

type harvester struct {
	s           *syncState
	w           *Workspace
	base, count uint32
	before      *vfs.FS       // the tree when the harvest began
	refusal     *QuotaRefusal // what the quota refused so far
	refused     []string      // those paths, as vfs paths
}

// untouched marks a refusal made before the vfs was changed.
type untouched struct{ error }

func (u untouched) Unwrap() error { return u.error }

// fits refuses, before anything is changed, a regular file that cannot fit
// the byte quota, when its cost is certain: the vfs charges a file's bytes,
// so replacing a file that exists only in the delta (or nothing) by one
// without holes changes the usage by the difference of their sizes. Other
// cases (a copied-up base file, whose charge is what was written to it; a
// sparse file) are left to the vfs, and restore undoes a partial write.
func (h *harvester) fits(cp string, st *unix.Stat_t) error {
	max, _ := h.s.fs.Quota()
	if max <= 0 || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Blocks*512 < st.Size {
		return nil
	}
	v := h.s.fs
	var old int64
	if fi, err := v.Lstat(cp); err == nil {
		di, derr := v.DeltaEntry(cp)
		if derr != nil || di.Origin != "" || !di.InDelta {
			return nil // its charge is not its size
		}
		if fi.Mode().IsRegular() {
			old = fi.Size()
		}
	}
	want := v.Usage().Bytes - old + st.Size
	if want <= max || st.Size <= old {
		return nil
	}
	return untouched{&fs.PathError{Op: "write", Path: cp, Err: &vfs.QuotaError{
		Errno: syscall.ENOSPC, Limit: "bytes", Max: max, Want: want, Name: h.s.name}}}
}

// refuse puts cp back as it was before the harvest after the quota refused
// err, and notes it for the caller.
func (h *harvester) refuse(cp string, err error) error {
	var u untouched
	if !errors.As(err, &u) {
		if rerr := h.restore(cp); rerr != nil {
			return fmt.Errorf("cannot put back %s after %v: %w", h.s.show(cp), err, rerr)
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		e := *pe
		e.Path = h.s.show(cp)
		err = &e
	}
	if h.refusal == nil {
		h.refusal = &QuotaRefusal{Err: err}
	}
	h.refusal.Paths = append(h.refusal.Paths, h.s.show(cp))
	h.refused = append(h.refused, cp)
	return nil
}

// restore makes cp in the vfs what it was in h.before (absent, or a copy of
// the old entry and, for a directory, everything below it). It fits the
// quota: the harvest had not grown the tree by what it puts back.
func (h *harvester) restore(cp string) error {
	v := h.s.fs
	if err := v.RemoveAll(cp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return copyEntry(h.before, v, cp)
}

// copyEntry copies the entry p (recursively) from one vfs tree to another.
func copyEntry(from, to *vfs.FS, p string) error {
	fi, err := from.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		if err := to.Mkdir(p, 0o700); err != nil {
			return err
		}
		ents, err := from.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := copyEntry(from, to, path.Join(p, e.Name())); err != nil {
				return err
			}
		}
	case mode&fs.ModeSymlink != 0:
		target, err := from.Readlink(p)
		if err != nil {
			return err
		}
		if err := to.Symlink(target, p); err != nil {
			return err
		}
	case mode.IsRegular():
		src, err := from.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := to.OpenFile(p, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC|vfs.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		err = copyData(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	default:
		if err := to.Mknod(p, mode, 0); err != nil {
			return err
		}
	}
	uid, gid := vfsOwner(fi)
	if err := to.Lchown(p, int(uid), int(gid)); err != nil {
		return err
	}
	if mode&fs.ModeSymlink != 0 {
		return nil
	}
	if err := to.Chmod(p, mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	return to.Chtimes(p, fi.ModTime(), fi.ModTime())
}

// revert makes the refused paths in the host directory what the vfs has
// now (their previous content), and records them as synced.
func (h *harvester) revert() error {
	m, err := newMerged(h.w, h.s)
	if err != nil {
		return err
	}
	defer m.close()
	now := h.s.fs.Fork() // no mounts: the paths are in this tree
	for _, cp := range h.refused {
		if err := m.reconcile(now, cp, deep); err != nil {
			return fmt.Errorf("cannot put back %s in the native view: %w", h.s.show(cp), err)
		}
		m.touched[cp] = true
		// Already equal on both sides: the next sync need not rewrite it.
		if fi, err := now.Lstat(cp); err == nil && fi.Mode().IsRegular() {
			if st, ok := fi.Sys().(*vfs.Stat); ok {
				h.s.harvested[cp] = st.Ctime
			}
		}
	}
	h.s.recordPaths(h.w, m.touched)
	return nil
}

// rootAttrs brings a chmod or chown of the tree's root into the vfs.
func (h *harvester) rootAttrs(ufd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(ufd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", h.s.show("/"), err)
	}
	v := h.s.fs
	fi, err := v.Lstat("/")
	if err != nil {
		return err
	}
	perm := fsMode(st.Mode) & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != perm {
		if err := v.Chmod("/", perm); err != nil {
			return err
		}
	}
	uid, gid := h.owner(&st)
	if ou, og := vfsOwner(fi); int(ou) != uid || int(og) != gid {
		return v.Lchown("/", uid, gid)
	}
	return nil
}

func (h *harvester) owner(st *unix.Stat_t) (int, int) {
	shift := func(id uint32) int {
		if id >= h.base && id-h.base < h.count {
			return int(id - h.base)
		}
		return 65534 // unmapped: nobody, as the kernel shows it inside
	}
	return shift(st.Uid), shift(st.Gid)
}

// dir harvests the entries of the upper directory dfd (sandbox path p).
func (h *harvester) dir(dfd int, p string) error {
	names, err := readDirNames(dfd)
	if err != nil {
		return fmt.Errorf("list upper %s: %w", p, err)
	}
	sort.Strings(names)
	v := h.s.fs
	seen := make(map[string]bool, len(names))
	old := h.s.record[p]
	for _, name := range names {
		cp := path.Join(p, name)
		if h.s.skipped(cp) {
			continue
		}
		seen[name] = true
		if h.s.mounts[cp] {
			continue // a volume's mount point: its tmpfs is harvested on its own
		}
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // removed while we read: the next harvest sees it
			}
			return fmt.Errorf("stat upper %s: %w", cp, err)
		}
		prev, known := old[name]
		r := rec{ino: st.Ino, ctime: st.Ctim.Nano()}
		changed := !known || prev.ino != r.ino || prev.ctime != r.ctime
		typ := st.Mode & unix.S_IFMT
		switch {
		case typ == unix.S_IFCHR && st.Rdev == 0:
			// whiteout: the process deleted a base entry
			if changed {
				if err := v.RemoveAll(cp); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
		case typ == unix.S_IFDIR:
			r.opaque = isOpaque(dfd, name)
			if changed {
				if err := h.mkdir(cp, &st, r.opaque && !prev.opaque); isQuota(err) {
					if err := h.refuse(cp, err); err != nil {
						return err
					}
					continue // its subtree is put back whole
				} else if err != nil {
					return err
				}
				h.s.pending[cp] = true
			}
			sub, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open upper %s: %w", cp, err)
			}
			err = h.dir(sub, cp)
			unix.Close(sub)
			if err != nil {
				return err
			}
			if changed {
				t := time.Unix(0, st.Mtim.Nano())
				v.Chtimes(cp, t, t)
			}
		case changed:
			if err := h.leaf(dfd, name, cp, &st); errors.Is(err, errRaced) {
				continue // changed under us; not recorded, so the next harvest retries
			} else if isQuota(err) {
				if err := h.refuse(cp, err); err != nil {
					return err
				}
				continue // revert records it
			} else if err != nil {
				return err
			}
			h.s.pending[cp] = true
		}
		h.s.put(p, name, r)
	}
	for name := range old {
		if !seen[name] {
			// Gone from upper without a whiteout: it existed only in the delta.
			cp := path.Join(p, name)
			if err := v.RemoveAll(cp); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			h.s.del(p, name)
		}
	}
	return nil
}

// mkdir makes cp a directory in the vfs with st's mode and owner; opaque
// replaces whatever the vfs had there (the process removed and recreated it).
func (h *harvester) mkdir(cp string, st *unix.Stat_t, opaque bool) error {
	v := h.s.fs
	fi, err := v.Lstat(cp)
	if err == nil && (!fi.IsDir() || opaque) {
		if err := v.RemoveAll(cp); err != nil {
			return err
		}
		err = fs.ErrNotExist
	}
	if err != nil {
		if err := v.Mkdir(cp, 0o700); err != nil {
			return err
		}
	}
	uid, gid := h.owner(st)
	if err := v.Lchown(cp, uid, gid); err != nil {
		return err
	}
	return v.Chmod(cp, fsMode(st.Mode)&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// leaf copies a non-directory upper entry into the vfs.
func (h *harvester) leaf(dfd int, name, cp string, st *unix.Stat_t) error {
	v := h.s.fs
	mode := fsMode(st.Mode)
	if err := h.fits(cp, st); err != nil {
		return err
	}
	if fi, err := v.Lstat(cp); err == nil && (fi.IsDir() || fi.Mode().Type() != mode.Type()) {
		if err := v.RemoveAll(cp); err != nil {
			return err
		}
	}
	uid, gid := h.owner(st)
	mtime := time.Unix(0, st.Mtim.Nano())
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return fmt.Errorf("readlink upper %s: %w", cp, err)
		}
		v.Remove(cp)
		// The target is kept as text: in the vfs it resolves inside the
		// sandbox root, never on the host.
		if err := v.Symlink(string(buf[:n]), cp); err != nil {
			return err
		}
		return v.Lchown(cp, uid, gid)
	case unix.S_IFREG:
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENXIO) {
			return errRaced
		}
		if err != nil {
			return fmt.Errorf("open upper %s: %w", cp, err)
		}
		src := os.NewFile(uintptr(fd), cp)
		defer src.Close()
		var now unix.Stat_t
		if err := unix.Fstat(fd, &now); err != nil || now.Mode&unix.S_IFMT != unix.S_IFREG {
			return errRaced
		}
		dst, err := v.OpenFile(cp, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC|vfs.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		err = copyData(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("harvest %s: %w", cp, err)
		}
	case unix.S_IFIFO, unix.S_IFSOCK:
		if _, err := v.Lstat(cp); err != nil {
			if err := v.Mknod(cp, mode, 0); err != nil {
				return err
			}
		}
	default:
		return nil // device nodes are not harvested
	}
	if err := v.Lchown(cp, uid, gid); err != nil {
		return err
	}
	if err := v.Chmod(cp, mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	if err := v.Chtimes(cp, mtime, mtime); err != nil {
		return err
	}
	if fi, err := v.Lstat(cp); err == nil && fi.Mode().IsRegular() {
		if st, ok := fi.Sys().(*vfs.Stat); ok {
			h.s.harvested[cp] = st.Ctime
		}
	}
	return nil
}
