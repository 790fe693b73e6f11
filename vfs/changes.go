package vfs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// A change record is the net change of a delta between two versions, as
// bytes: what the write log keeps for each exec or file call (issue 13)
// until a generation holding it is committed. It is state, not a log of
// operations: every inode that differs between the versions, whole (its
// directory entries as the entries that differ, its file data as new
// chunks and inline bytes, reusing by id the chunks its previous version
// already had), and every inode that is gone. So it is net (a temporary
// file created and removed inside one exec costs nothing), exact (inode
// numbers, times and link counts are the live ones, where replaying
// operations would need every call's semantics, clock and inode
// allocation again), and cheap to make: the tries share untouched
// subtrees by pointer, so finding the change costs its size, not the
// tree's. docs/format.md, "Change record", has the layout.

// changeVersion is the version of the change record encoding.
const changeVersion = 1

const blobChanges = 'C'

// ErrChangeBase is wrapped by ApplyChanges when the FS is not at the
// version the record was made against.
var ErrChangeBase = errors.New("vfs: change record does not apply to this version")

// Mark is one version of an FS's delta, to encode later changes against.
// It keeps that version's nodes alive (shared with the live tree, so it
// costs about what changed since).
type Mark struct{ t *tree }

// Mark returns the current version.
func (f *FS) Mark() Mark { return Mark{f.cur.Load()} }

// Changes returns the net change of the delta from m to the current
// version as a change record, and the Mark of the version it encodes (the
// next call's m). ApplyChanges of the record on an FS whose delta is at
// m's version (a Load of the generation persisted at m, say) makes that
// delta identical to this one.
func (f *FS) Changes(m Mark) (_ []byte, next Mark, err error) {
	if m.t == nil {
		return nil, Mark{}, errors.New("vfs: Changes needs a Mark")
	}
	defer catchLoad(&err, "changes", "/")
	from, to := m.t, f.cur.Load()
	b := []byte{blobChanges, changeVersion}
	b = appendTreeHead(b, from)
	b = appendTreeHead(b, to)
	var ops []byte
	n := 0
	diffTrie(from.inodes, to.inodes, 0, func(ino uint64, a, c *inode) {
		n++
		if c == nil {
			ops = append(ops, 0)
			ops = binary.AppendUvarint(ops, ino)
			return
		}
		ops = append(ops, 1)
		ops = appendChangedInode(ops, a, c)
	})
	b = binary.AppendUvarint(b, uint64(n))
	return append(b, ops...), Mark{to}, nil
}

func appendTreeHead(b []byte, t *tree) []byte {
	b = binary.AppendUvarint(b, t.root)
	b = binary.AppendUvarint(b, t.nextIno)
	b = binary.AppendVarint(b, t.usage.Bytes)
	return binary.AppendVarint(b, t.usage.Inodes)
}

// appendChangedInode encodes c, the new version of an inode whose old
// version (nil if new) is a.
func appendChangedInode(b []byte, a, c *inode) []byte {
	b = appendInodeMeta(b, c)
	switch {
	case c.isDir():
		var old *hnode[string, dirent]
		if a != nil && a.isDir() {
			old = a.entries
		}
		var ents []byte
		k := 0
		diffTrie(old, c.entries, 0, func(name string, _, y dirent) {
			k++
			ents = appendString(ents, name)
			if y == (dirent{}) {
				ents = append(ents, 0)
				return
			}
			ents = append(ents, 1)
			ents = binary.AppendUvarint(ents, y.ino)
			ents = binary.AppendUvarint(ents, uint64(y.typ))
			if y.whiteout {
				ents = append(ents, 1)
			} else {
				ents = append(ents, 0)
			}
		})
		b = binary.AppendUvarint(b, uint64(k))
		return append(b, ents...)
	case c.mode&fs.ModeSymlink != 0:
		return appendString(b, c.target)
	case c.mode.IsRegular():
		had := map[[32]byte]bool{}
		if a != nil && a.mode.IsRegular() {
			for _, e := range a.ext {
				if e.kind == extChunk {
					had[e.ch.sum] = true
				}
			}
		}
		b = binary.AppendUvarint(b, uint64(len(c.ext)))
		for _, e := range c.ext {
			b = append(b, e.kind)
			b = binary.AppendUvarint(b, uint64(e.n))
			switch e.kind {
			case extMem:
				b = binary.AppendUvarint(b, 0)
				b = append(b, e.mem[e.coff:e.coff+e.n]...)
			case extChunk:
				b = binary.AppendUvarint(b, uint64(e.coff))
				b = append(b, e.ch.sum[:]...)
				if had[e.ch.sum] {
					b = append(b, 1)
				} else {
					b = append(b, 0)
					data := e.ch.bytes()
					b = binary.AppendUvarint(b, uint64(len(data)))
					b = append(b, data...)
				}
			default:
				b = binary.AppendUvarint(b, uint64(e.coff))
			}
		}
	}
	return b
}

