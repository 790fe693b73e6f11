package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/api"
)

// remoteDockerfile is where an -f file from outside the context travels
// in the uploaded tar.
const remoteDockerfile = ".warren/Dockerfile"

// remoteBuild uploads source (a directory, a tar file or - for stdin) to
// the server as a tar and prints the image it built.
func remoteBuild(cmd *cobra.Command, c *conn, tag, dockerfile, source string, buildArgs map[string]string) error {
	if tag == "" {
		return usageError(errors.New("a server build needs a name: warren image build -t NAME SOURCE (or build into the local data directory with --local)"))
	}
	if strings.HasPrefix(source, "oci:") || strings.HasPrefix(source, "docker-archive:") {
		return usageError(fmt.Errorf("%s is a local source: build it with --local (a server on that data directory offers it to every tenant)", source))
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	opts := api.ImageBuildOptions{BuildArgs: buildArgs}
	var body io.Reader
	switch fi, err := os.Stat(source); {
	case source == "-":
		if dockerfile != "" {
			return usageError(errors.New("-f with a tar on standard input: name the Dockerfile inside the tar instead"))
		}
		body = cmd.InOrStdin()
	case err != nil:
		return usageError(fmt.Errorf("source: %w", err))
	case fi.IsDir():
		extra := ""
		if dockerfile != "" {
			rel, inside := insideDir(source, dockerfile)
			if inside {
				opts.Dockerfile = rel
			} else {
				extra, opts.Dockerfile = dockerfile, remoteDockerfile
			}
		}
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeContextTar(pw, source, extra)) }()
		defer pr.Close()
		body = pr
	default:
		if dockerfile != "" {
			return usageError(errors.New("-f with a tar source: name the Dockerfile inside the tar, or build from a directory"))
		}
		f, err := os.Open(source)
		if err != nil {
			return usageError(fmt.Errorf("source: %w", err))
		}
		defer f.Close()
		body = f
	}
	start := time.Now()
	img, err := cl.BuildImageWith(cmd.Context(), tag, body, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "built %s (%s, %d bytes) on the server in %v\n", img.Name, img.Digest, img.Size, time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(cmd.OutOrStdout(), img.Digest)
	return nil
}

// insideDir returns file's path relative to dir when it is inside it.
func insideDir(dir, file string) (string, bool) {
	d, err1 := filepath.Abs(dir)
	f, err2 := filepath.Abs(file)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(d, f)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// writeContextTar writes dir as a PAX tar (nanosecond times, owners,
// user.* xattrs, hard links), the root as "./" so the image root keeps the
// directory's metadata: the server builds the same image a local build of
// dir does. extra, when set, is added as remoteDockerfile.
func writeContextTar(w io.Writer, dir, extra string) error {
	tw := tar.NewWriter(w)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	links := map[[2]uint64]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		name := "./" + filepath.ToSlash(rel)
		if rel == "." {
			name = "./"
		}
		target := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, target)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		hdr.Name, hdr.Format = name, tar.FormatPAX
		hdr.Uname, hdr.Gname = "", ""
		if fi.IsDir() && name != "./" {
			hdr.Name += "/"
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
			if !fi.IsDir() && st.Nlink > 1 {
				key := [2]uint64{uint64(st.Dev), st.Ino}
				if first, ok := links[key]; ok {
					hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
				} else {
					links[key] = hdr.Name
				}
			}
		}
		for k, v := range userXattrs(p) {
			if hdr.PAXRecords == nil {
				hdr.PAXRecords = map[string]string{}
			}
			hdr.PAXRecords["SCHILY.xattr."+k] = v
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
	if err != nil {
		return err
	}
	if extra != "" {
		data, err := os.ReadFile(extra)
		if err != nil {
			return fmt.Errorf("Dockerfile: %w", err)
		}
		for _, h := range []*tar.Header{
			{Name: ".warren/", Typeflag: tar.TypeDir, Mode: 0o755, Format: tar.FormatPAX},
			{Name: remoteDockerfile, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), Format: tar.FormatPAX},
		} {
			h.ModTime = time.Unix(0, 0)
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// userXattrs are the user.* extended attributes of p (what an image keeps
// of a host file besides security.* and ACLs, which need privileges).
func userXattrs(p string) map[string]string {
	sz, err := unix.Llistxattr(p, nil)
	if err != nil || sz <= 0 {
		return nil
	}
	buf := make([]byte, sz)
	if sz, err = unix.Llistxattr(p, buf); err != nil {
		return nil
	}
	var out map[string]string
	for _, name := range strings.Split(string(buf[:sz]), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		vsz, err := unix.Lgetxattr(p, name, nil)
		if err != nil || vsz < 0 {
			continue
		}
		val := make([]byte, vsz)
		if vsz, err = unix.Lgetxattr(p, name, val); err != nil {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = string(val[:vsz])
	}
	return out
}
