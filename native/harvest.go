package native

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/vfs"
	"golang.org/x/sys/unix"
)

// harvest copies what changed in upper/ since it was last seen into the vfs.
func (s *syncState) harvest(w *Workspace) error {
	if s.fs == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ufd, err := unix.Open(w.upper, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open upper: %w", err)
	}
	defer unix.Close(ufd)
	h := &harvester{s: s, w: w, base: w.r.cfg.UIDBase, count: w.r.cfg.UIDCount}
	return h.dir(ufd, "/")
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
		if p == "/" && skipTop[name] {
			continue
		}
		seen[name] = true
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
				if err := h.mkdir(cp, &st, r.opaque && !prev.opaque); err != nil {
					return err
				}
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
			} else if err != nil {
				return err
			}
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
