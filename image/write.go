package image

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	erofs "github.com/erofs/go-erofs"
)

// Progress receives build progress: entries and regular-file bytes written
// so far out of the totals. It is called from the building goroutine.
type Progress func(files, totalFiles int, bytes, totalBytes int64)

// hardLink is a name that must share the inode of primary in the image.
type hardLink struct{ name, primary string }

// emitFS presents a tree to erofs.Writer.CopyFrom as an fs.FS whose
// FileInfo.Sys() is *erofs.Stat, so owners, mtimes, rdev, xattrs and nlink
// reach the image. Hard links: CopyFrom gives every name its own inode, so
// secondary names are written as empty placeholders and their dirents are
// pointed at the primary inode after the writer is done (patchLinks).
type emitFS struct {
	ctx       context.Context
	nodes     map[string]*node
	secondary map[string]bool
	progress  Progress
	files     int
	total     int
	bytes     int64
	totalB    int64
	lastTick  time.Time
}

func newEmitFS(ctx context.Context, t *tree, progress Progress) (*emitFS, []hardLink, error) {
	e := &emitFS{ctx: ctx, nodes: map[string]*node{}, secondary: map[string]bool{}, progress: progress, totalB: t.bytes}
	primary := map[*inode]string{}
	var links []hardLink
	err := t.walk(func(p string, n *node) error {
		fp := p
		if fp == "" {
			fp = "."
		}
		e.nodes[fp] = n
		e.total++
		if n.ino.names > 1 && !n.ino.mode.IsDir() {
			if first, ok := primary[n.ino]; ok {
				e.secondary[fp] = true
				links = append(links, hardLink{name: fp, primary: first})
			} else {
				primary[n.ino] = fp
			}
		}
		return nil
	})
	return e, links, err
}

func (e *emitFS) node(op, name string) (*node, error) {
	n, ok := e.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

func (e *emitFS) info(name string, n *node) *emitInfo {
	ino := n.ino
	st := &erofs.Stat{
		Mode:    ino.mode,
		UID:     ino.uid,
		GID:     ino.gid,
		Mtime:   uint64(max(ino.mtime.Unix(), 0)),
		MtimeNs: uint32(ino.mtime.Nanosecond()),
		Rdev:    ino.rdev,
		Xattrs:  ino.xattrs,
		Nlink:   ino.names,
	}
	size := ino.size
	if ino.mode.IsDir() {
		subdirs := 0
		for _, c := range n.children {
			if c.ino.mode.IsDir() {
				subdirs++
			}
		}
		st.Nlink = 2 + subdirs
		size = 0
	} else if e.secondary[name] {
		st.Nlink = 1
		size = 0
	}
	if !ino.mode.IsRegular() {
		size = 0
	}
	if ino.mode&fs.ModeSymlink != 0 {
		size = int64(len(ino.target))
	}
	st.Size = size
	return &emitInfo{name: path.Base(name), st: st}
}

func (e *emitFS) Open(name string) (fs.File, error) {
	n, err := e.node("open", name)
	if err != nil {
		return nil, err
	}
	f := &emitFile{e: e, path: name, info: e.info(name, n)}
	if n.ino.mode.IsRegular() && !e.secondary[name] && n.ino.size > 0 {
		f.open = n.ino.data
		f.left = n.ino.size
	}
	return f, nil
}

func (e *emitFS) tick() {
	e.files++
	if e.progress != nil && time.Since(e.lastTick) > 200*time.Millisecond {
		e.lastTick = time.Now()
		e.progress(e.files, e.total, e.bytes, e.totalB)
	}
}

func (e *emitFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := e.node("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.ino.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, 0, len(n.children))
	for _, c := range sortedNames(n) {
		p := path.Join(name, c)
		if name == "." {
			p = c
		}
		out = append(out, fs.FileInfoToDirEntry(e.info(p, n.children[c])))
		e.tick()
	}
	return out, nil
}

func (e *emitFS) Stat(name string) (fs.FileInfo, error) {
	n, err := e.node("stat", name)
	if err != nil {
		return nil, err
	}
	return e.info(name, n), nil
}

// Lstat is Stat: the tree never follows links. With ReadLink it makes
// emitFS an fs.ReadLinkFS, so a built image can be read back as a source.
func (e *emitFS) Lstat(name string) (fs.FileInfo, error) { return e.Stat(name) }

func (e *emitFS) ReadLink(name string) (string, error) {
	n, err := e.node("readlink", name)
	if err != nil {
		return "", err
	}
	return n.ino.target, nil
}

type emitInfo struct {
	name string
	st   *erofs.Stat
}

func (i *emitInfo) Name() string       { return i.name }
func (i *emitInfo) Size() int64        { return i.st.Size }
func (i *emitInfo) Mode() fs.FileMode  { return i.st.Mode }
func (i *emitInfo) ModTime() time.Time { return time.Unix(int64(i.st.Mtime), int64(i.st.MtimeNs)) }
func (i *emitInfo) IsDir() bool        { return i.st.Mode.IsDir() }
func (i *emitInfo) Sys() any           { return i.st }

// emitFile opens its source only when the writer first reads it and closes
// it at the end, so a build of 100k files never holds 100k descriptors
// (CopyFrom keeps every opened file until Close).
type emitFile struct {
	e    *emitFS
	path string
	info *emitInfo
	open func() (io.ReadCloser, error)
	rc   io.ReadCloser
	left int64
}

func (f *emitFile) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *emitFile) Read(p []byte) (int, error) {
	if f.left <= 0 {
		f.closeSrc()
		return 0, io.EOF
	}
	if err := f.e.ctx.Err(); err != nil {
		return 0, err
	}
	if f.rc == nil {
		rc, err := f.open()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f.path, err)
		}
		f.rc = rc
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.rc.Read(p)
	f.left -= int64(n)
	f.e.bytes += int64(n)
	if err == io.EOF {
		if f.left > 0 {
			f.closeSrc()
			return n, fmt.Errorf("%s: source shrank during build: %w", f.path, io.ErrUnexpectedEOF)
		}
		err = nil
	}
	if f.left == 0 {
		f.closeSrc()
	}
	return n, err
}

