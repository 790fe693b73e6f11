package vfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// ErrMalformed is wrapped by every error about a blob that hashes right but
// does not decode.
var ErrMalformed = errors.New("malformed node")

type decoder struct {
	b     []byte
	err   error
	self  [32]byte   // the pack holding this node
	packs [][32]byte // its pack table
	ld    *loader
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", ErrMalformed, what)
	}
	d.b = nil
}

func (d *decoder) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte1(what string) byte {
	if len(d.b) < 1 {
		d.fail(what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n uint64, what string) []byte {
	if uint64(len(d.b)) < n {
		d.fail(what)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str(what string) string {
	return string(d.bytes(d.uvarint(what), what))
}

func (d *decoder) sum(what string) (s [32]byte) {
	copy(s[:], d.bytes(32, what))
	return s
}

// header reads type, version and the pack table.
func (d *decoder) header(typ byte) {
	if t := d.byte1("type"); t != typ && d.err == nil {
		d.err = fmt.Errorf("%w: type %q, want %q", ErrMalformed, t, typ)
	}
	if v := d.byte1("version"); v != FormatVersion && d.err == nil {
		d.err = fmt.Errorf("%w: format version %d, this build reads %d", ErrMalformed, v, FormatVersion)
	}
	np := d.uvarint("pack count")
	if np > uint64(len(d.b)/32) || np > maxPackTable {
		d.fail("pack count")
		return
	}
	d.packs = make([][32]byte, np)
	for i := range d.packs {
		d.packs[i] = d.sum("pack id")
	}
}

// ref reads a reference (docs/format.md, "References").
func (d *decoder) ref(what string) (blobLoc, [32]byte) {
	var l blobLoc
	k := d.uvarint(what + " pack")
	switch {
	case k == 0:
		l.pack = d.self
	case k <= uint64(len(d.packs)):
		l.pack = d.packs[k-1]
	default:
		d.fail(what + " pack index")
	}
	off, n := d.uvarint(what+" offset"), d.uvarint(what+" length")
	if off > maxPack || n == 0 || n > maxBlob {
		d.fail(what + " range")
	}
	l.off, l.n = int64(off), int64(n)
	sum := d.sum(what + " id")
	if d.err == nil && d.ld != nil && d.ld.visit != nil {
		d.ld.visit(l)
	}
	return l, sum
}

func decodeGeneration(ld *loader, self [32]byte, b []byte) (*tree, error) {
	d := &decoder{b: b, self: self, ld: ld}
	d.header(blobGeneration)
	t := &tree{}
	t.root = d.uvarint("root")
	t.nextIno = d.uvarint("next inode")
	t.usage.Bytes = d.varint("usage")
	t.usage.Inodes = d.varint("usage")
	if d.byte1("table flag") == 1 {
		at, sum := d.ref("table")
		t.inodes = &hnode[uint64, *inode]{lz: &lazyNode[uint64, *inode]{sum: sum, at: at, ld: ld, decode: decodeTable}}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}

func decodeTable(ld *loader, self [32]byte, b []byte) (*hnode[uint64, *inode], error) {
	d := &decoder{b: b, self: self, ld: ld}
	d.header(blobTable)
	n := decodeTrie(d, ld, decodeTable, func(d *decoder) (uint64, *inode) {
		in := decodeInode(d, ld)
		return in.ino, in
	})
	return n, d.err
}

func decodeDir(ld *loader, self [32]byte, b []byte) (*hnode[string, dirent], error) {
	d := &decoder{b: b, self: self, ld: ld}
	d.header(blobDir)
	n := decodeTrie(d, ld, decodeDir, func(d *decoder) (string, dirent) {
		name := d.str("name")
		if name == "" || len(name) > maxName || strings.IndexByte(name, '/') >= 0 || name == "." || name == ".." {
			d.fail("entry name")
		}
		var de dirent
		de.ino = d.uvarint("entry inode")
		de.typ = fs.FileMode(d.uvarint("entry type")) & fs.ModeType
		de.whiteout = d.byte1("whiteout") == 1
		return name, de
	})
	return n, d.err
}

func decodeTrie[K comparable, V any](d *decoder, ld *loader,
	self func(*loader, [32]byte, []byte) (*hnode[K, V], error),
	entry func(*decoder) (K, V)) *hnode[K, V] {
	if d.err != nil {
		return nil
	}
	n := &hnode[K, V]{}
	bitmap := d.uvarint("bitmap")
	count := d.uvarint("slot count")
	if bitmap >= 1<<(1<<hbits) || count > uint64(len(d.b)) || count == 0 {
		d.fail("slot count")
		return nil
	}
	bm := uint32(bitmap)
	if bitmap != 0 && uint64(popcount(bm)) != count {
		d.fail("bitmap")
		return nil
	}
	for i := uint64(0); i < count; i++ {
		bit := bm & -bm // 0 in a collision node
		bm &^= bit
		switch d.byte1("slot tag") {
		case 0:
			k, v := entry(d)
			n.entries = append(n.entries, hentry[K, V]{key: k, val: v})
			n.datamap |= bit
		case 1:
			if bit == 0 {
				d.fail("slot tag (a child in a collision node)")
				break
			}
			at, sum := d.ref("child")
			n.kids = append(n.kids, &hnode[K, V]{lz: &lazyNode[K, V]{sum: sum, at: at, ld: ld, decode: self}})
			n.nodemap |= bit
		default:
			d.fail("slot tag")
		}
		if d.err != nil {
			return nil
		}
	}
	if len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return n
}

// decodeInodeMeta reads an inode's fields up to its xattrs (the layout
// appendInodeMeta writes, shared with change records).
func decodeInodeMeta(d *decoder) *inode {
	in := &inode{}
	in.ino = d.uvarint("inode number")
	in.mode = fs.FileMode(d.uvarint("mode"))
	in.uid = uint32(d.uvarint("uid"))
	in.gid = uint32(d.uvarint("gid"))
	in.nlink = uint32(d.uvarint("nlink"))
	in.rdev = d.uvarint("rdev")
	in.size = d.varint("size")
	in.atime = d.varint("atime")
	in.mtime = d.varint("mtime")
	in.ctime = d.varint("ctime")
	in.origin = d.str("origin")
	in.opaque = d.byte1("flags")&1 != 0
	in.parent = d.uvarint("parent")
	in.name = d.str("name")
	nx := d.uvarint("xattr count")
	if nx > uint64(len(d.b)) {
		d.fail("xattr count")
		return in
	}
	for i := uint64(0); i < nx && d.err == nil; i++ {
		in.xattrs = append(in.xattrs, xattr{name: d.str("xattr"), value: []byte(d.str("xattr value"))})
	}
	return in
}

func decodeInode(d *decoder, ld *loader) *inode {
	in := decodeInodeMeta(d)
	if d.err != nil {
		return in
	}
	if in.size < 0 {
		d.fail("size")
	}
	switch {
	case in.isDir():
		if d.byte1("entries flag") == 1 {
			at, sum := d.ref("entries")
			in.entries = &hnode[string, dirent]{lz: &lazyNode[string, dirent]{sum: sum, at: at, ld: ld, decode: decodeDir}}
		}
	case in.mode&fs.ModeSymlink != 0:
		in.target = d.str("symlink target")
	case in.mode.IsRegular():
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
				if e.coff != 0 || e.n > inlineMax {
					d.fail("inline extent")
					break
				}
				e.mem = d.bytes(uint64(e.n), "inline data")
			case extChunk:
				at, sum := d.ref("chunk")
				if d.err != nil || e.coff+e.n > at.n {
					d.fail("chunk length")
					break
				}
				e.ch = internLoaded(sum, at, ld)
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
		reoff(in.ext)
	}
	return in
}

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
