package image

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync/atomic"
	"syscall"
	"time"

	erofs "github.com/erofs/go-erofs"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/vfs"
)

// Image is an opened EROFS image file: mapped read-only into memory and
// read in-process with go-erofs. It is safe for concurrent use; every
// sandbox built from the same image shares one Image.
type Image struct {
	Manifest Manifest
	Path     string // the image file on this host (what the kernel mounts)

	data  []byte
	r     *countingReader
	fsys  fs.FS
	close func() error
}

// countingReader is an io.ReaderAt over the mapping that counts what
// go-erofs reads, so "opening does not read the whole image" is measured.
type countingReader struct {
	data  []byte
	calls atomic.Int64
	bytes atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.calls.Add(1)
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(c.data)) {
		return 0, io.EOF
	}
	n := copy(p, c.data[off:])
	c.bytes.Add(int64(n))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// OpenFile maps the EROFS image at path and opens it. Only the superblock
// and what is later looked up are touched; see ReadStats.
func OpenFile(path string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open image: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot open image: %w", err)
	}
	if fi.Size() < 4096 {
		return nil, fmt.Errorf("image %s: too small to be EROFS (%d bytes)", path, fi.Size())
	}
	// mmap rather than *os.File: go-erofs issues one ReadAt per block, and
	// a syscall per block costs ~1.5x (issue 5).
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("cannot map image %s: %w", path, err)
	}
	im, err := openBytes(data)
	if err != nil {
		_ = unix.Munmap(data)
		return nil, fmt.Errorf("image %s: %w", path, err)
	}
	im.Path = path
	im.close = func() error { return unix.Munmap(data) }
	return im, nil
}

func openBytes(data []byte) (*Image, error) {
	r := &countingReader{data: data}
	fsys, err := erofs.Open(r)
	if err != nil {
		return nil, fmt.Errorf("not a readable EROFS image: %w", err)
	}
	raw := newRawImage(data)
	if raw != nil {
		raw.c = r
	}
	return &Image{data: data, r: r, fsys: &imageFS{fsys: fsys, r: r, raw: raw}}, nil
}

// Close unmaps the image. No file of its FS may be used afterwards.
func (im *Image) Close() error {
	if im.close == nil {
		return nil
	}
	c := im.close
	im.close = nil
	return c()
}

// FS is the image's root filesystem for the vfs: FileInfo.Sys() is
// *vfs.Stat, symlinks are readable through fs.ReadLinkFS.
func (im *Image) FS() fs.FS { return im.fsys }

// ReadStats reports how many reads (go-erofs ReadAt calls, and inode,
// directory block and file data accesses of the fast path) and bytes were
// made on the image since it was opened.
func (im *Image) ReadStats() (calls, bytes int64) {
	return im.r.calls.Load(), im.r.bytes.Load()
}

// imageFS adapts go-erofs's FS to the contract of vfs.Options.Base.
type imageFS struct {
	fsys fs.FS
	r    *countingReader
	raw  *rawImage // nil: everything through go-erofs
}

// fast reports whether the fast path answered (err may still be set,
// e.g. ENOENT); false means fall back to go-erofs.
func fast(err error) bool { return !errors.Is(err, errUnsupported) }

func baseName(name string) string {
	if name == "." {
		return "."
	}
	return path.Base(name)
}

var (
	_ fs.ReadLinkFS = (*imageFS)(nil)
	_ fs.ReadDirFS  = (*imageFS)(nil)
	_ fs.StatFS     = (*imageFS)(nil)
)

