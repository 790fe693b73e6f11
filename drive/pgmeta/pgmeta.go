// Package pgmeta keeps drives' metadata in PostgreSQL (pgx v5), for a
// fleet: any number of nodes mount one drive read-write. The tables are
// meta/postgres's migration 0004_drives (postgres.Open or
// postgres.Migrate applies it; this package only checks it is there).
//
// An Update locks the drive's row (SELECT ... FOR UPDATE) before it runs,
// so a drive's write transactions are serialised across nodes and each
// sees the latest committed state: a rename's checks, a quota charge and
// a lock's conflict test need nothing more (no serialisation failures to
// retry). A View is a REPEATABLE READ READ ONLY transaction: a consistent
// snapshot of the tree. Expiry of locks and mount leases is decided by
// the database's clock.
package pgmeta

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/warren-sandbox/warren/drive"
)

// Meta is a drive.Meta on a PostgreSQL pool.
type Meta struct {
	pool *pgxpool.Pool
	own  bool
}

var _ drive.Meta = (*Meta)(nil)

// Open connects to url and checks the schema has the drive tables.
func Open(ctx context.Context, url string) (*Meta, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("drive metadata: %w", err)
	}
	m, err := New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	m.own = true
	return m, nil
}

// New uses an existing pool (the node's meta/postgres one); Close leaves
// it open.
func New(ctx context.Context, pool *pgxpool.Pool) (*Meta, error) {
	var ok bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('drive_entries') IS NOT NULL").Scan(&ok); err != nil {
		return nil, fmt.Errorf("drive metadata: cannot reach PostgreSQL: %w", err)
	}
	if !ok {
		return nil, errors.New("drive metadata: the database has no drive tables (schema older than version 4): run warren's migrations (meta/postgres)")
	}
	return &Meta{pool: pool}, nil
}

// Close closes the pool if Open made it.
func (m *Meta) Close() error {
	if m.own {
		m.pool.Close()
	}
	return nil
}

func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

const recordCols = `id, tenant, name, quota, used, sweeps, created_at`

func scanRecord(row pgx.Row) (drive.Record, error) {
	var r drive.Record
	var sweeps int64
	err := row.Scan(&r.ID, &r.Tenant, &r.Name, &r.Quota, &r.Used, &sweeps, &r.CreatedAt)
	r.Sweeps = uint64(sweeps)
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

func (m *Meta) CreateDrive(ctx context.Context, r drive.Record) error {
	err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO drives (id, tenant, name, quota, used, created_at) VALUES ($1, $2, $3, $4, 0, $5)`,
			r.ID, r.Tenant, r.Name, r.Quota, r.CreatedAt); err != nil {
			return err
		}
		t := &txn{ctx: ctx, tx: tx, id: r.ID}
		return t.Put(drive.Entry{ID: drive.RootID, Dir: true, Mode: 0o777, MTime: r.CreatedAt, Version: 1})
	})
	if uniqueViolation(err) {
		return drive.Errorf(errdefs.ErrAlreadyExists, "drive %q already exists", r.Name)
	}
	if err != nil {
		return fmt.Errorf("cannot record drive %q: %w", r.Name, err)
	}
	return nil
}

func (m *Meta) Drive(ctx context.Context, tenant, name string) (drive.Record, error) {
	r, err := scanRecord(m.pool.QueryRow(ctx, `SELECT `+recordCols+` FROM drives WHERE tenant = $1 AND name = $2`, tenant, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, drive.NoDrive(name)
	}
	if err != nil {
		return r, fmt.Errorf("cannot read drive %q: %w", name, err)
	}
	return r, nil
}

func (m *Meta) Drives(ctx context.Context, tenant string) ([]drive.Record, error) {
	rows, err := m.pool.Query(ctx, `SELECT `+recordCols+` FROM drives WHERE $1 = '' OR tenant = $1 ORDER BY name, tenant`, tenant)
	if err != nil {
		return nil, fmt.Errorf("cannot list drives: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (drive.Record, error) { return scanRecord(row) })
}

func missing(id string) error { return drive.Errorf(errdefs.ErrNotFound, "drive %s not found", id) }

func (m *Meta) Update(ctx context.Context, id string, fn func(drive.Tx) error) error {
	return pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		r, err := scanRecord(tx.QueryRow(ctx, `SELECT `+recordCols+` FROM drives WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return missing(id)
		}
		if err != nil {
			return err
		}
		return fn(&txn{ctx: ctx, tx: tx, id: id, rec: &r, write: true})
	})
}