// appendInodeMeta encodes what every inode has (the fields of "Inode" in
// docs/format.md up to the xattrs).
func appendInodeMeta(b []byte, in *inode) []byte {
	b = binary.AppendUvarint(b, in.ino)
	b = binary.AppendUvarint(b, uint64(in.mode))
	b = binary.AppendUvarint(b, uint64(in.uid))
	b = binary.AppendUvarint(b, uint64(in.gid))
	b = binary.AppendUvarint(b, uint64(in.nlink))
	b = binary.AppendUvarint(b, in.rdev)
	b = binary.AppendVarint(b, in.size)
	b = binary.AppendVarint(b, in.atime)
	b = binary.AppendVarint(b, in.mtime)
	b = binary.AppendVarint(b, in.ctime)
	b = appendString(b, in.origin)
	var flags byte
	if in.opaque {
		flags |= 1
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, in.parent)
	b = appendString(b, in.name)
	b = binary.AppendUvarint(b, uint64(len(in.xattrs)))
	for _, x := range in.xattrs {
		b = appendString(b, x.name)
		b = appendString(b, string(x.value))
	}
	return b
}

// ApplyChanges applies a change record made by Changes. The FS must be at
// the version the record was made against; records of one FS apply in the
// order they were made. The root, next inode number and usage are checked
// (else an error wrapping ErrChangeBase): a cheap guard against a wrong
// order, not a proof. Applying the record just applied again is harmless
// (it carries whole inodes, not operations). Quotas are not checked: a
// record replays writes that were accepted once. A record that does not
// decode is an error wrapping ErrMalformed, and the FS is left unchanged.
func (f *FS) ApplyChanges(b []byte) (err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer catchLoad(&err, "apply changes", "/")
	old := f.cur.Load()
	d := &decoder{b: b}
	if d.byte1("type") != blobChanges || d.err != nil {
		return fmt.Errorf("vfs: %w: not a change record", ErrMalformed)
	}
	if v := d.byte1("version"); v != changeVersion {
		return fmt.Errorf("vfs: %w: change record version %d, this build reads %d", ErrMalformed, v, changeVersion)
	}
	from, to := readTreeHead(d), readTreeHead(d)
	if d.err != nil {
		return fmt.Errorf("vfs: change record: %w", d.err)
	}
	if from.root != old.root || from.nextIno != old.nextIno || from.usage != old.usage {
		return fmt.Errorf("%w: it was made against root %d, next inode %d, usage %+v; this FS has root %d, next inode %d, usage %+v",
			ErrChangeBase, from.root, from.nextIno, from.usage, old.root, old.nextIno, old.usage)
	}
	t := new(tree)
	*t = *old
	n := d.uvarint("op count")
	if n > uint64(len(d.b)) {
		d.fail("op count")
	}
	seen := map[uint64]bool{}
	for i := uint64(0); i < n && d.err == nil; i++ {
		tag := d.byte1("op")
		var ino uint64
		switch tag {
		case 0:
			ino = d.uvarint("inode number")
			if d.err == nil && t.get(ino) == nil {
				d.fail("drop of an inode the version does not have")
			}
			t.drop(ino)
		case 1:
			in := decodeChangedInode(d, t, f.lin)
			if d.err != nil {
				break
			}
			ino = in.ino
			t.put(in)
		default:
			d.fail("op")
		}
		if seen[ino] && d.err == nil {
			d.fail("op (an inode twice)")
		}
		seen[ino] = true
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return fmt.Errorf("vfs: change record: %w", d.err)
	}
	t.root, t.nextIno = to.root, to.nextIno
	if t.usage != to.usage {
		return fmt.Errorf("vfs: change record: %w: usage after applying is %+v, the record says %+v", ErrMalformed, t.usage, to.usage)
	}
	if t.get(t.root) == nil {
		return fmt.Errorf("vfs: change record: %w: no root inode %d", ErrMalformed, t.root)
	}
	f.cur.Store(t)
	return nil
}

