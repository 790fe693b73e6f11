package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

func unknownSandbox(id string) error {
	return api.Errorf(errdefs.ErrNotFound, "sandbox %s has no record", id)
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const headCols = "id, owner_node, owner_epoch, head_generation, head_ref, head_commit"

func scanHead(row pgx.Row) (sandbox.Head, error) {
	var h sandbox.Head
	var epoch, gen int64
	err := row.Scan(&h.Sandbox, &h.Owner, &epoch, &gen, &h.Ref, &h.CommitID)
	h.Epoch, h.Generation = uint64(epoch), uint64(gen)
	return h, err
}

// readHead returns the head, or an ErrNotFound error without a record.
func readHead(ctx context.Context, q querier, id string) (sandbox.Head, error) {
	h, err := scanHead(q.QueryRow(ctx, "SELECT "+headCols+" FROM sandboxes WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return h, unknownSandbox(id)
	}
	if err != nil {
		return h, fmt.Errorf("cannot read head of %s: %w", id, err)
	}
	return h, nil
}

func (d *DB) Head(ctx context.Context, id string) (sandbox.Head, error) {
	return readHead(ctx, d.pool, id)
}

func (d *DB) ListHeads(ctx context.Context) ([]sandbox.Head, error) {
	rows, err := d.pool.Query(ctx, "SELECT "+headCols+" FROM sandboxes ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("cannot list heads: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sandbox.Head, error) { return scanHead(row) })
}

func (d *DB) Claim(ctx context.Context, id, node string, seen uint64) (uint64, error) {
	if node == "" {
		return 0, api.Errorf(errdefs.ErrInvalidArgument, "claim of %s: no node", id)
	}
	s, err := i64(seen)
	if err != nil {
		return 0, err
	}
	var epoch int64
	err = d.pool.QueryRow(ctx, `UPDATE sandboxes SET owner_node = $2, owner_epoch = owner_epoch + 1
		WHERE id = $1 AND owner_epoch = $3 RETURNING owner_epoch`, id, node, s).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		h, err := readHead(ctx, d.pool, id)
		if err != nil {
			return 0, err
		}
		return 0, sandbox.ClaimFenced(id, node, seen, h)
	}
	if err != nil {
		return 0, fmt.Errorf("cannot claim %s: %w", id, err)
	}
	return uint64(epoch), nil
}

