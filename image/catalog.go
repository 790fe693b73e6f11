// Package image builds, stores and opens warren's base images: uncompressed
// EROFS files named by their sha256 digest. One image file serves every
// sandbox built from it, read in-process through go-erofs over an mmap and
// mounted by the kernel for the native tier (the kernel mount helper lives
// with the native tier).
//
// Blob store layout:
//
//	images/sha256/<hex>   the EROFS image file
//	manifests/<hex>       JSON Manifest of the last build with that digest
//	tags/<name>           JSON Manifest the tag points at
//	cache/<key>           JSON Manifest of a cached Dockerfile step
package image

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Store is the part of the blob store images need. Get of a missing key
// returns an error for which errors.Is(err, fs.ErrNotExist) holds.
type Store interface {
	Put(ctx context.Context, key string, r io.Reader) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, prefix string, fn func(key string, size int64) error) error
}

// localPather is implemented by stores that keep blobs as local files
// (store/dir); their images are mapped in place instead of copied.
type localPather interface {
	Path(key string) (string, bool)
}

// Config is the runtime defaults an image carries (from an OCI config or
// a Dockerfile).
type Config struct {
	Env        []string          `json:"env,omitempty"`
	WorkingDir string            `json:"workingDir,omitempty"`
	User       string            `json:"user,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	// Recorded for clients; a sandbox is a shell, so nothing runs them.
	Entrypoint   []string `json:"entrypoint,omitempty"`
	Cmd          []string `json:"cmd,omitempty"`
	ExposedPorts []string `json:"exposedPorts,omitempty"` // "8080/tcp"
}

// Manifest names an image file and the config that goes with it.
type Manifest struct {
	Digest string `json:"digest"` // "sha256:<hex>" of the EROFS file
	Size   int64  `json:"size"`
	Files  int    `json:"files"`
	Config Config `json:"config"`
}

// Hex is the digest without its algorithm prefix.
func (m Manifest) Hex() string { return strings.TrimPrefix(m.Digest, "sha256:") }

func imageKey(hex string) string { return "images/sha256/" + hex }

// Catalog is the set of images in a store plus the local files they are
// opened from.
type Catalog struct {
	store    Store
	cacheDir string
	// InUse reports whether a sandbox uses the image digest; Remove refuses
	// while it does. nil means no sandbox uses any image.
	InUse func(digest string) bool
	// Limits bound untrusted build inputs.
	Limits Limits
	// Runner executes Dockerfile RUN; nil refuses RUN with a clear error.
	Runner Runner

	mu   sync.Mutex
	open map[string]*Image
}

// NewCatalog returns a catalog over store; cacheDir holds spools, images
// being written and local copies of images from stores without local paths.
func NewCatalog(store Store, cacheDir string) (*Catalog, error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create image cache: %w", err)
	}
	return &Catalog{store: store, cacheDir: cacheDir, open: map[string]*Image{}}, nil
}

var tagRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$`)

// checkTag refuses names that are not image names or would escape the
// tags/ prefix.
func checkTag(name string) error {
	if !tagRe.MatchString(name) || strings.HasPrefix(name, "sha256:") || strings.HasSuffix(name, "/") {
		return fmt.Errorf("invalid image name %q", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("invalid image name %q", name)
		}
	}
	return nil
}

// tagKey maps a name to its store key; ":" is not a key character, "="
// is and never appears in image names.
func tagKey(name string) string { return "tags/" + strings.ReplaceAll(name, ":", "=") }

func tagName(key string) string {
	return strings.ReplaceAll(strings.TrimPrefix(key, "tags/"), "=", ":")
}

// commit stores the image file tmp (already hashed) and its manifest.
func (c *Catalog) commit(ctx context.Context, tmp string, m Manifest) error {
	key := imageKey(m.Hex())
	if rc, err := c.store.Get(ctx, key); err == nil {
		rc.Close()
	} else {
		f, err := os.Open(tmp)
		if err != nil {
			return err
		}
		err = c.store.Put(ctx, key, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("cannot store image: %w", err)
		}
	}
	if _, ok := c.localPath(m.Hex()); !ok {
		// The store has no local path: keep this copy as the local file.
		if err := os.Rename(tmp, c.cachePath(m.Hex())); err != nil {
			return err
		}
	}
	return c.putJSON(ctx, "manifests/"+m.Hex(), m)
}

func (c *Catalog) putJSON(ctx context.Context, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return c.store.Put(ctx, key, strings.NewReader(string(b)+"\n"))
}

func (c *Catalog) getJSON(ctx context.Context, key string, v any) error {
	rc, err := c.store.Get(ctx, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("corrupt %s: %w", key, err)
	}
	return nil
}

func (c *Catalog) cachePath(hex string) string { return filepath.Join(c.cacheDir, hex+".erofs") }

func (c *Catalog) localPath(hex string) (string, bool) {
	if lp, ok := c.store.(localPather); ok {
		if p, ok := lp.Path(imageKey(hex)); ok {
			if _, err := os.Stat(p); err == nil {
				return p, true
			}
		}
	}
	return "", false
}

// Tag points name at m.
func (c *Catalog) Tag(ctx context.Context, name string, m Manifest) error {
	if err := checkTag(name); err != nil {
		return err
	}
	return c.putJSON(ctx, tagKey(name), m)
}

