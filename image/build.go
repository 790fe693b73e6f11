package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// BuildOptions tune one build.
type BuildOptions struct {
	// Progress receives entries and bytes written; nil is quiet.
	Progress Progress
	// Log receives one line per Dockerfile step and RUN output; nil is quiet.
	Log io.Writer
	// Stdin is read for the source "-".
	Stdin io.Reader
	// BuildArgs override Dockerfile ARG defaults.
	BuildArgs map[string]string
	// Pull lets FROM and COPY --from fetch an image missing from the
	// catalog from its registry (the CLI's builds; not a tenant's build on
	// a server, which must not make the node fetch arbitrary addresses).
	Pull bool
	// Scope is a tag prefix ("tenants/T/") searched first for FROM names;
	// names under another tenant's prefix are not visible.
	Scope string
}

// buildEpoch is the superblock build time of every image: a constant so
// that equal trees give byte-identical images (stable digests).
var buildEpoch = time.Unix(0, 0)

type hasher struct{ hash.Hash }

func newHasher() *hasher      { return &hasher{sha256.New()} }
func (h *hasher) hex() string { return hex.EncodeToString(h.Sum(nil)) }

// BuildSource builds an image from a SOURCE as the CLI names it: a host
// directory, a tar or tar.gz file, "-" for a tar on opts.Stdin,
// "oci:DIR" or "docker-archive:FILE".
func (c *Catalog) BuildSource(ctx context.Context, source string, opts BuildOptions) (Manifest, error) {
	t := newTree(c.Limits)
	sp, err := newSpool(c.cacheDir)
	if err != nil {
		return Manifest{}, err
	}
	defer sp.Close()
	var cfg Config
	switch {
	case strings.HasPrefix(source, "oci:"):
		img, err := ociImage(strings.TrimPrefix(source, "oci:"))
		if err != nil {
			return Manifest{}, err
		}
		if cfg, err = t.addV1Image(ctx, img, sp); err != nil {
			return Manifest{}, fmt.Errorf("%s: %w", source, err)
		}
	case strings.HasPrefix(source, "docker-archive:"):
		img, err := tarball.ImageFromPath(strings.TrimPrefix(source, "docker-archive:"), nil)
		if err != nil {
			return Manifest{}, fmt.Errorf("%s: %w", source, err)
		}
		if cfg, err = t.addV1Image(ctx, img, sp); err != nil {
			return Manifest{}, fmt.Errorf("%s: %w", source, err)
		}
	case source == "-":
		if opts.Stdin == nil {
			return Manifest{}, fmt.Errorf("source -: no standard input")
		}
		if err := t.addTar(ctx, opts.Stdin, sp, false); err != nil {
			return Manifest{}, fmt.Errorf("stdin: %w", err)
		}
	default:
		fi, err := os.Stat(source)
		if err != nil {
			return Manifest{}, fmt.Errorf("source: %w", err)
		}
		if fi.IsDir() {
			if err := t.addHostDir(ctx, source); err != nil {
				return Manifest{}, err
			}
			break
		}
		f, err := os.Open(source)
		if err != nil {
			return Manifest{}, fmt.Errorf("source: %w", err)
		}
		err = t.addTar(ctx, f, sp, false)
		f.Close()
		if err != nil {
			return Manifest{}, fmt.Errorf("%s: %w", source, err)
		}
	}
	return c.buildTree(ctx, t, cfg, opts)
}

// buildTree writes t as an image, stores it and returns its manifest.
func (c *Catalog) buildTree(ctx context.Context, t *tree, cfg Config, opts BuildOptions) (Manifest, error) {
	f, err := os.CreateTemp(c.cacheDir, "build-*.erofs")
	if err != nil {
		return Manifest{}, fmt.Errorf("cannot create image file: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w, err := writeTree(ctx, t, f, buildEpoch, c.cacheDir, opts.Progress)
	if err != nil {
		return Manifest{}, err
	}
	if err := f.Sync(); err != nil {
		return Manifest{}, err
	}
	m := Manifest{Digest: "sha256:" + w.Digest, Size: w.Size, Files: w.Files, Config: cfg}
	if err := c.commit(ctx, f.Name(), m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// ociImage opens the first image of an OCI layout directory, descending
// into nested indexes.
func ociImage(dir string) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("oci:%s: %w", dir, err)
	}
	for depth := 0; depth < 8; depth++ {
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, fmt.Errorf("oci:%s: %w", dir, err)
		}
		if len(im.Manifests) == 0 {
			return nil, fmt.Errorf("oci:%s: no image in the layout", dir)
		}
		d := im.Manifests[0]
		if d.MediaType.IsIndex() {
			if idx, err = idx.ImageIndex(d.Digest); err != nil {
				return nil, fmt.Errorf("oci:%s: %w", dir, err)
			}
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("oci:%s: %w", dir, err)
		}
		return img, nil
	}
	return nil, fmt.Errorf("oci:%s: indexes nested too deep", dir)
}

// addV1Image applies the layers of img in order, with whiteouts, and
// returns its runtime config.
func (t *tree) addV1Image(ctx context.Context, img v1.Image, sp *spool) (Config, error) {
	var cfg Config
	layers, err := img.Layers()
	if err != nil {
		return cfg, err
	}
	for i, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return cfg, fmt.Errorf("layer %d: %w", i+1, err)
		}
		t.layer = i + 1
		err = t.addTar(ctx, rc, sp, true)
		rc.Close()
		if err != nil {
			return cfg, fmt.Errorf("layer %d: %w", i+1, err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	cfg.Env = cf.Config.Env
	cfg.WorkingDir = cf.Config.WorkingDir
	cfg.User = cf.Config.User
	cfg.Labels = cf.Config.Labels
	cfg.Entrypoint = cf.Config.Entrypoint
	cfg.Cmd = cf.Config.Cmd
	for p := range cf.Config.ExposedPorts {
		cfg.ExposedPorts = append(cfg.ExposedPorts, p)
	}
	sort.Strings(cfg.ExposedPorts)
	return cfg, nil
}
