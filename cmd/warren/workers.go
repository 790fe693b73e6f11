package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/egress"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/workerpool"
	"github.com/warren-sandbox/warren/server"
)

func init() { verbs = append(verbs, newServeWorkerCmd) }

// newServeWorkerCmd is the hidden verb `warren serve --workers N` starts
// for each worker; its flags are workerpool's internal contract.
func newServeWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "serve-worker",
		Short:              "one worker process of warren serve --workers (started by serve, not by hand)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return workerpool.RunWorker(ctx, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// workerFlags are serve's flags for worker mode.
type workerFlags struct {
	workers    int
	memory     string
	cpuWeights bool
}

func (w *workerFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&w.workers, "workers", 2, "serve sandboxes from N worker processes, each in its own memory cgroup (0: in process)")
	f.BoolVar(&w.cpuWeights, "worker-cpu-weights", true, "weigh the front and each worker as one cgroup task each (cpu.shares/cpu.weight), so a busy worker cannot starve the others")
	f.StringVar(&w.memory, "worker-memory", "", "memory limit of each worker, e.g. 2GiB (default: 3/4 of the node's memory / N)")
}

// serveSettings are the serve flags a worker needs.
type serveSettings struct {
	addr, data, keysFile string
	apiKeys              []string
	standbyAfter         time.Duration
	maxUpload            int64
	fsync, noNative      bool
	nativeRunDir         string
	logJSON              bool
	durability           string
	commitBytes          int64
	commitDelay          time.Duration
	metricsKey           string
	egress               egress.Options
	budget               sandbox.Budget
	// The chunk cache (node.Options' sizes: negative off); the workers
	// share each tier.
	cacheMemory, cacheDisk int64
	fetchTimeout           time.Duration
	gcInterval, gcGrace    time.Duration
}

// serveWorkers is serve in worker mode: the HTTP front and its keys here,
// the sandboxes in w.workers supervised worker processes.
func serveWorkers(ctx context.Context, cmd *cobra.Command, log *slog.Logger, w workerFlags, s serveSettings) error {
	if w.workers < 0 {
		return usageError(fmt.Errorf("--workers %d: want 0 (sandboxes in process) or a number of worker processes", w.workers))
	}
	var mem int64
	if w.memory != "" {
		var err error
		if mem, err = parseSize(w.memory); err != nil {
			return usageError(fmt.Errorf("--worker-memory: %w", err))
		}
	}
	runDir := s.nativeRunDir
	if s.noNative {
		runDir = ""
	}
	f, err := workerpool.OpenFront(ctx, workerpool.FrontOptions{
		MaxFileBytes: s.maxUpload,
		Pool: workerpool.Options{
			Workers: w.workers, Data: s.data, MemoryLimit: mem, NoCPUWeights: !w.cpuWeights, StandbyAfter: s.standbyAfter,
			MaxFileBytes: s.maxUpload, Fsync: s.fsync, NativeRunDir: runDir, LogJSON: s.logJSON,
			Durability: s.durability, CommitBytes: s.commitBytes, CommitDelay: s.commitDelay, Budget: s.budget,
			Egress:           s.egress,
			ChunkCacheMemory: s.cacheMemory, ChunkCacheDisk: s.cacheDisk, ChunkFetchTimeout: s.fetchTimeout,
			Logger: log, Stderr: cmd.ErrOrStderr(),
			// Each worker schedules as the front does (--procs, or a
			// GOMAXPROCS from the environment, set by setProcs before).
			Env: []string{"GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0))},
		},
	})
	if err != nil {
		return err
	}
	frontScheduling(log)
	closeFront := func() error {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return f.Close(cctx)
	}
	if err := addKeys(ctx, &node.Node{Meta: f.Meta}, s.apiKeys, s.keysFile); err != nil {
		closeFront()
		return err
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		closeFront()
		return fmt.Errorf("cannot listen on %s: %w", s.addr, err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "warren listening on http://%s (%d workers)\n", ln.Addr(), w.workers)
	printKeyFile(out, f.AdminKey != "", f.KeyFile)
	serveGCWorkers(ctx, log, f.Pool, s.gcInterval, s.gcGrace)
	blobs := &blobGauge{count: dirCounter(filepath.Join(s.data, "blobs", "data"))} // store/dir keeps objects under data/
	srv := &http.Server{Handler: server.MetricsFront(f.Handler, s.metricsKey, blobs.write), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down: every worker hibernates its sandboxes")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	srv.Shutdown(sctx)
	cancel()
	if cerr := closeFront(); cerr != nil {
		return fmt.Errorf("shutdown: %w", cerr)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(out, "warren stopped; every sandbox is hibernated")
	return nil
}

// frontGOGC is the front's GC target in worker mode (unless GOGC is set):
// its live heap is a few MiB (keys, routes, connection buffers), so at
// Go's default 100 it collects every ~4 MiB allocated, several times per
// proxied 8 MiB output stream, and each collection stops every thread the
// front has. 400 makes that 5× rarer for ~16 MiB more heap.
const frontGOGC = 400

// frontScheduling sets the front's own scheduler once the workers are
// started (they keep --procs): the front runs no sandbox, so scheduler
// threads beyond the cores only lengthen its stop-the-world phases on a
// busy node (each running thread must be scheduled by the kernel to
// reach a safe point), and it allocates little, so it collects rarely.
func frontScheduling(log *slog.Logger) {
	if n := runtime.NumCPU(); runtime.GOMAXPROCS(0) > n {
		runtime.GOMAXPROCS(n)
	}
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		debug.SetGCPercent(frontGOGC)
		gogc = strconv.Itoa(frontGOGC)
	}
	log.Info("front scheduler", "gomaxprocs", runtime.GOMAXPROCS(0), "gogc", gogc)
}