func (m *Meta) View(ctx context.Context, id string, fn func(drive.Tx) error) error {
	return pgx.BeginTxFunc(ctx, m.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		r, err := scanRecord(tx.QueryRow(ctx, `SELECT `+recordCols+` FROM drives WHERE id = $1`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return missing(id)
		}
		if err != nil {
			return err
		}
		return fn(&txn{ctx: ctx, tx: tx, id: id, rec: &r})
	})
}

// txn is a drive.Tx over one pgx transaction.
type txn struct {
	ctx   context.Context
	tx    pgx.Tx
	id    string
	rec   *drive.Record
	write bool
	now   time.Time
}

func (t *txn) Record() (drive.Record, error) {
	if t.rec == nil {
		return drive.Record{}, missing(t.id)
	}
	return *t.rec, nil
}

func (t *txn) SetUsed(used int64) error {
	if _, err := t.tx.Exec(t.ctx, `UPDATE drives SET used = $2 WHERE id = $1`, t.id, used); err != nil {
		return err
	}
	t.rec.Used = used
	return nil
}

func (t *txn) SetQuota(q int64) error {
	if _, err := t.tx.Exec(t.ctx, `UPDATE drives SET quota = $2 WHERE id = $1`, t.id, q); err != nil {
		return err
	}
	t.rec.Quota = q
	return nil
}

func (t *txn) SetSweeps(n uint64) error {
	if _, err := t.tx.Exec(t.ctx, `UPDATE drives SET sweeps = $2 WHERE id = $1`, t.id, int64(n)); err != nil {
		return err
	}
	t.rec.Sweeps = n
	return nil
}

func (t *txn) NewID() (uint64, error) {
	var id int64
	err := t.tx.QueryRow(t.ctx, `UPDATE drives SET next_id = next_id + 1 WHERE id = $1 RETURNING next_id - 1`, t.id).Scan(&id)
	return uint64(id), err
}

const entryCols = `id, parent, name, dir, mode, size, mtime, version, chunks`

func scanEntry(row pgx.Row) (drive.Entry, error) {
	var e drive.Entry
	var id, parent, version int64
	var mode int32
	var chunks []byte
	err := row.Scan(&id, &parent, &e.Name, &e.Dir, &mode, &e.Size, &e.MTime, &version, &chunks)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, drive.ErrNoEntry
	}
	if err != nil {
		return e, err
	}
	e.ID, e.Parent, e.Version, e.Mode, e.MTime = uint64(id), uint64(parent), uint64(version), fs.FileMode(mode), e.MTime.UTC()
	if e.Chunks, err = drive.UnmarshalChunks(chunks); err != nil {
		return e, fmt.Errorf("entry %d: %w", id, err)
	}
	return e, nil
}

func (t *txn) Entry(id uint64) (drive.Entry, error) {
	return scanEntry(t.tx.QueryRow(t.ctx, `SELECT `+entryCols+` FROM drive_entries WHERE drive = $1 AND id = $2`, t.id, int64(id)))
}

func (t *txn) Lookup(parent uint64, name string) (drive.Entry, error) {
	return scanEntry(t.tx.QueryRow(t.ctx, `SELECT `+entryCols+` FROM drive_entries WHERE drive = $1 AND parent = $2 AND name = $3`,
		t.id, int64(parent), name))
}

func (t *txn) Children(parent uint64) ([]drive.Entry, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT `+entryCols+` FROM drive_entries WHERE drive = $1 AND parent = $2 AND id <> $3 ORDER BY name`,
		t.id, int64(parent), int64(drive.RootID))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (drive.Entry, error) { return scanEntry(row) })
}

func (t *txn) HasChildren(parent uint64) (bool, error) {
	var ok bool
	err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM drive_entries WHERE drive = $1 AND parent = $2 AND id <> $3)`,
		t.id, int64(parent), int64(drive.RootID)).Scan(&ok)
	return ok, err
}

func (t *txn) Put(e drive.Entry) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO drive_entries (drive, `+entryCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (drive, id) DO UPDATE SET parent = EXCLUDED.parent, name = EXCLUDED.name, dir = EXCLUDED.dir,
			mode = EXCLUDED.mode, size = EXCLUDED.size, mtime = EXCLUDED.mtime, version = EXCLUDED.version, chunks = EXCLUDED.chunks`,
		t.id, int64(e.ID), int64(e.Parent), e.Name, e.Dir, int32(e.Mode), e.Size, e.MTime, int64(e.Version), drive.MarshalChunks(e.Chunks))
	return err
}

