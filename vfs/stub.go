package vfs

// This file is the API skeleton; the implementation replaces it.

import (
	"io"
	"io/fs"
	"syscall"
	"time"
)

// FS is one sandbox's filesystem: Base under a copy-on-write delta.
type FS struct{ opts Options }

// New returns an FS over opts.Base with an empty delta.
func New(opts Options) *FS { return &FS{opts: opts} }

func enosys(op, name string) error { return &fs.PathError{Op: op, Path: name, Err: syscall.ENOSYS} }

// Fork returns an independent copy in O(1).
func (f *FS) Fork() *FS { return &FS{opts: f.opts} }

// Usage reports what the delta holds.
func (f *FS) Usage() Usage { return Usage{} }

// SetQuota changes the delta's limits (0 = unlimited).
func (f *FS) SetQuota(maxBytes, maxInodes int64) {}

func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (*File, error) {
	return nil, enosys("open", name)
}
func (f *FS) Open(name string) (*File, error) { return f.OpenFile(name, O_RDONLY, 0) }
func (f *FS) Create(name string) (*File, error) {
	return f.OpenFile(name, O_RDWR|O_CREATE|O_TRUNC, 0o666)
}
func (f *FS) Stat(name string) (fs.FileInfo, error)      { return nil, enosys("stat", name) }
func (f *FS) Lstat(name string) (fs.FileInfo, error)     { return nil, enosys("lstat", name) }
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) { return nil, enosys("readdirent", name) }
func (f *FS) ReadFile(name string) ([]byte, error)       { return nil, enosys("open", name) }
func (f *FS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return enosys("open", name)
}
func (f *FS) Mkdir(name string, perm fs.FileMode) error    { return enosys("mkdir", name) }
func (f *FS) MkdirAll(name string, perm fs.FileMode) error { return enosys("mkdir", name) }
func (f *FS) Remove(name string) error                     { return enosys("remove", name) }
func (f *FS) RemoveAll(name string) error                  { return enosys("remove", name) }
func (f *FS) Rename(oldname, newname string) error         { return enosys("rename", oldname) }
func (f *FS) Symlink(target, linkname string) error        { return enosys("symlink", linkname) }
func (f *FS) Readlink(name string) (string, error)         { return "", enosys("readlink", name) }
func (f *FS) Link(oldname, newname string) error           { return enosys("link", newname) }
func (f *FS) Chmod(name string, mode fs.FileMode) error    { return enosys("chmod", name) }
func (f *FS) Chown(name string, uid, gid int) error        { return enosys("chown", name) }
func (f *FS) Lchown(name string, uid, gid int) error       { return enosys("lchown", name) }
func (f *FS) Chtimes(name string, atime, mtime time.Time) error {
	return enosys("chtimes", name)
}
func (f *FS) Truncate(name string, size int64) error { return enosys("truncate", name) }

// Mknod creates a fifo, socket or device node (mode carries the type bits).
func (f *FS) Mknod(name string, mode fs.FileMode, dev uint64) error { return enosys("mknod", name) }

// Realpath resolves every symlink and ".." in name to an absolute clean path.
func (f *FS) Realpath(name string) (string, error) { return "", enosys("realpath", name) }

func (f *FS) GetXattr(name, attr string) ([]byte, error)     { return nil, enosys("getxattr", name) }
func (f *FS) SetXattr(name, attr string, value []byte) error { return enosys("setxattr", name) }
func (f *FS) ListXattr(name string) ([]string, error)        { return nil, enosys("listxattr", name) }
func (f *FS) RemoveXattr(name, attr string) error            { return enosys("removexattr", name) }

// File is an open handle. It refers to the inode, not the path: it keeps
// working after the entry is renamed or unlinked, as on Linux.
type File struct{ name string }

var _ interface {
	io.ReadWriteSeeker
	io.ReaderAt
	io.WriterAt
	io.Closer
} = (*File)(nil)

func (h *File) Name() string                                 { return h.name }
func (h *File) Read(p []byte) (int, error)                   { return 0, enosys("read", h.name) }
func (h *File) Write(p []byte) (int, error)                  { return 0, enosys("write", h.name) }
func (h *File) ReadAt(p []byte, off int64) (int, error)      { return 0, enosys("read", h.name) }
func (h *File) WriteAt(p []byte, off int64) (int, error)     { return 0, enosys("write", h.name) }
func (h *File) Seek(offset int64, whence int) (int64, error) { return 0, enosys("seek", h.name) }
func (h *File) Truncate(size int64) error                    { return enosys("truncate", h.name) }
func (h *File) Stat() (fs.FileInfo, error)                   { return nil, enosys("stat", h.name) }
func (h *File) ReadDir(n int) ([]fs.DirEntry, error)         { return nil, enosys("readdirent", h.name) }
func (h *File) Close() error                                 { return nil }
