package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	erofs "github.com/erofs/go-erofs"

	"github.com/warren-sandbox/warren/vfs"
)

// rawImage resolves paths and reads inodes straight from the mapped image
// for the hot paths (Open, Stat, Lstat, ReadDir, ReadLink). go-erofs
// resolves every path from the root with a pooled block copy per
// directory, and the vfs stats each prefix of a path, so lookups dominated
// reading an image through the vfs (BenchmarkReadAll). go-erofs stays the
// reference: it validates the image at open, reads xattrs, and serves
// whatever this reader declines (errUnsupported: chunk-based layouts,
// unknown features).
//
// Layout (EROFS on-disk format): superblock at 1024; inode of nid at
// meta_blkaddr*blksz + nid*32, compact (32 B) or extended (64 B); data
// FLAT_PLAIN at raw_blkaddr, FLAT_INLINE with the last partial block right
// after the inode and its inline xattrs; directories are blocks of 12-byte
// dirents {nid, nameoff, type, 0} followed by names, sorted by name.
type rawImage struct {
	c *countingReader // counts what the fast path touches, like ReadAt calls
	// dirs caches directory path -> nid for paths resolved without
	// symlinks. The vfs stats every prefix of a path, so without it each
	// lookup rescans every directory from the root. The image is
	// immutable, so entries never go stale; the map is cleared when full.
	dirs      sync.Map
	dirCount  atomic.Int64
	data      []byte
	bs        int64
	meta      int64
	root      uint64
	buildTime uint64
	buildNs   uint32
}

var errUnsupported = errors.New("layout not handled by the fast reader")

// errCorrupt is what a malformed image gives instead of a panic.
var errCorrupt = errors.New("corrupt EROFS image")

const (
	incompatHandled = 0x1 | 0x4 | 0x8 | 0x40 // lz4 0-padding flag, chunked, device table, xattr prefixes
	maxSymlinkHops  = 40
)

func (r *rawImage) touch(n int64) {
	if r.c != nil {
		r.c.calls.Add(1)
		r.c.bytes.Add(n)
	}
}

func newRawImage(data []byte) *rawImage {
	if len(data) < 1024+128 {
		return nil
	}
	sb := data[1024 : 1024+128]
	if binary.LittleEndian.Uint32(sb[0:4]) != 0xe0f5e1e2 {
		return nil
	}
	bits := sb[12]
	if bits < 9 || bits > 16 {
		return nil
	}
	if binary.LittleEndian.Uint32(sb[80:84])&^incompatHandled != 0 {
		return nil
	}
	bs := int64(1) << bits
	return &rawImage{
		data:      data,
		bs:        bs,
		meta:      int64(binary.LittleEndian.Uint32(sb[40:44])) * bs,
		root:      uint64(binary.LittleEndian.Uint16(sb[14:16])),
		buildTime: binary.LittleEndian.Uint64(sb[24:32]),
		buildNs:   binary.LittleEndian.Uint32(sb[32:36]),
	}
}

type rawInode struct {
	nid      uint64
	off      int64 // byte offset of the inode in the image
	isize    int64 // 32 or 64
	xsize    int64 // inline xattr area
	layout   uint16
	mode     uint16 // Unix mode with S_IFMT bits
	nlink    uint32
	size     int64
	iu       uint32 // raw_blkaddr or rdev
	uid, gid uint32
	mtime    uint64
	mtimeNs  uint32
}

const (
	sIFMT   = 0o170000
	sIFDIR  = 0o040000
	sIFREG  = 0o100000
	sIFLNK  = 0o120000
	sIFCHR  = 0o020000
	sIFBLK  = 0o060000
	sIFIFO  = 0o010000
	sIFSOCK = 0o140000
)

