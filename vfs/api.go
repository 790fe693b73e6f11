// Package vfs is warren's layered filesystem: an immutable base (an io/fs.FS,
// in production an EROFS image) under a persistent copy-on-write delta.
//
// CONTRACT (the shell, commands, image, native tier and HTTP file API all
// code against these signatures; extend freely, change only with reason):
//
//   - Every path is a sandbox path. Absolute paths start at the sandbox root;
//     a relative path is taken relative to "/" (callers join their own cwd).
//     ".." at "/" stays at "/". Absolute symlink targets are relative to the
//     sandbox root. More than 40 symlink hops give ELOOP. Nothing here ever
//     touches the host filesystem.
//   - Errors are *fs.PathError{Op, Path, Err} whose Err is a syscall.Errno
//     (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, ELOOP, EINVAL, EBADF,
//     EXDEV, EPERM, ENOSPC, EDQUOT, ENAMETOOLONG ...), so callers print what
//     Linux prints (errors.Is(err, fs.ErrNotExist) also works).
//   - FileInfo.Sys() returns *Stat with inode number, nlink, uid/gid, rdev,
//     atime/ctime. Mode uses io/fs bits (fs.ModeDir, fs.ModeSymlink,
//     fs.ModeNamedPipe, fs.ModeDevice|fs.ModeCharDevice, fs.ModeSocket,
//     fs.ModeSetuid, fs.ModeSetgid, fs.ModeSticky) plus the 0777 permission bits.
//   - ReadDir results are sorted by name, like os.ReadDir.
//   - An *FS is safe for concurrent use; Fork is O(1) and the fork and its
//     parent then evolve independently.
package vfs

import (
	"io/fs"
	"time"
)

// Open flags; the values are Linux's so callers may pass os.O_* or
// syscall.O_* constants.
const (
	O_RDONLY    = 0x0
	O_WRONLY    = 0x1
	O_RDWR      = 0x2
	O_ACCMODE   = 0x3
	O_CREATE    = 0x40
	O_EXCL      = 0x80
	O_TRUNC     = 0x200
	O_APPEND    = 0x400
	O_NOFOLLOW  = 0x20000
	O_DIRECTORY = 0x10000
)

// Stat is what FileInfo.Sys() returns for every entry of an FS.
type Stat struct {
	Ino   uint64
	Nlink uint32
	Uid   uint32
	Gid   uint32
	Rdev  uint64 // device number for char/block devices
	Atime time.Time
	Ctime time.Time
	// Blocks is the number of 512-byte blocks charged to the entry.
	Blocks int64
}

// Options configure a new FS.
type Options struct {
	// Base is the read-only lower layer; nil means an empty root.
	// If it implements fs.ReadLinkFS its symlinks are honoured, and if its
	// FileInfo.Sys() returns *Stat (or something the vfs understands) owners
	// and inode numbers are taken from it.
	Base fs.FS
	// MaxBytes and MaxInodes bound the delta; 0 means unlimited.
	// Exceeding MaxBytes fails the operation with ENOSPC, MaxInodes with EDQUOT
	// (see Quota errors); nothing already written is lost.
	MaxBytes  int64
	MaxInodes int64
	// Now supplies timestamps (tests pin it); nil means time.Now.
	Now func() time.Time
	// Uid and Gid own new entries; default 0.
	Uid, Gid uint32
}

// Usage is how much the delta holds, as charged against the quotas.
type Usage struct {
	Bytes  int64
	Inodes int64
}
