// Package workerpool is the node's structural memory backstop: resident
// sandboxes are served by a few worker processes, each a `warren
// serve-worker` child in its own memory cgroup, and the serving process
// (the front: HTTP, auth, metrics) routes every api.Service call to the
// worker that holds the sandbox. Go cannot attribute heap to a goroutine
// and third-party code (goawk, gojq, go-git) cannot be fully charged to a
// sandbox's budget, so a script that defeats the in-process budget can at
// worst take its worker's memory: the kernel kills that worker, the Pool
// restarts it with backoff, its sandboxes come back from their last
// hibernated StateRef, and the other workers and the front never notice.
//
// Layout under the node's data directory DATA:
//
//	DATA/blobs/          shared by every worker (content-addressed, tmp+rename)
//	DATA/cache/          shared image cache (digest-named files, tmp+rename)
//	DATA/meta.db         the front's: API keys only
//	DATA/workers/wN/     worker N: meta.db (its sandboxes and snapshots),
//	                     sock (its API), blobs and cache (symlinks to the above)
package workerpool

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/egress"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/chunkcache"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/store/dir"
	"golang.org/x/sys/unix"
)

// Options configure a Pool.
type Options struct {
	// Workers is the number of worker processes (>= 1).
	Workers int
	// Data is the node's data directory.
	Data string
	// MemoryLimit bounds each worker's cgroup (bytes); 0 gives each worker
	// 3/4 of the node's memory (the machine's, or the server's own cgroup
	// limit when lower) divided by Workers, leaving the rest to the front
	// and the page cache.
	MemoryLimit int64
	// GoMemLimit sets each worker's GOMEMLIMIT to this fraction of
	// MemoryLimit (0: DefaultGoMemLimit; negative: none) and, unless GOGC
	// is in the environment, its GOGC to WorkerGOGC (with no soft limit
	// the worker keeps Go's default GOGC 100: at 400 its heap goal, 5x
	// the live heap, would meet the cgroup kill). See start.
	GoMemLimit float64
	// Command is the worker's argv before its flags (default: this binary
	// and "serve-worker"); tests point it at their own binary.
	Command []string
	// Env is added to the worker's environment (after os.Environ()).
	Env []string
	// Worker settings, passed on the worker's command line.
	StandbyAfter time.Duration
	TickInterval time.Duration
	MaxFileBytes int64
	Fsync        bool
	// Durability, CommitBytes and CommitDelay are node.Options' (each
	// worker is a node with its own write log and node id).
	Durability  string
	CommitBytes int64
	CommitDelay time.Duration
	// Budget is node.Options' (a worker's node budget is its own).
	Budget sandbox.Budget
	// ChunkCacheMemory and ChunkCacheDisk are the node's chunk cache
	// (node.Options' meaning: 0 the default, negative off); each worker
	// gets 1/Workers of each tier, in DATA/workers/wN/chunks, so the node
	// uses what the operator sized whichever worker holds the data (a
	// tenant's sandboxes, and so its chunks, live on its home worker).
	ChunkCacheMemory, ChunkCacheDisk int64
	// ChunkFetchTimeout is node.Options' (0: the vfs default).
	ChunkFetchTimeout time.Duration
	// NativeRunDir is the parent of the workers' native run directories
	// (DIR/wN each); empty: no native tier in the workers.
	NativeRunDir string
	LogJSON      bool
	// Egress is the node's egress settings, passed to every worker.
	Egress egress.Options
	// CgroupName names the parent cgroup of the workers, under the
	// server's own (default "warren-workers-" + a hash of Data, so two
	// nodes on one host do not share one).
	CgroupName string
	// NoCgroup runs workers without a memory cgroup. Without it, a host
	// where the cgroups cannot be made (not root, no memory controller, a
	// v2 cgroup that cannot delegate) gets the same with a warning, unless
	// RequireCgroup makes that an error.
	NoCgroup, RequireCgroup bool
	// NoCPUWeights leaves the front and the workers out of cpu cgroups
	// (they cost CPU per exec: see DESIGN.md, "CPU weights").
	NoCPUWeights bool
	Logger       *slog.Logger
	// Stderr receives the workers' logs (default os.Stderr).
	Stderr io.Writer
	// StartTimeout bounds one worker start (default 60s).
	StartTimeout time.Duration
	// HealthInterval is how often the supervisor checks that each worker
	// answers (default 2s); a worker that misses HealthMisses checks in a
	// row (default 5) is killed and restarted: a hung worker is as lost to
	// its sandboxes as a dead one, and a kill is the only sure way out.
	HealthInterval time.Duration
	HealthMisses   int
	// MaxBackoff caps the delay between restarts of a crashing worker
	// (default 10s; the first restart is after 100ms).
	MaxBackoff time.Duration
}

