package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/image"
)

// tenantView is the api.Service of one tenant.
type tenantView struct {
	m      *Manager
	tenant string
}

var _ api.Service = (*tenantView)(nil)

func (t *tenantView) box(id string) (*box, error) { return t.m.lookup(t.tenant, id) }

func (t *tenantView) Create(ctx context.Context, req api.CreateRequest) (api.Sandbox, error) {
	m := t.m
	if req.FromGeneration != nil {
		return t.createFromGeneration(ctx, req)
	}
	var snap SnapshotRecord
	if req.Snapshot != "" {
		var err error
		if snap, err = m.snapshot(t.tenant, req.Snapshot); err != nil {
			return api.Sandbox{}, err
		}
		if req.Image != "" && req.Image != snap.Config.Image && req.Image != snap.Image {
			return api.Sandbox{}, api.Errorf(api.ErrUnprocessable, "snapshot %q is of image %s, not %s", req.Snapshot, snap.Image, req.Image)
		}
		// A sandbox from a snapshot keeps the snapshot's configuration
		// unless the request overrides a field.
		base := snap.Config
		if req.Env != nil {
			base.Env = req.Env
		}
		if req.Cwd != "" {
			base.Cwd = req.Cwd
		}
		if req.Labels != nil {
			base.Labels = req.Labels
		}
		if req.Limits != (api.Limits{}) {
			base.Limits = req.Limits
		}
		if req.StandbyAfter != 0 {
			base.StandbyAfter = req.StandbyAfter
		}
		if req.Network != nil {
			base.Network = req.Network
		}
		base.Secrets = req.Secrets
		base.Volumes = req.Volumes
		base.Drives = req.Drives
		base.TTL = req.TTL
		base.Snapshot = req.Snapshot
		req = base
	}
	img, err := m.cfg.Images.Lookup(ctx, t.tenant, req.Image)
	if err != nil {
		return api.Sandbox{}, err
	}
	if req.Snapshot == "" {
		if req, err = imageStart(req, img); err != nil {
			return api.Sandbox{}, err
		}
	}
	if req, err = m.normalise(req); err != nil {
		return api.Sandbox{}, err
	}
	if req, err = m.checkDriveMounts(ctx, t.tenant, req); err != nil {
		return api.Sandbox{}, err
	}
	// Secrets leave the request here: the record never holds them.
	req, secrets, err := takeSecrets(req)
	if err != nil {
		return api.Sandbox{}, err
	}
	if req.Image == "" {
		req.Image = img.Name
	}
	r := Record{
		ID: newID("sb-"), Tenant: t.tenant, Config: req, ImageDigest: img.Digest,
		State: api.StateRunning, CreatedAt: m.now(),
	}
	if err := m.leaseVolumes(ctx, t.tenant, r.ID, req.Volumes); err != nil {
		return api.Sandbox{}, err
	}
	if req.Snapshot != "" {
		r.State, r.StateRef, r.Snapshot, r.ImageDigest = api.StateStandby, snap.StateRef, snap.Name, snap.Image
	}
	b := m.newBox(r)
	if b.net != nil && len(secrets) > 0 {
		b.net.SetSecrets(secrets)
	}
	if m.dur != nil {
		// Durable: the head must exist (the record) before the claim
		// that resuming makes.
		if err := m.add(ctx, b); err != nil {
			return api.Sandbox{}, err
		}
		if r.State == api.StateRunning {
			// Under mu: the box is in the manager now, and its tick reads
			// the state.
			b.mu.Lock()
			b.state = api.StateStandby
			b.mu.Unlock()
			if err := b.resume(ctx); err != nil {
				m.destroy(context.WithoutCancel(ctx), b)
				return api.Sandbox{}, err
			}
		}
		return b.info(), nil
	}
	if r.State == api.StateRunning {
		// A fresh sandbox is an empty delta over the image: nothing to
		// load, so it starts running (create -> first exec stays cheap).
		b.state = api.StateStandby
		if err := b.resume(ctx); err != nil {
			m.releaseVolumes(context.WithoutCancel(ctx), t.tenant, r.ID, req.Volumes)
			return api.Sandbox{}, err
		}
	}
	if err := m.add(ctx, b); err != nil {
		m.releaseVolumes(context.WithoutCancel(ctx), t.tenant, r.ID, req.Volumes)
		return api.Sandbox{}, err
	}
	return b.info(), nil
}

