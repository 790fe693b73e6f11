package workerpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// Placement. A new sandbox goes to its tenant's home worker (see place);
// everything about an existing one goes to the worker that holds it, found in a map filled by every create, fork and list and, on a
// miss (a front restarted, a sandbox from before), by asking every worker
// in parallel (N is small; over a unix socket that is tens of µs each).
// Sandbox ids stay the sandbox package's own (no worker index in them), so
// no id changes format, nothing in sandbox has to know about workers, and
// a sandbox is found again whatever --workers the next start is given as
// long as its worker directory is there.
//
// Fork stays within the worker that holds the source (the children share
// its delta in memory); a sandbox from a snapshot is created on the worker
// that holds the snapshot's record, one that mounts volumes on the worker
// that holds theirs (volumes.go).

// For returns the routed Service of tenant (server.Backend).
func (p *Pool) For(tenant string) api.Service { return &tenantRouter{p: p, tenant: tenant} }

// Stats sums the workers' counts (server.Backend, for /metrics); a worker
// that is down adds nothing.
func (p *Pool) Stats() sandbox.Stats {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var (
		mu  sync.Mutex
		out sandbox.Stats
		wg  sync.WaitGroup
	)
	for _, w := range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := w.stats(ctx)
			if err != nil {
				return
			}
			w.load.Store(int64(st.Sandboxes))
			mu.Lock()
			out.Running += st.Running
			out.Standby += st.Standby
			out.Execs += st.Execs
			out.ExecErrors += st.ExecErrors
			out.Hibernates += st.Hibernates
			out.Resumes += st.Resumes
			out.Sandboxes += st.Sandboxes
			out.BytesInDeltas += st.BytesInDeltas
			out.Durable.Add(st.Durable)
			out.AddNodeStats(st)
			out.EgressAllowed += st.EgressAllowed
			out.EgressDenied += st.EgressDenied
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (w *worker) stats(ctx context.Context) (sandbox.Stats, error) {
	w.mu.Lock()
	g := w.gen
	w.mu.Unlock()
	if g == nil {
		return sandbox.Stats{}, errors.New("worker down")
	}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://worker"+statsPath, nil)
	if err != nil {
		return sandbox.Stats{}, err
	}
	req.Header.Set("Authorization", "Bearer "+g.secret)
	resp, err := g.hc.Do(req)
	if err != nil {
		return sandbox.Stats{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sandbox.Stats{}, fmt.Errorf("worker %d stats: %s", w.index, resp.Status)
	}
	var st sandbox.Stats
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// tenantRouter is one tenant's api.Service over the pool.
type tenantRouter struct {
	p      *Pool
	tenant string
}

var _ api.Service = (*tenantRouter)(nil)

func (p *Pool) remember(id string, w int) {
	p.mu.Lock()
	p.where[id] = w
	p.mu.Unlock()
}

func (p *Pool) forget(id string) {
	p.mu.Lock()
	delete(p.where, id)
	p.mu.Unlock()
}

// place picks the worker for a new sandbox of tenant: the tenant's home
// worker, so that a tenant whose script kills or saturates its worker takes
// down or slows its own sandboxes rather than everyone's. A tenant's first
// sandbox (in this front's life) makes its home the up worker that is home
// to the fewest tenants (ties: fewest sandboxes), so tenants spread one per
// worker while there are workers enough; with more tenants than workers
// each worker is home to ceil(T/N) of them, who share its memory bound,
// its CPU weight and its restarts (and nothing with the other workers').
//
// A tenant never spills onto another tenant's home: while its home is
// down its creates get 503 + Retry-After (a hostile tenant that killed its
// worker must not move onto its neighbour's), and while its home holds
// more than twice the least-loaded worker's count plus spillSlack it
// spills to the least-loaded worker no tenant calls home, if there is one.
// tenant "" (images) takes the least-loaded worker.
func (p *Pool) place(tenant string) (*worker, error) {
	var least *worker
	for _, w := range p.workers {
		if !w.up() {
			continue
		}
		if least == nil || w.load.Load() < least.load.Load() {
			least = w
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.home[tenant]
	if ok && tenant != "" {
		h := p.workers[i]
		if !h.up() {
			return nil, h.unavailable()
		}
		if h.load.Load() > 2*least.load.Load()+spillSlack {
			if u := p.unclaimed(); u != nil {
				return u, nil
			}
		}
		return h, nil
	}
	if least == nil {
		if p.closing.Load() {
			return nil, api.Errorf(errdefs.ErrUnavailable, "warren is shutting down")
		}
		w := p.workers[0]
		w.mu.Lock()
		defer w.mu.Unlock()
		return nil, &unavailableError{worker: -1, reason: "every worker is restarting", retry: w.backoff + time.Second}
	}
	if tenant == "" {
		return least, nil
	}
	homes := make([]int, len(p.workers))
	for _, j := range p.home {
		homes[j]++
	}
	var h *worker
	for _, w := range p.workers {
		if !w.up() {
			continue
		}
		if h == nil || homes[w.index] < homes[h.index] ||
			homes[w.index] == homes[h.index] && w.load.Load() < h.load.Load() {
			h = w
		}
	}
	p.home[tenant] = h.index
	return h, nil
}

// unclaimed is the least-loaded up worker that is no tenant's home (nil:
// none); p.mu is held.
func (p *Pool) unclaimed() *worker {
	claimed := make([]bool, len(p.workers))
	for _, j := range p.home {
		claimed[j] = true
	}
	var u *worker
	for _, w := range p.workers {
		if !claimed[w.index] && w.up() && (u == nil || w.load.Load() < u.load.Load()) {
			u = w
		}
	}
	return u
}

// spillSlack is how many sandboxes a tenant's home may hold beyond twice
// the least-loaded worker's before the tenant's new sandboxes spill to an
// unclaimed worker.
const spillSlack = 16

// fanOut calls fn on every worker in parallel. Results of workers that are
// down come back as their unavailable errors.
func fanOut[T any](ctx context.Context, p *Pool, tenant string, fn func(svc api.Service) (T, error)) ([]T, []error) {
	vals := make([]T, len(p.workers))
	errs := make([]error, len(p.workers))
	var wg sync.WaitGroup
	for i, w := range p.workers {
		svc, g, err := w.service(tenant)
		if err != nil {
			errs[i] = err
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals[i], errs[i] = fn(svc)
			errs[i] = w.explain(ctx, errs[i], g)
		}()
	}
	wg.Wait()
	return vals, errs
}

// find returns the index of the worker for which fn succeeded; when none
// did, the first error that is not NotFound (a worker that is down may
// hold it: 503), else the NotFound.
func find(errs []error) (int, error) {
	var notFound, other error
	for i, err := range errs {
		switch {
		case err == nil:
			return i, nil
		case errdefs.IsNotFound(err):
			if notFound == nil {
				notFound = err
			}
		default:
			if other == nil {
				other = err
			}
		}
	}
	if other != nil {
		return -1, other
	}
	return -1, notFound
}

// locate finds the worker that holds sandbox id.
func (r *tenantRouter) locate(ctx context.Context, id string) (*worker, api.Service, *generation, error) {
	r.p.mu.RLock()
	i, ok := r.p.where[id]
	r.p.mu.RUnlock()
	if !ok {
		_, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) (api.Sandbox, error) { return svc.Get(ctx, id) })
		var err error
		if i, err = find(errs); err != nil {
			return nil, nil, nil, err
		}
		r.p.remember(id, i)
	}
	w := r.p.workers[i]
	svc, g, err := w.service(r.tenant)
	return w, svc, g, err
}

// on runs fn against the worker holding id; a NotFound from it drops the
// cached placement (deleted by its TTL, say).
func on[T any](ctx context.Context, r *tenantRouter, id string, fn func(svc api.Service) (T, error)) (T, error) {
	w, svc, g, err := r.locate(ctx, id)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := fn(svc)
	err = w.explain(ctx, err, g)
	if err != nil && errdefs.IsNotFound(err) && isSandboxNotFound(err, id) {
		r.p.forget(id)
	}
	return v, err
}

// isSandboxNotFound: the sandbox itself is gone (not a file or a process
// in it), in the sandbox package's words.
func isSandboxNotFound(err error, id string) bool {
	msg := err.Error()
	return strings.Contains(msg, fmt.Sprintf("sandbox %q not found", id)) || strings.Contains(msg, "sandbox "+id+" was deleted")
}

func on0(ctx context.Context, r *tenantRouter, id string, fn func(svc api.Service) error) error {
	_, err := on(ctx, r, id, func(svc api.Service) (struct{}, error) { return struct{}{}, fn(svc) })
	return err
}

func (r *tenantRouter) Create(ctx context.Context, req api.CreateRequest) (api.Sandbox, error) {
	var w *worker
	if req.FromGeneration != nil {
		var err error
		if w, err = r.generationWorker(ctx, req.FromGeneration); err != nil {
			return api.Sandbox{}, err
		}
	} else if len(req.Volumes) > 0 {
		// On the worker holding the volumes' records (and the snapshot's).
		var err error
		var ok bool
		if w, ok, err = r.attachWorker(ctx, req.Volumes, req.Snapshot); err != nil {
			return api.Sandbox{}, err
		}
		if !ok {
			if w, err = r.p.place(r.tenant); err != nil {
				return api.Sandbox{}, err
			}
		}
	} else if req.Snapshot != "" {
		var err error
		if w, err = r.snapshotWorker(ctx, req.Snapshot); err != nil {
			return api.Sandbox{}, err
		}
	} else {
		var err error
		if w, err = r.p.place(r.tenant); err != nil {
			return api.Sandbox{}, err
		}
	}
	svc, g, err := w.service(r.tenant)
	if err != nil {
		return api.Sandbox{}, err
	}
	sb, err := svc.Create(ctx, req)
	if err != nil {
		return sb, w.explain(ctx, err, g)
	}
	w.load.Add(1)
	r.p.remember(sb.ID, w.index)
	return sb, nil
}

func (r *tenantRouter) Get(ctx context.Context, id string) (api.Sandbox, error) {
	return on(ctx, r, id, func(svc api.Service) (api.Sandbox, error) { return svc.Get(ctx, id) })
}

// List asks every worker; while one restarts the list would be partial,
// so it fails with 503 instead (a client would read a short list as
// deleted sandboxes).
func (r *tenantRouter) List(ctx context.Context, opts api.ListOptions) ([]api.Sandbox, error) {
	vals, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) ([]api.Sandbox, error) { return svc.List(ctx, opts) })
	out := []api.Sandbox{}
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		for _, sb := range vals[i] {
			r.p.remember(sb.ID, i)
			out = append(out, sb)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func (r *tenantRouter) Delete(ctx context.Context, id string) error {
	w, svc, g, err := r.locate(ctx, id)
	if err != nil {
		return err
	}
	err = w.explain(ctx, svc.Delete(ctx, id), g)
	if err == nil || errdefs.IsNotFound(err) {
		r.p.forget(id)
	}
	if err == nil {
		w.load.Add(-1)
	}
	return err
}

func (r *tenantRouter) Exec(ctx context.Context, id string, req api.ExecRequest, stdout, stderr io.Writer) (api.ExecResult, error) {
	return on(ctx, r, id, func(svc api.Service) (api.ExecResult, error) { return svc.Exec(ctx, id, req, stdout, stderr) })
}

func (r *tenantRouter) StartProcess(ctx context.Context, id string, req api.ExecRequest) (api.Process, error) {
	return on(ctx, r, id, func(svc api.Service) (api.Process, error) { return svc.StartProcess(ctx, id, req) })
}

func (r *tenantRouter) ListProcesses(ctx context.Context, id string) ([]api.Process, error) {
	return on(ctx, r, id, func(svc api.Service) ([]api.Process, error) { return svc.ListProcesses(ctx, id) })
}

func (r *tenantRouter) AttachProcess(ctx context.Context, id string, pid int, stdout, stderr io.Writer) (api.ExecResult, error) {
	return on(ctx, r, id, func(svc api.Service) (api.ExecResult, error) {
		return svc.AttachProcess(ctx, id, pid, stdout, stderr)
	})
}

func (r *tenantRouter) WriteStdin(ctx context.Context, id string, pid int, data []byte, closeStdin bool) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.WriteStdin(ctx, id, pid, data, closeStdin) })
}