// Pool supervises the workers and routes calls to them; it is a
// server.Backend.
type Pool struct {
	opts    Options
	log     *slog.Logger
	workers []*worker
	closing atomic.Bool
	closed  chan struct{} // closed by Close
	wg      sync.WaitGroup

	mu    sync.RWMutex
	where map[string]int    // sandbox id -> worker index
	snaps map[[2]string]int // (tenant, snapshot name) -> worker index
	vols  map[[2]string]int // (tenant, volume name) -> worker index
	home  map[string]int    // tenant -> the worker its new sandboxes go to
	cpu   *cpuGroups        // nil: no cpu weights
	// snapMu serialises snapshot creation so a name stays unique across
	// workers (each worker checks only its own).
	snapMu sync.Mutex
	volMu  sync.Mutex // the same for volume names (volumes.go)
	gcMu   sync.Mutex // one collection at a time
}

// worker is one worker process and its supervision state.
type worker struct {
	p      *Pool
	index  int
	dir    string
	socket string
	cg     *memGroup

	mu       sync.Mutex
	gen      *generation // nil while down
	restarts int
	oomKills int64
	lastExit string
	downAt   time.Time
	backoff  time.Duration
	ready    chan struct{} // closed when the first start finished (either way)
	startErr error
	stopped  chan struct{} // closed when the supervision loop ends
	load     atomic.Int64  // sandboxes placed here (placement only)
}

// generation is one run of a worker process: its secret and clients.
type generation struct {
	secret  string
	hc      *http.Client
	cmd     *exec.Cmd
	stdout  *os.File      // read end of the worker's stdout
	died    chan struct{} // closed once the exit is known (lastExit set)
	clients sync.Map      // tenant -> *client.Client
}

