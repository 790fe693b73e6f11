package workerpool

import (
	"context"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Drives. Every worker opens the same drive metadata (DATA/drives, linked
// into each worker's directory, or PostgreSQL), so any up worker answers
// for the drives themselves; a mount goes to the worker holding the
// sandbox, which mounts the drive into its tree.

var _ api.DriveService = (*tenantRouter)(nil)

func drivesOf(svc api.Service) (api.DriveService, error) {
	ds, ok := svc.(api.DriveService)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this node's workers have no drives")
	}
	return ds, nil
}

// onAnyDrives runs fn on any up worker's drive service.
func onAnyDrives[T any](r *tenantRouter, fn func(ds api.DriveService) (T, error)) (T, error) {
	var zero T
	svc, err := r.anyService()
	if err != nil {
		return zero, err
	}
	ds, err := drivesOf(svc)
	if err != nil {
		return zero, err
	}
	return fn(ds)
}

// onSandboxDrives runs fn on the drive service of the worker holding id.
func onSandboxDrives[T any](ctx context.Context, r *tenantRouter, id string, fn func(ds api.DriveService) (T, error)) (T, error) {
	return on(ctx, r, id, func(svc api.Service) (T, error) {
		ds, err := drivesOf(svc)
		if err != nil {
			var zero T
			return zero, err
		}
		return fn(ds)
	})
}

func (r *tenantRouter) CreateDrive(ctx context.Context, req api.DriveCreate) (api.Drive, error) {
	return onAnyDrives(r, func(ds api.DriveService) (api.Drive, error) { return ds.CreateDrive(ctx, req) })
}

func (r *tenantRouter) ListDrives(ctx context.Context) ([]api.Drive, error) {
	return onAnyDrives(r, func(ds api.DriveService) ([]api.Drive, error) { return ds.ListDrives(ctx) })
}

func (r *tenantRouter) GetDrive(ctx context.Context, name string) (api.Drive, error) {
	return onAnyDrives(r, func(ds api.DriveService) (api.Drive, error) { return ds.GetDrive(ctx, name) })
}

func (r *tenantRouter) DeleteDrive(ctx context.Context, name string) error {
	_, err := onAnyDrives(r, func(ds api.DriveService) (struct{}, error) { return struct{}{}, ds.DeleteDrive(ctx, name) })
	return err
}

func (r *tenantRouter) MountDrive(ctx context.Context, id string, m api.DriveMount) ([]api.DriveMount, error) {
	return onSandboxDrives(ctx, r, id, func(ds api.DriveService) ([]api.DriveMount, error) { return ds.MountDrive(ctx, id, m) })
}

func (r *tenantRouter) UnmountDrive(ctx context.Context, id, path string) ([]api.DriveMount, error) {
	return onSandboxDrives(ctx, r, id, func(ds api.DriveService) ([]api.DriveMount, error) { return ds.UnmountDrive(ctx, id, path) })
}

func (r *tenantRouter) ListMounts(ctx context.Context, id string) ([]api.DriveMount, error) {
	return onSandboxDrives(ctx, r, id, func(ds api.DriveService) ([]api.DriveMount, error) { return ds.ListMounts(ctx, id) })
}