func (f *emitFile) closeSrc() {
	if f.rc != nil {
		_ = f.rc.Close()
		f.rc = nil
	}
}

func (f *emitFile) Close() error { f.closeSrc(); return nil }

// written describes an image file produced by writeTree.
type written struct {
	Digest string // hex sha256 of the image file
	Size   int64
	Files  int
}

// writeTree writes t as an uncompressed EROFS image into out (truncated
// first). mtime pins the superblock build time so equal trees give equal
// bytes.
func writeTree(ctx context.Context, t *tree, out *os.File, buildTime time.Time, tmpDir string, progress Progress) (written, error) {
	efs, links, err := newEmitFS(ctx, t, progress)
	if err != nil {
		return written{}, err
	}
	if err := out.Truncate(0); err != nil {
		return written{}, fmt.Errorf("cannot truncate image file: %w", err)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return written{}, err
	}
	w := erofs.Create(out, erofs.WithBuildTime(uint64(max(buildTime.Unix(), 0)), 0), erofs.WithTempDir(tmpDir))
	if err := w.CopyFrom(efs); err != nil {
		return written{}, fmt.Errorf("cannot assemble image: %w", err)
	}
	if err := w.Close(); err != nil {
		return written{}, fmt.Errorf("cannot write image: %w", err)
	}
	if err := patchLinks(out, links); err != nil {
		return written{}, fmt.Errorf("cannot write hard links: %w", err)
	}
	if progress != nil {
		progress(efs.total, efs.total, efs.bytes, efs.totalB)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return written{}, err
	}
	h := sha256.New()
	size, err := io.Copy(h, out)
	if err != nil {
		return written{}, fmt.Errorf("cannot hash image: %w", err)
	}
	return written{Digest: hex.EncodeToString(h.Sum(nil)), Size: size, Files: efs.total}, nil
}