func (r *rawImage) inode(nid uint64) (rawInode, error) {
	if nid > uint64(len(r.data))/32 {
		return rawInode{}, errCorrupt
	}
	off := r.meta + int64(nid)*32
	if off < 0 || off+32 > int64(len(r.data)) {
		return rawInode{}, errCorrupt
	}
	b := r.data[off:]
	r.touch(32)
	format := binary.LittleEndian.Uint16(b[0:2])
	in := rawInode{nid: nid, off: off, layout: (format >> 1) & 7, mode: binary.LittleEndian.Uint16(b[4:6])}
	if ic := binary.LittleEndian.Uint16(b[2:4]); ic > 0 {
		in.xsize = 12 + int64(ic-1)*4
	}
	if format&1 == 0 {
		in.isize = 32
		in.nlink = uint32(binary.LittleEndian.Uint16(b[6:8]))
		in.size = int64(binary.LittleEndian.Uint32(b[8:12]))
		in.iu = binary.LittleEndian.Uint32(b[16:20])
		in.uid = uint32(binary.LittleEndian.Uint16(b[24:26]))
		in.gid = uint32(binary.LittleEndian.Uint16(b[26:28]))
		in.mtime, in.mtimeNs = r.buildTime, r.buildNs
	} else {
		if off+64 > int64(len(r.data)) {
			return rawInode{}, errCorrupt
		}
		in.isize = 64
		in.size = int64(binary.LittleEndian.Uint64(b[8:16]))
		in.iu = binary.LittleEndian.Uint32(b[16:20])
		in.uid = binary.LittleEndian.Uint32(b[24:28])
		in.gid = binary.LittleEndian.Uint32(b[28:32])
		in.mtime = binary.LittleEndian.Uint64(b[32:40])
		in.mtimeNs = binary.LittleEndian.Uint32(b[40:44])
		in.nlink = binary.LittleEndian.Uint32(b[44:48])
	}
	if in.size < 0 {
		return rawInode{}, errCorrupt
	}
	return in, nil
}

// span is a run of an inode's data in the image.
type span struct{ off, n int64 }

// spans maps an inode's data; errUnsupported for layouts other than flat.
func (r *rawImage) spans(in rawInode) ([]span, error) {
	if in.mode&sIFMT == sIFCHR || in.mode&sIFMT == sIFBLK || in.mode&sIFMT == sIFIFO || in.mode&sIFMT == sIFSOCK || in.size == 0 {
		return nil, nil
	}
	var out []span
	switch in.layout {
	case 0: // FLAT_PLAIN
		out = []span{{int64(in.iu) * r.bs, in.size}}
	case 2: // FLAT_INLINE: the last block, partial or not, follows the inode
		head := (in.size - 1) / r.bs * r.bs
		if head > 0 {
			out = append(out, span{int64(in.iu) * r.bs, head})
		}
		out = append(out, span{in.off + in.isize + in.xsize, in.size - head})
	default:
		return nil, errUnsupported
	}
	for _, s := range out {
		if s.off < 0 || s.n < 0 || s.off+s.n > int64(len(r.data)) || s.off+s.n < s.off {
			return nil, errCorrupt
		}
	}
	return out, nil
}

// dirents calls fn for each entry of directory in (including "." and
// ".."), in on-disk (sorted) order, until fn returns false.
func (r *rawImage) dirents(in rawInode, fn func(name []byte, nid uint64, ftype uint8) bool) error {
	sp, err := r.spans(in)
	if err != nil {
		return err
	}
	for _, s := range sp {
		for o := int64(0); o < s.n; o += r.bs {
			blk := r.data[s.off+o : s.off+o+min(r.bs, s.n-o)]
			r.touch(int64(len(blk)))
			more, err := blockDirents(blk, fn)
			if err != nil || !more {
				return err
			}
		}
	}
	return nil
}

func blockDirents(blk []byte, fn func(name []byte, nid uint64, ftype uint8) bool) (bool, error) {
	if len(blk) < 12 {
		return false, errCorrupt
	}
	first := int(binary.LittleEndian.Uint16(blk[8:10]))
	if first < 12 || first%12 != 0 || first > len(blk) {
		return false, errCorrupt
	}
	count := first / 12
	for i := 0; i < count; i++ {
		d := blk[i*12:]
		start := int(binary.LittleEndian.Uint16(d[8:10]))
		end := len(blk)
		if i+1 < count {
			end = int(binary.LittleEndian.Uint16(blk[(i+1)*12+8:]))
		}
		if start < first || start > end || end > len(blk) {
			return false, errCorrupt
		}
		name := blk[start:end]
		if i+1 == count {
			if z := bytes.IndexByte(name, 0); z >= 0 {
				name = name[:z]
			}
		}
		if !fn(name, binary.LittleEndian.Uint64(d[0:8]), d[10]) {
			return false, nil
		}
	}
	return true, nil
}

