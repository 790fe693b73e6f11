package vfs

import (
	"io/fs"
	"syscall"
)

// dirent is a directory entry of the delta. A whiteout hides the base entry
// of the same name.
type dirent struct {
	ino      uint64
	typ      fs.FileMode // type bits only
	whiteout bool
}

// inodeData is the copyable part of an inode.
type inodeData struct {
	ino                 uint64
	mode                fs.FileMode // fs type bits | setuid/setgid/sticky | 0777
	uid, gid            uint32
	nlink               uint32
	rdev                uint64
	size                int64
	atime, mtime, ctime int64 // unix nanoseconds
	// origin is the base path this inode was copied up from ("" = created in
	// the delta). A directory with an origin and !opaque merges the base
	// directory at origin under its own entries; a file with an origin reads
	// its base extents from that base file.
	origin string
	opaque bool
	// parent and name are the inode's first link (parent 0: root or
	// unknown); Diff uses them to name changed inodes.
	parent  uint64
	name    string
	entries *hnode[string, dirent] // directories
	ext     []extent               // regular files
	target  string                 // symlinks
	xattrs  []xattr                // sorted by name
}

type xattr struct {
	name  string
	value []byte
}

// inode is immutable once it is in a tree; writers clone it.
type inode struct {
	inodeData
	synth bool // built from the base on lookup, not in the table
}

func (in *inode) clone() *inode { return &inode{inodeData: in.inodeData} }

func (in *inode) isDir() bool { return in.mode&fs.ModeDir != 0 }

// merged reports whether a directory shows the base directory at its origin.
func (in *inode) merged() bool { return in.origin != "" && !in.opaque }

// charge is what the inode costs against MaxBytes.
func (in *inode) charge() int64 {
	var n int64
	for i := range in.ext {
		if k := in.ext[i].kind; k == extMem || k == extChunk {
			n += in.ext[i].n
		}
	}
	n += int64(len(in.target))
	for _, x := range in.xattrs {
		n += int64(len(x.name) + len(x.value))
	}
	return n
}

// tree is one immutable version of the delta. Writers copy the struct, change
// the copy and publish it with one atomic store, so readers see either the
// old or the new version, never a torn one.
type tree struct {
	inodes  *hnode[uint64, *inode]
	root    uint64
	nextIno uint64
	usage   Usage
}

func (t *tree) get(ino uint64) *inode {
	in, _ := t.inodes.lookup(ino, inoHash(ino))
	return in
}

// put stores in (a fresh clone) under its inode number and keeps usage.
func (t *tree) put(in *inode) {
	in.synth = false
	h := inoHash(in.ino)
	old, _ := t.inodes.lookup(in.ino, h)
	if old != nil {
		t.usage.Bytes -= old.charge()
	} else if in.origin == "" {
		t.usage.Inodes++
	}
	t.usage.Bytes += in.charge()
	t.inodes, _ = t.inodes.insert(in.ino, h, in, 0, t)
}

func (t *tree) drop(ino uint64) {
	h := inoHash(ino)
	old, _ := t.inodes.lookup(ino, h)
	if old == nil {
		return
	}
	t.usage.Bytes -= old.charge()
	if old.origin == "" {
		t.usage.Inodes--
	}
	t.inodes, _ = t.inodes.remove(ino, h, 0)
}

func (t *tree) newIno() uint64 {
	t.nextIno++
	return t.nextIno
}

// setEntry makes name in directory dir (a table inode) refer to de.
func (t *tree) setEntry(dirIno uint64, name string, de dirent) {
	d := t.get(dirIno).clone()
	d.entries, _ = d.entries.insert(name, strHash(name), de, 0, t)
	t.put(d)
}

type errno = syscall.Errno
