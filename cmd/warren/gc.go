package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/workerpool"
)

func init() { verbs = append(verbs, newGCCmd) }

// newGCCmd is `warren gc`: one garbage collection over a data directory
// (or PostgreSQL + S3) that no `warren serve` holds; serve runs its own
// periodically (--gc-interval).
func newGCCmd() *cobra.Command {
	var data, metaURL, blobs string
	var s3o node.S3Options
	var dry bool
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "delete blob store objects no sandbox, generation or snapshot needs",
		Long: `gc marks every object reachable from a head, a retained generation, a
snapshot, a sandbox record or an upload in flight, and deletes the objects of
sandboxes (StateRefs, session states, vfs packs; never images) that were
unmarked in two runs at least --grace apart (the first run only notes them).
--dry-run reports what would go and deletes nothing. With the embedded
metadata, a running warren serve holds DATA/meta.db and runs gc itself every
--gc-interval; with --meta postgres://..., one collector runs at a time
(an advisory lock) whichever node starts it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if metaURL == "" {
				if ents, _ := os.ReadDir(filepath.Join(data, "workers")); len(ents) > 0 {
					return fmt.Errorf("%s holds sandboxes of worker processes (%s): warren serve collects them itself (--gc-interval, with every worker's roots); to collect once offline, start warren serve --workers 0 once to adopt them, then run gc", data, filepath.Join(data, "workers"))
				}
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			opts := node.Options{Dir: data, Meta: metaURL, Logger: log, Native: nil}
			closeBlobs := func() error { return nil }
			if blobs != "" {
				s3o.URL, s3o.Logger = blobs, log
				s3o.AccessKey, s3o.SecretKey, s3o.SessionToken = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
				st, closeSt, err := openBlobs(ctx, s3o)
				if err != nil {
					return err
				}
				opts.Blobs, closeBlobs = st, closeSt
			}
			defer closeBlobs()
			n, err := node.Open(ctx, opts)
			if err != nil {
				return fmt.Errorf("cannot open %s (is warren serve running on it? it collects by itself): %w", data, err)
			}
			st, gerr := n.Manager.CollectGarbage(ctx, sandbox.GCOptions{DryRun: dry, Grace: grace})
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := n.Close(cctx); err != nil && gerr == nil {
				gerr = err
			}
			if gerr != nil {
				return gerr
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			return enc.Encode(struct {
				DryRun bool `json:"dry_run"`
				sandbox.GCStats
			}{dry, st})
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", defaultDataDir(), "data directory")
	f.StringVar(&metaURL, "meta", os.Getenv("WARREN_META"), "metadata store: a postgres:// URL (default: bbolt in DATA/meta.db; env WARREN_META)")
	f.StringVar(&blobs, "blobs", "", "s3://BUCKET/PREFIX (default: DATA/blobs)")
	f.StringVar(&s3o.Endpoint, "s3-endpoint", os.Getenv("WARREN_S3_ENDPOINT"), "S3 endpoint URL [$WARREN_S3_ENDPOINT]")
	f.StringVar(&s3o.Region, "s3-region", envOr("WARREN_S3_REGION", os.Getenv("AWS_REGION")), "S3 region [$WARREN_S3_REGION, $AWS_REGION]")
	f.BoolVar(&s3o.PathStyle, "s3-path-style", os.Getenv("WARREN_S3_PATH_STYLE") == "true", "S3 path-style addressing [$WARREN_S3_PATH_STYLE=true]")
	f.BoolVar(&dry, "dry-run", false, "report what would be deleted; delete nothing")
	f.DurationVar(&grace, "grace", sandbox.DefaultGCGrace, "least time an object stays unmarked before it is deleted")
	return cmd
}

// serveGC is serve's periodic collection with in-process sandboxes.
func serveGC(ctx context.Context, log *slog.Logger, m *sandbox.Manager, interval, grace time.Duration) {
	if interval <= 0 {
		log.Info("gc off (--gc-interval 0)")
		return
	}
	log.Info("gc", "interval", interval, "grace", grace)
	go m.RunGC(ctx, interval, sandbox.GCOptions{Grace: grace})
}

// serveGCWorkers is serve's periodic collection in worker mode: the
// front collects over the shared blobs with every worker's roots.
func serveGCWorkers(ctx context.Context, log *slog.Logger, p *workerpool.Pool, interval, grace time.Duration) {
	if interval <= 0 {
		log.Info("gc off (--gc-interval 0)")
		return
	}
	log.Info("gc", "interval", interval, "grace", grace, "roots", "every worker")
	go p.RunGC(ctx, interval, sandbox.GCOptions{Grace: grace})
}
