package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/fleet"
	"github.com/warren-sandbox/warren/server"
)

func init() { verbs = append(verbs, newNodeCmd) }

// newNodeCmd is `warren node`: the fleet's nodes (admin key; any node's
// address works).
func newNodeCmd() *cobra.Command {
	var c conn
	cmd := &cobra.Command{
		Use:   "node",
		Short: "list and drain the nodes of a fleet (admin key)",
	}
	c.flags(cmd)
	var asJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "show the nodes: lease, load, capacity, sandboxes owned",
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			var nl server.NodeList
			if err := c.admin(cmd.Context(), http.MethodGet, "/v1/nodes", &nl); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(nl)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tADDRESS\tLEASE\tLOAD\tOWNED\tLABELS")
			for _, n := range nl.Nodes {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%s\n", n.ID, n.Address, leaseText(n), n.Load, n.Capacity, n.Owned, labelText(n.Labels))
			}
			return tw.Flush()
		}),
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	var self bool
	drain := &cobra.Command{
		Use:   "drain ID | drain --self",
		Short: "hand a node's sandboxes to the other nodes (commit, hibernate, release); it takes no new ones",
		Long: `drain asks node ID (through any node) to hand every sandbox it holds to the
other nodes: each is committed, hibernated and released, and the next request
for it is served elsewhere. The node places no new sandboxes afterwards.
--self drains the node --server points at (a Kubernetes preStop hook).`,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if self == (len(args) == 1) || len(args) > 1 {
				return api.Errorf(errdefs.ErrInvalidArgument, "node drain: give a node ID or --self")
			}
			id := ""
			if self {
				var nl server.NodeList
				if err := c.admin(cmd.Context(), http.MethodGet, "/v1/nodes", &nl); err != nil {
					return err
				}
				id = nl.Self
			} else {
				id = args[0]
			}
			var res fleet.DrainResult
			if err := c.admin(cmd.Context(), http.MethodPost, "/v1/nodes/"+url.PathEscape(id)+"/drain", &res); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "node %s drained: released %d sandboxes", res.Node, res.Released)
			if len(res.Failed) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), ", %d could not be handed off: %s", len(res.Failed), strings.Join(res.Failed, " "))
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		}),
	}
	drain.Flags().BoolVar(&self, "self", false, "drain the node at --server")
	cmd.AddCommand(ls, drain)
	return cmd
}

func leaseText(n fleet.Member) string {
	left := time.Until(n.Expires).Round(100 * time.Millisecond)
	s := "expired"
	if n.Live {
		s = "live (" + left.String() + ")"
	}
	if n.Draining {
		s += ", draining"
	}
	return s
}

func labelText(l map[string]string) string {
	var parts []string
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// admin sends an admin request to the node the flags name and decodes
// the JSON reply into out; error replies become classed errors.
func (c *conn) admin(ctx context.Context, method, path string, out any) error {
	base, key := c.server, c.key
	if base == "" {
		base = os.Getenv("WARREN_SERVER")
	}
	if base == "" {
		base = "http://127.0.0.1:7711"
	}
	if key == "" {
		key = os.Getenv("WARREN_API_KEY")
	}
	if key == "" {
		if data, err := os.ReadFile(filepath.Join(defaultDataDir(), "admin.key")); err == nil {
			key = strings.TrimSpace(string(data))
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", base, err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return api.Errorf(errdefs.ErrUnavailable, "%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode >= 400 {
		var eb api.ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return api.ToNative(resp.StatusCode, "", strings.TrimSpace(string(data)))
		}
		return api.ToNative(resp.StatusCode, eb.Error.Code, eb.Error.Message)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: bad response: %w", method, path, err)
	}
	return nil
}
