// Package archive holds tar, gzip, gunzip, zcat, zip and unzip over the vfs.
// Extraction never writes outside its target directory: member names with
// ".." are refused, leading "/" is stripped (as GNU tar does), nothing is
// written through a symbolic link, hard links must point inside the
// target, and device nodes are refused.
package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// Register adds the archive commands to t.
func Register(t commands.Table) {
	t.Register("tar", tarCmd)
	t.Register("gzip", gzipCmd)
	t.Register("gunzip", gzipCmd)
	t.Register("zcat", gzipCmd)
	t.Register("bzip2", bzip2Cmd)
	t.Register("bunzip2", bzip2Cmd)
	t.Register("bzcat", bzip2Cmd)
	for _, n := range []string{"xz", "unxz", "xzcat", "lzma", "unlzma", "lzcat"} {
		t.Register(n, xzCmd)
	}
	t.Register("zip", zipCmd)
	t.Register("unzip", unzipCmd)
}

func badUsage(inv *commands.Invocation, err error, status int) int {
	// an unknown option is a refusal: the ladder may run a fuller version
	return inv.BadUsage(err, fmt.Sprintf("%s: %s\nTry '%s --help' for more information.\n", inv.Args[0], err, inv.Args[0]), status)
}

func quote(s string) string { return "'" + s + "'" }

// throughSymlink is the error for a member whose path crosses a symlink.
type throughSymlink struct{ link string }

func (e *throughSymlink) Error() string {
	return fmt.Sprintf("refusing to extract through symbolic link %s", quote(e.link))
}

// extractor writes members under root and nowhere else.
type extractor struct {
	inv  *commands.Invocation
	root string // absolute target directory
}

// parent makes sure every directory above rel exists under root as a real
// directory (never a symlink), creating missing ones, and returns the
// absolute path of rel.
func (x *extractor) parent(rel string) (string, error) {
	comps := strings.Split(rel, "/")
	cur := x.root
	for i, c := range comps[:len(comps)-1] {
		cur = path.Join(cur, c)
		fi, err := x.inv.FS.Lstat(cur)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return "", &throughSymlink{strings.Join(comps[:i+1], "/")}
		case err == nil && !fi.IsDir():
			return "", syscall.ENOTDIR
		case err != nil && errors.Is(err, fs.ErrNotExist):
			if err := x.inv.FS.Mkdir(cur, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
		case err != nil:
			return "", err
		}
	}
	return path.Join(x.root, rel), nil
}

// clear removes a non-directory at abs so a new member never writes
// through an old symlink or into a hard-linked inode.
func (x *extractor) clear(abs string, wantDir bool) error {
	fi, err := x.inv.FS.Lstat(abs)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		if wantDir {
			return nil
		}
		return x.inv.FS.Remove(abs)
	}
	return x.inv.FS.Remove(abs)
}

// inside resolves a hard-link target (already cleaned, relative) under
// root, refusing symlinks on the way and as the target itself.
func (x *extractor) inside(rel string) (string, error) {
	comps := strings.Split(rel, "/")
	cur := x.root
	for i, c := range comps {
		cur = path.Join(cur, c)
		fi, err := x.inv.FS.Lstat(cur)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", &throughSymlink{strings.Join(comps[:i+1], "/")}
		}
	}
	return cur, nil
}

// cleanName normalises a member name the way GNU tar does: leading "/"
// and "../" prefixes are reported through strip, and a member name that
// contained ".." anywhere is rejected (ok=false). Hard-link targets
// (linkTarget) keep GNU's behaviour of linking to the stripped name, which
// is inside the target directory by construction.
func cleanName(name string, linkTarget bool, strip func(prefix string)) (string, bool) {
	n := name
	prefix := ""
	for {
		switch {
		case strings.HasPrefix(n, "/"):
			prefix += "/"
			n = n[1:]
			continue
		case strings.HasPrefix(n, "../"):
			prefix += "../"
			n = n[3:]
			continue
		case n == "..":
			prefix += ".."
			n = ""
		}
		break
	}
	if prefix != "" && strip != nil {
		strip(prefix)
	}
	if strings.Contains(prefix, "..") && !linkTarget {
		return "", false
	}
	for _, c := range strings.Split(n, "/") {
		if c == ".." {
			return "", false
		}
	}
	n = path.Clean(n)
	if n == "." || n == "" {
		return ".", true
	}
	return n, true
}

func openWrite(inv *commands.Invocation, abs string, perm fs.FileMode) (*vfs.File, error) {
	return inv.FS.OpenFile(abs, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL|vfs.O_NOFOLLOW, perm)
}
