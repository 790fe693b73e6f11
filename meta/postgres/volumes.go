package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

var _ sandbox.VolumeMeta = (*DB)(nil)

const volumeCols = `tenant, name, size, ref, generation, used, holder, readers, created_at`

func scanVolume(row pgx.Row) (sandbox.VolumeRecord, error) {
	var v sandbox.VolumeRecord
	var readers []byte
	var gen int64
	if err := row.Scan(&v.Tenant, &v.Name, &v.Size, &v.Ref, &gen, &v.Used, &v.Holder, &readers, &v.CreatedAt); err != nil {
		return v, err
	}
	v.Generation = uint64(gen)
	v.CreatedAt = utc(v.CreatedAt)
	if err := json.Unmarshal(readers, &v.Readers); err != nil {
		return v, fmt.Errorf("corrupt readers of volume %q: %w", v.Name, err)
	}
	if len(v.Readers) == 0 {
		v.Readers = nil
	}
	return v, nil
}

func readersJSON(rs []string) []byte {
	if rs == nil {
		rs = []string{}
	}
	b, _ := json.Marshal(rs)
	return b
}

func (d *DB) CreateVolume(ctx context.Context, v sandbox.VolumeRecord) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO volumes (`+volumeCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		v.Tenant, v.Name, v.Size, v.Ref, int64(v.Generation), v.Used, v.Holder, readersJSON(v.Readers), sandbox.StoreTime(v.CreatedAt))
	if uniqueViolation(err) {
		return api.Errorf(errdefs.ErrAlreadyExists, "volume %q already exists", v.Name)
	}
	if err != nil {
		return fmt.Errorf("cannot record volume %q: %w", v.Name, err)
	}
	return nil
}

func (d *DB) GetVolume(ctx context.Context, tenant, name string) (sandbox.VolumeRecord, error) {
	v, err := scanVolume(d.pool.QueryRow(ctx, `SELECT `+volumeCols+` FROM volumes WHERE tenant = $1 AND name = $2`, tenant, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return v, sandbox.NoVolume(name)
	}
	if err != nil {
		return v, fmt.Errorf("cannot read volume %q: %w", name, err)
	}
	return v, nil
}

func (d *DB) ListVolumes(ctx context.Context) ([]sandbox.VolumeRecord, error) {
	rows, err := d.pool.Query(ctx, `SELECT `+volumeCols+` FROM volumes ORDER BY tenant, name`)
	if err != nil {
		return nil, fmt.Errorf("cannot list volumes: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sandbox.VolumeRecord, error) { return scanVolume(row) })
}

// UpdateVolume locks the row (SELECT ... FOR UPDATE), so two nodes racing
// for a lease serialise and the second sees the first's holder.
func (d *DB) UpdateVolume(ctx context.Context, tenant, name string, fn func(*sandbox.VolumeRecord) error) (sandbox.VolumeRecord, error) {
	var v sandbox.VolumeRecord
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var err error
		v, err = scanVolume(tx.QueryRow(ctx, `SELECT `+volumeCols+` FROM volumes WHERE tenant = $1 AND name = $2 FOR UPDATE`, tenant, name))
		if errors.Is(err, pgx.ErrNoRows) {
			return sandbox.NoVolume(name)
		}
		if err != nil {
			return fmt.Errorf("cannot read volume %q: %w", name, err)
		}
		if err := fn(&v); err != nil {
			return err
		}
		v.Tenant, v.Name = tenant, name
		_, err = tx.Exec(ctx, `UPDATE volumes SET size = $3, ref = $4, generation = $5, used = $6, holder = $7, readers = $8
			WHERE tenant = $1 AND name = $2`, tenant, name, v.Size, v.Ref, int64(v.Generation), v.Used, v.Holder, readersJSON(v.Readers))
		if err != nil {
			return fmt.Errorf("cannot update volume %q: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return sandbox.VolumeRecord{}, err
	}
	return v, nil
}

func (d *DB) DeleteVolume(ctx context.Context, tenant, name string, check func(sandbox.VolumeRecord) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		v, err := scanVolume(tx.QueryRow(ctx, `SELECT `+volumeCols+` FROM volumes WHERE tenant = $1 AND name = $2 FOR UPDATE`, tenant, name))
		if errors.Is(err, pgx.ErrNoRows) {
			return sandbox.NoVolume(name)
		}
		if err != nil {
			return fmt.Errorf("cannot read volume %q: %w", name, err)
		}
		if check != nil {
			if err := check(v); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM volumes WHERE tenant = $1 AND name = $2`, tenant, name); err != nil {
			return fmt.Errorf("cannot delete volume %q: %w", name, err)
		}
		return nil
	})
}
