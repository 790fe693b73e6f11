package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/warren-sandbox/warren/client"
)

// getPath downloads remote to local: a file as it is, a directory as the
// files API's tar, unpacked under local (confined to it by os.Root, so a
// hostile tree cannot write outside through .. or symlinks).
func getPath(ctx context.Context, cl *client.Client, id, remote, local string, stdout io.Writer) error {
	fi, err := cl.Stat(ctx, id, remote)
	if err != nil {
		return err
	}
	if fi.Type != "dir" {
		data, err := cl.ReadFile(ctx, id, remote, 0, 0)
		if err != nil {
			return err
		}
		if local == "-" {
			_, err = stdout.Write(data)
			return err
		}
		if st, err := os.Stat(local); err == nil && st.IsDir() {
			local = filepath.Join(local, path.Base(remote))
		}
		return os.WriteFile(local, data, fs.FileMode(modeBits(fi.Mode)))
	}
	if local == "-" {
		return cl.DownloadTar(ctx, id, remote, stdout)
	}
	if err := os.MkdirAll(local, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(local)
	if err != nil {
		return err
	}
	defer root.Close()
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := cl.DownloadTar(ctx, id, remote, pw)
		pw.CloseWithError(err)
		errc <- err
	}()
	uerr := untar(root, pr)
	pr.CloseWithError(errors.New("stopped reading"))
	if derr := <-errc; derr != nil && uerr == nil {
		return derr
	}
	return uerr
}

// modeBits reads the permission bits of a FileInfo's "-rwxr-xr-x".
func modeBits(s string) uint32 {
	if len(s) < 10 {
		return 0o644
	}
	var m uint32
	for i, c := range s[len(s)-9:] {
		if c != '-' {
			m |= 1 << (8 - i)
		}
	}
	return m
}

func untar(root *os.Root, r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the tar: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if !fs.ValidPath(name) {
			return fmt.Errorf("tar entry %q: not a relative path inside the directory", h.Name)
		}
		if dir := path.Dir(name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		perm := fs.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, perm|0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			root.Remove(name)
			if err := root.Symlink(h.Linkname, name); err != nil {
				return err
			}
		default:
			// Devices, fifos and hard links are not copied out.
		}
	}
}

// putDir uploads the tree under local as a tar, unpacked by the server
// under remote.
func putDir(ctx context.Context, cl *client.Client, id, local, remote string) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(local, pw)) }()
	err := cl.UploadTar(ctx, id, remote, pr)
	pr.CloseWithError(errors.New("upload ended"))
	return err
}

func writeTar(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil // sockets, devices: not uploaded
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uname, h.Gname, h.Uid, h.Gid = "", "", 0, 0
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
