package client

import (
	"context"
	"net/url"

	"github.com/warren-sandbox/warren/api"
)

// CreateDrive creates a shared drive (Size: its quota in bytes, 0 none).
func (c *Client) CreateDrive(ctx context.Context, req api.DriveCreate) (api.Drive, error) {
	var d api.Drive
	err := c.call(ctx, "POST", "/v1/drives", nil, req, &d)
	return d, err
}

func (c *Client) ListDrives(ctx context.Context) ([]api.Drive, error) {
	var ds []api.Drive
	err := c.call(ctx, "GET", "/v1/drives", nil, nil, &ds)
	return ds, err
}

func (c *Client) GetDrive(ctx context.Context, name string) (api.Drive, error) {
	var d api.Drive
	err := c.call(ctx, "GET", "/v1/drives/"+url.PathEscape(name), nil, nil, &d)
	return d, err
}

// DeleteDrive deletes a drive and its files (refused while mounted).
func (c *Client) DeleteDrive(ctx context.Context, name string) error {
	return c.call(ctx, "DELETE", "/v1/drives/"+url.PathEscape(name), nil, nil, nil)
}

// MountDrive mounts a drive into sandbox id; it answers the mount list.
func (c *Client) MountDrive(ctx context.Context, id string, m api.DriveMount) ([]api.DriveMount, error) {
	var ms []api.DriveMount
	err := c.call(ctx, "POST", "/v1/sandboxes/"+url.PathEscape(id)+"/mounts", nil, m, &ms)
	return ms, err
}

// UnmountDrive removes the drive mounted at path from sandbox id.
func (c *Client) UnmountDrive(ctx context.Context, id, path string) ([]api.DriveMount, error) {
	var ms []api.DriveMount
	err := c.call(ctx, "DELETE", "/v1/sandboxes/"+url.PathEscape(id)+"/mounts", url.Values{"path": {path}}, nil, &ms)
	return ms, err
}

func (c *Client) ListMounts(ctx context.Context, id string) ([]api.DriveMount, error) {
	var ms []api.DriveMount
	err := c.call(ctx, "GET", "/v1/sandboxes/"+url.PathEscape(id)+"/mounts", nil, nil, &ms)
	return ms, err
}

var _ api.DriveService = (*Client)(nil)