// lookup finds name in directory in. Names are sorted, so the scan stops
// at the first larger name.
func (r *rawImage) lookup(in rawInode, name string) (uint64, bool, error) {
	var nid uint64
	found := false
	err := r.dirents(in, func(n []byte, id uint64, _ uint8) bool {
		// Comparisons of string(n) do not allocate.
		switch {
		case string(n) == name:
			nid, found = id, true
			return false
		case string(n) > name && string(n) != "." && string(n) != "..":
			return false
		}
		return true
	})
	return nid, found, err
}

func (r *rawImage) readlink(in rawInode) (string, error) {
	if in.size > 4096 {
		return "", errCorrupt
	}
	sp, err := r.spans(in)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range sp {
		r.touch(s.n)
		b.Write(r.data[s.off : s.off+s.n])
	}
	return b.String(), nil
}

// resolve walks name (an io/fs path) from the root, following symlinks in
// every component and, if follow is set, in the last one. Absolute link
// targets start at the image root.
func (r *rawImage) resolve(op, name string, follow bool) (rawInode, error) {
	if !fs.ValidPath(name) {
		return rawInode{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	fail := func(err error) (rawInode, error) {
		return rawInode{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	var comps []string
	stack := []uint64{r.root}
	if name != "." {
		parent := path.Dir(name)
		if v, ok := r.dirs.Load(parent); ok && parent != "." {
			stack = []uint64{r.root, v.(uint64)} // ".." from here is wrong: disable it below
			comps = []string{path.Base(name)}
		} else {
			comps = strings.Split(name, "/")
		}
	}
	cached := len(stack) > 1
	hops := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if cached {
				// The cached start has no ancestors on the stack: redo
				// from the root.
				return r.resolveUncached(op, name, follow)
			}
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		dir, err := r.inode(stack[len(stack)-1])
		if err != nil {
			return fail(err)
		}
		if dir.mode&sIFMT != sIFDIR {
			return fail(syscall.ENOTDIR)
		}
		nid, ok, err := r.lookup(dir, c)
		if err != nil {
			return fail(err)
		}
		if !ok {
			return fail(syscall.ENOENT)
		}
		in, err := r.inode(nid)
		if err != nil {
			return fail(err)
		}
		if in.mode&sIFMT == sIFLNK && (len(comps) > 0 || follow) {
			if hops++; hops > maxSymlinkHops {
				return fail(syscall.ELOOP)
			}
			target, err := r.readlink(in)
			if err != nil {
				return fail(err)
			}
			if strings.HasPrefix(target, "/") {
				stack = stack[:1]
			}
			comps = append(strings.Split(target, "/"), comps...)
			continue
		}
		stack = append(stack, nid)
	}
	in, err := r.inode(stack[len(stack)-1])
	if err == nil && hops == 0 && in.mode&sIFMT == sIFDIR && name != "." {
		if r.dirCount.Add(1) > maxCachedDirs {
			r.dirs.Clear()
			r.dirCount.Store(0)
		}
		r.dirs.Store(name, in.nid)
	}
	return in, err
}

const maxCachedDirs = 1 << 16

func (r *rawImage) resolveUncached(op, name string, follow bool) (rawInode, error) {
	r2 := &rawImage{c: r.c, data: r.data, bs: r.bs, meta: r.meta, root: r.root, buildTime: r.buildTime, buildNs: r.buildNs}
	return r2.resolve(op, name, follow)
}

func unixToFileMode(m uint16) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & sIFMT {
	case sIFDIR:
		mode |= fs.ModeDir
	case sIFLNK:
		mode |= fs.ModeSymlink
	case sIFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case sIFBLK:
		mode |= fs.ModeDevice
	case sIFIFO:
		mode |= fs.ModeNamedPipe
	case sIFSOCK:
		mode |= fs.ModeSocket
	case sIFREG:
	default:
		mode |= fs.ModeIrregular
	}
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// direntType maps an EROFS dirent file type to io/fs type bits.
func direntType(t uint8) fs.FileMode {
	switch t {
	case 2:
		return fs.ModeDir
	case 3:
		return fs.ModeDevice | fs.ModeCharDevice
	case 4:
		return fs.ModeDevice
	case 5:
		return fs.ModeNamedPipe
	case 6:
		return fs.ModeSocket
	case 7:
		return fs.ModeSymlink
	}
	return 0
}

// rawInfo is the FileInfo of the fast path; xattrs are read through
// go-erofs on demand (rare, and only for inodes that have any).
type rawInfo struct {
	name string
	path string
	in   rawInode
	s    *imageFS
}

func (fi *rawInfo) Name() string { return fi.name }
func (fi *rawInfo) Size() int64 {
	if fi.in.mode&sIFMT == sIFCHR || fi.in.mode&sIFMT == sIFBLK {
		return 0
	}
	return fi.in.size
}
func (fi *rawInfo) Mode() fs.FileMode  { return unixToFileMode(fi.in.mode) }
func (fi *rawInfo) IsDir() bool        { return fi.in.mode&sIFMT == sIFDIR }
func (fi *rawInfo) ModTime() time.Time { return time.Unix(int64(fi.in.mtime), int64(fi.in.mtimeNs)) }
func (fi *rawInfo) Sys() any {
	mt := fi.ModTime()
	st := &vfs.Stat{Ino: fi.in.nid, Nlink: fi.in.nlink, Uid: fi.in.uid, Gid: fi.in.gid, Atime: mt, Ctime: mt, Blocks: (fi.Size() + 511) / 512}
	if m := fi.in.mode & sIFMT; m == sIFCHR || m == sIFBLK {
		st.Rdev = uint64(fi.in.iu)
	}
	return st
}

func (fi *rawInfo) GetAllXattr() map[string]string {
	if fi.in.xsize == 0 {
		return nil
	}
	efi, err := fi.s.fsys.(fs.ReadLinkFS).Lstat(fi.path)
	if err != nil {
		return nil
	}
	if st, ok := efi.Sys().(*erofs.Stat); ok {
		return st.Xattrs
	}
	return nil
}

func (fi *rawInfo) Xattr(name string) (string, bool) {
	v, ok := fi.GetAllXattr()[name]
	return v, ok
}

type rawDirEntry struct {
	name  string
	path  string
	nid   uint64
	ftype fs.FileMode
	s     *imageFS
}

func (d *rawDirEntry) Name() string      { return d.name }
func (d *rawDirEntry) IsDir() bool       { return d.ftype.IsDir() }
func (d *rawDirEntry) Type() fs.FileMode { return d.ftype }
func (d *rawDirEntry) Info() (fs.FileInfo, error) {
	in, err := d.s.raw.inode(d.nid)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	return &rawInfo{name: d.name, path: d.path, in: in, s: d.s}, nil
}

func (s *imageFS) rawReadDir(name string, in rawInode) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	err := s.raw.dirents(in, func(n []byte, nid uint64, t uint8) bool {
		if string(n) == "." || string(n) == ".." {
			return true
		}
		nm := string(n)
		out = append(out, &rawDirEntry{name: nm, path: path.Join(name, nm), nid: nid, ftype: direntType(t), s: s})
		return true
	})
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return out, nil
}

// rawDir is an open directory of the fast path.
type rawDir struct {
	info fs.FileInfo
	ents []fs.DirEntry
	pos  int
}

func (d *rawDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *rawDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: syscall.EISDIR}
}
func (d *rawDir) Close() error { return nil }

func (d *rawDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.pos:]
	if n <= 0 {
		d.pos = len(d.ents)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.pos += n
	return rest[:n], nil
}
