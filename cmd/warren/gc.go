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
--gc-interval (with worker processes, the front with every worker's roots);
on a stopped one that ran worker processes gc opens every worker's metadata
too. With --meta postgres://..., one collector runs at a time (an advisory
lock) whichever node starts it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			if metaURL == "" && blobs == "" {
				if ws, _ := filepath.Glob(filepath.Join(data, "workers", "w*", "meta.db")); len(ws) > 0 {
					st, err := gcWorkerDirs(ctx, log, data, ws, sandbox.GCOptions{DryRun: dry, Grace: grace})
					if err != nil {
						return err
					}
					return json.NewEncoder(cmd.OutOrStdout()).Encode(struct {
						DryRun bool `json:"dry_run"`
						sandbox.GCStats
					}{dry, st})
				}
			}
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

// gcWorkerDirs is `warren gc` over the data directory of a stopped serve
// that ran worker processes: the in-process node's (DATA: the front's
// keys, and any records an earlier --workers 0 start left there) and
// every worker's node are opened here (metadata, write log, sandboxes),
// and one collection runs over the shared DATA/blobs with roots from all
// of them. Holding DATA/meta.db keeps a serve from starting meanwhile.
func gcWorkerDirs(ctx context.Context, log *slog.Logger, data string, metas []string, o sandbox.GCOptions) (sandbox.GCStats, error) {
	var st sandbox.GCStats
	var nodes []*node.Node
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := len(nodes) - 1; i >= 0; i-- {
			if cerr := nodes[i].Close(cctx); cerr != nil {
				log.Warn("gc: closing a node", "err", cerr)
			}
		}
	}()
	for i, d := range append([]string{data}, metas...) {
		if i > 0 {
			d = filepath.Dir(d)
		}
		// The cache tiers off: a collection reads the store, and a disk
		// tier would be emptied for nothing.
		n, err := node.Open(ctx, node.Options{Dir: d, Logger: log, ChunkCacheMemory: -1, ChunkCacheDisk: -1})
		if err != nil {
			return st, fmt.Errorf("cannot open %s (is warren serve running on it? it collects by itself): %w", d, err)
		}
		if i > 0 {
			os.Remove(filepath.Join(d, "admin.key")) // as a worker does: it authenticates by secret only
		}
		nodes = append(nodes, n)
	}
	return sandbox.CollectGarbageFrom(ctx, nodes[0].Blobs, func(ctx context.Context) ([]sandbox.GCRoots, error) {
		out := make([]sandbox.GCRoots, len(nodes))
		for i, n := range nodes {
			r, err := n.Manager.GCRoots(ctx)
			if err != nil {
				return nil, fmt.Errorf("gc: %s: %w", filepath.Dir(n.KeyFile), err)
			}
			out[i] = r
		}
		return out, nil
	}, o, log)
}
