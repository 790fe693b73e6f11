package workerpool

import (
	"context"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

var _ api.Generations = (*tenantRouter)(nil)

// ListGenerations asks the worker that holds sandbox id (each worker is a
// node with its own metadata: the generations are there).
func (r *tenantRouter) ListGenerations(ctx context.Context, id string) ([]api.Generation, error) {
	return on(ctx, r, id, func(svc api.Service) ([]api.Generation, error) {
		g, ok := svc.(api.Generations)
		if !ok {
			return nil, api.Errorf(errdefs.ErrNotImplemented, "this worker does not list generations")
		}
		return g.ListGenerations(ctx, id)
	})
}

// generationWorker is the worker holding the sandbox a create
// from_generation starts from.
func (r *tenantRouter) generationWorker(ctx context.Context, from *api.GenerationRef) (*worker, error) {
	w, _, _, err := r.locate(ctx, from.Sandbox)
	return w, err
}
