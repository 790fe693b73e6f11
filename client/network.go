package client

import (
	"context"

	"github.com/warren-sandbox/warren/api"
)

var _ api.NetworkManager = (*Client)(nil)

// GetNetwork returns a sandbox's egress policy, secrets (names and
// placeholders) and audit list.
func (c *Client) GetNetwork(ctx context.Context, id string) (api.NetworkStatus, error) {
	var st api.NetworkStatus
	err := c.call(ctx, "GET", sbPath(id, "/network"), nil, nil, &st)
	return st, err
}

// SetNetwork replaces a sandbox's egress policy and, when up.Secrets is
// non-nil, its secrets.
func (c *Client) SetNetwork(ctx context.Context, id string, up api.NetworkUpdate) (api.NetworkStatus, error) {
	var st api.NetworkStatus
	err := c.call(ctx, "PUT", sbPath(id, "/network"), nil, up, &st)
	return st, err
}