// imageStart fills what the request leaves unset from the image's config,
// as `warren run` does (image.Config.StartOf): its user, its WORKDIR and
// its environment under the request's own variables.
func imageStart(req api.CreateRequest, img Image) (api.CreateRequest, error) {
	st, err := img.Config.StartOf(image.FSReader(img.FS))
	if err != nil {
		return req, api.Errorf(api.ErrUnprocessable, "image %s: %v", req.Image, err)
	}
	if req.User == "" && st.User.Uid != 0 {
		req.User = st.User.Name
	}
	if req.Cwd == "" {
		req.Cwd = st.Dir
	}
	env := make(map[string]string, len(st.Env)+len(req.Env))
	for _, kv := range st.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range req.Env {
		env[k] = v
	}
	req.Env = env
	return req, nil
}

func (t *tenantView) Get(ctx context.Context, id string) (api.Sandbox, error) {
	b, err := t.box(id)
	if err != nil {
		return api.Sandbox{}, err
	}
	return b.info(), nil
}

func (t *tenantView) List(ctx context.Context, opts api.ListOptions) ([]api.Sandbox, error) {
	out := []api.Sandbox{}
	for _, b := range t.m.tenantBoxes(t.tenant) {
		match := true
		for k, v := range opts.Labels {
			if b.cfg.Labels[k] != v {
				match = false
				break
			}
		}
		if match {
			if s := b.info(); s.State != api.StateDeleted {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func (t *tenantView) Delete(ctx context.Context, id string) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	return t.m.destroy(ctx, b)
}

func (t *tenantView) Exec(ctx context.Context, id string, req api.ExecRequest, stdout, stderr io.Writer) (api.ExecResult, error) {
	b, err := t.box(id)
	if err != nil {
		return api.ExecResult{}, err
	}
	if err := checkExec(&req); err != nil {
		return api.ExecResult{}, err
	}
	release, err := b.use(ctx)
	if err != nil {
		return api.ExecResult{}, err
	}
	defer release()
	return t.m.run(ctx, b, req, req.StdinReader, stdout, stderr, nil)
}

func (t *tenantView) StartProcess(ctx context.Context, id string, req api.ExecRequest) (api.Process, error) {
	b, err := t.box(id)
	if err != nil {
		return api.Process{}, err
	}
	return t.m.start(ctx, b, req)
}

func (t *tenantView) ListProcesses(ctx context.Context, id string) ([]api.Process, error) {
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	return b.listProcs(), nil
}

func (t *tenantView) proc(id string, pid int) (*process, error) {
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	return b.proc(pid)
}

func (t *tenantView) AttachProcess(ctx context.Context, id string, pid int, stdout, stderr io.Writer) (api.ExecResult, error) {
	p, err := t.proc(id, pid)
	if err != nil {
		return api.ExecResult{}, err
	}
	truncated, err := p.out.attach(ctx, [2]io.Writer{stdout, stderr})
	if err != nil {
		return api.ExecResult{}, fmt.Errorf("attach to process %d: %w", pid, err)
	}
	res, err := p.wait(ctx)
	res.Truncated = res.Truncated || truncated
	return res, err
}

func (t *tenantView) WriteStdin(ctx context.Context, id string, pid int, data []byte, closeStdin bool) error {
	p, err := t.proc(id, pid)
	if err != nil {
		return err
	}
	if p.tty != nil {
		return p.ttyInput(data, closeStdin)
	}
	if p.stdin == nil {
		return api.Errorf(errdefs.ErrFailedPrecondition, "process %d is a background job of session %q: it has no stdin (its stdin is /dev/null)", pid, p.session)
	}
	if len(data) > 0 {
		if _, err := p.stdin.Write(data); err != nil {
			return err
		}
	}
	if closeStdin {
		return p.stdin.Close()
	}
	return nil
}

func (t *tenantView) SignalProcess(ctx context.Context, id string, pid int, signal string) error {
	sig, err := parseSignal(signal)
	if err != nil {
		return err
	}
	p, err := t.proc(id, pid)
	if err != nil {
		return err
	}
	return p.signal(sig)
}

func (t *tenantView) WaitProcess(ctx context.Context, id string, pid int) (api.ExecResult, error) {
	p, err := t.proc(id, pid)
	if err != nil {
		return api.ExecResult{}, err
	}
	return p.wait(ctx)
}

func (t *tenantView) ReadFile(ctx context.Context, id, p string, offset, length int64) ([]byte, error) {
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	return t.m.readFile(ctx, b, p, offset, length)
}

// MaxWriteBytes bounds one WriteFile in process (the server has its own
// body limit, normally lower).
const MaxWriteBytes = 1 << 30

func (t *tenantView) WriteFile(ctx context.Context, id string, req api.WriteFileRequest) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	var data []byte
	if req.Data != nil {
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(req.Data, MaxWriteBytes+1))
		if err != nil {
			if isBodyTooLarge(err) {
				return api.Errorf(api.ErrTooLarge, "file body over the request limit")
			}
			return api.Errorf(errdefs.ErrInvalidArgument, "cannot read the file body: %v", err)
		}
		if n > MaxWriteBytes {
			return api.Errorf(api.ErrTooLarge, "file over %d bytes", MaxWriteBytes)
		}
		data = buf.Bytes()
	}
	return t.m.writeFile(ctx, b, req, data)
}

func (t *tenantView) ListFiles(ctx context.Context, id, p string, opts api.ListFilesOptions) ([]api.FileInfo, error) {
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	return t.m.listFiles(ctx, b, p, opts)
}

func (t *tenantView) Stat(ctx context.Context, id, p string) (api.FileInfo, error) {
	b, err := t.box(id)
	if err != nil {
		return api.FileInfo{}, err
	}
	return t.m.stat(ctx, b, p)
}

func (t *tenantView) Mkdir(ctx context.Context, id, p string, perm uint32) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	return t.m.mkdir(ctx, b, p, perm)
}

