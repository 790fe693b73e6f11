package wasm

import (
	"errors"
	"io/fs"
	"path"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
	"github.com/warren-sandbox/warren/vfs"
)

// vfsFS is the sandbox's vfs as a WASI filesystem mounted at "/". Every
// path resolves inside the vfs (its own root, its own symlinks), so ".."
// and absolute symlinks cannot reach the host: there is no host below it.
type vfsFS struct {
	experimentalsys.UnimplementedFS
	fs *vfs.FS
}

// abs turns wazero's mount-relative path into a vfs path.
func abs(p string) string { return path.Clean("/" + p) }

// errno maps a vfs error (a *fs.PathError over a syscall.Errno, or an
// fs.Err* sentinel) to WASI's.
func errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return experimentalsys.UnwrapOSError(en)
	}
	return experimentalsys.UnwrapOSError(err)
}

func linuxFlags(f experimentalsys.Oflag) int {
	var out int
	switch {
	case f&experimentalsys.O_RDWR != 0:
		out = vfs.O_RDWR
	case f&experimentalsys.O_WRONLY != 0:
		out = vfs.O_WRONLY
	default:
		out = vfs.O_RDONLY
	}
	for _, m := range []struct {
		w experimentalsys.Oflag
		l int
	}{
		{experimentalsys.O_APPEND, vfs.O_APPEND}, {experimentalsys.O_CREAT, vfs.O_CREATE},
		{experimentalsys.O_DIRECTORY, vfs.O_DIRECTORY}, {experimentalsys.O_EXCL, vfs.O_EXCL},
		{experimentalsys.O_NOFOLLOW, vfs.O_NOFOLLOW}, {experimentalsys.O_TRUNC, vfs.O_TRUNC},
	} {
		if f&m.w != 0 {
			out |= m.l
		}
	}
	return out
}

func (v *vfsFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	name := abs(p)
	h, err := v.fs.OpenFile(name, linuxFlags(flag), perm)
	if err != nil {
		return nil, errno(err)
	}
	inner, en := (&sysfs.AdaptFS{FS: handle{h}}).OpenFile(".", flag&experimentalsys.O_DIRECTORY, 0)
	if en != 0 {
		h.Close()
		return nil, en
	}
	return &vfsFile{File: inner, fs: v.fs, h: h, name: name, append: flag&experimentalsys.O_APPEND != 0}, 0
}

// handle is an fs.FS of one open vfs file, for wazero's adapter.
type handle struct{ h *vfs.File }

func (o handle) Open(string) (fs.File, error) { return o.h, nil }

func stat(fi fs.FileInfo) sys.Stat_t {
	st := sys.NewStat_t(fi)
	if s, ok := fi.Sys().(*vfs.Stat); ok {
		st.Ino, st.Nlink = s.Ino, uint64(s.Nlink)
		st.Atim, st.Ctim = s.Atime.UnixNano(), s.Ctime.UnixNano()
	}
	return st
}

func (v *vfsFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := v.fs.Lstat(abs(p))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return stat(fi), 0
}

func (v *vfsFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := v.fs.Stat(abs(p))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return stat(fi), 0
}

func (v *vfsFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	return errno(v.fs.Mkdir(abs(p), perm))
}

func (v *vfsFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return errno(v.fs.Chmod(abs(p), perm))
}

func (v *vfsFS) Rename(from, to string) experimentalsys.Errno {
	return errno(v.fs.Rename(abs(from), abs(to)))
}

func (v *vfsFS) Rmdir(p string) experimentalsys.Errno {
	fi, err := v.fs.Lstat(abs(p))
	if err != nil {
		return errno(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return errno(v.fs.Remove(abs(p)))
}

func (v *vfsFS) Unlink(p string) experimentalsys.Errno {
	fi, err := v.fs.Lstat(abs(p))
	if err != nil {
		return errno(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return errno(v.fs.Remove(abs(p)))
}

func (v *vfsFS) Link(oldPath, newPath string) experimentalsys.Errno {
	return errno(v.fs.Link(abs(oldPath), abs(newPath)))
}

// Symlink keeps the target as the module wrote it (relative or absolute):
// the vfs resolves it within the sandbox.
func (v *vfsFS) Symlink(oldPath, linkName string) experimentalsys.Errno {
	return errno(v.fs.Symlink(oldPath, abs(linkName)))
}

func (v *vfsFS) Readlink(p string) (string, experimentalsys.Errno) {
	t, err := v.fs.Readlink(abs(p))
	return t, errno(err)
}

func (v *vfsFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	return errno(v.fs.Chtimes(abs(p), utime(atim), utime(mtim)))
}

// utime maps WASI's "now" and "omit" markers the way Linux does; an omitted
// time is set to now as well (the vfs has no per-field omit).
func utime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT || ns < 0 {
		return time.Now()
	}
	return time.Unix(0, ns)
}

// vfsFile is one open file of the module. Reads, writes, seeks and
// directory reads go through wazero's own adapter over the *vfs.File (an
// io.ReadWriteSeeker, io.ReaderAt/WriterAt and fs.ReadDirFile), which also
// keeps "go vet" quiet about WASI's Seek signature; the rest is here.
type vfsFile struct {
	experimentalsys.File
	fs     *vfs.FS
	h      *vfs.File
	name   string
	append bool
}

func (f *vfsFile) Ino() (sys.Inode, experimentalsys.Errno) {
	st, errno := f.Stat()
	return st.Ino, errno
}

func (f *vfsFile) IsDir() (bool, experimentalsys.Errno) {
	st, errno := f.Stat()
	return st.Mode.IsDir(), errno
}

func (f *vfsFile) IsAppend() bool { return f.append }

func (f *vfsFile) SetAppend(enable bool) experimentalsys.Errno {
	if enable != f.append {
		return experimentalsys.ENOSYS // the vfs fixes O_APPEND at open, as most WASI hosts
	}
	return 0
}

func (f *vfsFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	fi, err := f.h.Stat()
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return stat(fi), 0
}

func (f *vfsFile) Truncate(size int64) experimentalsys.Errno { return errno(f.h.Truncate(size)) }

func (f *vfsFile) Sync() experimentalsys.Errno { return 0 }

func (f *vfsFile) Datasync() experimentalsys.Errno { return 0 }

func (f *vfsFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	return errno(f.fs.Chtimes(f.name, utime(atim), utime(mtim)))
}
