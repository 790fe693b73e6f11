package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ResolveRef finds ref as a tag, a digest, or (for a registry reference
// such as "debian:bookworm") under the full name a pull tags it with
// ("index.docker.io/library/debian:bookworm").
func (c *Catalog) ResolveRef(ctx context.Context, ref string) (Manifest, error) {
	m, err := c.Resolve(ctx, ref)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	if full, ok := registryName(ref); ok && full != ref {
		if m, err2 := c.Resolve(ctx, full); err2 == nil {
			return m, nil
		}
	}
	return m, err
}

// registryName is the normalised name of a registry reference.
func registryName(ref string) (string, bool) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", false
	}
	return r.Name(), true
}

// Pull fetches ref (any OCI or Docker image reference) from its registry,
// with credentials from the usual docker config (authn.DefaultKeychain),
// for this machine's architecture; stores its layers as one image and
// tags it with the reference's full name. A pull always asks the registry,
// so a moved tag is followed.
func (c *Catalog) Pull(ctx context.Context, ref string, opts BuildOptions) (Manifest, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return Manifest{}, fmt.Errorf("bad image reference %q: %w", ref, err)
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
			return Manifest{}, fmt.Errorf("cannot pull %s (credentials come from the docker config, $DOCKER_CONFIG or ~/.docker/config.json: run docker login %s): %w", ref, r.Context().RegistryStr(), err)
		}
		return Manifest{}, fmt.Errorf("cannot pull %s: %w", ref, err)
	}
	t := newTree(c.Limits)
	sp, err := newSpool(c.cacheDir)
	if err != nil {
		return Manifest{}, err
	}
	defer sp.Close()
	cfg, err := t.addV1Image(ctx, img, sp)
	if err != nil {
		return Manifest{}, fmt.Errorf("pull %s: %w", ref, err)
	}
	m, err := c.buildTree(ctx, t, cfg, opts)
	if err != nil {
		return Manifest{}, err
	}
	if err := c.Tag(ctx, r.Name(), m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}
