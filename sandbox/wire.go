package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"
	"sync"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wasm"
)

// This file wires the real parts: package shell as the Interpreters,
// package vfs's persistence as the Deltas, an image.Catalog as the Images.

// ShellInterpreters returns Interpreters running package shell with the
// given command table.
func ShellInterpreters(table commands.Table, opts ...ShellOption) Interpreters {
	s := shellInterps{table: table}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// ShellOption configures ShellInterpreters.
type ShellOption func(*shellInterps)

// WithWASM runs WebAssembly modules of every session on rt (the node's
// WASM tier); without it they are refused with status 126.
func WithWASM(rt *wasm.Runtime) ShellOption { return func(s *shellInterps) { s.wasm = rt } }

type shellInterps struct {
	table commands.Table
	wasm  *wasm.Runtime
}

func (s shellInterps) config(cfg SessionConfig) shell.Config {
	c := ShellConfig(s.table, cfg)
	if s.wasm != nil {
		c.WASM = s.wasm.Exec
	}
	return c
}

// ShellConfig is the shell configuration of a session: the one mapping
// from api.Limits to the shell's and commands' limits, used by the
// Manager's sessions and by `warren run`. cfg.Memory is the sandbox's
// shared budget; nil makes one of cfg.Limits.MaxMemoryBytes for this
// session alone.
func ShellConfig(table commands.Table, cfg SessionConfig) shell.Config {
	mem := cfg.Memory
	if mem == nil {
		mem = commands.NewMemory(cfg.Limits.MaxMemoryBytes)
	}
	// The user's ids and home come from the sandbox's own /etc/passwd, as
	// login would find them; a name it lacks keeps the old identity (uid 0
	// under that name).
	// validated at create (CommandsPolicy); a bad stored one is the default
	policy, _ := shell.ParsePolicy(cfg.Commands)
	u := image.User{Name: cfg.User}
	if cfg.User != "" && cfg.FS != nil {
		if lu, err := image.LookupUser(cfg.FS.ReadFile, cfg.User); err == nil {
			u = lu
		}
	}
	if cfg.FS != nil {
		// What the session creates is the user's, as on Linux: ls -l,
		// stat and test -w on it agree with id. (The sandbox's sessions
		// run as one user; the last one made sets it.)
		cfg.FS.SetOwner(uint32(u.Uid), uint32(u.Gid))
	}
	return shell.Config{
		FS: cfg.FS, Commands: table, Env: cfg.Env, Dir: cfg.Dir, Hostname: cfg.Hostname,
		User: u.Name, Uid: u.Uid, Gid: u.Gid, Home: u.Home,
		Native: shell.NativeFunc(cfg.Native), Policy: policy,
		// Buffering commands (sort, tac, shuf) fail cleanly past the
		// sandbox's memory limit; other fields come from the ones above.
		Sys: &commands.System{MaxMemoryBytes: cfg.Limits.MaxMemoryBytes, Memory: mem, Uid: u.Uid, Gid: u.Gid, Net: cfg.Net},
		Limits: shell.Limits{
			Timeout: cfg.Limits.Timeout.Std(),
			// The sandbox's own output limit is enforced by the manager
			// (it truncates at the limit and names it in the result, which
			// the client reports); the shell's is a backstop far enough
			// above that it never trips first, since its notice would go
			// through, and be cut by, the manager's limit.
			MaxOutputBytes: backstop(cfg.Limits.MaxOutputBytes),
			// The memory limit bounds what one value may hold: the shell
			// has no allocator accounting, so strings and here-docs are
			// what an untrusted script can grow.
			MaxStringBytes: clampInt(cfg.Limits.MaxMemoryBytes),
			MaxHeredoc:     clampInt(cfg.Limits.MaxMemoryBytes),
			MaxJobs:        clampInt(cfg.Limits.Jobs),
			// A background job may run as long as an exec (jobs.go).
			JobTimeout: cfg.Limits.Timeout.Std(),
		},
		OnJob: cfg.OnJob,
	}
}

// backstop is twice n plus 1 MiB (0 stays 0: the shell's default).
func backstop(n int64) int64 {
	if n <= 0 || n > math.MaxInt64/4 {
		return n
	}
	return 2*n + 1<<20
}

func clampInt(n int64) int {
	if n <= 0 || n > math.MaxInt32 {
		return 0 // the shell's default
	}
	return int(n)
}

func (s shellInterps) New(cfg SessionConfig) (Interp, error) {
	sh, err := shell.New(s.config(cfg))
	if err != nil {
		return nil, err
	}
	return shellInterp{sh}, nil
}

func (s shellInterps) Restore(cfg SessionConfig, state []byte) (Interp, error) {
	sh, err := shell.Restore(s.config(cfg), state)
	if err != nil {
		return nil, err
	}
	return shellInterp{sh}, nil
}

type shellInterp struct{ *shell.Shell }

func (i shellInterp) Fork(fsys *vfs.FS) Interp { return shellInterp{i.Shell.Fork(fsys)} }

// VFSDeltas persists deltas with package vfs into blobs (lazily loaded:
// Load reads nodes and chunks on first use).
func VFSDeltas(blobs vfs.BlobStore) Deltas { return vfsDeltas{blobs} }

type vfsDeltas struct{ blobs vfs.BlobStore }

func (d vfsDeltas) Persist(ctx context.Context, f *vfs.FS) (string, error) {
	ref, err := f.Persist(ctx, d.blobs)
	if err != nil {
		return "", err
	}
	return ref.String(), nil
}

func (d vfsDeltas) Load(ctx context.Context, opts vfs.Options, ref string) (*vfs.FS, error) {
	r, err := vfs.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	return vfs.Load(ctx, opts, d.blobs, r)
}

// CatalogImages serves images from an image.Catalog. A tenant's own
// images are tags under "tenants/TENANT/", so a tenant sees (and builds and
// removes) only its own. Tags outside that prefix -- the embedded default,
// what an operator built with `warren image build --local` or pulled with
// `warren image pull` on the node's data directory -- are the node's
// shared images: every tenant may start from them and none may change them.
// A tenant's own tag shadows a shared one of the same name.
func CatalogImages(cat *image.Catalog) *Catalog {
	return &Catalog{cat: cat, opened: map[string]Image{}}
}

// Catalog is the Images of an image.Catalog; it also builds images.
type Catalog struct {
	cat    *image.Catalog
	mu     sync.Mutex
	opened map[string]Image // by digest
}

const tenantPrefix = "tenants/"

func tenantTag(tenant, name string) string { return tenantPrefix + tenant + "/" + name }

// imageNotFound is the error of a missing image: it names the tenant and what
// to do about it.
func imageNotFound(tenant, name string) error {
	return api.Errorf(errdefs.ErrNotFound, "image %q not found for tenant %q: build it with `warren image build -t %s DIR` (or pull it with `warren image pull REF` on the server's data directory), or list the images with `warren image ls`", name, tenant, name)
}

func (c *Catalog) Lookup(ctx context.Context, tenant, name string) (Image, error) {
	if name == "" {
		name = image.DefaultName
	}
	c.mu.Lock()
	im, ok := c.opened[name]
	c.mu.Unlock()
	if ok {
		return im, nil
	}
	var m image.Manifest
	var err error
	display := name
	switch {
	case strings.HasPrefix(name, "sha256:"):
		m, err = c.cat.Resolve(ctx, name)
	case name == image.DefaultName:
		m, err = c.cat.Resolve(ctx, name)
	case strings.HasPrefix(name, tenantPrefix):
		return Image{}, api.Errorf(api.ErrUnprocessable, "bad image name %q: name your images without the %s prefix", name, tenantPrefix)
	default:
		m, err = c.cat.Resolve(ctx, tenantTag(tenant, name))
		if err != nil {
			// Not the tenant's own: a shared image of the node.
			m, err = c.cat.ResolveRef(ctx, name)
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Image{}, imageNotFound(tenant, name)
		}
		return Image{}, api.Errorf(api.ErrUnprocessable, "image %q: %v", name, err)
	}
	opened, err := c.cat.Open(ctx, m)
	if err != nil {
		return Image{}, fmt.Errorf("cannot open image %s: %w", m.Digest, err)
	}
	im = Image{Name: display, Digest: m.Digest, FS: opened.FS(), Path: opened.Path, Config: m.Config}
	c.mu.Lock()
	c.opened[m.Digest] = Image{Name: m.Digest, Digest: m.Digest, FS: opened.FS(), Path: opened.Path, Config: m.Config}
	if name == image.DefaultName {
		// The default image is built from embedded data: its tag never
		// moves while the process runs, so its resolution is cached.
		c.opened[name] = im
	}
	c.mu.Unlock()
	return im, nil
}

// List returns the tenant's own images and the node's shared ones (marked
// Shared), a tenant's tag hiding a shared tag of the same name.
func (c *Catalog) List(ctx context.Context, tenant string) ([]api.Image, error) {
	tags, err := c.cat.List(ctx)
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	prefix := tenantTag(tenant, "")
	for _, t := range tags {
		if n, ok := strings.CutPrefix(t.Name, prefix); ok {
			own[n] = true
		}
	}
	out := []api.Image{}
	for _, t := range tags {
		switch {
		case strings.HasPrefix(t.Name, prefix):
			out = append(out, api.Image{Name: strings.TrimPrefix(t.Name, prefix), Digest: t.Digest, Size: t.Size})
		case strings.HasPrefix(t.Name, tenantPrefix) || own[t.Name]:
		default:
			out = append(out, api.Image{Name: t.Name, Digest: t.Digest, Size: t.Size, Shared: true})
		}
	}
	return out, nil
}

// Build makes an image of a tar stream and tags it name for tenant: a
// Dockerfile build when the tar has one at its root or opts name one, a
// directory image otherwise. FROM sees the tenant's own and the shared
// images; a tenant's build never pulls from a registry (the node must not
// fetch addresses a tenant chooses).
func (c *Catalog) Build(ctx context.Context, tenant, name string, tar io.Reader, opts api.ImageBuildOptions) (api.Image, error) {
	if !nameRE.MatchString(name) || name == image.DefaultName {
		return api.Image{}, api.Errorf(api.ErrUnprocessable, "bad image name %q: want 1-64 of [A-Za-z0-9._-], not %q", name, image.DefaultName)
	}
	bo := image.BuildOptions{Scope: tenantTag(tenant, ""), BuildArgs: opts.BuildArgs}
	m, err := c.cat.BuildTar(ctx, tar, opts.Dockerfile, bo)
	if err != nil {
		if isBodyTooLarge(err) {
			return api.Image{}, api.Errorf(api.ErrTooLarge, "image tar over the body limit")
		}
		return api.Image{}, api.Errorf(api.ErrUnprocessable, "cannot build image %q: %v", name, err)
	}
	if err := c.cat.Tag(ctx, tenantTag(tenant, name), m); err != nil {
		return api.Image{}, fmt.Errorf("cannot tag image %q: %w", name, err)
	}
	return api.Image{Name: name, Digest: m.Digest, Size: m.Size}, nil
}

// Remove deletes the tenant's tag name (and the image file once nothing
// else names it). Shared images are the operator's and stay.
func (c *Catalog) Remove(ctx context.Context, tenant, name string) error {
	shared := func() bool {
		_, err := c.cat.ResolveRef(ctx, name)
		return err == nil
	}
	if !nameRE.MatchString(name) {
		if !strings.HasPrefix(name, tenantPrefix) && shared() {
			return api.Errorf(errdefs.ErrPermissionDenied, "image %q is shared by the node; remove it on the server with `warren image rm --local %s`", name, name)
		}
		return api.Errorf(api.ErrUnprocessable, "bad image name %q", name)
	}
	err := c.cat.Remove(ctx, tenantTag(tenant, name))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if shared() {
			return api.Errorf(errdefs.ErrPermissionDenied, "image %q is shared by the node; remove it on the server with `warren image rm --local %s`", name, name)
		}
		return imageNotFound(tenant, name)
	case errors.Is(err, image.ErrInUse):
		return api.Errorf(errdefs.ErrFailedPrecondition, "image %q is in use by a sandbox: delete the sandboxes made from it first", name)
	}
	return err
}