// Open prepares the shared stores, creates the workers' cgroups and starts
// every worker; it returns once all serve.
func Open(ctx context.Context, opts Options) (*Pool, error) {
	if opts.Workers < 1 {
		return nil, fmt.Errorf("workerpool: %d workers; want at least 1", opts.Workers)
	}
	if opts.Data == "" {
		return nil, errors.New("workerpool: no data directory")
	}
	if opts.Command == nil {
		opts.Command = []string{"/proc/self/exe", "serve-worker"}
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	if opts.HealthInterval <= 0 {
		opts.HealthInterval = 2 * time.Second
	}
	if opts.HealthMisses <= 0 {
		opts.HealthMisses = 5
	}
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = nodeMemory() * 3 / 4 / int64(opts.Workers)
	}
	if opts.MemoryLimit < 64<<20 {
		return nil, fmt.Errorf("workerpool: worker memory limit %d bytes is under 64 MiB; a worker cannot run in it", opts.MemoryLimit)
	}
	if opts.CgroupName == "" {
		abs, _ := filepath.Abs(opts.Data)
		sum := sha256hex(abs)
		opts.CgroupName = "warren-workers-" + sum[:8]
	}
	p := &Pool{opts: opts, log: opts.Logger, closed: make(chan struct{}), where: map[string]int{}, snaps: map[[2]string]int{}, vols: map[[2]string]int{}, home: map[string]int{}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if err := prepareShared(ctx, opts.Data, opts.Fsync); err != nil {
		return nil, err
	}
	for i := range opts.Workers {
		w := &worker{p: p, index: i, dir: filepath.Join(opts.Data, "workers", "w"+strconv.Itoa(i)),
			ready: make(chan struct{}), stopped: make(chan struct{})}
		w.socket = filepath.Join(w.dir, "sock")
		if len(w.socket) > 100 {
			return nil, fmt.Errorf("workerpool: socket path %s is too long for a unix socket (108 bytes); use a shorter --data", w.socket)
		}
		if err := os.MkdirAll(w.dir, 0o700); err != nil {
			return nil, fmt.Errorf("cannot create worker directory: %w", err)
		}
		p.workers = append(p.workers, w)
	}
	var groups []*memGroup
	if !opts.NoCgroup {
		var err error
		if groups, err = newMemGroups(opts.CgroupName, opts.Workers, opts.MemoryLimit); err != nil {
			if opts.RequireCgroup {
				return nil, fmt.Errorf("worker memory cgroups: %w", err)
			}
			// Workers still contain crashes (a Go fatal error ends one
			// worker, not the node); only the memory bound is missing.
			p.log.Warn("workers run without memory cgroups: one sandbox can still exhaust the node's memory", "reason", err.Error())
			p.opts.NoCgroup = true
		}
	}
	for i, w := range p.workers {
		if groups != nil {
			w.cg = groups[i]
		}
	}
	if !p.opts.NoCgroup && !p.opts.NoCPUWeights {
		cpu, err := newCPUGroups(opts.CgroupName, opts.Workers)
		if err != nil {
			// Memory stays bounded; only the weights are missing, so a
			// busy worker competes per thread like any process.
			p.log.Warn("workers run without cpu cgroups: a busy worker is not weighed as one", "reason", err.Error())
		} else {
			p.cpu = cpu
		}
	}
	for _, w := range p.workers {
		p.wg.Add(1)
		go w.supervise()
	}
	var errs []error
	for _, w := range p.workers {
		select {
		case <-w.ready:
			if w.startErr != nil {
				errs = append(errs, w.startErr)
			}
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
	}
	if err := errors.Join(errs...); err != nil {
		p.Close(context.Background())
		return nil, err
	}
	for _, w := range p.workers {
		if st, err := w.stats(ctx); err == nil {
			w.load.Store(int64(st.Sandboxes))
		}
	}
	p.log.Info("workers ready", "workers", opts.Workers, "memory_limit", opts.MemoryLimit, "cgroups", !p.opts.NoCgroup)
	return p, nil
}

// prepareShared creates the blob store's layout and installs the default
// image once, so workers starting together do not race to do it.
func prepareShared(ctx context.Context, data string, fsync bool) error {
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("cannot create data directory: %w", err)
	}
	var sopts []dir.Option
	if !fsync {
		sopts = append(sopts, dir.WithoutSync())
	}
	blobs, err := dir.Open(filepath.Join(data, "blobs"), sopts...)
	if err != nil {
		return err
	}
	defer blobs.Close()
	cat, err := image.NewCatalog(blobs, filepath.Join(data, "cache"))
	if err != nil {
		return err
	}
	defer cat.Close()
	if _, err := image.Default(ctx, cat); err != nil {
		return fmt.Errorf("cannot install the default image: %w", err)
	}
	return nil
}

// supervise runs the worker, restarting it with backoff when it dies,
// until the pool closes. The goroutine keeps its OS thread: Pdeathsig
// fires when the thread that started the child exits, and a Go thread may
// otherwise be retired under a live worker.
func (w *worker) supervise() {
	defer w.p.wg.Done()
	defer close(w.stopped)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	first := true
	for !w.p.closing.Load() {
		started := time.Now()
		g, err := w.start()
		if err == nil {
			w.mu.Lock()
			w.gen = g
			if w.p.closing.Load() {
				// Close ran while this generation started: it did not see it.
				g.cmd.Process.Signal(syscall.SIGTERM)
			}
			w.mu.Unlock()
		}
		if first {
			// After gen is set: Open returns on ready and routes at once.
			w.startErr = err
			close(w.ready)
			first = false
			if err != nil {
				return
			}
		}
		if err == nil {
			probeDone := make(chan struct{})
			hung := make(chan string, 1)
			go w.probe(g, probeDone, hung)
			err = g.cmd.Wait()
			close(probeDone)
			g.stdout.Close()
			select {
			case why := <-hung:
				err = errors.New(why)
			default:
			}
			w.mu.Lock()
			w.gen = nil
			w.downAt = time.Now()
			w.mu.Unlock()
			g.hc.CloseIdleConnections()
		}
		if w.p.closing.Load() {
			return
		}
		reason := exitReason(err)
		var oom int64
		if w.cg != nil {
			oom = w.cg.oomKills()
			// Native inits and anything else the dead worker left.
			w.cg.killAll()
		}
		w.mu.Lock()
		if oom > w.oomKills {
			reason += fmt.Sprintf(" (memory cgroup OOM kill: over %d MiB)", w.p.opts.MemoryLimit>>20)
		}
		w.oomKills = oom
		w.lastExit = reason
		w.restarts++
		if g != nil {
			close(g.died)
		}
		// A worker that ran a while starts again at once; one that keeps
		// dying backs off up to MaxBackoff.
		if time.Since(started) > 30*time.Second || w.backoff == 0 {
			w.backoff = 100 * time.Millisecond
		} else {
			w.backoff = min(2*w.backoff, w.p.opts.MaxBackoff)
		}
		delay := w.backoff
		w.mu.Unlock()
		w.p.log.Error("worker died; restarting", "worker", w.index, "reason", reason, "restart_in", delay.String())
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-w.p.closed:
			t.Stop()
			return
		}
	}
}

