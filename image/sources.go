package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	erofs "github.com/erofs/go-erofs"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/vfs"
)

// encodeDev packs major/minor the way EROFS (and Linux new_encode_dev)
// stores a device number in 32 bits.
func encodeDev(major, minor uint32) uint32 {
	return (minor & 0xff) | (major&0xfff)<<8 | (minor&^0xff)<<12
}

// xattrPrefixes are the namespaces EROFS can encode.
var xattrPrefixes = []string{"user.", "trusted.", "security.", "system.posix_acl_access", "system.posix_acl_default"}

// keepXattr reports whether an xattr is in a namespace an image keeps;
// others (system.*, security.capability is kept) are dropped silently.
// Sizes are checked by tree.put.
func keepXattr(name string, _ []byte) bool {
	for _, p := range xattrPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// addHostDir adds the host directory root (its own metadata becomes the
// image root). Hard links inside root stay hard links.
func (t *tree) addHostDir(ctx context.Context, root string) error {
	// WalkDir does not descend into a root that is a symlink.
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("cannot read source directory: %w", err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("cannot read source directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", root)
	}
	seen := map[[2]uint64]string{}
	return filepath.WalkDir(root, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, full)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no stat data", full)
		}
		if !info.IsDir() && st.Nlink > 1 {
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if first, ok := seen[key]; ok {
				if err := t.link(rel, first); err != nil {
					return fmt.Errorf("%s: %w", full, err)
				}
				return nil
			}
			seen[key] = rel
		}
		ino := &inode{
			mode:   info.Mode(),
			uid:    st.Uid,
			gid:    st.Gid,
			mtime:  time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
			xattrs: hostXattrs(full),
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if ino.target, err = os.Readlink(full); err != nil {
				return err
			}
		case info.Mode()&fs.ModeDevice != 0:
			ino.rdev = encodeDev(unix.Major(st.Rdev), unix.Minor(st.Rdev))
		case info.Mode().IsRegular():
			ino.size = info.Size()
			ino.data = func() (io.ReadCloser, error) { return os.Open(full) }
		}
		if err := t.put(rel, ino); err != nil {
			return fmt.Errorf("%s: %w", full, err)
		}
		return nil
	})
}

func hostXattrs(p string) map[string]string {
	sz, err := unix.Llistxattr(p, nil)
	if err != nil || sz <= 0 {
		return nil
	}
	buf := make([]byte, sz)
	sz, err = unix.Llistxattr(p, buf)
	if err != nil {
		return nil
	}
	var out map[string]string
	for _, name := range strings.Split(string(buf[:sz]), "\x00") {
		if name == "" {
			continue
		}
		vsz, err := unix.Lgetxattr(p, name, nil)
		if err != nil || vsz < 0 {
			continue
		}
		val := make([]byte, vsz)
		vsz, err = unix.Lgetxattr(p, name, val)
		if err != nil || !keepXattr(name, val[:vsz]) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = string(val[:vsz])
	}
	return out
}

// spool holds the file data of tar streams, which can only be read once,
// until the image is written. It lives in the cache directory and is
// unlinked as soon as it is created.
type spool struct {
	f   *os.File
	off int64
}

func newSpool(dir string) (*spool, error) {
	f, err := os.CreateTemp(dir, "spool-*")
	if err != nil {
		return nil, fmt.Errorf("cannot create spool: %w", err)
	}
	_ = os.Remove(f.Name())
	return &spool{f: f}, nil
}

func (s *spool) Close() error { return s.f.Close() }

func (s *spool) add(r io.Reader, size int64) (func() (io.ReadCloser, error), error) {
	off := s.off
	n, err := io.Copy(io.NewOffsetWriter(s.f, off), io.LimitReader(r, size))
	s.off += n
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, io.ErrUnexpectedEOF
	}
	f := s.f
	return func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(f, off, size)), nil }, nil
}

// maybeGunzip returns r uncompressed when it starts with the gzip magic.
func maybeGunzip(r io.Reader) (io.Reader, string, func(), error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, "", nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, "tar.gz", func() { _ = zr.Close() }, nil
	}
	return br, "tar", func() {}, nil
}

// addTar adds the entries of a tar stream (plain or gzip). With layer set
// the stream is an OCI layer: ".wh.NAME" deletes NAME from the layers
// below and ".wh..wh..opq" empties its directory of them.
func (t *tree) addTar(ctx context.Context, r io.Reader, sp *spool, layer bool) error {
	ur, kind, done, err := maybeGunzip(r)
	if err != nil {
		return err
	}
	defer done()
	tr := tar.NewReader(ur)
	last := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if last != "" {
				return fmt.Errorf("%s: after entry %q: %w", kind, last, err)
			}
			return fmt.Errorf("%s: %w", kind, err)
		}
		last = hdr.Name
		if err := t.addTarEntry(tr, hdr, sp, layer); err != nil {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
	}
}

