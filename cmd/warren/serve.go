package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/workerpool"
	"github.com/warren-sandbox/warren/server"
	"github.com/warren-sandbox/warren/store"
)

func init() { verbs = append(verbs, newServeCmd) }

// defaultDataDir is where serve keeps its data and where client verbs
// look for the admin key when none is given.
func defaultDataDir() string {
	if d := os.Getenv("WARREN_DATA"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "warren")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "warren")
	}
	return "warren-data"
}

func newServeCmd() *cobra.Command {
	var egressOpts egress.Options
	var (
		addr, data, keysFile, logFormat string
		metaURL                         string
		apiKeys                         []string
		standbyAfter                    time.Duration
		maxUpload                       int64
		fsync, noNative                 bool
		nativeRunDir                    string
		blobs                           string
		s3o                             node.S3Options
		memLimit, shedAbove             string
		procs                           int
		durability                      string
		commitBytes                     int64
		commitDelay                     time.Duration
		budgetSandbox, budgetNode       string
		budgetWait                      time.Duration
		cacheMem, cacheDisk             string
		fetchTimeout                    time.Duration
		gcInterval, gcGrace             time.Duration
		wf                              workerFlags
		metricsKey                      string
		ff                              fleetFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "run the sandbox service (HTTP API under /v1)",
		Long: `serve runs warren's service on its embedded defaults: blobs in DATA/blobs,
metadata and API keys in DATA/meta.db. On first start it creates an admin
key and writes it to DATA/admin.key (mode 0600); the key itself is never
printed or logged, only the file's path (client verbs on this machine read
it from there).
SIGTERM or SIGINT hibernates every sandbox to DATA and exits; the next start
knows every sandbox and resumes each on first use. A kill -9 loses the work
of each sandbox since its last hibernate.

--meta postgres://USER:PASS@HOST/DB (or WARREN_META) keeps metadata and API
keys in PostgreSQL instead of DATA/meta.db; the schema is created and
migrated on start.

--blobs s3://BUCKET/PREFIX keeps the blobs in an S3-compatible bucket
instead of DATA/blobs (--s3-endpoint, --s3-region, --s3-path-style;
credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
AWS_SESSION_TOKEN).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var h slog.Handler = slog.NewTextHandler(cmd.ErrOrStderr(), nil)
			if logFormat == "json" {
				h = slog.NewJSONHandler(cmd.ErrOrStderr(), nil)
			} else if logFormat != "text" {
				return usageError(fmt.Errorf("--log-format %q: want text or json", logFormat))
			}
			log := slog.New(h)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if wf.workers != 0 && (metaURL != "" || blobs != "") {
				// Workers keep bbolt metas and share DATA/blobs; with a shared
				// PostgreSQL every worker would load every sandbox.
				if cmd.Flags().Changed("workers") {
					return usageError(fmt.Errorf("--workers %d with --meta or --blobs: worker processes need local metadata and blobs for now (use --workers 0)", wf.workers))
				}
				log.Info("--meta/--blobs: sandboxes served in process (worker processes need local metadata and blobs)")
				wf.workers = 0
			}
			if err := api.CheckDurability(durability); err != nil {
				return usageError(fmt.Errorf("--durability: %w", err))
			}
			eg, err := egressOpts.Build() // bad --egress-* flags fail here, before any worker starts
			if err != nil {
				return err
			}
			if err := ff.check(data, metaURL); err != nil {
				return err
			}
			budget, err := parseBudget(budgetSandbox, budgetNode, budgetWait)
			if err != nil {
				return err
			}
			cacheMemN, cacheDiskN, err := parseChunkCache(cacheMem, cacheDisk)
			if err != nil {
				return usageError(err)
			}
			if fetchTimeout <= 0 {
				return usageError(fmt.Errorf("--chunk-fetch-timeout %v: must be positive", fetchTimeout))
			}
			if wf.workers != 0 {
				setProcs(log, procs, cmd.Flags().Changed("procs"))
				return serveWorkers(ctx, cmd, log, wf, serveSettings{addr, data, keysFile, apiKeys, standbyAfter, maxUpload, fsync, noNative, nativeRunDir, logFormat == "json", durability, commitBytes, commitDelay, metricsKey, egressOpts, budget, cacheMemN, cacheDiskN, fetchTimeout, gcInterval, gcGrace})
			}
			if metaURL == "" {
				if err := workerpool.Adopt(ctx, data, 0); err != nil { // sandboxes of an earlier --workers start
					return err
				}
			}
			var rt *native.Runtime
			if noNative {
				log.Info("native tier off (--no-native): ELF commands fail with a message saying so")
			} else {
				var err error
				rt, err = native.NewRuntime(ctx, native.Config{RunDir: nativeRunDir})
				if err != nil {
					return fmt.Errorf("native tier: %w", err)
				}
				if why := rt.Available(); why != nil {
					// Keep serving: resident commands work, ELF commands
					// fail naming this reason.
					log.Warn("native tier unavailable; ELF commands will fail", "reason", why.Error())
				} else {
					log.Info("native tier ready", "cgroups", rt.CgroupInfo())
				}
			}
			setProcs(log, procs, cmd.Flags().Changed("procs"))
			guard, err := memoryGuard(log, memLimit, cmd.Flags().Changed("memory-limit"), shedAbove)
			if err != nil {
				if rt != nil {
					rt.Close()
				}
				return err
			}
			serveGOGC(log)
			opts := node.Options{
				Egress: eg,
				Dir:    data, Meta: metaURL, Logger: log, Fsync: fsync, DefaultStandbyAfter: standbyAfter, MaxFileBytes: maxUpload,
				Native: rt, Guard: guard,
				Durability: durability, CommitBytes: commitBytes, CommitDelay: commitDelay, Budget: budget,
				ChunkCacheMemory: cacheMemN, ChunkCacheDisk: cacheDiskN, ChunkFetchTimeout: fetchTimeout,
			}
			closeBlobs := func() error { return nil }
			if blobs != "" {
				s3o.URL, s3o.Logger = blobs, log
				s3o.AccessKey, s3o.SecretKey, s3o.SessionToken = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
				st, closeSt, err := openBlobs(ctx, s3o)
				if err != nil {
					if rt != nil {
						rt.Close()
					}
					return err
				}
				opts.Blobs, closeBlobs = st, closeSt
				log.Info("blobs in S3", "url", blobs, "endpoint", s3o.Endpoint)
			}
			n, err := node.Open(ctx, opts)
			if err != nil {
				closeBlobs()
				if rt != nil {
					rt.Close()
				}
				return err
			}
			closeNode := func() error {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				// Sandboxes first (hibernating closes their workspaces),
				// then the blobs they were written to, then the runtime
				// (mounts, cgroups).
				err := errors.Join(n.Close(cctx), closeBlobs())
				if rt != nil {
					err = errors.Join(err, rt.Close())
				}
				return err
			}
			if err := addKeys(ctx, n, apiKeys, keysFile); err != nil {
				closeNode()
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				closeNode()
				return fmt.Errorf("cannot listen on %s: %w", addr, err)
			}
			fl, err := ff.start(ctx, log, n, ln.Addr().String())
			if err != nil {
				ln.Close()
				closeNode()
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "warren listening on http://%s\n", ln.Addr())
			printKeyFile(out, n.AdminKey != "", n.KeyFile)
			if guard != nil {
				go guard.Run(ctx, n.Handler.Idle)
			}
			serveGC(ctx, log, n.Manager, gcInterval, gcGrace)
			blobs := &blobGauge{count: storeCounter(n.Blobs)}
			srv := &http.Server{Handler: server.MetricsFront(n.Handler, metricsKey, blobs.write), ReadHeaderTimeout: 10 * time.Second}
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err = <-errc:
			case <-ctx.Done():
				log.Info("shutting down: hibernating every sandbox")
			}
			ff.drain(log, fl) // hands every sandbox to the other nodes first
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			srv.Shutdown(sctx) // streams still open are cut; their execs are cancelled by Close
			cancel()
			ff.leave(log, fl)
			if cerr := closeNode(); cerr != nil {
				return fmt.Errorf("shutdown: %w", cerr)
			}
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			fmt.Fprintln(out, "warren stopped; every sandbox is hibernated")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7711", "address to listen on")
	f.StringVar(&data, "data", defaultDataDir(), "data directory (blobs, metadata, admin.key)")
	f.StringVar(&metaURL, "meta", os.Getenv("WARREN_META"), "metadata store: a postgres:// URL (default: bbolt in DATA/meta.db; env WARREN_META)")
	f.StringArrayVar(&apiKeys, "api-key", nil, "TENANT=KEY: accept KEY for TENANT (repeatable)")
	f.StringVar(&keysFile, "keys-file", "", "file of \"TENANT KEY\" lines to accept")
	f.DurationVar(&standbyAfter, "standby-after", 15*time.Second, "default idle time before a sandbox hibernates")
	f.Int64Var(&maxUpload, "max-upload", 64<<20, "largest file or tar upload, bytes")
	f.BoolVar(&fsync, "fsync", false, "fsync every blob (durable against power loss; slower)")
	f.StringVar(&durability, "durability", "local", "default ack level of execs and file writes: memory, local (fsynced write log) or committed (published generation)")
	f.Int64Var(&commitBytes, "commit-bytes", 4<<20, "commit a sandbox once this many bytes of its writes are only in the write log")
	f.DurationVar(&commitDelay, "commit-delay", 2*time.Second, "commit a sandbox at most this long after its oldest uncommitted write")
	f.StringVar(&budgetSandbox, "uncommitted-budget", "256MiB", "bytes a sandbox may hold that are not yet committed; over it writers wait --budget-wait, then fail (HTTP 507); off: none")
	f.StringVar(&budgetNode, "node-uncommitted-budget", "1GiB", "the same budget for all of the node's sandboxes together; off: none")
	f.StringVar(&cacheMem, "chunk-cache-memory", "256MiB", "memory for committed file data read back from the blob store (chunks leave memory once committed); 0 or off: none")
	f.StringVar(&cacheDisk, "chunk-cache-disk", "4GiB", "local disk (DATA/cache/chunks) for committed file data that left the memory cache; 0 or off: none")
	f.DurationVar(&fetchTimeout, "chunk-fetch-timeout", 20*time.Second, "how long a read of committed data that left the cache waits for the blob store (retries included) before it fails with EIO")
	f.DurationVar(&budgetWait, "budget-wait", sandbox.DefaultBudgetWait, "how long a writer over an uncommitted budget waits for a commit before its write fails")
	f.DurationVar(&gcInterval, "gc-interval", sandbox.DefaultGCInterval, "run garbage collection this often (0: never; with worker processes the front collects with every worker's roots and skips a run while one is down)")
	f.DurationVar(&gcGrace, "gc-grace", sandbox.DefaultGCGrace, "least time an unreferenced object stays before gc deletes it")
	f.StringVar(&logFormat, "log-format", "text", "request log format: text or json")
	f.BoolVar(&noNative, "no-native", false, "do not run ELF files natively (namespaces, overlay, cgroups)")
	f.StringVar(&nativeRunDir, "native-run-dir", "/run/warren/native", "the native tier's mounts and workspaces (one warren serve per directory)")
	f.StringVar(&blobs, "blobs", os.Getenv("WARREN_BLOBS"), "s3://BUCKET/PREFIX: keep blobs in S3 instead of DATA/blobs [$WARREN_BLOBS]")
	f.StringVar(&s3o.Endpoint, "s3-endpoint", os.Getenv("WARREN_S3_ENDPOINT"), "S3 endpoint URL, e.g. http://127.0.0.1:7070 [$WARREN_S3_ENDPOINT]")
	f.StringVar(&s3o.Region, "s3-region", envOr("WARREN_S3_REGION", os.Getenv("AWS_REGION")), "S3 region (default us-east-1) [$WARREN_S3_REGION, $AWS_REGION]")
	f.BoolVar(&s3o.PathStyle, "s3-path-style", os.Getenv("WARREN_S3_PATH_STYLE") == "true", "S3 path-style addressing (bucket in the path; most non-AWS servers) [$WARREN_S3_PATH_STYLE=true]")
	f.StringVar(&memLimit, "memory-limit", "70%", "the Go runtime's soft memory limit (GOMEMLIMIT): SIZE, PERCENT of the node's memory (RAM or cgroup limit), or off; a GOMEMLIMIT in the environment wins over the default")
	f.StringVar(&shedAbove, "shed-above", "90%", "refuse new creates and execs with 503 + Retry-After while the heap is over SIZE or PERCENT of --memory-limit (off: never)")
	wf.add(cmd)
	f.StringVar(&metricsKey, "metrics-key", os.Getenv("WARREN_METRICS_KEY"), "require Authorization: Bearer KEY on /metrics (its series name tenants) [$WARREN_METRICS_KEY]")
	addEgressFlags(cmd, &egressOpts)
	ff.add(cmd)
	f.IntVar(&procs, "procs", defaultProcs(), "Go scheduler threads (GOMAXPROCS); more than the cores so the kernel time-slices busy sandboxes and a short exec is not queued behind them; a GOMAXPROCS in the environment wins over the default")
	return cmd
}

// printKeyFile says where the admin key is: never the key itself, which
// would end up in terminals' scrollback and service logs.
func printKeyFile(out io.Writer, created bool, path string) {
	if created {
		fmt.Fprintf(out, "admin key created in %s (mode 0600): export WARREN_API_KEY=$(cat %s)\n", path, path)
	}
	fmt.Fprintf(out, "admin key file: %s\n", path)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// openBlobs opens the S3 blob store of --blobs, checking the flags that
// go with it first.
func openBlobs(ctx context.Context, o node.S3Options) (store.Store, func() error, error) {
	if o.Endpoint == "" {
		return nil, nil, fmt.Errorf("--blobs %s needs --s3-endpoint URL (or WARREN_S3_ENDPOINT), e.g. https://s3.us-east-1.amazonaws.com", o.URL)
	}
	st, closeSt, err := node.OpenS3(ctx, o)
	if err != nil {
		return nil, nil, fmt.Errorf("--blobs: %w", err)
	}
	return st, closeSt, nil
}

// defaultProcs is GOMAXPROCS for serve: 8 per core, at least 16. With
// GOMAXPROCS = cores, a woken goroutine (a neighbour's short exec) waits
// in Go's FIFO run queue behind every busy sandbox, 10 ms per slice: with
// 12 hostile sandboxes on 2 cores the heartbeat's p50 was 156-226 ms; at
// 16 it was 20-39 ms (TestE2E_NeighbourDoesNotNotice, NEIGHBOUR_GOMAXPROCS),
// since the kernel's scheduler favours the thread that just woke.
func defaultProcs() int { return max(16, 8*runtime.NumCPU()) }

func setProcs(log *slog.Logger, n int, changed bool) {
	if !changed && os.Getenv("GOMAXPROCS") != "" {
		return
	}
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
	log.Info("scheduler", "gomaxprocs", runtime.GOMAXPROCS(0), "cpus", runtime.NumCPU())
}

// memoryGuard sets the GOMEMLIMIT serve runs under and returns the guard
// that sheds load before it is reached (nil: shedding off).
func memoryGuard(log *slog.Logger, limitFlag string, changed bool, shedFlag string) (*server.MemoryGuard, error) {
	var limit int64
	switch {
	case !changed && os.Getenv("GOMEMLIMIT") != "":
		limit = debug.SetMemoryLimit(-1) // the runtime read it at start
	case limitFlag == "off":
	default:
		var err error
		if limit, err = sizeOrPercent(limitFlag, func() (int64, error) {
			n, src, err := server.NodeMemory()
			if err == nil {
				log.Info("node memory", "bytes", n, "from", src)
			}
			return n, err
		}); err != nil {
			return nil, usageError(fmt.Errorf("--memory-limit: %w", err))
		}
		debug.SetMemoryLimit(limit)
	}
	if shedFlag == "off" {
		log.Info("memory limit", "gomemlimit", limit, "shedding", "off")
		return nil, nil
	}
	if limit <= 0 || limit == math.MaxInt64 {
		if strings.HasSuffix(shedFlag, "%") {
			log.Warn("no memory limit: load shedding is off (give --shed-above a size to turn it on)")
			return nil, nil
		}
	}
	high, err := sizeOrPercent(shedFlag, func() (int64, error) { return limit, nil })
	if err != nil {
		return nil, usageError(fmt.Errorf("--shed-above: %w", err))
	}
	log.Info("memory limit", "gomemlimit", limit, "shed_above", high)
	return server.NewMemoryGuard(server.MemoryGuardConfig{High: uint64(high)})
}

// serveGOGC is the in-process serve's GC target: under a GOMEMLIMIT (the
// runtime collects harder as the heap nears it, so a larger goal cannot
// run the node out of memory), GOGC 400 unless GOGC is set. The density
// runs measured sched->done p99 12-14 ms at 400 against 24-94 ms at 100
// (bench/README "Density tails"): fewer collections, fewer stops of the
// many threads a busy node runs. Without a limit Go's default stays.
func serveGOGC(log *slog.Logger) {
	if os.Getenv("GOGC") != "" {
		return
	}
	if l := debug.SetMemoryLimit(-1); l <= 0 || l == math.MaxInt64 {
		log.Info("gogc", "gogc", 100, "why", "no memory limit")
		return
	}
	debug.SetGCPercent(serveGOGCPercent)
	log.Info("gogc", "gogc", serveGOGCPercent)
}

// serveGOGCPercent is serveGOGC's target (the front of worker mode uses
// frontGOGC, the workers workerpool.WorkerGOGC: the same 400).
const serveGOGCPercent = 400

// parseBudget reads the uncommitted-budget flags.
func parseBudget(perSandbox, perNode string, wait time.Duration) (sandbox.Budget, error) {
	b := sandbox.Budget{Wait: wait}
	if wait <= 0 {
		return b, fmt.Errorf("--budget-wait %v: must be positive", wait)
	}
	for _, f := range []struct {
		name, v string
		dst     *int64
	}{{"--uncommitted-budget", perSandbox, &b.Sandbox}, {"--node-uncommitted-budget", perNode, &b.Node}} {
		if strings.EqualFold(strings.TrimSpace(f.v), "off") {
			*f.dst = -1
			continue
		}
		n, err := parseSize(f.v)
		if err != nil {
			return b, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = n
	}
	return b, nil
}

// parseChunkCache reads the chunk cache flags into node.Options sizes
// (0 = off is -1 there).
func parseChunkCache(mem, disk string) (int64, int64, error) {
	var out [2]int64
	for i, f := range []struct{ name, v string }{{"--chunk-cache-memory", mem}, {"--chunk-cache-disk", disk}} {
		if v := strings.TrimSpace(f.v); v == "0" || strings.EqualFold(v, "off") {
			out[i] = -1
			continue
		}
		n, err := parseSize(f.v)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", f.name, err)
		}
		out[i] = n
	}
	return out[0], out[1], nil
}

// sizeOrPercent reads SIZE (parseSize) or N% of what of returns.
func sizeOrPercent(s string, of func() (int64, error)) (int64, error) {
	if p, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v <= 0 || v > 100 {
			return 0, fmt.Errorf("bad percentage %q: want 0 < N <= 100", s)
		}
		n, err := of()
		if err != nil {
			return 0, err
		}
		return int64(float64(n) * v / 100), nil
	}
	return parseSize(s)
}

// addKeys installs keys from flags and a keys file (persisted in meta).
func addKeys(ctx context.Context, n *node.Node, flags []string, file string) error {
	pairs := map[string]string{}
	for _, kv := range flags {
		t, k, ok := strings.Cut(kv, "=")
		if !ok || t == "" || k == "" {
			return usageError(fmt.Errorf("--api-key %q: want TENANT=KEY", kv))
		}
		pairs[k] = t
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("keys file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			s := strings.TrimSpace(sc.Text())
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			fields := strings.Fields(s)
			if len(fields) != 2 {
				return fmt.Errorf("%s:%d: want \"TENANT KEY\"", file, line)
			}
			pairs[fields[1]] = fields[0]
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("keys file: %w", err)
		}
	}
	for k, t := range pairs {
		if len(k) < 16 {
			return usageError(fmt.Errorf("key for tenant %q is shorter than 16 characters", t))
		}
		if err := n.Meta.PutKey(ctx, k, t, false); err != nil {
			return err
		}
	}
	return nil
}
