package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/server"
	"github.com/warren-sandbox/warren/store/dir"
)

// ServiceFactory starts the sandbox service over a fresh data directory.
type ServiceFactory func(ctx context.Context, dataDir string) (*Stack, error)

// Stack is warren's service as the bench runs it in process: the blob store
// in a local directory (store/dir), the manager with the real shell and vfs,
// the base tree as the only image, and on demand the HTTP server on loopback
// with a Go client.
type Stack struct {
	// Svc is the manager's Service for the bench tenant (in process).
	Svc api.Service
	// Wrap, when set, wraps every Service handed out (tests inject a
	// broken exec through it).
	Wrap func(api.Service) api.Service

	newManager func(ctx context.Context) (*sandbox.Manager, error)
	mgr        *sandbox.Manager
	blobs      *dir.Store
	dataDir    string
	deltas     sandbox.Deltas
	httpSrv    *http.Server
	ln         net.Listener
}

const benchTenant = "bench"

// treeImages serves the base tree as the default (and only) image.
type treeImages struct{ img sandbox.Image }

func (t treeImages) Lookup(_ context.Context, _, name string) (sandbox.Image, error) {
	if name == "" || name == t.img.Name || name == t.img.Digest {
		return t.img, nil
	}
	return sandbox.Image{}, fmt.Errorf("%w: image %q (the bench serves only %s)", errdefs.ErrNotFound, name, t.img.Name)
}

func (t treeImages) List(context.Context, string) ([]api.Image, error) {
	return []api.Image{{Name: t.img.Name, Digest: t.img.Digest}}, nil
}

func newServiceFactory(tree *BaseTree) ServiceFactory {
	return func(ctx context.Context, dataDir string) (*Stack, error) {
		blobs, err := dir.Open(dataDir, dir.WithoutSync())
		if err != nil {
			return nil, fmt.Errorf("cannot open blob store: %w", err)
		}
		s := &Stack{blobs: blobs, dataDir: dataDir, deltas: node.Deltas(blobs)}
		meta := sandbox.NewMemMeta() // outlives a reopened manager, like bbolt would
		images := treeImages{sandbox.Image{Name: "bench-base-tree", Digest: "sha256:" + tree.Digest, FS: tree.FS()}}
		interps := sandbox.ShellInterpreters(node.Commands())
		s.newManager = func(ctx context.Context) (*sandbox.Manager, error) {
			return sandbox.New(ctx, sandbox.Config{
				Blobs: blobs, Deltas: s.deltas, Images: images, Interpreters: interps, Meta: meta,
				// no idle hibernation behind the bench's back
				DefaultStandbyAfter: time.Hour,
				Logger:              slog.New(slog.DiscardHandler),
			})
		}
		if s.mgr, err = s.newManager(ctx); err != nil {
			blobs.Close()
			return nil, fmt.Errorf("cannot start the sandbox manager: %w", err)
		}
		s.Svc = s.mgr.For(benchTenant)
		return s, nil
	}
}

// DeltasInMemory reports whether hibernated deltas stay in process memory
// (sandbox.MemDeltas, until vfs persistence lands): then no resume is cold.
func (s *Stack) DeltasInMemory() bool {
	return strings.Contains(fmt.Sprintf("%T", s.deltas), "memDeltas")
}

// Service is Svc through Wrap.
func (s *Stack) Service() api.Service { return s.wrap(s.Svc) }

func (s *Stack) wrap(v api.Service) api.Service {
	if s.Wrap != nil {
		return s.Wrap(v)
	}
	return v
}

// Reopen closes the manager (which hibernates every sandbox into the blob
// store) and starts a new one over the same store and records: every
// sandbox is then in standby with nothing of it in memory.
func (s *Stack) Reopen(ctx context.Context) error {
	if err := s.mgr.Close(ctx); err != nil {
		return fmt.Errorf("cannot close the manager: %w", err)
	}
	m, err := s.newManager(ctx)
	if err != nil {
		return fmt.Errorf("cannot reopen the manager: %w", err)
	}
	s.mgr, s.Svc = m, m.For(benchTenant)
	return nil
}

// Serve starts the HTTP server on a loopback port and returns a client.
func (s *Stack) Serve(ctx context.Context) (api.Service, error) {
	keys := server.NewMemKeys()
	key := server.NewKey()
	if err := keys.PutKey(ctx, key, benchTenant, false); err != nil {
		return nil, err
	}
	h, err := server.New(server.Config{Backend: s.mgr, Keys: keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("cannot create the HTTP server: %w", err)
	}
	s.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot listen on loopback: %w", err)
	}
	s.httpSrv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go s.httpSrv.Serve(s.ln)
	// one keep-alive pool sized for the bench: every call reuses a connection
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	c, err := client.New("http://"+s.ln.Addr().String(), key, client.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	return s.wrap(c), nil
}

// Close stops the server and the manager and closes the store.
func (s *Stack) Close(ctx context.Context) error {
	var errs []error
	if s.httpSrv != nil {
		errs = append(errs, s.httpSrv.Close())
	}
	if s.mgr != nil {
		errs = append(errs, s.mgr.Close(ctx))
	}
	errs = append(errs, s.blobs.Close())
	return errors.Join(errs...)
}

// createReq is the bench sandbox's configuration (cwd and env as the peer's).
func createReq() api.CreateRequest {
	return api.CreateRequest{Cwd: SandboxCwd, Env: map[string]string{"HOME": "/home/user", "USER": "user"}}
}

// svcRun runs script in sandbox id and checks its output.
func (b *buffers) svcRun(ctx context.Context, svc api.Service, id, script string, c Check) error {
	b.reset()
	res, err := svc.Exec(ctx, id, api.ExecRequest{Script: script}, &b.out, &b.err)
	return verify(script, res.Exit, err, b.out.Bytes(), b.err.Bytes(), c)
}