func (r *tenantRouter) SignalProcess(ctx context.Context, id string, pid int, signal string) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.SignalProcess(ctx, id, pid, signal) })
}

func (r *tenantRouter) WaitProcess(ctx context.Context, id string, pid int) (api.ExecResult, error) {
	return on(ctx, r, id, func(svc api.Service) (api.ExecResult, error) { return svc.WaitProcess(ctx, id, pid) })
}

func (r *tenantRouter) ReadFile(ctx context.Context, id, path string, offset, length int64) ([]byte, error) {
	return on(ctx, r, id, func(svc api.Service) ([]byte, error) { return svc.ReadFile(ctx, id, path, offset, length) })
}

func (r *tenantRouter) WriteFile(ctx context.Context, id string, req api.WriteFileRequest) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.WriteFile(ctx, id, req) })
}

func (r *tenantRouter) ListFiles(ctx context.Context, id, path string, opts api.ListFilesOptions) ([]api.FileInfo, error) {
	return on(ctx, r, id, func(svc api.Service) ([]api.FileInfo, error) { return svc.ListFiles(ctx, id, path, opts) })
}

func (r *tenantRouter) Stat(ctx context.Context, id, path string) (api.FileInfo, error) {
	return on(ctx, r, id, func(svc api.Service) (api.FileInfo, error) { return svc.Stat(ctx, id, path) })
}

