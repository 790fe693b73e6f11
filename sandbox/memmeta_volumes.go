package sandbox

import (
	"context"
	"slices"
	"sort"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

func (m *memMeta) CreateVolume(_ context.Context, v VolumeRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vols == nil {
		m.vols = map[[2]string]VolumeRecord{}
	}
	k := [2]string{v.Tenant, v.Name}
	if _, ok := m.vols[k]; ok {
		return api.Errorf(errdefs.ErrAlreadyExists, "volume %q already exists", v.Name)
	}
	v.CreatedAt = StoreTime(v.CreatedAt)
	v.Readers = slices.Clone(v.Readers)
	m.vols[k] = v
	return nil
}

func (m *memMeta) GetVolume(_ context.Context, tenant, name string) (VolumeRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vols[[2]string{tenant, name}]
	if !ok {
		return VolumeRecord{}, NoVolume(name)
	}
	v.Readers = slices.Clone(v.Readers)
	return v, nil
}

func (m *memMeta) ListVolumes(context.Context) ([]VolumeRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]VolumeRecord, 0, len(m.vols))
	for _, v := range m.vols {
		v.Readers = slices.Clone(v.Readers)
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tenant != out[j].Tenant {
			return out[i].Tenant < out[j].Tenant
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (m *memMeta) UpdateVolume(_ context.Context, tenant, name string, fn func(*VolumeRecord) error) (VolumeRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{tenant, name}
	v, ok := m.vols[k]
	if !ok {
		return VolumeRecord{}, NoVolume(name)
	}
	v.Readers = slices.Clone(v.Readers)
	if err := fn(&v); err != nil {
		return VolumeRecord{}, err
	}
	v.Tenant, v.Name = tenant, name
	m.vols[k] = v
	v.Readers = slices.Clone(v.Readers)
	return v, nil
}

func (m *memMeta) DeleteVolume(_ context.Context, tenant, name string, check func(VolumeRecord) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{tenant, name}
	v, ok := m.vols[k]
	if !ok {
		return NoVolume(name)
	}
	if check != nil {
		if err := check(v); err != nil {
			return err
		}
	}
	delete(m.vols, k)
	return nil
}

var _ VolumeMeta = (*memMeta)(nil)