// patchLinks points the dirent of every secondary hard-link name at the
// primary's inode (EROFS nid), making the names one inode as in the source.
func patchLinks(f *os.File, links []hardLink) error {
	if len(links) == 0 {
		return nil
	}
	img, err := erofs.Open(f)
	if err != nil {
		return err
	}
	lfs := img.(fs.ReadLinkFS)
	nid := func(p string) (uint64, error) {
		fi, err := lfs.Lstat(p)
		if err != nil {
			return 0, err
		}
		st, ok := fi.Sys().(*erofs.Stat)
		if !ok {
			return 0, fmt.Errorf("%s: no inode number", p)
		}
		return uint64(st.Ino), nil
	}
	var sb [128]byte
	if _, err := f.ReadAt(sb[:], 1024); err != nil {
		return err
	}
	d := dirPatcher{f: f, blkBits: sb[12], metaBlk: binary.LittleEndian.Uint32(sb[40:44])}
	// Group by parent so each directory is scanned once.
	sort.Slice(links, func(i, j int) bool { return links[i].name < links[j].name })
	for _, l := range links {
		target, err := nid(l.primary)
		if err != nil {
			return err
		}
		dir := path.Dir(l.name)
		dnid, err := nid(dir)
		if err != nil {
			return err
		}
		if err := d.setNid(dnid, path.Base(l.name), target); err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
	}
	return nil
}

type dirPatcher struct {
	f       *os.File
	blkBits uint8
	metaBlk uint32
}

// setNid rewrites the nid of the dirent called name in directory dnid.
// Layout per the EROFS on-disk format: inode at meta_blkaddr*bs + nid*32;
// directory data in blocks of 12-byte dirents {nid, nameoff, type, 0}
// followed by names; FLAT_INLINE keeps the last partial block after the
// inode and its inline xattrs.
func (d *dirPatcher) setNid(dnid uint64, name string, nid uint64) error {
	bs := int64(1) << d.blkBits
	ioff := int64(d.metaBlk)*bs + int64(dnid)*32
	var in [64]byte
	if _, err := d.f.ReadAt(in[:], ioff); err != nil {
		return err
	}
	format := binary.LittleEndian.Uint16(in[0:2])
	extended := format&1 == 1
	layout := (format >> 1) & 7
	icount := binary.LittleEndian.Uint16(in[2:4])
	var size int64
	isize := int64(32)
	if extended {
		size = int64(binary.LittleEndian.Uint64(in[8:16]))
		isize = 64
	} else {
		size = int64(binary.LittleEndian.Uint32(in[8:12]))
	}
	raw := int64(binary.LittleEndian.Uint32(in[16:20]))
	xsize := int64(0)
	if icount > 0 {
		xsize = 12 + int64(icount-1)*4
	}
	type span struct{ off, n int64 }
	var spans []span
	switch layout {
	case 0: // flat plain
		for o := int64(0); o < size; o += bs {
			spans = append(spans, span{raw*bs + o, min(bs, size-o)})
		}
	case 2: // flat inline
		full := size / bs * bs
		for o := int64(0); o < full; o += bs {
			spans = append(spans, span{raw*bs + o, bs})
		}
		if size > full {
			spans = append(spans, span{ioff + isize + xsize, size - full})
		}
	default:
		return fmt.Errorf("unexpected directory layout %d", layout)
	}
	buf := make([]byte, bs)
	for _, s := range spans {
		b := buf[:s.n]
		if _, err := d.f.ReadAt(b, s.off); err != nil {
			return err
		}
		if len(b) < 12 {
			continue
		}
		count := int(binary.LittleEndian.Uint16(b[8:10])) / 12
		for i := 0; i < count; i++ {
			start := int(binary.LittleEndian.Uint16(b[i*12+8:]))
			end := len(b)
			if i+1 < count {
				end = int(binary.LittleEndian.Uint16(b[(i+1)*12+8:]))
			}
			if start > end || end > len(b) {
				return errors.New("corrupt directory block")
			}
			if strings.TrimRight(string(b[start:end]), "\x00") == name {
				var nb [8]byte
				binary.LittleEndian.PutUint64(nb[:], nid)
				_, err := d.f.WriteAt(nb[:], s.off+int64(i*12))
				return err
			}
		}
	}
	return fmt.Errorf("dirent %q not found", name)
}