func (r *tenantRouter) Mkdir(ctx context.Context, id, path string, perm uint32) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.Mkdir(ctx, id, path, perm) })
}

func (r *tenantRouter) Move(ctx context.Context, id, from, to string) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.Move(ctx, id, from, to) })
}

func (r *tenantRouter) Remove(ctx context.Context, id, path string, recursive bool) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.Remove(ctx, id, path, recursive) })
}

func (r *tenantRouter) UploadTar(ctx context.Context, id, dir string, tar io.Reader) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.UploadTar(ctx, id, dir, tar) })
}

func (r *tenantRouter) DownloadTar(ctx context.Context, id, dir string, w io.Writer) error {
	return on0(ctx, r, id, func(svc api.Service) error { return svc.DownloadTar(ctx, id, dir, w) })
}

func (r *tenantRouter) Hibernate(ctx context.Context, id string) (api.Sandbox, error) {
	return on(ctx, r, id, func(svc api.Service) (api.Sandbox, error) { return svc.Hibernate(ctx, id) })
}

func (r *tenantRouter) Resume(ctx context.Context, id string) (api.Sandbox, error) {
	return on(ctx, r, id, func(svc api.Service) (api.Sandbox, error) { return svc.Resume(ctx, id) })
}

func (r *tenantRouter) Fork(ctx context.Context, id string, count int) ([]api.Sandbox, error) {
	return r.ForkWith(ctx, id, api.ForkRequest{Count: count})
}