// Resolve finds an image by tag, "sha256:<hex>" or a unique hex prefix of
// at least 6 characters.
func (c *Catalog) Resolve(ctx context.Context, ref string) (Manifest, error) {
	var m Manifest
	if hex, ok := strings.CutPrefix(ref, "sha256:"); ok || isHexPrefix(ref) {
		if !ok {
			hex = ref
		}
		var found []string
		err := c.store.List(ctx, "manifests/"+hex, func(key string, _ int64) error {
			found = append(found, strings.TrimPrefix(key, "manifests/"))
			return nil
		})
		if err != nil {
			return m, err
		}
		if len(found) == 1 {
			err := c.getJSON(ctx, "manifests/"+found[0], &m)
			return m, err
		}
		if len(found) > 1 {
			return m, fmt.Errorf("image %q is ambiguous", ref)
		}
		if ok {
			return m, fmt.Errorf("image %q: %w", ref, fs.ErrNotExist)
		}
	}
	if err := checkTag(ref); err != nil {
		return m, err
	}
	if err := c.getJSON(ctx, tagKey(ref), &m); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("image %q not found: %w", ref, fs.ErrNotExist)
		}
		return m, err
	}
	return m, nil
}

func isHexPrefix(s string) bool {
	if len(s) < 6 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// Open returns the opened image of m, shared with other callers; it stays
// open for the life of the catalog (Close unmaps everything).
func (c *Catalog) Open(ctx context.Context, m Manifest) (*Image, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if im, ok := c.open[m.Hex()]; ok {
		return im, nil
	}
	p, ok := c.localPath(m.Hex())
	if !ok {
		p = c.cachePath(m.Hex())
		if _, err := os.Stat(p); err != nil {
			if err := c.fetch(ctx, m.Hex(), p); err != nil {
				return nil, err
			}
		}
	}
	im, err := OpenFile(p)
	if err != nil {
		return nil, err
	}
	im.Manifest = m
	c.open[m.Hex()] = im
	return im, nil
}

// OpenRef resolves ref (a tag or digest) and opens the image, as
// `warren run --image NAME` does.
func (c *Catalog) OpenRef(ctx context.Context, ref string) (*Image, error) {
	m, err := c.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, m)
}

// fetch copies an image from the store into the local cache, verifying
// its digest.
func (c *Catalog) fetch(ctx context.Context, hex, dst string) error {
	rc, err := c.store.Get(ctx, imageKey(hex))
	if err != nil {
		return fmt.Errorf("image sha256:%s: %w", hex, err)
	}
	defer rc.Close()
	f, err := os.CreateTemp(c.cacheDir, "fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	h := newHasher()
	if _, err := io.Copy(io.MultiWriter(f, h), rc); err != nil {
		return fmt.Errorf("cannot fetch image sha256:%s: %w", hex, err)
	}
	if got := h.hex(); got != hex {
		return fmt.Errorf("image sha256:%s: store returned content with digest %s", hex, got)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

// Close unmaps every image the catalog opened.
func (c *Catalog) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, im := range c.open {
		errs = append(errs, im.Close())
		delete(c.open, k)
	}
	return errors.Join(errs...)
}

// Tagged is one row of List.
type Tagged struct {
	Name string
	Manifest
}

// List returns every tag, sorted by name.
func (c *Catalog) List(ctx context.Context) ([]Tagged, error) {
	var names []string
	if err := c.store.List(ctx, "tags/", func(key string, _ int64) error {
		names = append(names, tagName(key))
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]Tagged, 0, len(names))
	for _, n := range names {
		var m Manifest
		if err := c.getJSON(ctx, tagKey(n), &m); err != nil {
			return nil, err
		}
		out = append(out, Tagged{Name: n, Manifest: m})
	}
	return out, nil
}

// ErrInUse is returned by Remove for an image a sandbox still uses.
var ErrInUse = errors.New("image is in use by a sandbox")

// Remove deletes the tag name, and the image file once no other tag
// names it. Given a digest instead of a tag, it removes an untagged image.
// It refuses while a sandbox uses the image.
func (c *Catalog) Remove(ctx context.Context, ref string) error {
	m, err := c.Resolve(ctx, ref)
	if err != nil {
		return err
	}
	if c.InUse != nil && c.InUse(m.Digest) {
		return fmt.Errorf("cannot remove %s (%s): %w", ref, m.Digest, ErrInUse)
	}
	tags, err := c.List(ctx)
	if err != nil {
		return err
	}
	var others []string
	isTag := false
	for _, t := range tags {
		switch {
		case t.Name == ref:
			isTag = true
		case t.Digest == m.Digest:
			others = append(others, t.Name)
		}
	}
	if isTag {
		if err := c.store.Delete(ctx, tagKey(ref)); err != nil {
			return err
		}
	}
	if len(others) > 0 {
		if !isTag {
			return fmt.Errorf("cannot remove %s: it is tagged %s; remove the tags", m.Digest, strings.Join(others, ", "))
		}
		return nil
	}
	// An opened image stays mapped: a sandbox may still read it (the file
	// itself may go; the mapping keeps its pages).
	c.mu.Lock()
	delete(c.open, m.Hex())
	c.mu.Unlock()
	_ = os.Remove(c.cachePath(m.Hex()))
	for _, key := range []string{imageKey(m.Hex()), "manifests/" + m.Hex()} {
		if err := c.store.Delete(ctx, key); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Export writes the image file of ref to w.
func (c *Catalog) Export(ctx context.Context, ref string, w io.Writer) error {
	m, err := c.Resolve(ctx, ref)
	if err != nil {
		return err
	}
	rc, err := c.store.Get(ctx, imageKey(m.Hex()))
	if err != nil {
		return fmt.Errorf("image %s: %w", m.Digest, err)
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return err
}