func (d *DB) Release(ctx context.Context, id, node string, epoch uint64) error {
	e, err := i64(epoch)
	if err != nil {
		return err
	}
	tag, err := d.pool.Exec(ctx, `UPDATE sandboxes SET owner_node = ''
		WHERE id = $1 AND owner_node = $2 AND owner_epoch = $3`, id, node, e)
	if err != nil {
		return fmt.Errorf("cannot release %s: %w", id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	h, err := readHead(ctx, d.pool, id)
	if err != nil {
		return err
	}
	if h.Epoch == epoch && h.Owner == "" {
		return nil
	}
	return sandbox.Fenced(sandbox.Commit{Sandbox: id, Node: node, Epoch: epoch}, h)
}

const genCols = "sandbox, number, ref, parent, epoch, commit_id, created_at"

func scanGen(row pgx.Row) (sandbox.Generation, error) {
	var g sandbox.Generation
	var num, epoch int64
	err := row.Scan(&g.Sandbox, &num, &g.Ref, &g.Parent, &epoch, &g.CommitID, &g.CreatedAt)
	g.Number, g.Epoch, g.CreatedAt = uint64(num), uint64(epoch), utc(g.CreatedAt)
	return g, err
}

// landed returns the generation recorded under a commit id, if any.
func landed(ctx context.Context, q querier, commitID string) (*sandbox.Generation, error) {
	g, err := scanGen(q.QueryRow(ctx, "SELECT "+genCols+" FROM generations WHERE commit_id = $1", commitID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read commit %s: %w", commitID, err)
	}
	return &g, nil
}

// Publish runs in one READ COMMITTED transaction: a commit id already
// recorded is the idempotent answer; else the UPDATE moves the head only
// where owner, epoch and head generation match. When it matches no row,
// the commit id is looked up again, since a concurrent retry of the same
// commit may have landed while this UPDATE waited for the row lock (the
// UPDATE re-reads the row and no longer matches); only then is the caller
// fenced.
func (d *DB) Publish(ctx context.Context, c sandbox.Commit) (sandbox.Generation, error) {
	if err := sandbox.CheckCommit(c); err != nil {
		return sandbox.Generation{}, err
	}
	epoch, err := i64(c.Epoch)
	if err != nil {
		return sandbox.Generation{}, err
	}
	base, err := i64(c.Base)
	if err != nil || base == math64 {
		return sandbox.Generation{}, api.Errorf(errdefs.ErrInvalidArgument, "commit of %s: base generation %d out of range", c.Sandbox, c.Base)
	}
	var g sandbox.Generation
	// READ COMMITTED whatever the server's default: the re-read below
	// relies on each statement seeing what committed before it.
	err = pgx.BeginTxFunc(ctx, d.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		prior, err := landed(ctx, tx, c.CommitID)
		if err != nil {
			return err
		}
		if prior == nil {
			tag, err := tx.Exec(ctx, `UPDATE sandboxes SET head_generation = $4 + 1, head_ref = $5, head_commit = $6
				WHERE id = $1 AND owner_node = $2 AND owner_epoch = $3 AND head_generation = $4`,
				c.Sandbox, c.Node, epoch, base, c.Ref, c.CommitID)
			if err != nil {
				return fmt.Errorf("cannot move head of %s: %w", c.Sandbox, err)
			}
			if tag.RowsAffected() == 1 {
				g, err = scanGen(tx.QueryRow(ctx, `INSERT INTO generations (sandbox, number, ref, parent, epoch, commit_id)
					VALUES ($1, $2 + 1, $3, $4, $5, $6) RETURNING `+genCols, c.Sandbox, base, c.Ref, c.Parent, epoch, c.CommitID))
				if uniqueViolation(err) {
					// The same commit id landed on another sandbox meanwhile.
					return api.Errorf(errdefs.ErrAlreadyExists, "commit id %q is already recorded", c.CommitID)
				}
				if err != nil {
					return fmt.Errorf("cannot record generation %d of %s: %w", c.Base+1, c.Sandbox, err)
				}
				return nil
			}
			// No row matched: this statement's fresh snapshot may now
			// show a concurrent retry of the same commit.
			if prior, err = landed(ctx, tx, c.CommitID); err != nil {
				return err
			}
		}
		if prior != nil {
			if _, err := sandbox.PublishRule(c, sandbox.Head{}, prior); err != nil {
				return err
			}
			g = *prior
			return nil
		}
		h, err := readHead(ctx, tx, c.Sandbox)
		if err != nil {
			return err
		}
		return sandbox.Fenced(c, h)
	})
	if err != nil {
		return sandbox.Generation{}, err
	}
	return g, nil
}

const math64 = 1<<63 - 1

func (d *DB) Generations(ctx context.Context, id string) ([]sandbox.Generation, error) {
	var out []sandbox.Generation
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := readHead(ctx, tx, id); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT "+genCols+" FROM generations WHERE sandbox = $1 ORDER BY number", id)
		if err != nil {
			return fmt.Errorf("cannot list generations of %s: %w", id, err)
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (sandbox.Generation, error) { return scanGen(row) })
		return err
	})
	return out, err
}

func (d *DB) Generation(ctx context.Context, id string, number uint64) (sandbox.Generation, error) {
	n, err := i64(number)
	if err != nil {
		return sandbox.Generation{}, err
	}
	g, err := scanGen(d.pool.QueryRow(ctx, "SELECT "+genCols+" FROM generations WHERE sandbox = $1 AND number = $2", id, n))
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := readHead(ctx, d.pool, id); err != nil {
			return g, err
		}
		return g, sandbox.NoGeneration(id, number)
	}
	if err != nil {
		return g, fmt.Errorf("cannot read generation %d of %s: %w", number, id, err)
	}
	return g, nil
}

