package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/vfs"
)

// Drives (docs/drive.md): shared trees many sandboxes mount at once. The
// node's drive.Registry keeps them (bbolt in the data directory, shared by
// its worker processes, or PostgreSQL in a fleet); a box mounts each drive
// of cfg.Drives into its FS with vfs.MountRemote while it runs, holding a
// drive.Drive (a mount lease) from resume to hibernate or delete. The list
// is the box's configuration, so it survives hibernate, restarts and
// takeover; forks, snapshots and sandboxes from a generation start without
// it (withoutMounts). The native tier does not materialize drives (native
// processes see the sandbox's own directory at the mount point; what they
// write there reaches the drive at the harvest, through the vfs).

var _ api.DriveService = (*tenantView)(nil)

// boxDrive is one drive mounted in a running box.
type boxDrive struct {
	spec api.DriveMount
	d    *drive.Drive
}

func (m *Manager) driveRegistry() (*drive.Registry, error) {
	if m.cfg.Drives == nil {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this node has no drives")
	}
	return m.cfg.Drives, nil
}

func driveAPI(r drive.Record) api.Drive {
	return api.Drive{Name: r.Name, Size: r.Quota, Used: r.Used, CreatedAt: r.CreatedAt}
}

// checkDriveMount validates m against cfg's volumes and drives (absolute,
// not /, no overlap: nested mounts are not supported).
func checkDriveMount(cfg api.CreateRequest, m api.DriveMount) error {
	if m.Drive == "" {
		return api.Errorf(api.ErrUnprocessable, "mount: no drive named")
	}
	p := path.Clean(m.Path)
	if !strings.HasPrefix(m.Path, "/") || p == "/" {
		return api.Errorf(api.ErrUnprocessable, "drive %q: mount path %q must be absolute and not /", m.Drive, m.Path)
	}
	overlaps := func(q string) bool { return q == p || strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") }
	for _, v := range cfg.Volumes {
		if overlaps(path.Clean(v.Path)) {
			return api.Errorf(errdefs.ErrConflict, "drive %q: mount path %s overlaps volume %q at %s (nested mounts are not supported)", m.Drive, p, v.Name, v.Path)
		}
	}
	for _, d := range cfg.Drives {
		if overlaps(path.Clean(d.Path)) {
			return api.Errorf(errdefs.ErrConflict, "drive %q: mount path %s overlaps drive %q at %s (nested mounts are not supported)", m.Drive, p, d.Drive, d.Path)
		}
	}
	return nil
}

// checkDriveMounts validates a create's drives and that each exists.
func (m *Manager) checkDriveMounts(ctx context.Context, tenant string, cfg api.CreateRequest) (api.CreateRequest, error) {
	if len(cfg.Drives) == 0 {
		return cfg, nil
	}
	reg, err := m.driveRegistry()
	if err != nil {
		return cfg, err
	}
	ms := cfg.Drives
	cfg.Drives = nil
	for _, d := range ms {
		if err := checkDriveMount(cfg, d); err != nil {
			return cfg, err
		}
		if _, err := reg.Get(ctx, tenant, d.Drive); err != nil {
			return cfg, driveErr(d.Drive, err)
		}
		d.Path = path.Clean(d.Path)
		cfg.Drives = append(cfg.Drives, d)
	}
	return cfg, nil
}

// driveErr names the drive in a registry error that does not.
func driveErr(name string, err error) error {
	if errdefs.IsNotFound(err) {
		return drive.NoDrive(name)
	}
	return err
}

// openDrive opens and mounts one drive into fsys.
func (b *box) openDrive(ctx context.Context, reg *drive.Registry, fsys *vfs.FS, spec api.DriveMount) (*boxDrive, error) {
	d, err := reg.Open(ctx, b.tenant, spec.Drive)
	if err != nil {
		return nil, fmt.Errorf("cannot open drive %q: %w", spec.Drive, driveErr(spec.Drive, err))
	}
	if err := fsys.MountRemote(spec.Path, d, vfs.MountOptions{Name: "drive " + spec.Drive, ReadOnly: spec.ReadOnly}); err != nil {
		d.Close()
		return nil, api.Errorf(errdefs.ErrConflict, "cannot mount drive %q at %s: %v", spec.Drive, spec.Path, err)
	}
	return &boxDrive{spec: spec, d: d}, nil
}

// mountDrivesLocked mounts b's drives into fsys (b.mu held, b resuming).
func (b *box) mountDrivesLocked(ctx context.Context, fsys *vfs.FS) error {
	if len(b.cfg.Drives) == 0 {
		return nil
	}
	reg, err := b.m.driveRegistry()
	if err != nil {
		return err
	}
	var ds []*boxDrive
	for _, spec := range b.cfg.Drives {
		bd, err := b.openDrive(ctx, reg, fsys, spec)
		if errdefs.IsNotFound(err) {
			// A sandbox in standby holds no mount lease, so its drive
			// could be deleted meanwhile: say how to get the sandbox back.
			err = api.Errorf(errdefs.ErrFailedPrecondition, "drive %q mounted at %s no longer exists: unmount it (warren sandbox umount %s %s) and try again", spec.Drive, spec.Path, b.id, spec.Path)
		}
		if err != nil {
			for _, x := range ds {
				fsys.Unmount(x.spec.Path)
				x.d.Close()
			}
			return err
		}
		ds = append(ds, bd)
	}
	b.drives = ds
	return nil
}

// dropDrivesLocked closes b's drives (hibernate, delete): their mount
// leases and locks go; a file still open loses what it had not closed.
func (b *box) dropDrivesLocked() {
	for _, x := range b.drives {
		if err := x.d.Close(); err != nil {
			b.m.log.Warn("cannot close a drive", "sandbox", b.id, "drive", x.spec.Drive, "err", err)
		}
	}
	b.drives = nil
}

func (t *tenantView) CreateDrive(ctx context.Context, req api.DriveCreate) (api.Drive, error) {
	reg, err := t.m.driveRegistry()
	if err != nil {
		return api.Drive{}, err
	}
	if req.Size < 0 {
		return api.Drive{}, api.Errorf(api.ErrUnprocessable, "drive %q: size %d: want bytes (0 for no quota)", req.Name, req.Size)
	}
	r, err := reg.Create(ctx, t.tenant, req.Name, req.Size)
	if err != nil {
		return api.Drive{}, classifyDrive(err)
	}
	return driveAPI(r), nil
}

func (t *tenantView) ListDrives(ctx context.Context) ([]api.Drive, error) {
	reg, err := t.m.driveRegistry()
	if err != nil {
		return nil, err
	}
	rs, err := reg.List(ctx, t.tenant)
	if err != nil {
		return nil, err
	}
	out := make([]api.Drive, 0, len(rs))
	for _, r := range rs {
		out = append(out, driveAPI(r))
	}
	return out, nil
}

func (t *tenantView) GetDrive(ctx context.Context, name string) (api.Drive, error) {
	reg, err := t.m.driveRegistry()
	if err != nil {
		return api.Drive{}, err
	}
	r, err := reg.Get(ctx, t.tenant, name)
	if err != nil {
		return api.Drive{}, driveErr(name, err)
	}
	return driveAPI(r), nil
}

// DeleteDrive deletes a drive and its files; refused (409) while any
// sandbox, on any node, has it mounted.
func (t *tenantView) DeleteDrive(ctx context.Context, name string) error {
	reg, err := t.m.driveRegistry()
	if err != nil {
		return err
	}
	if err := reg.Delete(ctx, t.tenant, name); err != nil {
		return classifyDrive(driveErr(name, err))
	}
	return nil
}

// classifyDrive maps the registry's refusals onto the API's statuses: a
// bad name is 422 like every other bad field, a mounted drive 409.
func classifyDrive(err error) error {
	switch {
	case errdefs.IsInvalidArgument(err):
		return api.Errorf(api.ErrUnprocessable, "%v", err)
	case errors.Is(err, drive.ErrMounted):
		return api.Errorf(errdefs.ErrConflict, "%v", err)
	}
	return err
}

// MountDrive mounts a drive at m.Path: at once when the sandbox runs, at
// its next resume when it stands by; recorded either way.
func (t *tenantView) MountDrive(ctx context.Context, id string, m api.DriveMount) ([]api.DriveMount, error) {
	reg, err := t.m.driveRegistry()
	if err != nil {
		return nil, err
	}
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == api.StateDeleted {
		return nil, notFound(b.id)
	}
	if err := checkDriveMount(b.cfg, m); err != nil {
		return nil, err
	}
	if _, err := reg.Get(ctx, t.tenant, m.Drive); err != nil {
		return nil, driveErr(m.Drive, err)
	}
	m.Path = path.Clean(m.Path)
	var bd *boxDrive
	if b.state == api.StateRunning && b.fs != nil {
		if bd, err = b.openDrive(ctx, reg, b.fs, m); err != nil {
			return nil, err
		}
	}
	old := b.cfg.Drives
	b.cfg.Drives = append(slices.Clip(old), m)
	if err := t.m.cfg.Meta.PutSandbox(ctx, b.recordLocked()); err != nil {
		b.cfg.Drives = old
		if bd != nil {
			b.fs.Unmount(m.Path)
			bd.d.Close()
		}
		return nil, fmt.Errorf("cannot record the mount: %w", err)
	}
	if bd != nil {
		b.drives = append(b.drives, bd)
	}
	return slices.Clone(b.cfg.Drives), nil
}

// UnmountDrive removes the drive mounted at p. A file still open there
// keeps its handle, but what it had not closed is not committed.
func (t *tenantView) UnmountDrive(ctx context.Context, id, p string) ([]api.DriveMount, error) {
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == api.StateDeleted {
		return nil, notFound(b.id)
	}
	p = path.Clean(p)
	i := slices.IndexFunc(b.cfg.Drives, func(d api.DriveMount) bool { return d.Path == p })
	if i < 0 {
		return nil, api.Errorf(errdefs.ErrNotFound, "sandbox %s has no drive mounted at %s", b.id, p)
	}
	old := b.cfg.Drives
	b.cfg.Drives = slices.Delete(slices.Clone(old), i, i+1)
	if err := t.m.cfg.Meta.PutSandbox(ctx, b.recordLocked()); err != nil {
		b.cfg.Drives = old
		return nil, fmt.Errorf("cannot record the unmount: %w", err)
	}
	if j := slices.IndexFunc(b.drives, func(x *boxDrive) bool { return x.spec.Path == p }); j >= 0 {
		x := b.drives[j]
		b.drives = slices.Delete(b.drives, j, j+1)
		if b.fs != nil {
			if err := b.fs.Unmount(p); err != nil {
				b.m.log.Warn("unmount", "sandbox", b.id, "path", p, "err", err)
			}
		}
		if err := x.d.Close(); err != nil {
			b.m.log.Warn("cannot close a drive", "sandbox", b.id, "drive", x.spec.Drive, "err", err)
		}
	}
	return slices.Clone(b.cfg.Drives), nil
}

func (t *tenantView) ListMounts(ctx context.Context, id string) ([]api.DriveMount, error) {
	b, err := t.box(id)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.cfg.Drives), nil
}

// sweepDrives sweeps every drive's unreferenced chunks (drive.Registry.Sweep,
// after its grace) and the objects of deleted drives, every interval until
// the manager closes. Every node and worker runs it; sweeps of one drive
// from several are safe (docs/drive.md), just repeated work.
func (m *Manager) sweepDrives(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-m.stop
		cancel()
	}()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		reg := m.cfg.Drives
		recs, err := reg.List(ctx, "")
		if err != nil {
			m.log.Warn("drive sweep: cannot list drives", "err", err)
			continue
		}
		for _, r := range recs {
			st, err := reg.Sweep(ctx, r.Tenant, r.Name)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				m.log.Warn("drive sweep failed; the next run tries again", "drive", r.Name, "tenant", r.Tenant, "err", err)
				continue
			}
			m.log.Debug("drive sweep", "drive", r.Name, "tenant", r.Tenant, "stats", st)
		}
		if n, err := reg.DeleteOrphans(ctx); err != nil {
			m.log.Warn("drive sweep: deleted drives' objects", "err", err)
		} else if n > 0 {
			m.log.Info("drive sweep: removed the objects of deleted drives", "drives", n)
		}
	}
}