func (r *tenantRouter) ForkWith(ctx context.Context, id string, req api.ForkRequest) ([]api.Sandbox, error) {
	w, svc, g, err := r.locate(ctx, id)
	if err != nil {
		return nil, err
	}
	kids, err := svc.ForkWith(ctx, id, req)
	if err != nil {
		return nil, w.explain(ctx, err, g)
	}
	for _, k := range kids {
		r.p.remember(k.ID, w.index)
	}
	w.load.Add(int64(len(kids)))
	return kids, nil
}

// snapshotWorker finds the worker that holds the record of snapshot name.
func (r *tenantRouter) snapshotWorker(ctx context.Context, name string) (*worker, error) {
	k := [2]string{r.tenant, name}
	r.p.mu.RLock()
	i, ok := r.p.snaps[k]
	r.p.mu.RUnlock()
	if !ok {
		_, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) (api.Snapshot, error) { return svc.GetSnapshot(ctx, name) })
		var err error
		if i, err = find(errs); err != nil {
			return nil, err
		}
		r.p.mu.Lock()
		r.p.snaps[k] = i
		r.p.mu.Unlock()
	}
	return r.p.workers[i], nil
}

func (r *tenantRouter) forgetSnapshot(name string) {
	r.p.mu.Lock()
	delete(r.p.snaps, [2]string{r.tenant, name})
	r.p.mu.Unlock()
}

