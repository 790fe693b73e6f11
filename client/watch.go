package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/warren-sandbox/warren/api"
)

var _ api.FileWatcher = (*Client)(nil)

// WatchFiles streams file events under req.Path (see api.FileWatcher).
func (c *Client) WatchFiles(ctx context.Context, id string, req api.WatchRequest, fn func(api.WatchEvent) error) error {
	q := url.Values{"path": {req.Path}}
	if req.Recursive {
		q.Set("recursive", strconv.FormatBool(true))
	}
	resp, err := c.do(ctx, "GET", sbPath(id, "/files/watch"), q, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var ev api.WatchEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("watch: bad event %q: %w", sc.Text(), err)
		}
		if err := fn(ev); err != nil {
			return err
		}
		if ev.Type == api.WatchClosed {
			return nil
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	return fmt.Errorf("watch: the stream ended without a closed event (connection lost)")
}
