package sandbox

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/vfs"
)

// checkPath accepts absolute sandbox paths without "." or ".." segments,
// so what the caller names is what it gets.
func checkPath(p string) error {
	switch {
	case p == "":
		return api.Errorf(errdefs.ErrInvalidArgument, "path is empty")
	case len(p) > 4096:
		return api.Errorf(api.ErrTooLarge, "path is %d bytes; the limit is 4096", len(p))
	case !strings.HasPrefix(p, "/"):
		return api.Errorf(errdefs.ErrInvalidArgument, "path %q is not absolute", p)
	case strings.ContainsRune(p, 0):
		return api.Errorf(errdefs.ErrInvalidArgument, "path %q contains a NUL byte", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return api.Errorf(errdefs.ErrInvalidArgument, "path %q has a %q segment; use a clean absolute path", p, seg)
		}
	}
	return nil
}

// fsErr gives a vfs error its class, keeping the PathError text.
func fsErr(err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	var class error
	switch errno {
	case syscall.ENOENT:
		class = errdefs.ErrNotFound
	case syscall.EEXIST:
		class = errdefs.ErrAlreadyExists
	case syscall.ENOSPC, syscall.EDQUOT:
		class = api.ErrInsufficientStorage
	case syscall.EACCES, syscall.EPERM:
		class = errdefs.ErrPermissionDenied
	case syscall.EFBIG, syscall.ENAMETOOLONG:
		class = api.ErrTooLarge
	default: // ENOTDIR, EISDIR, ENOTEMPTY, EINVAL, ELOOP, EXDEV ...
		class = api.ErrUnprocessable
	}
	return fmt.Errorf("%w: %w", class, err)
}

// withFS runs fn with b's filesystem while b is in use.
func (b *box) withFS(ctx context.Context, fn func(*vfs.FS) error) error {
	release, err := b.use(ctx)
	if err != nil {
		return err
	}
	defer release()
	b.mu.Lock()
	fsys := b.fs
	b.mu.Unlock()
	if fsys == nil {
		return notFound(b.id)
	}
	if err := b.harvestNative(ctx); err != nil {
		return err
	}
	return fn(fsys)
}

// writeFS is withFS for a call that writes: once fn succeeded, the write
// is made durable at level ("" = the sandbox's default) before the call
// returns, and out (if set) says what was reached.
func (b *box) writeFS(ctx context.Context, level string, out *api.Ack, fn func(*vfs.FS) error) error {
	lvl, err := b.m.levelFor(b, level)
	if err != nil {
		return err
	}
	release, err := b.use(ctx)
	if err != nil {
		return err
	}
	defer release()
	b.mu.Lock()
	fsys := b.fs
	b.mu.Unlock()
	if fsys == nil {
		return notFound(b.id)
	}
	if err := b.harvestNative(ctx); err != nil {
		return err
	}
	if err := fn(fsys); err != nil {
		return err
	}
	a, err := b.m.ack(ctx, b, lvl, nil)
	if out != nil {
		*out = a
	}
	return err
}