// CreateSnapshot runs on the sandbox's worker, after checking under one
// lock that no other worker has the name (names are per tenant, records
// per worker).
func (r *tenantRouter) CreateSnapshot(ctx context.Context, id, name string) (api.Snapshot, error) {
	r.p.snapMu.Lock()
	defer r.p.snapMu.Unlock()
	w, svc, g, err := r.locate(ctx, id)
	if err != nil {
		return api.Snapshot{}, err
	}
	_, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) (api.Snapshot, error) { return svc.GetSnapshot(ctx, name) })
	for i, err := range errs {
		switch {
		case err == nil && i != w.index:
			return api.Snapshot{}, api.Errorf(errdefs.ErrAlreadyExists, "snapshot %q already exists", name)
		case err != nil && !errdefs.IsNotFound(err) && i != w.index:
			// Cannot tell whether the restarting worker has the name.
			return api.Snapshot{}, err
		}
	}
	s, err := svc.CreateSnapshot(ctx, id, name)
	if err != nil {
		return s, w.explain(ctx, err, g)
	}
	r.p.mu.Lock()
	r.p.snaps[[2]string{r.tenant, name}] = w.index
	r.p.mu.Unlock()
	return s, nil
}

func (r *tenantRouter) ListSnapshots(ctx context.Context) ([]api.Snapshot, error) {
	vals, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) ([]api.Snapshot, error) { return svc.ListSnapshots(ctx) })
	out := []api.Snapshot{}
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		out = append(out, vals[i]...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (r *tenantRouter) GetSnapshot(ctx context.Context, name string) (api.Snapshot, error) {
	w, err := r.snapshotWorker(ctx, name)
	if err != nil {
		return api.Snapshot{}, err
	}
	svc, g, err := w.service(r.tenant)
	if err != nil {
		return api.Snapshot{}, err
	}
	s, err := svc.GetSnapshot(ctx, name)
	err = w.explain(ctx, err, g)
	if errdefs.IsNotFound(err) {
		r.forgetSnapshot(name)
	}
	return s, err
}

func (r *tenantRouter) DeleteSnapshot(ctx context.Context, name string) error {
	r.p.snapMu.Lock()
	defer r.p.snapMu.Unlock()
	w, err := r.snapshotWorker(ctx, name)
	if err != nil {
		return err
	}
	svc, g, err := w.service(r.tenant)
	if err != nil {
		return err
	}
	err = w.explain(ctx, svc.DeleteSnapshot(ctx, name), g)
	if err == nil || errdefs.IsNotFound(err) {
		r.forgetSnapshot(name)
	}
	return err
}

// anyService is a worker for calls every worker answers alike (images:
// the catalog lives in the shared blob store).
func (r *tenantRouter) anyService() (api.Service, error) {
	w, err := r.p.place("")
	if err != nil {
		return nil, err
	}
	svc, _, err := w.service(r.tenant)
	return svc, err
}

func (r *tenantRouter) ListImages(ctx context.Context) ([]api.Image, error) {
	svc, err := r.anyService()
	if err != nil {
		return nil, err
	}
	return svc.ListImages(ctx)
}

func (r *tenantRouter) BuildImage(ctx context.Context, name string, tar io.Reader) (api.Image, error) {
	svc, err := r.anyService()
	if err != nil {
		return api.Image{}, err
	}
	return svc.BuildImage(ctx, name, tar)
}

var _ api.ImageManager = (*tenantRouter)(nil)

func (r *tenantRouter) imageManager() (api.ImageManager, error) {
	svc, err := r.anyService()
	if err != nil {
		return nil, err
	}
	im, ok := svc.(api.ImageManager)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this node's workers cannot build with options or remove images")
	}
	return im, nil
}

func (r *tenantRouter) BuildImageWith(ctx context.Context, name string, tar io.Reader, opts api.ImageBuildOptions) (api.Image, error) {
	im, err := r.imageManager()
	if err != nil {
		return api.Image{}, err
	}
	return im.BuildImageWith(ctx, name, tar, opts)
}

// DeleteImage checks the tenant's sandboxes on every worker first: a
// worker's own check sees only the sandboxes it runs.
func (r *tenantRouter) DeleteImage(ctx context.Context, name string) error {
	im, err := r.imageManager()
	if err != nil {
		return err
	}
	imgs, err := r.ListImages(ctx)
	if err != nil {
		return err
	}
	for _, img := range imgs {
		if img.Name != name || img.Shared {
			continue
		}
		sbs, err := r.List(ctx, api.ListOptions{})
		if err != nil {
			return err
		}
		for _, sb := range sbs {
			if sb.Image == img.Digest {
				return api.Errorf(errdefs.ErrFailedPrecondition, "image %q is in use by a sandbox (%s): delete the sandboxes made from it first", name, sb.ID)
			}
		}
	}
	return im.DeleteImage(ctx, name)
}