func (s *imageFS) Open(name string) (fs.File, error) {
	if s.raw != nil {
		if f, err := s.rawOpen(name); fast(err) {
			return f, err
		}
	}
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if rd, ok := f.(fs.ReadDirFile); ok {
		return &imageDir{ReadDirFile: rd}, nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if rf := s.rangeFile(fi); rf != nil {
		f.Close()
		return rf, nil
	}
	return &imageFile{File: f}, nil
}

type dataRanger interface{ DataRange() []erofs.DataRange }

// rangeFile serves a regular file straight from the mapping when its data
// layout is known (every uncompressed layout go-erofs writes): reads are a
// copy, and the file is an io.ReaderAt and io.Seeker, which the vfs uses
// for reads at an offset. go-erofs's own file only has Read.
func (s *imageFS) rangeFile(fi fs.FileInfo) *rangeFile {
	if !fi.Mode().IsRegular() {
		return nil
	}
	dr, ok := fi.(dataRanger)
	if !ok {
		return nil
	}
	ranges := dr.DataRange()
	var total int64
	for _, r := range ranges {
		if r.Size < 0 || (r.Offset >= 0 && (r.Device != 0 || r.Offset+r.Size > int64(len(s.r.data)) || r.Offset+r.Size < r.Offset)) || (r.Offset < 0 && r.Offset != -1) {
			return nil
		}
		total += r.Size
	}
	if total != fi.Size() {
		return nil
	}
	return &rangeFile{info: wrapInfo(fi), ranges: ranges, r: s.r, size: total}
}

type rangeFile struct {
	info   fs.FileInfo
	ranges []erofs.DataRange
	r      *countingReader
	size   int64
	off    int64
}

func (f *rangeFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *rangeFile) Close() error               { return nil }

func (f *rangeFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *rangeFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= f.size {
		return 0, io.EOF
	}
	f.r.calls.Add(1)
	n := 0
	pos := int64(0) // logical start of the current range
	for _, r := range f.ranges {
		if len(p) == 0 {
			break
		}
		end := pos + r.Size
		if off < end {
			in := off - pos
			want := min(int64(len(p)), r.Size-in)
			if r.Offset < 0 {
				clear(p[:want])
			} else {
				copy(p[:want], f.r.data[r.Offset+in:r.Offset+in+want])
			}
			p = p[want:]
			n += int(want)
			off += want
		}
		pos = end
	}
	f.r.bytes.Add(int64(n))
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}

func (f *rangeFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.size
	default:
		return 0, errors.New("bad whence")
	}
	if offset < 0 {
		return 0, errors.New("negative offset")
	}
	f.off = offset
	return offset, nil
}

func (s *imageFS) rawOpen(name string) (fs.File, error) {
	in, err := s.raw.resolve("open", name, true)
	if err != nil {
		return nil, err
	}
	info := &rawInfo{name: baseName(name), path: name, in: in, s: s}
	if in.mode&sIFMT == sIFDIR {
		ents, err := s.rawReadDir(name, in)
		if err != nil {
			return nil, err
		}
		return &rawDir{info: info, ents: ents}, nil
	}
	sp, err := s.raw.spans(in)
	if err != nil {
		return nil, err
	}
	rf := &rangeFile{info: info, r: s.r}
	if in.mode&sIFMT == sIFREG {
		rf.size = in.size
		for _, x := range sp {
			rf.ranges = append(rf.ranges, erofs.DataRange{Offset: x.off, Size: x.n})
		}
	}
	return rf, nil
}

func (s *imageFS) rawStat(op, name string, follow bool) (fs.FileInfo, error) {
	in, err := s.raw.resolve(op, name, follow)
	if err != nil {
		return nil, err
	}
	return &rawInfo{name: baseName(name), path: name, in: in, s: s}, nil
}

func (s *imageFS) Stat(name string) (fs.FileInfo, error) {
	if s.raw != nil {
		if fi, err := s.rawStat("stat", name, true); fast(err) {
			return fi, err
		}
	}
	fi, err := fs.Stat(s.fsys, name)
	if err != nil {
		return nil, err
	}
	return wrapInfo(fi), nil
}

func (s *imageFS) Lstat(name string) (fs.FileInfo, error) {
	if s.raw != nil {
		if fi, err := s.rawStat("lstat", name, false); fast(err) {
			return fi, err
		}
	}
	fi, err := s.fsys.(fs.ReadLinkFS).Lstat(name)
	if err != nil {
		return nil, err
	}
	return wrapInfo(fi), nil
}

