package boltmeta

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
	bolt "go.etcd.io/bbolt"
)

// Volume writes sync before returning, as Publish does: a volume's head
// moving is a committed ack.

var _ sandbox.VolumeMeta = (*DB)(nil)

func volKey(tenant, name string) []byte { return []byte(tenant + "\x00" + name) }

func getVolume(tx *bolt.Tx, tenant, name string) (sandbox.VolumeRecord, error) {
	var v sandbox.VolumeRecord
	data := tx.Bucket(bucketVolumes).Get(volKey(tenant, name))
	if data == nil {
		return v, sandbox.NoVolume(name)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("corrupt volume record %q: %w", name, err)
	}
	return v, nil
}

func putVolume(tx *bolt.Tx, v sandbox.VolumeRecord) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketVolumes).Put(volKey(v.Tenant, v.Name), data)
}

func (d *DB) syncedUpdate(fn func(tx *bolt.Tx) error) error {
	if err := d.db.Update(fn); err != nil {
		return err
	}
	if err := d.db.Sync(); err != nil {
		return fmt.Errorf("cannot sync metadata: %w", err)
	}
	return nil
}

func (d *DB) CreateVolume(_ context.Context, v sandbox.VolumeRecord) error {
	v.CreatedAt = sandbox.StoreTime(v.CreatedAt)
	return d.syncedUpdate(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketVolumes).Get(volKey(v.Tenant, v.Name)) != nil {
			return api.Errorf(errdefs.ErrAlreadyExists, "volume %q already exists", v.Name)
		}
		return putVolume(tx, v)
	})
}

func (d *DB) GetVolume(_ context.Context, tenant, name string) (sandbox.VolumeRecord, error) {
	var v sandbox.VolumeRecord
	err := d.db.View(func(tx *bolt.Tx) error {
		var err error
		v, err = getVolume(tx, tenant, name)
		return err
	})
	return v, err
}

// ListVolumes is ordered by (tenant, name): the keys' byte order, since
// "\x00" sorts before every byte of a name.
func (d *DB) ListVolumes(context.Context) ([]sandbox.VolumeRecord, error) {
	var out []sandbox.VolumeRecord
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketVolumes).ForEach(func(k, data []byte) error {
			var v sandbox.VolumeRecord
			if err := json.Unmarshal(data, &v); err != nil {
				return fmt.Errorf("corrupt volume record %q: %w", k, err)
			}
			out = append(out, v)
			return nil
		})
	})
	return out, err
}

func (d *DB) UpdateVolume(_ context.Context, tenant, name string, fn func(*sandbox.VolumeRecord) error) (sandbox.VolumeRecord, error) {
	var v sandbox.VolumeRecord
	err := d.syncedUpdate(func(tx *bolt.Tx) error {
		var err error
		if v, err = getVolume(tx, tenant, name); err != nil {
			return err
		}
		if err := fn(&v); err != nil {
			return err
		}
		v.Tenant, v.Name = tenant, name
		return putVolume(tx, v)
	})
	if err != nil {
		return sandbox.VolumeRecord{}, err
	}
	return v, nil
}

func (d *DB) DeleteVolume(_ context.Context, tenant, name string, check func(sandbox.VolumeRecord) error) error {
	return d.syncedUpdate(func(tx *bolt.Tx) error {
		v, err := getVolume(tx, tenant, name)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(v); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketVolumes).Delete(volKey(tenant, name))
	})
}
