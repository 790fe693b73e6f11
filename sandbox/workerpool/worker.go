package workerpool

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/warren-sandbox/warren/egress"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/server"
)

// readyLine is what a worker prints on stdout once it serves.
const readyLine = "warren-worker ready"

// statsPath serves the worker's sandbox.Stats as JSON (for the front's
// /metrics); it takes the same secret as the API.
const statsPath = "/internal/stats"

// workerFlags is the worker's command line: the supervisor writes it
// (Pool.argv) and RunWorker reads it, both in this package, so it is an
// internal contract and not a user interface.
type workerFlags struct {
	index        int
	dir, data    string
	socket       string
	standbyAfter time.Duration
	tick         time.Duration
	maxUpload    int64
	fsync        bool
	noNative     bool
	nativeRunDir string
	logJSON      bool
	shedAbove    int64
	durability   string
	commitBytes  int64
	commitDelay  time.Duration
	egress       egress.Options
	budget       sandbox.Budget
	cacheMemory  int64
	cacheDisk    int64
	fetchTimeout time.Duration
}

func (f *workerFlags) set(fs *flag.FlagSet) {
	fs.IntVar(&f.index, "index", 0, "worker index")
	fs.StringVar(&f.dir, "dir", "", "the worker's own directory (meta.db)")
	fs.StringVar(&f.data, "data", "", "the node's data directory (shared blobs and image cache)")
	fs.StringVar(&f.socket, "socket", "", "unix socket to serve on")
	fs.DurationVar(&f.standbyAfter, "standby-after", 0, "default idle time before a sandbox hibernates")
	fs.DurationVar(&f.tick, "tick", 0, "idle-check interval (0: the manager's default)")
	fs.Int64Var(&f.maxUpload, "max-upload", 0, "largest file or tar upload, bytes")
	fs.BoolVar(&f.fsync, "fsync", false, "fsync every blob")
	fs.BoolVar(&f.noNative, "no-native", false, "no native tier")
	fs.StringVar(&f.nativeRunDir, "native-run-dir", "", "this worker's native run directory")
	fs.BoolVar(&f.logJSON, "log-json", false, "log as JSON")
	fs.Int64Var(&f.shedAbove, "shed-above", 0, "refuse new creates and execs with 503 while the heap is over this many bytes (0: never)")
	fs.StringVar(&f.durability, "durability", "", "default ack level (\"\": local)")
	fs.Int64Var(&f.commitBytes, "commit-bytes", 0, "committer size threshold (0: its default)")
	fs.DurationVar(&f.commitDelay, "commit-delay", 0, "committer time threshold (0: its default)")
	u := egress.Usage
	add := func(to *[]string) func(string) error {
		return func(s string) error { *to = append(*to, s); return nil }
	}
	fs.Func("egress-allow-cidr", u["egress-allow-cidr"], add(&f.egress.AllowCIDRs))
	fs.StringVar(&f.egress.HostsFile, "egress-hosts", "", u["egress-hosts"])
	fs.BoolVar(&f.egress.HostsOnly, "egress-hosts-only", false, u["egress-hosts-only"])
	fs.Func("egress-allow", u["egress-allow"], add(&f.egress.Allow))
	fs.Func("egress-deny", u["egress-deny"], add(&f.egress.Deny))
	fs.StringVar(&f.egress.CAFile, "egress-ca", "", u["egress-ca"])
	fs.BoolVar(&f.egress.Insecure, "egress-allow-insecure", false, u["egress-allow-insecure"])
	fs.Int64Var(&f.budget.Sandbox, "budget-sandbox", 0, "uncommitted budget per sandbox, bytes (0: the default; negative: none)")
	fs.Int64Var(&f.budget.Node, "budget-node", 0, "uncommitted budget of this worker's node, bytes (0: the default; negative: none)")
	fs.DurationVar(&f.budget.Wait, "budget-wait", 0, "how long a writer over budget waits (0: the default)")
	fs.Int64Var(&f.cacheMemory, "chunk-cache-memory", 0, "this worker's chunk cache memory tier, bytes (0: the default; negative: off)")
	fs.Int64Var(&f.cacheDisk, "chunk-cache-disk", 0, "this worker's chunk cache disk tier in DIR/chunks, bytes (0: the default; negative: off)")
	fs.DurationVar(&f.fetchTimeout, "chunk-fetch-timeout", 0, "bound of one fetch of an evicted chunk (0: the vfs default)")
}