func (t *txn) DeleteEntry(id uint64) error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM drive_entries WHERE drive = $1 AND id = $2`, t.id, int64(id))
	return err
}

func (t *txn) Locks(inode uint64) ([]drive.Lock, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT owner, exclusive, expires FROM drive_locks WHERE drive = $1 AND inode = $2 ORDER BY owner`, t.id, int64(inode))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (drive.Lock, error) {
		l := drive.Lock{Inode: inode}
		err := row.Scan(&l.Owner, &l.Exclusive, &l.Expires)
		return l, err
	})
}

func (t *txn) PutLock(l drive.Lock) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO drive_locks (drive, inode, owner, exclusive, expires) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (drive, inode, owner) DO UPDATE SET exclusive = EXCLUDED.exclusive, expires = EXCLUDED.expires`,
		t.id, int64(l.Inode), l.Owner, l.Exclusive, l.Expires)
	return err
}

func (t *txn) DeleteLock(inode uint64, owner string) error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM drive_locks WHERE drive = $1 AND inode = $2 AND owner = $3`, t.id, int64(inode), owner)
	return err
}

func (t *txn) Mounts() ([]drive.Mount, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT id, expires FROM drive_mounts WHERE drive = $1 ORDER BY id`, t.id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (drive.Mount, error) {
		var m drive.Mount
		err := row.Scan(&m.ID, &m.Expires)
		return m, err
	})
}

func (t *txn) PutMount(mt drive.Mount) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO drive_mounts (drive, id, expires) VALUES ($1, $2, $3)
		ON CONFLICT (drive, id) DO UPDATE SET expires = EXCLUDED.expires`, t.id, mt.ID, mt.Expires)
	return err
}

func (t *txn) DeleteMount(id string) error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM drive_mounts WHERE drive = $1 AND id = $2`, t.id, id)
	return err
}

// DeleteDrive removes the record; the entries, locks and leases go with
// it (ON DELETE CASCADE).
func (t *txn) DeleteDrive() error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM drives WHERE id = $1`, t.id)
	return err
}

// Now is the database's clock, read once per transaction.
func (t *txn) Now() (time.Time, error) {
	if t.now.IsZero() {
		if err := t.tx.QueryRow(t.ctx, `SELECT clock_timestamp()`).Scan(&t.now); err != nil {
			return time.Time{}, err
		}
	}
	return t.now, nil
}

func (t *txn) Entries(fn func(drive.Entry) error) error {
	rows, err := t.tx.Query(t.ctx, `SELECT `+entryCols+` FROM drive_entries WHERE drive = $1 ORDER BY id`, t.id)
	if err != nil {
		return err
	}
	es, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (drive.Entry, error) { return scanEntry(row) })
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) Garbage(sums [][32]byte) ([]drive.Garbage, error) {
	var rows pgx.Rows
	var err error
	if sums == nil {
		rows, err = t.tx.Query(t.ctx, `SELECT sum, first_seen, doomed FROM drive_garbage WHERE drive = $1 ORDER BY sum`, t.id)
	} else {
		bs := make([][]byte, len(sums))
		for i := range sums {
			bs[i] = sums[i][:]
		}
		rows, err = t.tx.Query(t.ctx, `SELECT sum, first_seen, doomed FROM drive_garbage WHERE drive = $1 AND sum = ANY($2) ORDER BY sum`, t.id, bs)
	}
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (drive.Garbage, error) {
		var g drive.Garbage
		var sum []byte
		if err := row.Scan(&sum, &g.FirstSeen, &g.Doomed); err != nil {
			return g, err
		}
		if len(sum) != 32 {
			return g, fmt.Errorf("corrupt garbage row: a %d-byte sum", len(sum))
		}
		copy(g.Sum[:], sum)
		return g, nil
	})
}

func (t *txn) PutGarbage(g drive.Garbage) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO drive_garbage (drive, sum, first_seen, doomed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (drive, sum) DO UPDATE SET first_seen = EXCLUDED.first_seen, doomed = EXCLUDED.doomed`, t.id, g.Sum[:], g.FirstSeen, g.Doomed)
	return err
}

func (t *txn) DeleteGarbage(sum [32]byte) error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM drive_garbage WHERE drive = $1 AND sum = $2`, t.id, sum[:])
	return err
}
