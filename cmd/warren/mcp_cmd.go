package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/mcp"
	"github.com/warren-sandbox/warren/sandbox/node"
)

func init() { verbs = append(verbs, newMCPCmd) }

func newMCPCmd() *cobra.Command {
	var (
		c            conn
		local        bool
		data, tenant string
		pin          string
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "serve warren's sandbox tools to an MCP client over stdio",
		Long: `mcp speaks the Model Context Protocol on stdin/stdout, for agents and
editors that start their tools as processes. By default it talks to a warren
server (--server, --api-key, or $WARREN_SERVER and $WARREN_API_KEY); with
--local it runs the sandboxes in this process over --data (no server needed;
they last as long as DATA does). --sandbox ID pins every tool to one sandbox
and drops the sandbox_id argument. A server also serves the same tools over
streamable HTTP at POST /v1/mcp.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			var svc api.Service
			if local {
				// Logs go to stderr: stdout is the protocol.
				n, err := node.Open(ctx, node.Options{Dir: data, Logger: slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
				if err != nil {
					return err
				}
				defer func() {
					cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					n.Close(cctx)
				}()
				svc = n.Manager.For(tenant)
			} else {
				cl, err := c.client()
				if err != nil {
					return err
				}
				svc = cl
			}
			srv := mcp.NewServer(svc, mcp.Options{Sandbox: pin, Version: version})
			err := srv.Run(ctx, &sdk.StdioTransport{})
			if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)) {
				return nil // a signal or the client closing stdin ends the session
			}
			if err != nil {
				return fmt.Errorf("mcp: %w", err)
			}
			return nil
		},
	}
	c.flags(cmd)
	f := cmd.Flags()
	f.BoolVar(&local, "local", false, "run sandboxes in this process over --data instead of talking to a server")
	f.StringVar(&data, "data", defaultDataDir(), "data directory for --local")
	f.StringVar(&tenant, "tenant", "admin", "tenant the --local sandboxes belong to")
	f.StringVar(&pin, "sandbox", "", "pin every tool to this sandbox id")
	return cmd
}