func (m *Manager) readFile(ctx context.Context, b *box, p string, off, n int64) ([]byte, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	if off < 0 || n < 0 {
		return nil, api.Errorf(errdefs.ErrInvalidArgument, "offset and length must not be negative")
	}
	var out []byte
	err := b.withFS(ctx, func(fsys *vfs.FS) error {
		f, err := fsys.Open(p)
		if err != nil {
			return fsErr(err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fsErr(err)
		}
		if fi.IsDir() {
			return api.Errorf(api.ErrUnprocessable, "%s is a directory", p)
		}
		size := fi.Size()
		if off >= size {
			out = []byte{}
			return nil
		}
		if n == 0 || off+n > size {
			n = size - off
		}
		if n > m.cfg.MaxReadBytes {
			return api.Errorf(api.ErrTooLarge, "read of %d bytes; the limit is %d (read a range)", n, m.cfg.MaxReadBytes)
		}
		out = make([]byte, n)
		got, err := f.ReadAt(out, off)
		if err != nil && err != io.EOF {
			return fsErr(err)
		}
		out = out[:got]
		return nil
	})
	return out, err
}

// writeFile writes atomically per call: truncate writes go to a temporary
// file renamed over the target; append and create are one Write.
func (m *Manager) writeFile(ctx context.Context, b *box, req api.WriteFileRequest, data []byte) error {
	if err := checkPath(req.Path); err != nil {
		return err
	}
	if req.Path == "/" {
		return api.Errorf(api.ErrUnprocessable, "cannot write to /")
	}
	perm := fs.FileMode(req.Perm & 0o7777)
	if req.Perm == 0 {
		perm = 0o644
	}
	if req.Perm > 0o7777 {
		return api.Errorf(api.ErrUnprocessable, "bad permission bits %o", req.Perm)
	}
	return b.writeFS(ctx, req.Durability, req.Ack, func(fsys *vfs.FS) error {
		if err := fsys.MkdirAll(path.Dir(req.Path), 0o755); err != nil {
			return fsErr(err)
		}
		var flag int
		switch req.Mode {
		case "", api.WriteTruncate:
			tmp := path.Join(path.Dir(req.Path), ".warren-"+newID("")[:12]+".tmp")
			if err := writeAll(fsys, tmp, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL, perm, data); err != nil {
				fsys.Remove(tmp)
				return err
			}
			if err := fsys.Rename(tmp, req.Path); err != nil {
				fsys.Remove(tmp)
				return fsErr(err)
			}
			return nil
		case api.WriteAppend:
			flag = vfs.O_WRONLY | vfs.O_CREATE | vfs.O_APPEND
		case api.WriteCreate:
			flag = vfs.O_WRONLY | vfs.O_CREATE | vfs.O_EXCL
		default:
			return api.Errorf(api.ErrUnprocessable, "bad write mode %q (want truncate, append or create)", req.Mode)
		}
		return writeAll(fsys, req.Path, flag, perm, data)
	})
}

func writeAll(fsys *vfs.FS, p string, flag int, perm fs.FileMode, data []byte) error {
	f, err := fsys.OpenFile(p, flag, perm)
	if err != nil {
		return fsErr(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fsErr(err)
	}
	return fsErr(f.Close())
}

func fileInfo(p string, fi fs.FileInfo, fsys *vfs.FS) api.FileInfo {
	out := api.FileInfo{
		Path: p, Name: path.Base(p), Size: fi.Size(),
		Mode: fmt.Sprintf("%04o", uint32(fi.Mode().Perm())), ModTime: fi.ModTime().UTC(),
	}
	switch {
	case fi.IsDir():
		out.Type = "dir"
	case fi.Mode()&fs.ModeSymlink != 0:
		out.Type = "symlink"
		if t, err := fsys.Readlink(p); err == nil {
			out.Target = t
		}
	case fi.Mode().IsRegular():
		out.Type = "file"
	default:
		out.Type = "other"
	}
	return out
}

const maxListEntries = 100_000

func (m *Manager) listFiles(ctx context.Context, b *box, p string, opts api.ListFilesOptions) ([]api.FileInfo, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	if opts.Depth < 0 {
		return nil, api.Errorf(errdefs.ErrInvalidArgument, "depth must not be negative")
	}
	depth := opts.Depth
	if opts.Recursive && depth == 0 {
		depth = 1 << 30
	}
	out := []api.FileInfo{}
	err := b.withFS(ctx, func(fsys *vfs.FS) error {
		fi, err := fsys.Stat(p)
		if err != nil {
			return fsErr(err)
		}
		if !fi.IsDir() {
			return api.Errorf(api.ErrUnprocessable, "%s is not a directory", p)
		}
		var walk func(dir string, level int) error
		walk = func(dir string, level int) error {
			ents, err := fsys.ReadDir(dir)
			if err != nil {
				return fsErr(err)
			}
			for _, e := range ents {
				if err := ctx.Err(); err != nil {
					return err
				}
				child := path.Join(dir, e.Name())
				info, err := e.Info()
				if err != nil {
					continue // removed meanwhile
				}
				if len(out) >= maxListEntries {
					return api.Errorf(api.ErrTooLarge, "more than %d entries; list a smaller tree", maxListEntries)
				}
				out = append(out, fileInfo(child, info, fsys))
				if info.IsDir() && level < depth {
					if err := walk(child, level+1); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return walk(p, 0)
	})
	return out, err
}

func (m *Manager) stat(ctx context.Context, b *box, p string) (api.FileInfo, error) {
	if err := checkPath(p); err != nil {
		return api.FileInfo{}, err
	}
	var out api.FileInfo
	err := b.withFS(ctx, func(fsys *vfs.FS) error {
		fi, err := fsys.Lstat(p)
		if err != nil {
			return fsErr(err)
		}
		out = fileInfo(p, fi, fsys)
		return nil
	})
	return out, err
}

func (m *Manager) mkdir(ctx context.Context, b *box, p string, perm uint32) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if perm == 0 {
		perm = 0o755
	}
	if perm > 0o7777 {
		return api.Errorf(api.ErrUnprocessable, "bad permission bits %o", perm)
	}
	return b.writeFS(ctx, "", nil, func(fsys *vfs.FS) error { return fsErr(fsys.MkdirAll(p, fs.FileMode(perm))) })
}

func (m *Manager) move(ctx context.Context, b *box, from, to string) error {
	if err := checkPath(from); err != nil {
		return err
	}
	if err := checkPath(to); err != nil {
		return err
	}
	if from == "/" || to == "/" {
		return api.Errorf(api.ErrUnprocessable, "cannot move /")
	}
	return b.writeFS(ctx, "", nil, func(fsys *vfs.FS) error { return fsErr(fsys.Rename(from, to)) })
}

func (m *Manager) remove(ctx context.Context, b *box, p string, recursive bool) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if path.Clean(p) == "/" {
		return api.Errorf(api.ErrUnprocessable, "cannot remove /")
	}
	return b.writeFS(ctx, "", nil, func(fsys *vfs.FS) error {
		if _, err := fsys.Lstat(p); err != nil {
			return fsErr(err)
		}
		if recursive {
			return fsErr(fsys.RemoveAll(p))
		}
		return fsErr(fsys.Remove(p))
	})
}

// uploadTar extracts a tar stream under dir (created if missing). Entry
// names are confined to dir: absolute names and ".." are refused.
func (m *Manager) uploadTar(ctx context.Context, b *box, dir string, r io.Reader) error {
	if err := checkPath(dir); err != nil {
		return err
	}
	return b.writeFS(ctx, "", nil, func(fsys *vfs.FS) error {
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			return fsErr(err)
		}
		tr := tar.NewReader(r)
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			h, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				if isBodyTooLarge(err) {
					return api.Errorf(api.ErrTooLarge, "tar upload over the body limit")
				}
				return api.Errorf(errdefs.ErrInvalidArgument, "bad tar stream: %v", err)
			}
			name := strings.TrimPrefix(h.Name, "./")
			if name == "" || name == "." {
				continue
			}
			if strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
				return api.Errorf(errdefs.ErrInvalidArgument, "tar entry %q: absolute names are not allowed", h.Name)
			}
			for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
				if seg == ".." {
					return api.Errorf(errdefs.ErrInvalidArgument, "tar entry %q escapes the target directory", h.Name)
				}
			}
			target := path.Join(dir, name)
			perm := fs.FileMode(h.Mode) & 0o7777
			if err := fsys.MkdirAll(path.Dir(target), 0o755); err != nil {
				return fsErr(err)
			}
			switch h.Typeflag {
			case tar.TypeDir:
				if err := fsys.MkdirAll(target, perm|0o700); err != nil {
					return fsErr(err)
				}
			case tar.TypeReg:
				fsys.Remove(target) // replace whatever was there, as tar does
				f, err := fsys.OpenFile(target, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, perm)
				if err != nil {
					return fsErr(err)
				}
				_, err = io.Copy(f, tr)
				cerr := f.Close()
				if err != nil {
					if isBodyTooLarge(err) {
						return api.Errorf(api.ErrTooLarge, "tar upload over the body limit")
					}
					return fsErr(err)
				}
				if cerr != nil {
					return fsErr(cerr)
				}
			case tar.TypeSymlink:
				fsys.Remove(target)
				if err := fsys.Symlink(h.Linkname, target); err != nil {
					return fsErr(err)
				}
			case tar.TypeLink:
				link := strings.TrimPrefix(h.Linkname, "./")
				if strings.HasPrefix(link, "/") || strings.Contains("/"+link+"/", "/../") {
					return api.Errorf(errdefs.ErrInvalidArgument, "tar entry %q: hard link outside the target directory", h.Name)
				}
				fsys.Remove(target)
				if err := fsys.Link(path.Join(dir, link), target); err != nil {
					return fsErr(err)
				}
			default:
				// Devices, fifos and the like are skipped: an upload carries files.
			}
		}
	})
}