func readTreeHead(d *decoder) tree {
	var t tree
	t.root = d.uvarint("root")
	t.nextIno = d.uvarint("next inode")
	t.usage.Bytes = d.varint("usage")
	t.usage.Inodes = d.varint("usage")
	return t
}

// decodeChangedInode decodes an inode of a change record against its
// version in t (the tree being built, which still has the old version).
func decodeChangedInode(d *decoder, t *tree, lin *lineage) *inode {
	in := decodeInodeMeta(d)
	if in.size < 0 || in.ino == 0 {
		d.fail("inode")
	}
	if d.err != nil {
		return in
	}
	old := t.get(in.ino)
	switch {
	case in.isDir():
		if old != nil && old.isDir() {
			in.entries = old.entries
		}
		k := d.uvarint("entry count")
		if k > uint64(len(d.b)) {
			d.fail("entry count")
			return in
		}
		for i := uint64(0); i < k && d.err == nil; i++ {
			name := d.str("entry name")
			if name == "" || len(name) > maxName || strings.IndexByte(name, '/') >= 0 || name == "." || name == ".." {
				d.fail("entry name")
				break
			}
			switch d.byte1("entry op") {
			case 0:
				in.entries, _ = in.entries.remove(name, strHash(name), 0)
			case 1:
				var de dirent
				de.ino = d.uvarint("entry inode")
				de.typ = fs.FileMode(d.uvarint("entry type")) & fs.ModeType
				de.whiteout = d.byte1("whiteout") == 1
				in.entries, _ = in.entries.insert(name, strHash(name), de, 0, t)
			default:
				d.fail("entry op")
			}
		}
	case in.mode&fs.ModeSymlink != 0:
		in.target = d.str("symlink target")
	case in.mode.IsRegular():
		had := map[[32]byte]*chunk{}
		if old != nil && old.mode.IsRegular() {
			for _, e := range old.ext {
				if e.kind == extChunk {
					had[e.ch.sum] = e.ch
				}
			}
		}
		ne := d.uvarint("extent count")
		if ne > uint64(len(d.b)) {
			d.fail("extent count")
			return in
		}
		var total int64
		for i := uint64(0); i < ne && d.err == nil; i++ {
			var e extent
			e.kind = d.byte1("extent kind")
			e.n = int64(d.uvarint("extent length"))
			e.coff = int64(d.uvarint("extent offset"))
			if e.n <= 0 || e.coff < 0 || e.n > 1<<50 || e.coff > 1<<50 {
				d.fail("extent length")
				break
			}
			switch e.kind {
			case extMem:
				// Copies: the FS must not keep the caller's buffer.
				e.mem = bytes.Clone(d.bytes(uint64(e.n), "inline data"))
			case extChunk:
				sum := d.sum("chunk id")
				switch d.byte1("chunk flag") {
				case 1:
					if e.ch = had[sum]; e.ch == nil {
						d.fail("chunk (not in the inode's previous version)")
					}
				case 0:
					data := d.bytes(d.uvarint("chunk length"), "chunk data")
					if d.err == nil && sha256.Sum256(data) != sum {
						d.fail("chunk data (it does not hash to its id)")
						break
					}
					e.ch = internChunk(bytes.Clone(data), lin)
				default:
					d.fail("chunk flag")
				}
				if d.err == nil && e.coff+e.n > e.ch.n {
					d.fail("chunk extent length")
				}
			case extBase, extZero:
			default:
				d.fail("extent kind")
			}
			total += e.n
			in.ext = append(in.ext, e)
		}
		if d.err == nil && total != in.size {
			d.fail("extent lengths (they do not add up to the size)")
		}
		in.ext = reoff(in.ext)
	}
	return in
}