func (t *tenantView) Move(ctx context.Context, id, from, to string) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	return t.m.move(ctx, b, from, to)
}

func (t *tenantView) Remove(ctx context.Context, id, p string, recursive bool) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	return t.m.remove(ctx, b, p, recursive)
}

func (t *tenantView) UploadTar(ctx context.Context, id, dir string, r io.Reader) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	return t.m.uploadTar(ctx, b, dir, r)
}

func (t *tenantView) DownloadTar(ctx context.Context, id, dir string, w io.Writer) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	return t.m.downloadTar(ctx, b, dir, w)
}

func (t *tenantView) Hibernate(ctx context.Context, id string) (api.Sandbox, error) {
	b, err := t.box(id)
	if err != nil {
		return api.Sandbox{}, err
	}
	if err := b.hibernate(ctx, false); err != nil {
		return api.Sandbox{}, err
	}
	return b.info(), nil
}

func (t *tenantView) Resume(ctx context.Context, id string) (api.Sandbox, error) {
	b, err := t.box(id)
	if err != nil {
		return api.Sandbox{}, err
	}
	if err := b.resume(ctx); err != nil {
		return api.Sandbox{}, err
	}
	return b.info(), nil
}

func (t *tenantView) Fork(ctx context.Context, id string, count int) ([]api.Sandbox, error) {
	return t.ForkWith(ctx, id, api.ForkRequest{Count: count})
}

func (t *tenantView) ForkWith(ctx context.Context, id string, req api.ForkRequest) ([]api.Sandbox, error) {
	count := req.Count
	if err := checkLabels(req.Labels); err != nil {
		return nil, err
	}
	if count == 0 {
		count = 1
	}
	if count < 0 || count > t.m.cfg.MaxForkCount {
		return nil, api.Errorf(api.ErrUnprocessable, "fork count %d out of range 1..%d", count, t.m.cfg.MaxForkCount)
	}
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	var labels map[string]string
	if len(req.Labels) > 0 {
		// The children's labels: the parent's with the new set over them,
		// within the same bounds as a create's.
		if labels = withLabels(b.cfg.Labels, req.Labels); len(labels) > 64 {
			return nil, api.Errorf(api.ErrUnprocessable, "too many labels on the children (%d with the parent's, max 64)", len(labels))
		}
	}
	children, err := b.fork(ctx, count)
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		if labels != nil {
			c.cfg.Labels = labels
		}
	}
	if err := t.m.add(ctx, children...); err != nil {
		return nil, err
	}
	out := make([]api.Sandbox, len(children))
	for i, c := range children {
		out[i] = c.info()
	}
	return out, nil
}