// downloadTar writes dir's tree as a tar stream, names relative to dir.
func (m *Manager) downloadTar(ctx context.Context, b *box, dir string, w io.Writer) error {
	if err := checkPath(dir); err != nil {
		return err
	}
	return b.withFS(ctx, func(fsys *vfs.FS) error {
		fi, err := fsys.Stat(dir)
		if err != nil {
			return fsErr(err)
		}
		if !fi.IsDir() {
			return api.Errorf(api.ErrUnprocessable, "%s is not a directory", dir)
		}
		tw := tar.NewWriter(w)
		var walk func(p, rel string) error
		walk = func(p, rel string) error {
			ents, err := fsys.ReadDir(p)
			if err != nil {
				return fsErr(err)
			}
			sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
			for _, e := range ents {
				if err := ctx.Err(); err != nil {
					return err
				}
				cp, cr := path.Join(p, e.Name()), path.Join(rel, e.Name())
				info, err := fsys.Lstat(cp)
				if err != nil {
					continue
				}
				h := &tar.Header{Name: cr, Mode: int64(info.Mode().Perm()), ModTime: info.ModTime(), Format: tar.FormatPAX}
				switch {
				case info.IsDir():
					h.Typeflag, h.Name = tar.TypeDir, cr+"/"
				case info.Mode()&fs.ModeSymlink != 0:
					h.Typeflag = tar.TypeSymlink
					h.Linkname, _ = fsys.Readlink(cp)
				case info.Mode().IsRegular():
					h.Typeflag, h.Size = tar.TypeReg, info.Size()
				default:
					continue
				}
				if err := tw.WriteHeader(h); err != nil {
					return err
				}
				if h.Typeflag == tar.TypeReg {
					f, err := fsys.Open(cp)
					if err != nil {
						return fsErr(err)
					}
					_, err = io.CopyN(tw, f, h.Size)
					f.Close()
					if err != nil {
						return fmt.Errorf("cannot read %s: %w", cp, err)
					}
				}
				if info.IsDir() {
					if err := walk(cp, cr); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := walk(dir, ""); err != nil {
			return err
		}
		return tw.Close()
	})
}