// probe checks every HealthInterval that generation g answers /healthz;
// after HealthMisses misses in a row it reports why on hung and kills g.
func (w *worker) probe(g *generation, done <-chan struct{}, hung chan<- string) {
	o := w.p.opts
	t := time.NewTicker(o.HealthInterval)
	defer t.Stop()
	misses := 0
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), o.HealthInterval)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://worker/healthz", nil)
		resp, err := g.hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = errors.New(resp.Status)
			}
		}
		cancel()
		if err == nil {
			misses = 0
			continue
		}
		if misses++; misses >= o.HealthMisses {
			why := fmt.Sprintf("stopped answering: %d health checks %s apart failed, the last with %v; killed", misses, o.HealthInterval, err)
			hung <- why
			w.p.log.Error("worker hung; killing it", "worker", w.index, "reason", why)
			g.cmd.Process.Kill()
			return
		}
	}
}

func exitReason(err error) string {
	if err == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + unix.SignalName(ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return err.Error()
}

// start launches one generation of the worker and waits until it serves.
func (w *worker) start() (*generation, error) {
	o := w.p.opts
	secret := newSecret()
	args := append([]string{}, o.Command[1:]...)
	args = append(args, w.p.argv(w)...)
	cmd := exec.Command(o.Command[0], args...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Env = append(cmd.Env, workerGCEnv(o)...)
	// The secret goes down a pipe only once the child is in its cgroup:
	// the worker does nothing before it has the secret, so everything it
	// sets up (its node, its native tier's cgroups, which are made under
	// the worker's own) happens inside its group.
	in, secretW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer secretW.Close()
	cmd.Stdin = in
	cmd.Stderr = o.Stderr
	out, pw, err := os.Pipe()
	if err != nil {
		in.Close()
		return nil, err
	}
	cmd.Stdout = pw
	// A front that dies takes its workers with it (they hibernate on TERM).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if w.cg != nil && w.cg.v2 {
		// v2: born in the cgroup (clone3 CLONE_INTO_CGROUP), nothing
		// charged elsewhere; emptied of what the last worker made in it.
		if err := w.cg.resetV2(); err != nil {
			pw.Close()
			out.Close()
			in.Close()
			return nil, fmt.Errorf("worker %d: %w", w.index, err)
		}
		fd, err := syscall.Open(w.cg.dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			pw.Close()
			out.Close()
			in.Close()
			return nil, fmt.Errorf("worker %d: cannot open cgroup %s: %w", w.index, w.cg.dir, err)
		}
		defer syscall.Close(fd)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	}
	err = cmd.Start()
	pw.Close()
	in.Close()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("cannot start worker %d: %w", w.index, err)
	}
	if w.cg != nil && !w.cg.v2 {
		// v1 has no clone-into-cgroup: the child runs only the Go runtime's
		// start-up before it is moved, and move_charge_at_immigrate (set
		// with the limit) brings that memory's charge along.
		if err := w.cg.add(cmd.Process.Pid); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			out.Close()
			return nil, fmt.Errorf("worker %d: %w", w.index, err)
		}
	}
	if cg := w.p.cpu; cg != nil && !(cg.workers[w.index].v2 && w.cg != nil && w.cg.v2) {
		// Weighed as one from its start (v2 with both controllers: born
		// there, the memory group is the same directory).
		g := cg.workers[w.index]
		if err := errors.Join(g.ensure(workerShares), g.add(cmd.Process.Pid)); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			out.Close()
			return nil, fmt.Errorf("worker %d: %w", w.index, err)
		}
	}
	io.WriteString(secretW, secret+"\n") // a dead child shows below as no ready line
	secretW.Close()
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && sc.Text() == readyLine {
				ok = true
				ready <- nil
			}
		}
		if !ok {
			ready <- fmt.Errorf("worker %d exited before serving (see its log above)", w.index)
		}
	}()
	select {
	case err = <-ready:
	case <-time.After(o.StartTimeout):
		err = fmt.Errorf("worker %d did not serve within %s", w.index, o.StartTimeout)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		out.Close()
		return nil, err
	}
	sock := w.socket
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	return &generation{secret: secret, cmd: cmd, stdout: out, died: make(chan struct{}), hc: &http.Client{Transport: tr}}, nil
}