// RunWorker is the body of a worker process (`warren serve-worker`): it
// reads its secret from the first line of stdin, opens a node whose
// metadata is its own (DIR/meta.db) and whose blob store and image cache
// are the node's (symlinks to DATA/blobs and DATA/cache), and serves the
// API on a unix socket until ctx ends, then hibernates every sandbox.
func RunWorker(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f workerFlags
	fs := flag.NewFlagSet("serve-worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.set(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.dir == "" || f.data == "" || f.socket == "" {
		return errors.New("serve-worker: --dir, --data and --socket are required (this verb is started by warren serve --workers)")
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	secret := strings.TrimSpace(line)
	if len(secret) < 32 {
		return fmt.Errorf("serve-worker: no secret on stdin (%v)", err)
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if f.logJSON {
		h = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(h).With("worker", f.index)
	if err := linkShared(f.dir, f.data); err != nil {
		return err
	}
	var rt *native.Runtime
	if !f.noNative {
		rt, err = native.NewRuntime(ctx, native.Config{RunDir: f.nativeRunDir})
		if err != nil {
			return fmt.Errorf("native tier: %w", err)
		}
		defer rt.Close()
		if why := rt.Available(); why != nil {
			log.Warn("native tier unavailable; ELF commands will fail", "reason", why.Error())
		}
	}
	var guard *server.MemoryGuard
	if f.shedAbove > 0 {
		// Shed before the cgroup kills: new work waits while the heap is
		// near the worker's limit; a runaway exec still meets the kill.
		if guard, err = server.NewMemoryGuard(server.MemoryGuardConfig{High: uint64(f.shedAbove)}); err != nil {
			return err
		}
	}
	eg, err := f.egress.Build()
	if err != nil {
		return err
	}
	n, err := node.Open(ctx, node.Options{
		Egress: eg,
		Dir:    f.dir, Logger: log, Fsync: f.fsync, DefaultStandbyAfter: f.standbyAfter,
		TickInterval: f.tick, MaxFileBytes: f.maxUpload, Native: rt, Guard: guard,
		Durability: f.durability, CommitBytes: f.commitBytes, CommitDelay: f.commitDelay, Budget: f.budget,
		// DIR/cache is the node's shared image cache; the chunk cache's
		// disk tier is emptied at start, so each worker has its own.
		ChunkCacheMemory: f.cacheMemory, ChunkCacheDisk: f.cacheDisk, ChunkCacheDir: filepath.Join(f.dir, "chunks"),
		ChunkFetchTimeout: f.fetchTimeout,
	})
	if err != nil {
		return err
	}
	// node.Open made an admin key for this meta on its first start; the
	// worker authenticates the front by its secret only, so the key file
	// would just be a key that opens nothing.
	os.Remove(filepath.Join(f.dir, "admin.key"))
	closeNode := func() error {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return n.Close(cctx)
	}
	// The front logs every request; the worker logs only what goes wrong.
	apiSrv, err := server.New(server.Config{Backend: n.Manager, Keys: workerKeys(secret), MaxFileBytes: f.maxUpload})
	if err != nil {
		closeNode()
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+statsPath, func(w http.ResponseWriter, r *http.Request) {
		if !secretOK(secret, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(n.Manager.Stats())
	})
	mux.HandleFunc("GET "+gcRootsPath, func(w http.ResponseWriter, r *http.Request) {
		if !secretOK(secret, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		roots, err := n.Manager.GCRoots(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(roots)
	})
	mux.Handle("/", apiSrv)
	os.Remove(f.socket)
	ln, err := net.Listen("unix", f.socket)
	if err != nil {
		closeNode()
		return fmt.Errorf("cannot listen on %s: %w", f.socket, err)
	}
	os.Chmod(f.socket, 0o600)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintln(stdout, readyLine)
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	srv.Shutdown(sctx)
	cancel()
	if cerr := closeNode(); cerr != nil {
		return fmt.Errorf("worker %d shutdown: %w", f.index, cerr)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// linkShared points DIR/blobs and DIR/cache at the node's, so node.Open
// over DIR shares them while DIR/meta.db stays this worker's own (bbolt
// takes one process per file). The blob store is safe for several
// processes (tmp+rename, content-addressed keys, flock for conditional
// writes), and so is the image cache (CreateTemp+rename of digest-named files).
func linkShared(dir, data string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create worker directory: %w", err)
	}
	for _, name := range []string{"blobs", "cache", "drives"} {
		target, err := filepath.Abs(filepath.Join(data, name))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(target, 0o700); err != nil {
			return fmt.Errorf("cannot create %s: %w", target, err)
		}
		link := filepath.Join(dir, name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return fmt.Errorf("cannot link %s to %s: %w", link, target, err)
		}
	}
	return nil
}

// workerKeys authenticates the front: a key is SECRET:hex(tenant), so one
// per-boot secret carries every tenant without a key table in the worker.
type workerKeys string

func (k workerKeys) LookupKey(_ context.Context, key string) (string, bool, error) {
	secret, t, ok := strings.Cut(key, ":")
	if !ok || !secretOK(string(k), secret) {
		return "", false, api.Errorf(errdefs.ErrNotFound, "unknown worker key")
	}
	tenant, err := hex.DecodeString(t)
	if err != nil || len(tenant) == 0 {
		return "", false, api.Errorf(errdefs.ErrNotFound, "bad tenant in worker key")
	}
	return string(tenant), false, nil
}

func (k workerKeys) PutKey(context.Context, string, string, bool) error {
	return api.Errorf(errdefs.ErrNotImplemented, "a worker has no key table; keys live in the front")
}

func secretOK(want, got string) bool {
	return len(got) == len(want) && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

func tenantKey(secret, tenant string) string {
	return secret + ":" + hex.EncodeToString([]byte(tenant))
}