func (t *tree) addTarEntry(tr *tar.Reader, hdr *tar.Header, sp *spool, layer bool) error {
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader:
		return nil
	}
	p, err := entryPath(hdr.Name)
	if err != nil {
		return err
	}
	base := path.Base(p)
	if layer && strings.HasPrefix(base, ".wh.") {
		if base == ".wh..wh..opq" {
			t.opaque(parentOf(p))
			return nil
		}
		victim := strings.TrimPrefix(base, ".wh.")
		if victim == "" || victim == "." || victim == ".." {
			return errors.New("whiteout of an invalid name")
		}
		t.remove(path.Join(parentOf(p), victim))
		return nil
	}
	mode := fs.FileMode(hdr.Mode & 0o777)
	if hdr.Mode&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if hdr.Mode&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if hdr.Mode&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	if hdr.Uid < 0 || hdr.Gid < 0 || int64(hdr.Uid) > 0xffffffff || int64(hdr.Gid) > 0xffffffff {
		return fmt.Errorf("owner %d:%d out of range", hdr.Uid, hdr.Gid)
	}
	ino := &inode{uid: uint32(hdr.Uid), gid: uint32(hdr.Gid), mtime: hdr.ModTime}
	for k, v := range hdr.PAXRecords {
		if name, ok := strings.CutPrefix(k, "SCHILY.xattr."); ok && keepXattr(name, []byte(v)) {
			if ino.xattrs == nil {
				ino.xattrs = map[string]string{}
			}
			ino.xattrs[name] = v
		}
	}
	switch hdr.Typeflag {
	case tar.TypeReg, tar.TypeRegA:
		if hdr.Size < 0 {
			return fmt.Errorf("negative size %d", hdr.Size)
		}
		if p == "" {
			return errors.New("regular file at the root")
		}
		ino.mode = mode
		ino.size = hdr.Size
		// put first: it checks the size against the limits before any
		// byte is spooled.
		if err := t.put(p, ino); err != nil {
			return err
		}
		if hdr.Size > 0 {
			data, err := sp.add(tr, hdr.Size)
			if err != nil {
				return err
			}
			ino.data = data
		}
		return nil
	case tar.TypeDir:
		ino.mode = mode | fs.ModeDir
	case tar.TypeSymlink:
		ino.mode = mode | fs.ModeSymlink
		if hdr.Linkname == "" || len(hdr.Linkname) > 4095 {
			return errors.New("bad symlink target")
		}
		ino.target = hdr.Linkname
	case tar.TypeLink:
		target, err := entryPath(hdr.Linkname)
		if err != nil || target == "" {
			return fmt.Errorf("hard link to %q outside the archive", hdr.Linkname)
		}
		if err := t.link(p, target); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("hard link to %q, which is not in the archive", hdr.Linkname)
			}
			return err
		}
		return nil
	case tar.TypeChar, tar.TypeBlock:
		ino.mode = mode | fs.ModeDevice
		if hdr.Typeflag == tar.TypeChar {
			ino.mode |= fs.ModeCharDevice
		}
		if hdr.Devmajor < 0 || hdr.Devminor < 0 || hdr.Devmajor > 0xfff || hdr.Devminor > 0xfffff {
			return fmt.Errorf("device number %d:%d out of range", hdr.Devmajor, hdr.Devminor)
		}
		ino.rdev = encodeDev(uint32(hdr.Devmajor), uint32(hdr.Devminor))
	case tar.TypeFifo:
		ino.mode = mode | fs.ModeNamedPipe
	default:
		return fmt.Errorf("unsupported tar entry type %q", hdr.Typeflag)
	}
	return t.put(p, ino)
}

// xattrInfo is implemented by file infos that carry extended attributes
// (this package's image FS and go-erofs's own).
type xattrInfo interface{ GetAllXattr() map[string]string }

// addFS adds every entry of fsys (an opened image, or a sandbox's
// filesystem after RUN) under dest ("" is the root). Owners and inode
// numbers come from Sys() when it is *vfs.Stat or *erofs.Stat.
func (t *tree) addFS(ctx context.Context, fsys fs.FS, dest string) error {
	seen := map[uint64]string{}
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel := p
		if rel == "." {
			rel = ""
		}
		rel = path.Join(dest, rel)
		var ino inode
		ino.mode = info.Mode()
		ino.mtime = info.ModTime()
		var nlink uint64
		var inum uint64
		switch st := info.Sys().(type) {
		case *vfs.Stat:
			ino.uid, ino.gid, nlink, inum = st.Uid, st.Gid, uint64(st.Nlink), st.Ino
			ino.rdev = uint32(st.Rdev)
		case *erofs.Stat:
			ino.uid, ino.gid, nlink, inum = st.UID, st.GID, uint64(st.Nlink), uint64(st.Ino)
			ino.rdev = st.Rdev
		}
		if xi, ok := info.(xattrInfo); ok {
			ino.xattrs = xi.GetAllXattr()
		}
		if !info.IsDir() && nlink > 1 && inum != 0 {
			if first, ok := seen[inum]; ok {
				return t.link(rel, first)
			}
			seen[inum] = rel
		}
		switch {
		case ino.mode&fs.ModeSymlink != 0:
			if ino.target, err = fs.ReadLink(fsys, p); err != nil {
				return err
			}
		case ino.mode.IsRegular():
			ino.size = info.Size()
			ino.data = func() (io.ReadCloser, error) { return fsys.Open(p) }
		}
		if err := t.put(rel, &ino); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return nil
	})
}