// Worker GC settings (Options.GoMemLimit).
const (
	// DefaultGoMemLimit is a worker's GOMEMLIMIT as a fraction of its
	// cgroup limit: room below the kill for what is not Go heap (stacks,
	// the binary, native children charged to the group) and for the GC
	// to catch up.
	DefaultGoMemLimit = 0.7
	// WorkerGOGC is a worker's GOGC under that limit: the density runs
	// measured sched->done p99 12-14 ms at GOGC 400 against 24-94 ms at
	// 100 (bench/README "Density tails"); the soft limit keeps the larger
	// heap goal below the cgroup's kill.
	WorkerGOGC = 400
)

// workerGCEnv is the GC part of a worker's environment.
func workerGCEnv(o Options) []string {
	if o.GoMemLimit < 0 || o.NoCgroup {
		// No soft limit (or no cgroup to derive one from): Go's defaults.
		return []string{"GOMEMLIMIT=off"}
	}
	frac := o.GoMemLimit
	if frac == 0 {
		frac = DefaultGoMemLimit
	}
	env := []string{"GOMEMLIMIT=" + strconv.FormatInt(int64(frac*float64(o.MemoryLimit)), 10)}
	if os.Getenv("GOGC") == "" && !slices.ContainsFunc(o.Env, func(e string) bool { return strings.HasPrefix(e, "GOGC=") }) {
		env = append(env, "GOGC="+strconv.Itoa(WorkerGOGC))
	}
	return env
}

// argv is the worker's command line (read by RunWorker).
func (p *Pool) argv(w *worker) []string {
	o := p.opts
	a := []string{
		"--index", strconv.Itoa(w.index), "--dir", w.dir, "--data", o.Data, "--socket", w.socket,
		"--standby-after", o.StandbyAfter.String(), "--tick", o.TickInterval.String(),
		"--max-upload", strconv.FormatInt(o.MaxFileBytes, 10),
	}
	if o.Fsync {
		a = append(a, "--fsync")
	}
	if o.Durability != "" {
		a = append(a, "--durability", o.Durability)
	}
	if o.CommitBytes > 0 {
		a = append(a, "--commit-bytes", strconv.FormatInt(o.CommitBytes, 10))
	}
	if o.CommitDelay > 0 {
		a = append(a, "--commit-delay", o.CommitDelay.String())
	}
	if b := o.Budget; b != (sandbox.Budget{}) {
		a = append(a, "--budget-sandbox", strconv.FormatInt(b.Sandbox, 10), "--budget-node", strconv.FormatInt(b.Node, 10), "--budget-wait", b.Wait.String())
	}
	share := func(n, def int64) int64 {
		switch {
		case n < 0:
			return -1
		case n == 0:
			n = def
		}
		return max(1, n/int64(o.Workers))
	}
	a = append(a, "--chunk-cache-memory", strconv.FormatInt(share(o.ChunkCacheMemory, chunkcache.DefaultMemory), 10),
		"--chunk-cache-disk", strconv.FormatInt(share(o.ChunkCacheDisk, chunkcache.DefaultDisk), 10))
	if o.ChunkFetchTimeout > 0 {
		a = append(a, "--chunk-fetch-timeout", o.ChunkFetchTimeout.String())
	}
	if o.NativeRunDir == "" {
		a = append(a, "--no-native")
	} else {
		a = append(a, "--native-run-dir", filepath.Join(o.NativeRunDir, "w"+strconv.Itoa(w.index)))
	}
	if o.LogJSON {
		a = append(a, "--log-json")
	}
	a = append(a, o.Egress.Args()...)
	if !o.NoCgroup {
		// 80% of the cgroup: the heap is most of a worker's charge.
		a = append(a, "--shed-above", strconv.FormatInt(o.MemoryLimit/10*8, 10))
	}
	return a
}

// service returns worker w's Service for tenant, or ErrUnavailable with a
// retry hint while w restarts.
func (w *worker) service(tenant string) (api.Service, *generation, error) {
	w.mu.Lock()
	g := w.gen
	reason, backoff := w.lastExit, w.backoff
	w.mu.Unlock()
	if g == nil {
		if w.p.closing.Load() {
			return nil, nil, api.Errorf(errdefs.ErrUnavailable, "warren is shutting down")
		}
		return nil, nil, &unavailableError{worker: w.index, reason: reason, retry: backoff + time.Second}
	}
	if c, ok := g.clients.Load(tenant); ok {
		return c.(*client.Client), g, nil
	}
	c, err := client.New("http://worker", tenantKey(g.secret, tenant), client.WithHTTPClient(g.hc))
	if err != nil {
		return nil, nil, err
	}
	v, _ := g.clients.LoadOrStore(tenant, c)
	return v.(*client.Client), g, nil
}

// explain turns a transport failure of a call to generation g into what
// happened when g died under it: which worker, why, that the sandbox
// comes back from its last commit and write log, and when to retry.
func (w *worker) explain(ctx context.Context, err error, g *generation) error {
	if err == nil || g == nil || !transportFailure(err) || ctx.Err() != nil {
		return err
	}
	select {
	case <-g.died:
	case <-time.After(time.Second):
		return err // the worker lives: a plain transport error
	}
	w.mu.Lock()
	reason, backoff := w.lastExit, w.backoff
	w.mu.Unlock()
	return &unavailableError{worker: w.index, reason: reason, retry: backoff + time.Second, during: true}
}

// unavailable is the 503 for a call to w while it is down.
func (w *worker) unavailable() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.p.closing.Load() {
		return api.Errorf(errdefs.ErrUnavailable, "warren is shutting down")
	}
	return &unavailableError{worker: w.index, reason: w.lastExit, retry: w.backoff + time.Second}
}

func (w *worker) up() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gen != nil
}

// transportFailure tells a broken connection to the worker (the client's
// transport errors and cut exec streams, which carry no wire code) from
// an error the worker itself sent, so only the former waits to learn
// whether the worker died.
func transportFailure(err error) bool {
	if !errdefs.IsUnavailable(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, `"http://worker/`) || strings.Contains(msg, "exec stream ended without an exit event") ||
		strings.Contains(msg, "bad exec stream")
}

// unavailableError is a call to a worker that is restarting; it is an
// errdefs.ErrUnavailable (503) and names when to retry.
type unavailableError struct {
	worker int
	reason string
	retry  time.Duration
	during bool // the worker died during the call
}

func (e *unavailableError) Error() string {
	secs := int(e.retry.Seconds() + 0.5)
	if e.during {
		return fmt.Sprintf("unavailable: the worker process serving this sandbox died during the call (%s); "+
			"the sandbox resumes from its last commit and its write log (writes acked at memory since the last commit are lost); retry in %ds", e.reason, secs)
	}
	return fmt.Sprintf("unavailable: the worker process holding this sandbox is restarting (%s); retry in %ds", e.reason, secs)
}

func (e *unavailableError) Is(target error) bool { return target == errdefs.ErrUnavailable }

// Status is one worker's supervision state (for tests and logs).
type Status struct {
	Index     int
	Up        bool
	PID       int
	Restarts  int
	OOMKills  int64
	LastExit  string
	Backoff   time.Duration // delay before the last restart
	MemoryMax int64         // the cgroup's limit (0: no cgroup)
	Memory    int64         // current cgroup charge
}

// Status reports every worker.
func (p *Pool) Status() []Status {
	out := make([]Status, len(p.workers))
	for i, w := range p.workers {
		w.mu.Lock()
		s := Status{Index: i, Up: w.gen != nil, Restarts: w.restarts, OOMKills: w.oomKills, LastExit: w.lastExit, Backoff: w.backoff}
		if w.gen != nil {
			s.PID = w.gen.cmd.Process.Pid
		}
		w.mu.Unlock()
		if w.cg != nil {
			s.Memory, s.MemoryMax = w.cg.usage(), p.opts.MemoryLimit
		}
		out[i] = s
	}
	return out
}

// Close stops every worker with SIGTERM (each hibernates its sandboxes)
// and waits for them until ctx ends, then kills what is left.
func (p *Pool) Close(ctx context.Context) error {
	if p.closing.Swap(true) {
		return nil
	}
	close(p.closed)
	for _, w := range p.workers {
		w.mu.Lock()
		if w.gen != nil {
			w.gen.cmd.Process.Signal(syscall.SIGTERM)
		}
		w.mu.Unlock()
	}
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("workers did not stop in time; killed: %w", ctx.Err())
		for _, w := range p.workers {
			w.mu.Lock()
			if w.gen != nil {
				w.gen.cmd.Process.Kill()
			}
			w.mu.Unlock()
		}
		<-done
	}
	parent := ""
	for _, w := range p.workers {
		if w.cg != nil {
			err = errors.Join(err, w.cg.remove())
			parent = filepath.Dir(w.cg.dir)
		}
	}
	if parent != "" {
		syscall.Rmdir(parent) // best effort: fails harmlessly if anything is left in it
	}
	if p.cpu != nil {
		err = errors.Join(err, p.cpu.close())
	}
	return err
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func newSecret() string {
	var b [24]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
