// Package postgres is warren's metadata store on PostgreSQL (pgx v5), for
// a fleet of nodes sharing sandboxes: records, snapshots, API keys, heads
// and generations (fencing by owner epoch), upload custody and node
// leases. It implements sandbox.DurableMeta and server.Keys and passes
// sandbox/metatest like the embedded stores.
//
// The schema is versioned SQL in migrations/, applied by Open (see
// Migrate). Every time that decides anything (expiry of custody and
// leases, a generation's creation) is the database's now(), so the nodes'
// clocks never need to agree. Each method is one transaction; Publish's
// compare-and-swap is an UPDATE whose WHERE clause names the owner, the
// epoch and the expected head generation.
package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// DB is a PostgreSQL-backed sandbox.DurableMeta and key store.
type DB struct {
	pool *pgxpool.Pool
}

var _ sandbox.DurableMeta = (*DB)(nil)

// Open connects to url (postgres://user:pass@host/db?sslmode=...; pgx's
// pool_max_conns and friends apply), migrates the schema and returns the
// store.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("metadata URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("metadata: cannot reach PostgreSQL at %s: %w", cfg.ConnConfig.Host, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &DB{pool: pool}, nil
}

// Close closes the pool.
func (d *DB) Close() error {
	d.pool.Close()
	return nil
}

// i64 converts a counter for a bigint column.
func i64(v uint64) (int64, error) {
	if v > math.MaxInt64 {
		return 0, api.Errorf(errdefs.ErrInvalidArgument, "%d is beyond the store's range", v)
	}
	return int64(v), nil
}

func micros(ttl time.Duration) int64 { return max(ttl.Microseconds(), 1) }

func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func utc(t time.Time) time.Time { return t.UTC() }

func (d *DB) PutSandbox(ctx context.Context, r sandbox.Record) error {
	cfg, err := json.Marshal(r.Config)
	if err != nil {
		return err
	}
	_, err = d.pool.Exec(ctx, `
		INSERT INTO sandboxes (id, tenant, config, image_digest, state_ref, state, parent, snapshot, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (id) DO UPDATE SET tenant = EXCLUDED.tenant, config = EXCLUDED.config,
			image_digest = EXCLUDED.image_digest, state_ref = EXCLUDED.state_ref, state = EXCLUDED.state,
			parent = EXCLUDED.parent, snapshot = EXCLUDED.snapshot, created_at = EXCLUDED.created_at`,
		r.ID, r.Tenant, cfg, r.ImageDigest, r.StateRef, r.State, r.Parent, r.Snapshot, sandbox.StoreTime(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("cannot record sandbox %s: %w", r.ID, err)
	}
	return nil
}

func (d *DB) DeleteSandbox(ctx context.Context, id string) error {
	if _, err := d.pool.Exec(ctx, "DELETE FROM sandboxes WHERE id = $1", id); err != nil {
		return fmt.Errorf("cannot delete sandbox %s: %w", id, err)
	}
	return nil
}

func (d *DB) Sandboxes(ctx context.Context) ([]sandbox.Record, error) {
	rows, err := d.pool.Query(ctx, `SELECT id, tenant, config, image_digest, state_ref, state, parent, snapshot, created_at
		FROM sandboxes ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("cannot list sandboxes: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sandbox.Record, error) {
		var r sandbox.Record
		var cfg []byte
		if err := row.Scan(&r.ID, &r.Tenant, &cfg, &r.ImageDigest, &r.StateRef, &r.State, &r.Parent, &r.Snapshot, &r.CreatedAt); err != nil {
			return r, err
		}
		r.CreatedAt = utc(r.CreatedAt)
		if err := json.Unmarshal(cfg, &r.Config); err != nil {
			return r, fmt.Errorf("corrupt config of sandbox %s: %w", r.ID, err)
		}
		return r, nil
	})
}

func (d *DB) CreateSnapshot(ctx context.Context, s sandbox.SnapshotRecord) error {
	cfg, err := json.Marshal(s.Config)
	if err != nil {
		return err
	}
	_, err = d.pool.Exec(ctx, `INSERT INTO snapshots (tenant, name, sandbox, config, image_digest, state_ref, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		s.Tenant, s.Name, s.Sandbox, cfg, s.Image, s.StateRef, sandbox.StoreTime(s.CreatedAt))
	if uniqueViolation(err) {
		return api.Errorf(errdefs.ErrAlreadyExists, "snapshot %q already exists", s.Name)
	}
	if err != nil {
		return fmt.Errorf("cannot record snapshot %q: %w", s.Name, err)
	}
	return nil
}

func (d *DB) DeleteSnapshot(ctx context.Context, tenant, name string) error {
	if _, err := d.pool.Exec(ctx, "DELETE FROM snapshots WHERE tenant = $1 AND name = $2", tenant, name); err != nil {
		return fmt.Errorf("cannot delete snapshot %q: %w", name, err)
	}
	return nil
}

func (d *DB) Snapshots(ctx context.Context) ([]sandbox.SnapshotRecord, error) {
	rows, err := d.pool.Query(ctx, `SELECT tenant, name, sandbox, config, image_digest, state_ref, created_at
		FROM snapshots ORDER BY tenant, name`)
	if err != nil {
		return nil, fmt.Errorf("cannot list snapshots: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sandbox.SnapshotRecord, error) {
		var s sandbox.SnapshotRecord
		var cfg []byte
		if err := row.Scan(&s.Tenant, &s.Name, &s.Sandbox, &cfg, &s.Image, &s.StateRef, &s.CreatedAt); err != nil {
			return s, err
		}
		s.CreatedAt = utc(s.CreatedAt)
		if err := json.Unmarshal(cfg, &s.Config); err != nil {
			return s, fmt.Errorf("corrupt config of snapshot %q: %w", s.Name, err)
		}
		return s, nil
	})
}

// keyID is how a key is stored: its sha256, never the key itself (the
// same as boltmeta's).
func keyID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// PutKey maps key to tenant (replacing what it mapped to).
func (d *DB) PutKey(ctx context.Context, key, tenant string, admin bool) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO api_keys (key_hash, tenant, admin) VALUES ($1, $2, $3)
		ON CONFLICT (key_hash) DO UPDATE SET tenant = EXCLUDED.tenant, admin = EXCLUDED.admin`, keyID(key), tenant, admin)
	if err != nil {
		return fmt.Errorf("cannot store API key: %w", err)
	}
	return nil
}

// LookupKey returns the tenant of key; an unknown key matches
// errdefs.ErrNotFound.
func (d *DB) LookupKey(ctx context.Context, key string) (tenant string, admin bool, err error) {
	err = d.pool.QueryRow(ctx, "SELECT tenant, admin FROM api_keys WHERE key_hash = $1", keyID(key)).Scan(&tenant, &admin)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, api.Errorf(errdefs.ErrNotFound, "unknown API key")
	}
	if err != nil {
		return "", false, fmt.Errorf("cannot look up API key: %w", err)
	}
	return tenant, admin, nil
}

// HasKeys reports whether any key exists (first start creates the admin's).
func (d *DB) HasKeys(ctx context.Context) (bool, error) {
	var has bool
	if err := d.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM api_keys)").Scan(&has); err != nil {
		return false, fmt.Errorf("cannot read API keys: %w", err)
	}
	return has, nil
}