// Handler wraps the front's handler so that a 503 carries Retry-After
// (the longest restart delay of a worker that is down, at least 1s); a
// handler that set its own keeps it.
func (p *Pool) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &retryWriter{ResponseWriter: w, p: p}
		h.ServeHTTP(rw, r)
		if r.Method == "GET" && r.URL.Path == "/metrics" && rw.status == http.StatusOK {
			io.WriteString(w, p.metrics())
		}
	})
}

// metrics are the workers' lines appended to the front's /metrics: the
// front's own memory figures cover only the front.
func (p *Pool) metrics() string {
	var b strings.Builder
	b.WriteString("# HELP warren_worker_up Whether the worker process serves (1) or is restarting (0).\n# TYPE warren_worker_up gauge\n")
	st := p.Status()
	for _, s := range st {
		up := 0
		if s.Up {
			up = 1
		}
		fmt.Fprintf(&b, "warren_worker_up{worker=\"%d\"} %d\n", s.Index, up)
	}
	b.WriteString("# HELP warren_worker_restarts_total Worker restarts after a death.\n# TYPE warren_worker_restarts_total counter\n")
	for _, s := range st {
		fmt.Fprintf(&b, "warren_worker_restarts_total{worker=\"%d\"} %d\n", s.Index, s.Restarts)
	}
	b.WriteString("# HELP warren_worker_oom_kills_total Processes of the worker's cgroup killed over its memory limit.\n# TYPE warren_worker_oom_kills_total counter\n")
	for _, s := range st {
		fmt.Fprintf(&b, "warren_worker_oom_kills_total{worker=\"%d\"} %d\n", s.Index, s.OOMKills)
	}
	homes := make([]int, len(p.workers))
	p.mu.RLock()
	for _, j := range p.home {
		homes[j]++
	}
	p.mu.RUnlock()
	b.WriteString("# HELP warren_worker_tenants Tenants whose home (where their new sandboxes go) is the worker.\n# TYPE warren_worker_tenants gauge\n")
	for i, n := range homes {
		fmt.Fprintf(&b, "warren_worker_tenants{worker=\"%d\"} %d\n", i, n)
	}
	b.WriteString("# HELP warren_worker_sandboxes Sandboxes the worker holds.\n# TYPE warren_worker_sandboxes gauge\n")
	for _, w := range p.workers {
		fmt.Fprintf(&b, "warren_worker_sandboxes{worker=\"%d\"} %d\n", w.index, w.load.Load())
	}
	b.WriteString("# HELP warren_worker_memory_bytes The worker cgroup's memory charge and limit.\n# TYPE warren_worker_memory_bytes gauge\n")
	for _, s := range st {
		fmt.Fprintf(&b, "warren_worker_memory_bytes{worker=\"%d\",kind=\"usage\"} %d\nwarren_worker_memory_bytes{worker=\"%d\",kind=\"limit\"} %d\n", s.Index, s.Memory, s.Index, s.MemoryMax)
	}
	return b.String()
}

type retryWriter struct {
	http.ResponseWriter
	p      *Pool
	status int
}

func (rw *retryWriter) Write(b []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	return rw.ResponseWriter.Write(b)
}

func (rw *retryWriter) WriteHeader(code int) {
	if rw.status == 0 {
		rw.status = code
	}
	if code == http.StatusServiceUnavailable && rw.Header().Get("Retry-After") == "" {
		rw.Header().Set("Retry-After", strconv.Itoa(rw.p.retryAfter()))
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *retryWriter) Flush() {
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (rw *retryWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

func (p *Pool) retryAfter() int {
	d := time.Second
	for _, w := range p.workers {
		w.mu.Lock()
		if w.gen == nil && w.backoff+time.Second > d {
			d = w.backoff + time.Second
		}
		w.mu.Unlock()
	}
	return int(d / time.Second)
}
