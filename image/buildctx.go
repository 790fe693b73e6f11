package image

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A Dockerfile's build context is a tree like any other source: read from
// a host directory or from a tar (what `POST /v1/images` receives), so
// COPY never touches the host past the context and a directory and a tar
// of it build the same image.

// DefaultDockerfile is the file a context is built from when none is named.
const DefaultDockerfile = "Dockerfile"

// ContextDockerfile reports whether the host directory dir holds a
// Dockerfile at its root, as `docker build DIR` looks for one.
func ContextDockerfile(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, DefaultDockerfile))
	return err == nil && fi.Mode().IsRegular()
}

// BuildTar builds the tar stream r (plain or gzip). With dockerfile set,
// or when the tar has a Dockerfile at its root, the tar is the context of
// that Dockerfile; otherwise its files are the image, as a directory is.
func (c *Catalog) BuildTar(ctx context.Context, r io.Reader, dockerfile string, opts BuildOptions) (Manifest, error) {
	t := newTree(c.Limits)
	sp, err := newSpool(c.cacheDir)
	if err != nil {
		return Manifest{}, err
	}
	defer sp.Close()
	if err := t.addTar(ctx, r, sp, false); err != nil {
		return Manifest{}, err
	}
	name := dockerfile
	if name == "" {
		if n, err := t.lookup(DefaultDockerfile); err == nil && n.ino.mode.IsRegular() {
			name = DefaultDockerfile
		}
	}
	if name == "" {
		return c.buildTree(ctx, t, Config{}, opts)
	}
	p, err := entryPath(name)
	if err != nil || p == "" {
		return Manifest{}, fmt.Errorf("Dockerfile %q: not a path inside the build context", name)
	}
	n, err := t.lookup(p)
	if err != nil || !n.ino.mode.IsRegular() {
		return Manifest{}, fmt.Errorf("Dockerfile %q: not a file in the build context", name)
	}
	rc, err := n.ino.open()
	if err != nil {
		return Manifest{}, err
	}
	defer rc.Close()
	return c.buildDockerfile(ctx, rc, t, opts)
}

// open reads a regular file's content; an empty file from a tar has no
// data function.
func (ino *inode) open() (io.ReadCloser, error) {
	if ino.data == nil {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return ino.data()
}

// hasMeta reports whether a COPY source is a pattern.
func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// glob returns the paths of t that pattern (a COPY source, relative to
// the context root) names; no match is an empty result.
func (t *tree) glob(pattern string) ([]string, error) {
	p := strings.TrimPrefix(path.Clean("/"+pattern), "/")
	if !hasMeta(p) {
		if _, err := t.lookup(p); err != nil {
			return nil, nil
		}
		return []string{p}, nil
	}
	if _, err := path.Match(p, ""); err != nil {
		return nil, fmt.Errorf("bad pattern %q: %w", pattern, err)
	}
	depth := strings.Count(p, "/")
	var out []string
	err := t.walk(func(q string, _ *node) error {
		if q != "" && strings.Count(q, "/") == depth {
			if ok, _ := path.Match(p, q); ok {
				out = append(out, q)
			}
		}
		return nil
	})
	return out, err
}

// follow resolves a symlink source inside t. A target that leaves the
// tree is refused: a context's symlink to /etc must not copy the host's.
func (t *tree) follow(p string) (string, *node, error) {
	n, err := t.lookup(p)
	for hops := 0; err == nil && n.ino.mode&fs.ModeSymlink != 0; hops++ {
		if hops == 40 {
			return "", nil, fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target := n.ino.target
		if path.IsAbs(target) {
			return "", nil, fmt.Errorf("%s: symlink to %s points outside the build context", p, target)
		}
		next := path.Join(parentOf(p), target)
		if next == ".." || strings.HasPrefix(next, "../") {
			return "", nil, fmt.Errorf("%s: symlink to %s points outside the build context", p, target)
		}
		if next == "." {
			next = ""
		}
		p = next
		n, err = t.lookup(p)
	}
	if err != nil {
		return "", nil, err
	}
	return p, n, nil
}

// hashNode feeds the names, modes, sizes, link targets and contents under
// n to h, so a COPY step's cache key changes when its inputs do.
func hashNode(h io.Writer, n *node) error {
	sub := &tree{root: n}
	return sub.walk(func(p string, n *node) error {
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00%s\x00", p, n.ino.mode, n.ino.size, n.ino.target)
		if !n.ino.mode.IsRegular() {
			return nil
		}
		rc, err := n.ino.open()
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(h, rc)
		return err
	})
}

// contextTree reads the host directory dir as a build context.
func (c *Catalog) contextTree(ctx context.Context, dir string) (*tree, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("build context %s is not a directory", dir)
	}
	t := newTree(c.Limits)
	if err := t.addHostDir(ctx, dir); err != nil {
		return nil, fmt.Errorf("build context: %w", err)
	}
	return t, nil
}

// stageTree is the tree of an image, for COPY --from.
func (c *Catalog) stageTree(ctx context.Context, m *Manifest) (*tree, error) {
	t := newTree(c.Limits)
	if m == nil {
		return t, nil
	}
	im, err := c.Open(ctx, *m)
	if err != nil {
		return nil, err
	}
	if err := t.addFS(ctx, im.FS(), ""); err != nil {
		return nil, fmt.Errorf("reading image %s: %w", m.Digest, err)
	}
	return t, nil
}

var errNoPull = errors.New("pulling from registries is off for this build")

// sum256 is a hex digest of b, for cache keys.
func sum256(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }
