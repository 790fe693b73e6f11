package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
)

// Interp is one session's interpreter (package shell's *Shell, adapted in
// wire.go). Run calls on one Interp are serialised by the caller.
type Interp interface {
	Run(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (int, error)
	MarshalState() ([]byte, error)
	// Fork returns an independent copy of the session over fsys.
	Fork(fsys *vfs.FS) Interp
}

// SessionConfig is what a new or restored session is built from.
type SessionConfig struct {
	FS       *vfs.FS
	Env      []string
	Dir      string
	Hostname string
	User     string
	Limits   api.Limits
	// Memory is the sandbox's memory budget, shared by all its sessions
	// (nil: one of Limits.MaxMemoryBytes per session).
	Memory *commands.Memory
	// Native runs ELF files (the sandbox's hook into the native tier).
	Native NativeFunc
	// Net is the sandbox's network (nil: none; network.go).
	Net commands.HTTPClient
	// Commands is the sandbox's commands policy (CreateRequest.Commands).
	Commands string
	// OnJob lists the session's background jobs as the sandbox's
	// processes (jobs.go); nil: they have no log.
	OnJob shell.JobHook
}

// Interpreters builds sessions.
type Interpreters interface {
	New(cfg SessionConfig) (Interp, error)
	Restore(cfg SessionConfig, state []byte) (Interp, error)
}

// Deltas persists a vfs delta to the blob store and loads it back
// (lazily: Load reads nodes and chunks on demand).
type Deltas interface {
	Persist(ctx context.Context, f *vfs.FS) (ref string, err error)
	Load(ctx context.Context, opts vfs.Options, ref string) (*vfs.FS, error)
}

// Blobs is the subset of store.Store the manager uses directly (StateRef
// documents and session states).
type Blobs interface {
	Put(ctx context.Context, key string, r io.Reader) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Has(ctx context.Context, key string) (bool, error)
}

// Image is a base a sandbox starts from.
type Image struct {
	Name   string
	Digest string
	FS     fs.FS
	// Path is the EROFS file the native tier mounts ("" when the image
	// has none on this node: ELF files cannot run natively then).
	Path string
	// Config is the image's runtime config: a new sandbox's user, cwd
	// and environment unless its request says otherwise.
	Config image.Config
}

// Images resolves image names and digests for a tenant.
type Images interface {
	// Lookup finds an image by name or digest; "" is the default image.
	// Missing: an error matching errdefs.ErrNotFound.
	Lookup(ctx context.Context, tenant, name string) (Image, error)
	List(ctx context.Context, tenant string) ([]api.Image, error)
}

// Config configures a Manager. Blobs, Deltas, Images and Interpreters are
// required; the rest have defaults.
type Config struct {
	Blobs        Blobs
	Deltas       Deltas
	Images       Images
	Interpreters Interpreters
	// Meta stores records; nil keeps them in memory only.
	Meta Meta
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DefaultStandbyAfter is the idle time before automatic hibernation
	// when a sandbox does not say (default 15s).
	DefaultStandbyAfter time.Duration
	// TickInterval is how often idle and expired sandboxes are looked for
	// (default 1s; tests use less).
	TickInterval time.Duration
	// DefaultLimits fill a sandbox's zero limits.
	DefaultLimits api.Limits
	// MaxSandboxesPerTenant bounds live+standby sandboxes per tenant
	// (0: 100,000); more is ErrResourceExhausted.
	MaxSandboxesPerTenant int
	// MaxForkCount bounds one fork call's count (default 100).
	MaxForkCount int
	// ReplayBytes bounds the output a background process keeps for attach
	// (default 1 MiB per process).
	ReplayBytes int
	// MaxReadBytes bounds one ReadFile (default 64 MiB).
	MaxReadBytes int64
	// Native is the node's native tier; nil turns it off (ELF files then
	// fail with a message that says so). The Manager does not close it.
	Native *native.Runtime
	Logger *slog.Logger
	// Durable turns on the write log and background commits (nil:
	// memory only; every write is acked at "memory" and survives only a
	// hibernate). Meta must then be a DurableMeta.
	Durable *Durable
	// Egress is the node's way out to the network (nil: sandboxes have
	// none; network.go).
	Egress *egress.Egress
	// Drives are the node's shared drives (nil: none; drives.go).
	Drives *drive.Registry
}

// Manager holds every sandbox of one node. It is safe for concurrent use.
type Manager struct {
	cfg Config
	now func() time.Time
	log *slog.Logger

	mu     sync.RWMutex
	boxes  map[string]*box
	snaps  map[[2]string]SnapshotRecord
	closed bool

	stop chan struct{}
	done chan struct{}

	// The write path (nil without Config.Durable).
	dur         *Durable
	meta        DurableMeta
	commits     *committer.Committer
	commitCount atomic.Uint64
	fencedCount atomic.Uint64
	abandoned   atomic.Int64
	recovered   atomic.Int64
	fl          fleetState // fleet.go
	bud         nodeBudget // durable_budget.go
	gc          gcState    // gc.go

	execs      atomic.Uint64
	execErrors atomic.Uint64
	hibernates atomic.Uint64
	resumes    atomic.Uint64
	native     nativeCounters
	ladder     ladderCounts
}

// DefaultLimits apply to every sandbox that does not set its own: the one
// set shared with the API and `warren run` (api.DefaultLimits).
var DefaultLimits = api.DefaultLimits

// New returns a Manager that knows every sandbox and snapshot in cfg.Meta
// (each starts in standby and resumes on first use).
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Blobs == nil || cfg.Deltas == nil || cfg.Images == nil || cfg.Interpreters == nil {
		return nil, errors.New("sandbox: Config needs Blobs, Deltas, Images and Interpreters")
	}
	if cfg.Meta == nil {
		cfg.Meta = NewMemMeta()
	}
	if cfg.DefaultStandbyAfter == 0 {
		cfg.DefaultStandbyAfter = 15 * time.Second
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = time.Second
	}
	if cfg.MaxSandboxesPerTenant <= 0 {
		cfg.MaxSandboxesPerTenant = 100_000
	}
	if cfg.MaxForkCount <= 0 {
		cfg.MaxForkCount = 100
	}
	if cfg.ReplayBytes <= 0 {
		cfg.ReplayBytes = 1 << 20
	}
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = 64 << 20
	}
	cfg.DefaultLimits = fillLimits(cfg.DefaultLimits, DefaultLimits)
	m := &Manager{
		cfg:   cfg,
		now:   cfg.Now,
		log:   cfg.Logger,
		boxes: map[string]*box{},
		snaps: map[[2]string]SnapshotRecord{},
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	recs, err := cfg.Meta.Sandboxes(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot load sandboxes: %w", err)
	}
	for _, r := range recs {
		r.State = api.StateStandby
		// A sandbox recorded before a limit existed gets today's default
		// for it, so no limit is off because of a record's age.
		r.Config.Limits = fillLimits(r.Config.Limits, cfg.DefaultLimits)
		m.boxes[r.ID] = m.newBox(r)
	}
	snaps, err := cfg.Meta.Snapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot load snapshots: %w", err)
	}
	for _, s := range snaps {
		m.snaps[[2]string{s.Tenant, s.Name}] = s
	}
	if cfg.Durable != nil {
		if err := m.startDurable(ctx); err != nil {
			if m.commits != nil {
				m.commits.Close()
			}
			return nil, err
		}
	}
	go m.tick()
	if m.cfg.Drives != nil {
		go m.sweepDrives(DefaultGCInterval)
	}
	return m, nil
}

func fillLimits(l, d api.Limits) api.Limits { return l.WithDefaults(d) }

// Close stops the idle timer, cancels whatever runs, and hibernates every
// running sandbox so a new Manager over the same Meta and Blobs resumes
// them. It returns the first error; the Manager is unusable afterwards.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.Unlock()
	close(m.stop)
	<-m.done

	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, b := range boxes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := b.shutdown(ctx); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("cannot hibernate %s: %w", b.id, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if m.commits != nil {
		m.commits.Close()
	}
	return first
}

// tick hibernates idle sandboxes and deletes expired ones.
func (m *Manager) tick() {
	defer close(m.done)
	t := time.NewTicker(m.cfg.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		now := m.now()
		m.mu.RLock()
		boxes := make([]*box, 0, len(m.boxes))
		for _, b := range m.boxes {
			boxes = append(boxes, b)
		}
		m.mu.RUnlock()
		for _, b := range boxes {
			select {
			case <-m.stop:
				return
			default:
			}
			switch b.due(now) {
			case dueExpire:
				if err := m.destroy(context.Background(), b); err != nil {
					m.log.Warn("ttl delete failed", "sandbox", b.id, "err", err)
				} else {
					m.event("ttl_delete", b, "ttl", b.cfg.TTL.Std().String())
				}
			case dueStandby:
				if err := b.hibernate(context.Background(), true); err != nil {
					m.log.Warn("standby failed", "sandbox", b.id, "err", err)
				} else if st, _ := b.stateAndUsage(); st == api.StateStandby {
					m.event("standby", b, "idle_after", b.cfg.StandbyAfter.Std().String())
				}
			}
		}
	}
}

// ImageInUse reports whether a sandbox of any tenant (running or in
// standby) was created from the image digest (image.Catalog.InUse).
func (m *Manager) ImageInUse(digest string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, b := range m.boxes {
		if b.imageDigest == digest {
			return true
		}
	}
	return false
}

// Stats counts sandboxes by state and operations since start.
type Stats struct {
	Running, Standby                       int
	Execs, ExecErrors, Hibernates, Resumes uint64
	Sandboxes                              int
	BytesInDeltas                          int64
	// MemoryCharged is what the sandboxes' memory budgets hold now.
	MemoryCharged int64
	// Durable counts the write path (zero without Config.Durable).
	Durable DurableStats
	// Native counts the native tier; Tenants the sandboxes of each tenant.
	Native  NativeStats
	Tenants map[string]int
	// EgressAllowed and EgressDenied count egress decisions (network.go).
	EgressAllowed, EgressDenied uint64
	// Rungs counts exec'd commands by rung and Fallbacks the resident
	// refusals run elsewhere, by command name (ladder.go).
	Rungs, Fallbacks map[string]uint64
	// Chunks counts reads of chunks whose bytes left memory (the process's
	// vfs counters and chunk cache sizes).
	Chunks vfs.ChunkStats
}

// Stats returns the current counts (for /metrics).
func (m *Manager) Stats() Stats {
	m.mu.RLock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.RUnlock()
	var s Stats
	for _, b := range boxes {
		st, bytes := b.stateAndUsage()
		switch st {
		case api.StateRunning:
			s.Running++
		case api.StateStandby:
			s.Standby++
		}
		s.BytesInDeltas += bytes
		s.MemoryCharged += b.mem.Used()
	}
	s.Sandboxes = len(boxes)
	s.Execs = m.execs.Load()
	s.ExecErrors = m.execErrors.Load()
	s.Hibernates = m.hibernates.Load()
	s.Resumes = m.resumes.Load()
	s.Durable = m.DurableStats()
	s.Native, s.Tenants = m.nativeStats(boxes)
	if m.cfg.Egress != nil {
		s.EgressAllowed, s.EgressDenied = m.cfg.Egress.Counts()
	}
	s.Rungs, s.Fallbacks = m.ladder.snapshot()
	s.Chunks = vfs.ReadChunkStats()
	return s
}

// For returns the Service of one tenant: it sees only the tenant's own
// sandboxes and snapshots (another tenant's id is ErrNotFound).
func (m *Manager) For(tenant string) api.Service { return &tenantView{m: m, tenant: tenant} }

func newID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return prefix + hex.EncodeToString(b[:])
}

// lookup finds a tenant's sandbox.
func (m *Manager) lookup(tenant, id string) (*box, error) {
	m.mu.RLock()
	b := m.boxes[id]
	closed := m.closed
	m.mu.RUnlock()
	if closed {
		return nil, api.Errorf(errdefs.ErrUnavailable, "warren is shutting down")
	}
	if b == nil || b.tenant != tenant {
		return nil, api.Errorf(errdefs.ErrNotFound, "sandbox %q not found", id)
	}
	return b, nil
}

var (
	labelKeyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$`)
	envKeyRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	nameRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// normalise validates a create request and fills its defaults.
func (m *Manager) normalise(req api.CreateRequest) (api.CreateRequest, error) {
	if err := checkLabels(req.Labels); err != nil {
		return req, err
	}
	if len(req.Env) > 1024 {
		return req, api.Errorf(api.ErrUnprocessable, "too many env variables (%d, max 1024)", len(req.Env))
	}
	for k, v := range req.Env {
		if !envKeyRE.MatchString(k) {
			return req, api.Errorf(api.ErrUnprocessable, "bad env name %q", k)
		}
		if len(v) > 64<<10 {
			return req, api.Errorf(api.ErrUnprocessable, "env %q: value longer than 64 KiB", k)
		}
	}
	if req.Cwd == "" {
		req.Cwd = "/"
	}
	if err := checkPath(req.Cwd); err != nil {
		return req, fmt.Errorf("cwd: %w", err)
	}
	if req.User != "" && !nameRE.MatchString(req.User) {
		return req, api.Errorf(api.ErrUnprocessable, "bad user name %q", req.User)
	}
	if req.Hostname != "" && !nameRE.MatchString(req.Hostname) {
		return req, api.Errorf(api.ErrUnprocessable, "bad hostname %q", req.Hostname)
	}
	if err := api.CheckSecurity(req.Security); err != nil {
		return req, err
	}
	if err := m.checkNetwork(req); err != nil {
		return req, err
	}
	if req.Retention != nil {
		if err := api.CheckRetention(*req.Retention); err != nil {
			return req, err
		}
	}
	if req.Security == "" {
		req.Security = api.SecurityDefault
	}
	pol, err := CommandsPolicy(req.Commands)
	if err != nil {
		return req, err
	}
	req.Commands = pol.String()
	if req.Limits.Timeout < 0 || req.Limits.MaxOutputBytes < 0 || req.Limits.MaxMemoryBytes < 0 ||
		req.Limits.DiskBytes < 0 || req.Limits.DiskInodes < 0 || req.Limits.CPUs < 0 || req.Limits.Pids < 0 ||
		req.Limits.Jobs < 0 || req.TTL < 0 {
		return req, api.Errorf(api.ErrUnprocessable, "limits and ttl must not be negative")
	}
	if math.IsNaN(req.Limits.CPUs) || math.IsInf(req.Limits.CPUs, 0) || req.Limits.CPUs > 4096 {
		return req, api.Errorf(api.ErrUnprocessable, "cpus %v out of range (0 < cpus <= 4096)", req.Limits.CPUs)
	}
	if req.Limits.Native != nil && *req.Limits.Native {
		// An explicit request for the native tier fails here rather than
		// at the first ELF exec.
		why := ""
		if m.cfg.Native == nil {
			why = "the native tier is disabled on this node (warren serve --no-native)"
		} else if err := m.cfg.Native.Available(); err != nil {
			why = err.Error()
		}
		if why != "" {
			return req, api.Errorf(errdefs.ErrNotImplemented, "native: true asked for, but %s", why)
		}
	}
	req.Limits = fillLimits(req.Limits, m.cfg.DefaultLimits)
	if err := api.CheckDurability(req.Durability); err != nil {
		return req, err
	}
	if req.Durability != "" && req.Durability != api.DurabilityMemory && m.dur == nil {
		return req, api.Errorf(errdefs.ErrFailedPrecondition, "durability %q needs a write log, and this node has none (memory only)", req.Durability)
	}
	if req.StandbyAfter == 0 {
		req.StandbyAfter = api.Duration(m.cfg.DefaultStandbyAfter)
	}
	return req, nil
}

// countTenant counts a tenant's sandboxes.
func (m *Manager) countTenant(tenant string) int {
	n := 0
	for _, b := range m.boxes {
		if b.tenant == tenant {
			n++
		}
	}
	return n
}

// add registers new boxes after checking the tenant's quota.
func (m *Manager) add(ctx context.Context, bs ...*box) error {
	if len(bs) == 0 {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return api.Errorf(errdefs.ErrUnavailable, "warren is shutting down")
	}
	if n := m.countTenant(bs[0].tenant); n+len(bs) > m.cfg.MaxSandboxesPerTenant {
		m.mu.Unlock()
		return api.Errorf(errdefs.ErrResourceExhausted, "tenant has %d sandboxes; the limit is %d", n, m.cfg.MaxSandboxesPerTenant)
	}
	for _, b := range bs {
		m.boxes[b.id] = b
	}
	m.mu.Unlock()
	for _, b := range bs {
		if err := m.cfg.Meta.PutSandbox(ctx, b.record()); err != nil {
			m.mu.Lock()
			for _, b := range bs {
				delete(m.boxes, b.id)
			}
			m.mu.Unlock()
			return fmt.Errorf("cannot record sandbox: %w", err)
		}
	}
	if m.dur != nil {
		for _, b := range bs {
			if err := m.adopt(ctx, b); err != nil {
				return err
			}
		}
	}
	for _, b := range bs {
		m.event("create", b, "image", b.imageDigest, "parent", b.parent, "snapshot", b.snapshot)
	}
	return nil
}

// destroy deletes b everywhere.
func (m *Manager) destroy(ctx context.Context, b *box) error {
	if err := b.kill(); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.boxes, b.id)
	m.mu.Unlock()
	if b.net != nil {
		b.net.Close() // its kept-alive connections and secrets go with it
	}
	if m.dur != nil {
		m.commits.Forget(b.id)
		b.dmu.Lock()
		seq := b.ds.seq
		b.dmu.Unlock()
		if seq > 0 {
			if err := m.dur.Log.Trim(b.id, seq); err != nil {
				m.log.Warn("cannot trim the write log", "sandbox", b.id, "err", err)
			}
		}
	}
	if err := m.cfg.Meta.DeleteSandbox(ctx, b.id); err != nil {
		return fmt.Errorf("cannot delete record of %s: %w", b.id, err)
	}
	m.releaseVolumes(ctx, b.tenant, b.id, b.cfg.Volumes)
	return nil
}

// sortedBoxes returns a tenant's boxes by creation time, then id.
func (m *Manager) tenantBoxes(tenant string) []*box {
	m.mu.RLock()
	var out []*box
	for _, b := range m.boxes {
		if b.tenant == tenant {
			out = append(out, b)
		}
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].created.Equal(out[j].created) {
			return out[i].created.Before(out[j].created)
		}
		return out[i].id < out[j].id
	})
	return out
}
