package git

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"

	"github.com/warren-sandbox/warren/vfs"
)

// billyFS is a go-billy filesystem over the sandbox vfs, rooted at root.
// Names are taken relative to root and cannot climb above it.
type billyFS struct {
	fs   *vfs.FS
	root string
}

var (
	_ billy.Filesystem = (*billyFS)(nil)
	_ billy.Change     = (*billyFS)(nil)
)

func newBilly(fsys *vfs.FS, root string) *billyFS {
	return &billyFS{fs: fsys, root: path.Clean("/" + root)}
}

// abs maps a billy name to a sandbox path under root.
func (b *billyFS) abs(name string) string {
	return path.Join(b.root, path.Clean("/"+name))
}

func (b *billyFS) Create(name string) (billy.File, error) {
	return b.OpenFile(name, vfs.O_RDWR|vfs.O_CREATE|vfs.O_TRUNC, 0o666)
}

func (b *billyFS) Open(name string) (billy.File, error) {
	return b.OpenFile(name, vfs.O_RDONLY, 0)
}

func (b *billyFS) OpenFile(name string, flag int, perm fs.FileMode) (billy.File, error) {
	abs := b.abs(name)
	if flag&vfs.O_CREATE != 0 {
		if err := b.fs.MkdirAll(path.Dir(abs), 0o755); err != nil {
			return nil, err
		}
	}
	f, err := b.fs.OpenFile(abs, flag, perm)
	if err != nil {
		return nil, err
	}
	return &billyFile{File: f, name: name}, nil
}

func (b *billyFS) Stat(name string) (fs.FileInfo, error)  { return b.fs.Stat(b.abs(name)) }
func (b *billyFS) Lstat(name string) (fs.FileInfo, error) { return b.fs.Lstat(b.abs(name)) }

func (b *billyFS) Rename(from, to string) error {
	dst := b.abs(to)
	if err := b.fs.MkdirAll(path.Dir(dst), 0o755); err != nil {
		return err
	}
	return b.fs.Rename(b.abs(from), dst)
}

func (b *billyFS) Remove(name string) error { return b.fs.Remove(b.abs(name)) }

func (b *billyFS) Join(elem ...string) string { return path.Join(elem...) }

func (b *billyFS) TempFile(dir, prefix string) (billy.File, error) {
	if err := b.fs.MkdirAll(b.abs(dir), 0o755); err != nil {
		return nil, err
	}
	for i := 0; i < 100; i++ {
		name := path.Join(dir, fmt.Sprintf("%s%d", prefix, rand.Uint32()))
		f, err := b.OpenFile(name, vfs.O_RDWR|vfs.O_CREATE|vfs.O_EXCL, 0o600)
		if err == nil {
			return f, nil
		}
		if !strings.Contains(err.Error(), "exists") {
			return nil, err
		}
	}
	return nil, fmt.Errorf("tempfile %s/%s: too many collisions", dir, prefix)
}

func (b *billyFS) ReadDir(name string) ([]fs.FileInfo, error) {
	ents, err := b.fs.ReadDir(b.abs(name))
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, fi)
	}
	return out, nil
}

func (b *billyFS) MkdirAll(name string, perm fs.FileMode) error {
	return b.fs.MkdirAll(b.abs(name), perm)
}

func (b *billyFS) Symlink(target, link string) error {
	abs := b.abs(link)
	if err := b.fs.MkdirAll(path.Dir(abs), 0o755); err != nil {
		return err
	}
	return b.fs.Symlink(target, abs)
}

func (b *billyFS) Readlink(name string) (string, error) { return b.fs.Readlink(b.abs(name)) }

func (b *billyFS) Chroot(p string) (billy.Filesystem, error) {
	return &billyFS{fs: b.fs, root: b.abs(p)}, nil
}

func (b *billyFS) Root() string { return b.root }

func (b *billyFS) Chmod(name string, mode fs.FileMode) error { return b.fs.Chmod(b.abs(name), mode) }
func (b *billyFS) Lchown(name string, uid, gid int) error {
	return b.fs.Lchown(b.abs(name), uid, gid)
}
func (b *billyFS) Chown(name string, uid, gid int) error { return b.fs.Chown(b.abs(name), uid, gid) }
func (b *billyFS) Chtimes(name string, atime, mtime time.Time) error {
	return b.fs.Chtimes(b.abs(name), atime, mtime)
}

// billyFile is a vfs handle with billy's extra methods. Locks are no-ops:
// one sandbox's git commands run under the shell, and the vfs serialises
// writers itself.
type billyFile struct {
	*vfs.File
	name string
}

func (f *billyFile) Name() string  { return f.name }
func (f *billyFile) Lock() error   { return nil }
func (f *billyFile) Unlock() error { return nil }