func (d *DB) DeleteGeneration(ctx context.Context, id string, number uint64) error {
	n, err := i64(number)
	if err != nil {
		return err
	}
	// One statement: the head check and the delete see the same row.
	var pinned bool
	err = d.pool.QueryRow(ctx, `WITH h AS (SELECT head_generation = $2 AS pinned FROM sandboxes WHERE id = $1),
		del AS (DELETE FROM generations WHERE sandbox = $1 AND number = $2 AND NOT EXISTS (SELECT 1 FROM h WHERE pinned))
		SELECT coalesce((SELECT pinned FROM h), false)`, id, n).Scan(&pinned)
	if err != nil {
		return fmt.Errorf("cannot delete generation %d of %s: %w", number, id, err)
	}
	if pinned && number != 0 {
		return sandbox.HeadGenerationPinned(id, number)
	}
	return nil
}

func (d *DB) AddCustody(ctx context.Context, c sandbox.CustodyRecord, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckCustody(c, ttl); err != nil {
		return time.Time{}, err
	}
	epoch, err := i64(c.Epoch)
	if err != nil {
		return time.Time{}, err
	}
	keys := c.Keys
	if keys == nil {
		keys = []string{}
	}
	var exp time.Time
	err = d.pool.QueryRow(ctx, `INSERT INTO custody (upload_id, node, sandbox, epoch, object_keys, expires)
		VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 microsecond') RETURNING expires`,
		c.Upload, c.Node, c.Sandbox, epoch, keys, micros(ttl)).Scan(&exp)
	if uniqueViolation(err) {
		return time.Time{}, api.Errorf(errdefs.ErrAlreadyExists, "upload %q already has custody", c.Upload)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot record custody of %s: %w", c.Upload, err)
	}
	return utc(exp), nil
}

