package workerpool

import (
	"context"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Terminals and file watches go to the worker that runs the sandbox.

var _ api.Terminals = (*tenantRouter)(nil)

func (r *tenantRouter) ResizeProcess(ctx context.Context, id string, pid int, size api.PTYSize) error {
	return on0(ctx, r, id, func(svc api.Service) error {
		t, ok := svc.(api.Terminals)
		if !ok {
			return api.Errorf(errdefs.ErrNotImplemented, "this node's workers have no terminals")
		}
		return t.ResizeProcess(ctx, id, pid, size)
	})
}

var _ api.FileWatcher = (*tenantRouter)(nil)

func (r *tenantRouter) WatchFiles(ctx context.Context, id string, req api.WatchRequest, fn func(api.WatchEvent) error) error {
	return on0(ctx, r, id, func(svc api.Service) error {
		w, ok := svc.(api.FileWatcher)
		if !ok {
			return api.Errorf(errdefs.ErrNotImplemented, "this node's workers cannot watch files")
		}
		return w.WatchFiles(ctx, id, req, fn)
	})
}
