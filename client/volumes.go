package client

import (
	"context"
	"net/url"

	"github.com/warren-sandbox/warren/api"
)

// CreateVolume creates a volume of size bytes (its quota).
func (c *Client) CreateVolume(ctx context.Context, req api.VolumeCreate) (api.Volume, error) {
	var v api.Volume
	err := c.call(ctx, "POST", "/v1/volumes", nil, req, &v)
	return v, err
}

func (c *Client) ListVolumes(ctx context.Context) ([]api.Volume, error) {
	var vs []api.Volume
	err := c.call(ctx, "GET", "/v1/volumes", nil, nil, &vs)
	return vs, err
}

func (c *Client) GetVolume(ctx context.Context, name string) (api.Volume, error) {
	var v api.Volume
	err := c.call(ctx, "GET", "/v1/volumes/"+url.PathEscape(name), nil, nil, &v)
	return v, err
}

// ResizeVolume grows a volume to size bytes (a smaller size is refused).
func (c *Client) ResizeVolume(ctx context.Context, name string, size int64) (api.Volume, error) {
	var v api.Volume
	err := c.call(ctx, "PATCH", "/v1/volumes/"+url.PathEscape(name), nil, api.VolumeResize{Size: size}, &v)
	return v, err
}

// DeleteVolume deletes a volume and its data (refused while attached).
func (c *Client) DeleteVolume(ctx context.Context, name string) error {
	return c.call(ctx, "DELETE", "/v1/volumes/"+url.PathEscape(name), nil, nil, nil)
}

var _ api.VolumeService = (*Client)(nil)
