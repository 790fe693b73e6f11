package vfs

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// RemoteFS is a tree whose entries live outside any FS's delta: a shared
// drive (package drive), which many sandboxes, on many nodes, mount at once.
// It is grafted into an FS's mount table with MountRemote and reached by
// the same lexical routing as a mounted FS; what it keeps, and with which
// consistency, is its own business (docs/drive.md).
//
// Names are absolute clean paths inside the tree ("/" is its root). Errors
// are *fs.PathError carrying a syscall.Errno (ENOENT, EEXIST, ENOTDIR,
// EISDIR, ENOTEMPTY, ENOSPC, EIO, ENOTSUP...), so callers map them as they
// map the FS's own. A RemoteFS has no symlinks, hard links, device nodes or
// extended attributes (the mount answers ENOTSUP for them). FileInfo.Sys()
// may be a *Stat; the mount fills one in (and tags the inode) when it is not.
type RemoteFS interface {
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	// OpenFile has open(2)'s semantics for O_ACCMODE, O_CREATE, O_EXCL,
	// O_TRUNC and O_APPEND (EEXIST, ENOENT, EISDIR for a directory
	// opened for writing are the RemoteFS's to answer); the mount
	// handles O_DIRECTORY, O_NOFOLLOW and a trailing slash and passes
	// neither flag, nor O_NOFIFO (there is no fifo to refuse). perm is
	// permission bits only.
	OpenFile(name string, flag int, perm fs.FileMode) (RemoteFile, error)
	Mkdir(name string, perm fs.FileMode) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// Rename is atomic; it replaces a file at newname (not a directory).
	Rename(oldname, newname string) error
	Chmod(name string, mode fs.FileMode) error
	// Chtimes gets both times (the mount fills in one the caller left
	// zero from Stat).
	Chtimes(name string, atime, mtime time.Time) error
	Truncate(name string, size int64) error
	// Usage is for df: bytes used and the quota (0: none).
	Usage() (used, quota int64)
}

// RemoteFile is an open handle on a RemoteFS.
type RemoteFile interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Seeker
	// Close releases the handle's lock, if it holds one (the mount also
	// unlocks first when it took one), and ends a Flock of this handle
	// still waiting.
	io.Closer
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
	ReadDir(n int) ([]fs.DirEntry, error)
	// Flock takes or releases an advisory lock as flock(2) does: how is
	// LOCK_SH, LOCK_EX or LOCK_UN, optionally | LOCK_NB (then EWOULDBLOCK
	// when held elsewhere). A blocking call waits until ctx is done.
	Flock(ctx context.Context, how int) error
}

// flock(2) operations, Linux's values.
const (
	LOCK_SH = 0x1
	LOCK_EX = 0x2
	LOCK_NB = 0x4
	LOCK_UN = 0x8
)
