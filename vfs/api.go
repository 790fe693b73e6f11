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
//
// # How the delta is built
//
// The delta is a persistent tree: an inode table (a hash array mapped trie
// from inode number to inode) and, per directory, a trie from name to
// entry. A write copies the trie nodes on its path (a new entry in a
// 10,000-entry directory copies a few nodes of at most 16 child pointers) and publishes the new
// version with one atomic pointer store: readers never lock and never see
// a torn write; writers are serialised per FS. Fork and Snapshot share the
// current version. Handles name the inode, so they survive rename and
// unlink; hard links share it.
//
// Base entries are not copied until changed. Changing one copies up its
// inode (and its ancestor directories, entries only): a copied-up file keeps
// reading unchanged ranges from the base file, so a write into the middle of
// a large base file stores only the written bytes. Removing a base name
// leaves a whiteout; a directory created where the base has one is opaque.
// File data of at most 4 KiB stays inline; larger data is cut by a
// content-defined chunker into sha256-named chunks shared process-wide
// (docs/format.md).
//
// Quotas charge the bytes the delta owns (written file data, symlink
// targets, xattrs; not copied-up base data) and the inodes created in the
// delta (not copy-ups). An operation that would exceed one fails with ENOSPC
// (bytes) or EDQUOT (inodes) in a *QuotaError and changes nothing.
//
// # Persisting and the native tier
//
// FS.Persist packs the delta's new chunks and nodes into a few pack
// objects of a BlobStore (one object for a small change) and returns a
// Ref; Load opens a Ref lazily, reading single blobs out of packs
// (docs/format.md). Reachable lists the packs a Ref needs, for a garbage
// collector. Diff(old, new,
// fn) lists the paths that differ between two versions of one lineage,
// skipping shared subtrees, sorted by path; DeltaEntry reports whether a
// path is in the delta, a whiteout or an opaque directory and its base
// origin. To mirror a delta into an OverlayFS upper directory: Diff from the
// last synced Snapshot, then for each path Lstat/Readlink/Open it (Added
// directories recursively), and turn Deleted paths whose DeltaEntry is a
// whiteout into overlay whiteouts. A directory renamed from the base has
// Opaque set and Origin naming its base path: the upper copy must then hold
// its base content too (the vfs does not emit overlay redirects).
//
// # Not supported yet
//
// Permission checks (every caller acts as root); atime updates on read;
// blocking fifo semantics (a fifo opens as an empty file, or ErrIsFifo
// with O_NOFIFO; the shell gives fifos their semantics in-process); xattrs of the base layer; O_TMPFILE, POSIX record
// locks (fcntl; flock is File.Flock), mmap;
// file sizes beyond memory for unsealed data (written data stays in memory
// as 64 KiB buffers until Close seals it into chunks); Diff reports a hard
// link only by its first name.
package vfs

import (
	"errors"
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

	// O_NOFIFO is the vfs's own (no Linux flag has the bit): opening a
	// fifo fails with ErrIsFifo and changes nothing, not even for writing
	// (which otherwise publishes a new tree and copies base directories
	// up) and without asking the write gate. A caller that gives fifos
	// semantics of its own (the shell) opens a path in one walk with it
	// instead of a Stat first. Under a remote mount it is ignored (a
	// RemoteFS has no fifos).
	O_NOFIFO = 0x40000000
)

// ErrIsFifo is the Err of the *fs.PathError an open with O_NOFIFO returns
// when the entry it would open is a fifo.
var ErrIsFifo = errors.New("is a fifo (opened with O_NOFIFO)")

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
