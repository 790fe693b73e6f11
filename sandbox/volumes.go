package sandbox

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/vfs"
)

// Volumes: a tenant's durable trees that outlive sandboxes (api.Volume).
// A volume is a vfs tree of its own, mounted into a sandbox's vfs at create
// (vfs.FS.Mount), persisted with the same Deltas as a sandbox's delta, its
// head (Ref, Generation) in the metadata store. A read-write lease in the
// volume's record (Holder) lets at most one sandbox write it.
//
// Ack level: a write to a volume is `memory` while the exec or file call
// that makes it runs and `committed` when that call answers (release
// commits every changed read-write volume of the sandbox before the call
// returns; hibernate, delete and shutdown commit too). Volume writes are
// not in the node's write log, so `local` is not offered: a node killed
// mid-call loses that call's volume writes and keeps the last committed
// generation.

// VolumeRecord is one volume in the metadata store.
type VolumeRecord struct {
	Tenant string `json:"tenant"`
	Name   string `json:"name"`
	Size   int64  `json:"size"` // quota, bytes
	// Ref is the vfs Ref of its last committed tree ("" = empty).
	Ref        string `json:"ref,omitempty"`
	Generation uint64 `json:"generation"`
	Used       int64  `json:"used"` // bytes of the tree at Ref
	// Holder is the sandbox holding the read-write lease ("" = none).
	Holder    string    `json:"holder,omitempty"`
	Readers   []string  `json:"readers,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// VolumeMeta stores volumes. memMeta, boltmeta and meta/postgres implement
// it (sandbox/metatest VolumeSuite).
//
//   - CreateVolume of an existing (tenant, name) fails with
//     errdefs.ErrAlreadyExists and changes nothing.
//   - GetVolume, UpdateVolume and DeleteVolume of a missing one fail with
//     errdefs.ErrNotFound.
//   - UpdateVolume runs fn on the record and stores the result atomically
//     (fn's error aborts and is returned as is); fn cannot rename it.
//   - DeleteVolume runs check on the record in the same transaction; its
//     error aborts the delete.
//   - ListVolumes orders by (tenant, name).
type VolumeMeta interface {
	CreateVolume(ctx context.Context, v VolumeRecord) error
	GetVolume(ctx context.Context, tenant, name string) (VolumeRecord, error)
	ListVolumes(ctx context.Context) ([]VolumeRecord, error)
	UpdateVolume(ctx context.Context, tenant, name string, fn func(*VolumeRecord) error) (VolumeRecord, error)
	DeleteVolume(ctx context.Context, tenant, name string, check func(VolumeRecord) error) error
}

// NoVolume is the not-found error of a volume.
func NoVolume(name string) error {
	return api.Errorf(errdefs.ErrNotFound, "volume %q not found", name)
}

var volumeNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

func (m *Manager) volumeMeta() (VolumeMeta, error) {
	vm, ok := m.cfg.Meta.(VolumeMeta)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this node's metadata store (%T) has no volumes", m.cfg.Meta)
	}
	return vm, nil
}

// boxVolume is one volume attached to a running box.
type boxVolume struct {
	spec api.VolumeMount
	fs   *vfs.FS
	mu   sync.Mutex // one commit at a time
	mark vfs.Mark   // the tree last committed
}

// checkVolumeMounts validates a create's volumes (names, paths, no
// duplicates) before any lease is taken.
func checkVolumeMounts(vs []api.VolumeMount) error {
	names, paths := map[string]bool{}, map[string]bool{}
	for _, v := range vs {
		if !volumeNameRE.MatchString(v.Name) {
			return api.Errorf(api.ErrUnprocessable, "bad volume name %q: want 1-63 of [a-z0-9._-], starting with a letter or digit", v.Name)
		}
		p := path.Clean(v.Path)
		if !strings.HasPrefix(v.Path, "/") || p == "/" {
			return api.Errorf(api.ErrUnprocessable, "volume %q: mount path %q must be absolute and not /", v.Name, v.Path)
		}
		if names[v.Name] {
			return api.Errorf(api.ErrUnprocessable, "volume %q attached twice", v.Name)
		}
		for q := range paths {
			if q == p || strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
				return api.Errorf(api.ErrUnprocessable, "volume %q: mount path %s overlaps %s (nested mounts are not supported)", v.Name, p, q)
			}
		}
		names[v.Name], paths[p] = true, true
	}
	return nil
}

// withoutMounts is cfg for a fork, a snapshot or a sandbox from a
// generation: those start without the volumes (a read-write volume has one
// holder; a new sandbox asks for its own at create) and without the drives
// (mounted again where wanted; drives.go).
func withoutMounts(cfg api.CreateRequest) api.CreateRequest {
	cfg.Volumes, cfg.Drives = nil, nil
	return cfg
}

// holderGone reports whether the sandbox id has no record any more (a
// lease left by a crash between a delete and its release).
func (m *Manager) holderGone(ctx context.Context, id string) bool {
	if _, err := m.lookupAny(id); err == nil {
		return false
	}
	recs, err := m.cfg.Meta.Sandboxes(ctx)
	if err != nil {
		return false
	}
	for _, r := range recs {
		if r.ID == id {
			return false
		}
	}
	return true
}

func (m *Manager) lookupAny(id string) (*box, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if b, ok := m.boxes[id]; ok {
		return b, nil
	}
	return nil, notFound(id)
}

// leaseVolumes takes the leases of sandbox id (tenant's) on vs: read-write
// ones exclusively, read-only ones shared. On an error it takes none.
func (m *Manager) leaseVolumes(ctx context.Context, tenant, id string, vs []api.VolumeMount) error {
	if len(vs) == 0 {
		return nil
	}
	if err := checkVolumeMounts(vs); err != nil {
		return err
	}
	vm, err := m.volumeMeta()
	if err != nil {
		return err
	}
	for i, v := range vs {
		// Whether the holder is gone is read outside the update: the
		// store's transaction must not wait on another of its own.
		stale := ""
		if cur, err := vm.GetVolume(ctx, tenant, v.Name); err == nil && cur.Holder != "" && cur.Holder != id && m.holderGone(ctx, cur.Holder) {
			stale = cur.Holder
		}
		_, err := vm.UpdateVolume(ctx, tenant, v.Name, func(r *VolumeRecord) error {
			if v.ReadOnly {
				if !slices.Contains(r.Readers, id) {
					r.Readers = append(r.Readers, id)
				}
				return nil
			}
			if r.Holder != "" && r.Holder != id && r.Holder != stale {
				return api.Errorf(errdefs.ErrConflict, "volume %q is attached read-write to sandbox %s", v.Name, r.Holder)
			}
			r.Holder = id
			return nil
		})
		if err != nil {
			m.releaseVolumes(context.WithoutCancel(ctx), tenant, id, vs[:i])
			if errdefs.IsNotFound(err) {
				return NoVolume(v.Name)
			}
			return err
		}
	}
	return nil
}

// releaseVolumes lets go of id's leases on vs (best effort: a lease left
// behind is taken over once its holder has no record).
func (m *Manager) releaseVolumes(ctx context.Context, tenant, id string, vs []api.VolumeMount) {
	vm, err := m.volumeMeta()
	if err != nil {
		return
	}
	for _, v := range vs {
		_, err := vm.UpdateVolume(ctx, tenant, v.Name, func(r *VolumeRecord) error {
			if r.Holder == id {
				r.Holder = ""
			}
			r.Readers = slices.DeleteFunc(r.Readers, func(s string) bool { return s == id })
			return nil
		})
		if err != nil && !errdefs.IsNotFound(err) {
			m.log.Warn("cannot release a volume lease", "volume", v.Name, "sandbox", id, "err", err)
		}
	}
}

// mountVolumesLocked loads b's volumes and mounts them into fsys (b.mu
// held, b resuming). A read-write volume is loaded from its head; a
// read-only one too (it sees the last commit, never later writes).
func (b *box) mountVolumesLocked(ctx context.Context, fsys *vfs.FS) error {
	if len(b.cfg.Volumes) == 0 {
		return nil
	}
	vm, err := b.m.volumeMeta()
	if err != nil {
		return err
	}
	vols := make([]*boxVolume, 0, len(b.cfg.Volumes))
	for _, v := range b.cfg.Volumes {
		r, err := vm.GetVolume(ctx, b.tenant, v.Name)
		if errdefs.IsNotFound(err) {
			return NoVolume(v.Name)
		}
		if err != nil {
			return fmt.Errorf("volume %q: %w", v.Name, err)
		}
		if !v.ReadOnly && r.Holder != b.id {
			return api.Errorf(errdefs.ErrConflict, "volume %q is attached read-write to sandbox %s, not %s", v.Name, r.Holder, b.id)
		}
		opts := vfs.Options{MaxBytes: r.Size}
		var vf *vfs.FS
		if r.Ref == "" {
			vf = vfs.New(opts)
		} else if vf, err = b.m.cfg.Deltas.Load(ctx, opts, r.Ref); err != nil {
			return fmt.Errorf("cannot load volume %q: %w", v.Name, err)
		}
		if err := fsys.Mount(v.Path, vf, vfs.MountOptions{Name: "volume " + v.Name, ReadOnly: v.ReadOnly}); err != nil {
			return fmt.Errorf("cannot mount volume %q at %s: %w", v.Name, v.Path, err)
		}
		vols = append(vols, &boxVolume{spec: v, fs: vf, mark: vf.Mark()})
	}
	b.vols = vols
	return nil
}

// commitVolumes commits every read-write volume of b changed since its
// last commit: Persist, then move its head in the record (only while b
// still holds the lease).
func (b *box) commitVolumes(ctx context.Context, vols []*boxVolume) error {
	var first error
	for _, v := range vols {
		if v.spec.ReadOnly {
			continue
		}
		if err := b.commitVolume(ctx, v); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (b *box) commitVolume(ctx context.Context, v *boxVolume) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	mark := v.fs.Mark()
	if mark == v.mark {
		return nil
	}
	// A node that lost the sandbox (fenced) does not publish its volumes
	// either. The volume's head has no epoch of its own yet: a node that
	// has not noticed the takeover can still commit (README "Volumes").
	b.dmu.Lock()
	fenced := b.ds.fenced
	b.dmu.Unlock()
	if fenced != nil {
		return fmt.Errorf("volume %q not committed: %w", v.spec.Name, fenced)
	}
	vm, err := b.m.volumeMeta()
	if err != nil {
		return err
	}
	// Not under the GC's upload lock (release may run inside a holder of
	// it): the new objects are younger than the GC's grace until the
	// record names them.
	ref, err := b.m.cfg.Deltas.Persist(ctx, v.fs)
	if err != nil {
		return fmt.Errorf("cannot commit volume %q: %w", v.spec.Name, err)
	}
	used := v.fs.Usage().Bytes
	_, err = vm.UpdateVolume(ctx, b.tenant, v.spec.Name, func(r *VolumeRecord) error {
		if r.Holder != b.id {
			return api.Errorf(errdefs.ErrConflict, "volume %q: sandbox %s lost its lease (held by %q)", v.spec.Name, b.id, r.Holder)
		}
		r.Ref, r.Used = ref, used
		r.Generation++
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot commit volume %q: %w", v.spec.Name, err)
	}
	v.mark = mark
	b.m.log.Debug("volume committed", "volume", v.spec.Name, "sandbox", b.id, "ref", ref)
	return nil
}

// volumesAfterCall commits b's changed volumes when a call ends (release).
func (b *box) volumesAfterCall() {
	b.mu.Lock()
	vols := b.vols
	b.mu.Unlock()
	if len(vols) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := b.commitVolumes(ctx, vols); err != nil {
		b.m.log.Warn("volume commit after a call failed (the next call or hibernate retries)", "sandbox", b.id, "err", err)
	}
}

// dropVolumesLocked commits b's volumes and forgets them (hibernate,
// delete): b.mu held.
func (b *box) dropVolumesLocked(ctx context.Context) error {
	if err := b.commitVolumes(ctx, b.vols); err != nil {
		return err
	}
	b.vols = nil
	return nil
}

// volumeRoots marks every volume's committed tree and every attached one's
// last generation (GC roots).
func (mk *marker) volumeRoots(ctx context.Context) error {
	vm, ok := mk.m.cfg.Meta.(VolumeMeta)
	if !ok {
		return nil
	}
	vs, err := vm.ListVolumes(ctx)
	if err != nil {
		return fmt.Errorf("gc: cannot list volumes: %w", err)
	}
	for _, v := range vs {
		if err := mk.delta(ctx, v.Ref); err != nil {
			return err
		}
	}
	return nil
}

// ---- the API (api.VolumeService) ----

func (r VolumeRecord) api() api.Volume {
	return api.Volume{Name: r.Name, Size: r.Size, Used: r.Used, AttachedTo: r.Holder,
		Readers: r.Readers, Generation: r.Generation, CreatedAt: r.CreatedAt}
}

// live reports the usage of the attached read-write tree when its holder
// runs on this node.
func (t *tenantView) live(v api.Volume) api.Volume {
	if v.AttachedTo == "" {
		return v
	}
	b, err := t.m.lookup(t.tenant, v.AttachedTo)
	if err != nil {
		return v
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bv := range b.vols {
		if bv.spec.Name == v.Name && !bv.spec.ReadOnly {
			v.Used = bv.fs.Usage().Bytes
		}
	}
	return v
}

func (t *tenantView) CreateVolume(ctx context.Context, req api.VolumeCreate) (api.Volume, error) {
	vm, err := t.m.volumeMeta()
	if err != nil {
		return api.Volume{}, err
	}
	if !volumeNameRE.MatchString(req.Name) {
		return api.Volume{}, api.Errorf(api.ErrUnprocessable, "bad volume name %q: want 1-63 of [a-z0-9._-], starting with a letter or digit", req.Name)
	}
	if req.Size <= 0 {
		return api.Volume{}, api.Errorf(api.ErrUnprocessable, "volume %q: size must be positive (bytes), got %d", req.Name, req.Size)
	}
	r := VolumeRecord{Tenant: t.tenant, Name: req.Name, Size: req.Size, CreatedAt: StoreTime(t.m.now())}
	if err := vm.CreateVolume(ctx, r); err != nil {
		if errdefs.IsAlreadyExists(err) {
			return api.Volume{}, api.Errorf(errdefs.ErrAlreadyExists, "volume %q already exists", req.Name)
		}
		return api.Volume{}, err
	}
	return r.api(), nil
}

func (t *tenantView) ListVolumes(ctx context.Context) ([]api.Volume, error) {
	vm, err := t.m.volumeMeta()
	if err != nil {
		return nil, err
	}
	all, err := vm.ListVolumes(ctx)
	if err != nil {
		return nil, err
	}
	out := []api.Volume{}
	for _, r := range all {
		if r.Tenant == t.tenant {
			out = append(out, t.live(r.api()))
		}
	}
	return out, nil
}

func (t *tenantView) GetVolume(ctx context.Context, name string) (api.Volume, error) {
	vm, err := t.m.volumeMeta()
	if err != nil {
		return api.Volume{}, err
	}
	r, err := vm.GetVolume(ctx, t.tenant, name)
	if errdefs.IsNotFound(err) {
		return api.Volume{}, NoVolume(name)
	}
	if err != nil {
		return api.Volume{}, err
	}
	return t.live(r.api()), nil
}

// ResizeVolume grows a volume (shrinking is refused: the tree may hold more
// than the smaller size, and nothing is ever cut).
func (t *tenantView) ResizeVolume(ctx context.Context, name string, size int64) (api.Volume, error) {
	vm, err := t.m.volumeMeta()
	if err != nil {
		return api.Volume{}, err
	}
	r, err := vm.UpdateVolume(ctx, t.tenant, name, func(r *VolumeRecord) error {
		if size < r.Size {
			return api.Errorf(api.ErrUnprocessable, "volume %q is %d bytes: shrinking to %d is not supported (volumes only grow)", name, r.Size, size)
		}
		r.Size = size
		return nil
	})
	if errdefs.IsNotFound(err) {
		return api.Volume{}, NoVolume(name)
	}
	if err != nil {
		return api.Volume{}, err
	}
	// Sandboxes on this node that have it mounted see the new quota now.
	for _, id := range append([]string{r.Holder}, r.Readers...) {
		if b, err := t.m.lookup(t.tenant, id); err == nil {
			b.mu.Lock()
			for _, bv := range b.vols {
				if bv.spec.Name == name {
					bv.fs.SetQuota(size, 0)
				}
			}
			b.mu.Unlock()
		}
	}
	return t.live(r.api()), nil
}

func (t *tenantView) DeleteVolume(ctx context.Context, name string) error {
	vm, err := t.m.volumeMeta()
	if err != nil {
		return err
	}
	cur, err := vm.GetVolume(ctx, t.tenant, name)
	if errdefs.IsNotFound(err) {
		return NoVolume(name)
	}
	if err != nil {
		return err
	}
	gone := map[string]bool{}
	for _, s := range append([]string{cur.Holder}, cur.Readers...) {
		if s != "" && t.m.holderGone(ctx, s) {
			gone[s] = true
		}
	}
	err = vm.DeleteVolume(ctx, t.tenant, name, func(r VolumeRecord) error {
		var live []string
		if r.Holder != "" && !gone[r.Holder] {
			live = append(live, r.Holder)
		}
		for _, s := range r.Readers {
			if !gone[s] {
				live = append(live, s+" (read-only)")
			}
		}
		if len(live) > 0 {
			return api.Errorf(errdefs.ErrConflict, "volume %q is attached to sandbox %s: delete the sandbox first", name, strings.Join(live, ", "))
		}
		return nil
	})
	if errdefs.IsNotFound(err) {
		return NoVolume(name)
	}
	return err
}

var _ api.VolumeService = (*tenantView)(nil)