func (t *tenantView) CreateSnapshot(ctx context.Context, id, name string) (api.Snapshot, error) {
	if !nameRE.MatchString(name) {
		return api.Snapshot{}, api.Errorf(api.ErrUnprocessable, "bad snapshot name %q: want 1-64 of [A-Za-z0-9._-]", name)
	}
	b, err := t.box(id)
	if err != nil {
		return api.Snapshot{}, err
	}
	if _, err := t.m.snapshot(t.tenant, name); err == nil {
		return api.Snapshot{}, api.Errorf(errdefs.ErrAlreadyExists, "snapshot %q already exists", name)
	}
	// The snapshot's objects are a root only once it is recorded: a GC
	// sweep waits (gc.go).
	t.m.gc.uploads.RLock()
	defer t.m.gc.uploads.RUnlock()
	ref, err := b.snapshotRef(ctx)
	if err != nil {
		return api.Snapshot{}, err
	}
	s := SnapshotRecord{
		Tenant: t.tenant, Name: name, Sandbox: id, Config: b.cfg, Image: b.imageDigest,
		StateRef: ref, CreatedAt: t.m.now(),
	}
	s.Config.Snapshot = ""
	s.Config = withoutMounts(s.Config)
	if err := t.m.addSnapshot(ctx, s); err != nil {
		return api.Snapshot{}, err
	}
	return s.api(), nil
}

func (s SnapshotRecord) api() api.Snapshot {
	return api.Snapshot{Name: s.Name, Sandbox: s.Sandbox, Image: s.Image, StateRef: "sha256:" + s.StateRef, CreatedAt: s.CreatedAt}
}

func (t *tenantView) ListSnapshots(ctx context.Context) ([]api.Snapshot, error) {
	t.m.mu.RLock()
	out := []api.Snapshot{}
	for k, s := range t.m.snaps {
		if k[0] == t.tenant {
			out = append(out, s.api())
		}
	}
	t.m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (t *tenantView) GetSnapshot(ctx context.Context, name string) (api.Snapshot, error) {
	s, err := t.m.snapshot(t.tenant, name)
	if err != nil {
		return api.Snapshot{}, err
	}
	return s.api(), nil
}

func (t *tenantView) DeleteSnapshot(ctx context.Context, name string) error {
	if _, err := t.m.snapshot(t.tenant, name); err != nil {
		return err
	}
	if err := t.m.cfg.Meta.DeleteSnapshot(ctx, t.tenant, name); err != nil {
		return fmt.Errorf("cannot delete snapshot %q: %w", name, err)
	}
	t.m.mu.Lock()
	delete(t.m.snaps, [2]string{t.tenant, name})
	t.m.mu.Unlock()
	return nil
}

func (t *tenantView) ListImages(ctx context.Context) ([]api.Image, error) {
	return t.m.cfg.Images.List(ctx, t.tenant)
}

// Builder is implemented by Images that can build and remove images.
type Builder interface {
	Build(ctx context.Context, tenant, name string, tar io.Reader, opts api.ImageBuildOptions) (api.Image, error)
	Remove(ctx context.Context, tenant, name string) error
}

var _ api.ImageManager = (*tenantView)(nil)

func (t *tenantView) BuildImage(ctx context.Context, name string, tar io.Reader) (api.Image, error) {
	return t.BuildImageWith(ctx, name, tar, api.ImageBuildOptions{})
}

func (t *tenantView) BuildImageWith(ctx context.Context, name string, tar io.Reader, opts api.ImageBuildOptions) (api.Image, error) {
	b, ok := t.m.cfg.Images.(Builder)
	if !ok {
		return api.Image{}, api.Errorf(errdefs.ErrNotImplemented, "this node cannot build images")
	}
	return b.Build(ctx, t.tenant, name, tar, opts)
}

func (t *tenantView) DeleteImage(ctx context.Context, name string) error {
	b, ok := t.m.cfg.Images.(Builder)
	if !ok {
		return api.Errorf(errdefs.ErrNotImplemented, "this node cannot remove images")
	}
	return b.Remove(ctx, t.tenant, name)
}

func (m *Manager) snapshot(tenant, name string) (SnapshotRecord, error) {
	m.mu.RLock()
	s, ok := m.snaps[[2]string{tenant, name}]
	m.mu.RUnlock()
	if !ok {
		return s, api.Errorf(errdefs.ErrNotFound, "snapshot %q not found", name)
	}
	return s, nil
}

func (m *Manager) addSnapshot(ctx context.Context, s SnapshotRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{s.Tenant, s.Name}
	if _, ok := m.snaps[k]; ok {
		return api.Errorf(errdefs.ErrAlreadyExists, "snapshot %q already exists", s.Name)
	}
	if err := m.cfg.Meta.CreateSnapshot(ctx, s); err != nil {
		return err
	}
	m.snaps[k] = s
	return nil
}

// isBodyTooLarge recognises a body cut by the server's limit.
func isBodyTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