func (d *DB) RenewCustody(ctx context.Context, upload string, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckTTL(ttl); err != nil {
		return time.Time{}, err
	}
	var exp time.Time
	err := d.pool.QueryRow(ctx, `UPDATE custody SET expires = now() + $2 * interval '1 microsecond'
		WHERE upload_id = $1 AND expires > now() RETURNING expires`, upload, micros(ttl)).Scan(&exp)
	if errors.Is(err, pgx.ErrNoRows) {
		err = d.pool.QueryRow(ctx, "SELECT expires FROM custody WHERE upload_id = $1", upload).Scan(&exp)
		if errors.Is(err, pgx.ErrNoRows) {
			return time.Time{}, sandbox.NoCustody(upload)
		}
		if err == nil {
			return time.Time{}, sandbox.CustodyExpired(upload, utc(exp))
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot renew custody of %s: %w", upload, err)
	}
	return utc(exp), nil
}

func (d *DB) AddCustodyKeys(ctx context.Context, upload string, keys []string) error {
	if keys == nil {
		keys = []string{}
	}
	tag, err := d.pool.Exec(ctx, `UPDATE custody SET object_keys = object_keys || $2::text[]
		WHERE upload_id = $1 AND expires > now()`, upload, keys)
	if err != nil {
		return fmt.Errorf("cannot add keys to the custody of %s: %w", upload, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exp time.Time
	err = d.pool.QueryRow(ctx, "SELECT expires FROM custody WHERE upload_id = $1", upload).Scan(&exp)
	if errors.Is(err, pgx.ErrNoRows) {
		return sandbox.NoCustody(upload)
	}
	if err != nil {
		return fmt.Errorf("cannot add keys to the custody of %s: %w", upload, err)
	}
	return sandbox.CustodyExpired(upload, utc(exp))
}

func (d *DB) ReleaseCustody(ctx context.Context, upload string) error {
	if _, err := d.pool.Exec(ctx, "DELETE FROM custody WHERE upload_id = $1", upload); err != nil {
		return fmt.Errorf("cannot release custody of %s: %w", upload, err)
	}
	return nil
}

func (d *DB) ListCustody(ctx context.Context) ([]sandbox.CustodyRecord, error) {
	rows, err := d.pool.Query(ctx, `SELECT upload_id, node, sandbox, epoch, object_keys, expires
		FROM custody WHERE expires > now() ORDER BY upload_id`)
	if err != nil {
		return nil, fmt.Errorf("cannot list custody: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sandbox.CustodyRecord, error) {
		var c sandbox.CustodyRecord
		var epoch int64
		err := row.Scan(&c.Upload, &c.Node, &c.Sandbox, &epoch, &c.Keys, &c.Expires)
		c.Epoch, c.Expires = uint64(epoch), utc(c.Expires)
		return c, err
	})
}

func (d *DB) ExpireCustody(ctx context.Context) (int, error) {
	tag, err := d.pool.Exec(ctx, "DELETE FROM custody WHERE expires <= now()")
	if err != nil {
		return 0, fmt.Errorf("cannot expire custody: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

func (d *DB) Join(ctx context.Context, n sandbox.NodeRecord, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckNode(n, ttl); err != nil {
		return time.Time{}, err
	}
	var exp time.Time
	err := d.pool.QueryRow(ctx, `INSERT INTO nodes (id, boot_id, address, lease_expires)
		VALUES ($1, $2, $3, now() + $4 * interval '1 microsecond')
		ON CONFLICT (id) DO UPDATE SET boot_id = EXCLUDED.boot_id, address = EXCLUDED.address,
			lease_expires = EXCLUDED.lease_expires
		RETURNING lease_expires`, n.ID, n.BootID, n.Address, micros(ttl)).Scan(&exp)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot join node %s: %w", n.ID, err)
	}
	return utc(exp), nil
}

// nodeMismatch explains why a statement on node id at boot matched no row.
func (d *DB) nodeMismatch(ctx context.Context, id, boot string, missing error) error {
	var holder string
	err := d.pool.QueryRow(ctx, "SELECT boot_id FROM nodes WHERE id = $1", id).Scan(&holder)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return missing
	case err != nil:
		return fmt.Errorf("cannot read node %s: %w", id, err)
	case holder == boot:
		return nil // raced with a Join of the same boot: nothing to refuse
	}
	return sandbox.NodeFenced(id, boot, holder)
}

func (d *DB) RenewLease(ctx context.Context, id, boot string, ttl time.Duration) (time.Time, error) {
	if err := sandbox.CheckTTL(ttl); err != nil {
		return time.Time{}, err
	}
	var exp time.Time
	// A second try only when a Join of this same boot raced the first.
	for range 2 {
		err := d.pool.QueryRow(ctx, `UPDATE nodes SET lease_expires = now() + $3 * interval '1 microsecond'
			WHERE id = $1 AND boot_id = $2 RETURNING lease_expires`, id, boot, micros(ttl)).Scan(&exp)
		if err == nil {
			return utc(exp), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return time.Time{}, fmt.Errorf("cannot renew lease of node %s: %w", id, err)
		}
		if err := d.nodeMismatch(ctx, id, boot, sandbox.NoNode(id)); err != nil {
			return time.Time{}, err
		}
	}
	return time.Time{}, fmt.Errorf("cannot renew lease of node %s: its record keeps changing", id)
}

func (d *DB) Leave(ctx context.Context, id, boot string) error {
	tag, err := d.pool.Exec(ctx, "DELETE FROM nodes WHERE id = $1 AND boot_id = $2", id, boot)
	if err != nil {
		return fmt.Errorf("cannot remove node %s: %w", id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return d.nodeMismatch(ctx, id, boot, nil)
}

func (d *DB) ListNodes(ctx context.Context) ([]sandbox.NodeRecord, error) {
	rows, err := d.pool.Query(ctx, "SELECT id, boot_id, address, lease_expires, lease_expires > now() FROM nodes ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("cannot list nodes: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sandbox.NodeRecord, error) {
		var n sandbox.NodeRecord
		err := row.Scan(&n.ID, &n.BootID, &n.Address, &n.Expires, &n.Live)
		n.Expires = utc(n.Expires)
		return n, err
	})
}
