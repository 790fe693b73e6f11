package workerpool

import (
	"context"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// The network routes go to the worker holding the sandbox, whose egress
// layer (built from Options.EgressArgs) decides.

var _ api.NetworkManager = (*tenantRouter)(nil)

func networkOf(svc api.Service) (api.NetworkManager, error) {
	nm, ok := svc.(api.NetworkManager)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this worker has no egress layer")
	}
	return nm, nil
}

func (r *tenantRouter) GetNetwork(ctx context.Context, id string) (api.NetworkStatus, error) {
	return on(ctx, r, id, func(svc api.Service) (api.NetworkStatus, error) {
		nm, err := networkOf(svc)
		if err != nil {
			return api.NetworkStatus{}, err
		}
		return nm.GetNetwork(ctx, id)
	})
}

func (r *tenantRouter) SetNetwork(ctx context.Context, id string, up api.NetworkUpdate) (api.NetworkStatus, error) {
	return on(ctx, r, id, func(svc api.Service) (api.NetworkStatus, error) {
		nm, err := networkOf(svc)
		if err != nil {
			return api.NetworkStatus{}, err
		}
		return nm.SetNetwork(ctx, id, up)
	})
}