func (s *imageFS) ReadLink(name string) (string, error) {
	if s.raw != nil {
		in, err := s.raw.resolve("readlink", name, false)
		if err == nil && in.mode&sIFMT != sIFLNK {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
		}
		if err == nil {
			var t string
			if t, err = s.raw.readlink(in); err == nil {
				return t, nil
			}
		}
		if fast(err) {
			return "", err
		}
	}
	return s.fsys.(fs.ReadLinkFS).ReadLink(name)
}

func (s *imageFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if s.raw != nil {
		in, err := s.raw.resolve("readdir", name, true)
		if err == nil && in.mode&sIFMT != sIFDIR {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
		}
		if err == nil {
			var ents []fs.DirEntry
			if ents, err = s.rawReadDir(name, in); err == nil {
				return ents, nil
			}
		}
		if fast(err) {
			return nil, err
		}
	}
	ents, err := fs.ReadDir(s.fsys, name)
	if err != nil {
		return nil, err
	}
	for i, e := range ents {
		ents[i] = dirEntry{e}
	}
	return ents, nil
}

func (s *imageFS) ReadFile(name string) ([]byte, error) {
	f, err := s.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if rf, ok := f.(*rangeFile); ok {
		b := make([]byte, rf.size)
		_, err := io.ReadFull(rf, b)
		return b, err
	}
	return io.ReadAll(f)
}

type imageFile struct{ fs.File }

func (f *imageFile) Stat() (fs.FileInfo, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return nil, err
	}
	return wrapInfo(fi), nil
}

type imageDir struct{ fs.ReadDirFile }

func (d *imageDir) Stat() (fs.FileInfo, error) {
	fi, err := d.ReadDirFile.Stat()
	if err != nil {
		return nil, err
	}
	return wrapInfo(fi), nil
}

func (d *imageDir) ReadDir(n int) ([]fs.DirEntry, error) {
	ents, err := d.ReadDirFile.ReadDir(n)
	for i, e := range ents {
		ents[i] = dirEntry{e}
	}
	return ents, err
}

type dirEntry struct{ fs.DirEntry }

func (e dirEntry) Info() (fs.FileInfo, error) {
	fi, err := e.DirEntry.Info()
	if err != nil {
		return nil, err
	}
	return wrapInfo(fi), nil
}

// fileInfo replaces go-erofs's Sys() with *vfs.Stat and keeps its xattrs.
type fileInfo struct {
	fs.FileInfo
	mode   fs.FileMode
	st     *vfs.Stat
	xattrs map[string]string
}

func wrapInfo(fi fs.FileInfo) fs.FileInfo {
	es, ok := fi.Sys().(*erofs.Stat)
	if !ok {
		return fi
	}
	mt := fi.ModTime()
	return &fileInfo{
		FileInfo: fi,
		mode:     es.Mode,
		xattrs:   es.Xattrs,
		st: &vfs.Stat{
			Ino:    uint64(es.Ino),
			Nlink:  uint32(es.Nlink),
			Uid:    es.UID,
			Gid:    es.GID,
			Rdev:   uint64(es.Rdev),
			Atime:  mt,
			Ctime:  mt,
			Blocks: (fi.Size() + 511) / 512,
		},
	}
}

// Mode comes from go-erofs's Stat: its FileInfo.Mode() (v0.3.1) keeps raw
// S_IF* bits and drops setuid/setgid/sticky.
func (fi *fileInfo) Mode() fs.FileMode                { return fi.mode }
func (fi *fileInfo) IsDir() bool                      { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any                         { return fi.st }
func (fi *fileInfo) GetAllXattr() map[string]string   { return fi.xattrs }
func (fi *fileInfo) ModTime() time.Time               { return fi.FileInfo.ModTime() }
func (fi *fileInfo) Xattr(name string) (string, bool) { v, ok := fi.xattrs[name]; return v, ok }
