package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/warren-sandbox/warren/fleet"
	"github.com/warren-sandbox/warren/sandbox"
)

// The fleet's part of the store (schema version 2, migrations/0002_fleet.sql).

var _ fleet.Store = (*DB)(nil)

func (d *DB) SetStatus(ctx context.Context, s fleet.Status) error {
	labels, err := json.Marshal(s.Labels)
	if err != nil {
		return err
	}
	if s.Labels == nil {
		labels = []byte("{}")
	}
	// Only while the boot holds the node's lease row: a replaced process
	// does not overwrite its successor's status.
	tag, err := d.pool.Exec(ctx, `INSERT INTO node_status (id, boot_id, capacity, load, labels, draining, updated)
		SELECT $1, $2, $3, $4, $5, $6, now() WHERE EXISTS (SELECT 1 FROM nodes WHERE id = $1 AND boot_id = $2)
		ON CONFLICT (id) DO UPDATE SET boot_id = EXCLUDED.boot_id, capacity = EXCLUDED.capacity, load = EXCLUDED.load,
			labels = EXCLUDED.labels, draining = EXCLUDED.draining, updated = now()`,
		s.Node, s.Boot, max(s.Capacity, 1), max(s.Load, 0), labels, s.Draining)
	if err != nil {
		return fmt.Errorf("cannot record the status of node %s: %w", s.Node, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return d.nodeMismatch(ctx, s.Node, s.Boot, sandbox.NoNode(s.Node))
}

func (d *DB) Members(ctx context.Context, owned bool) ([]fleet.Member, error) {
	count := "0"
	if owned {
		count = "(SELECT count(*) FROM sandboxes WHERE owner_node = n.id)"
	}
	rows, err := d.pool.Query(ctx, `SELECT n.id, n.boot_id, n.address, n.lease_expires, n.lease_expires > now(),
			coalesce(s.capacity, 1), coalesce(s.load, 0), coalesce(s.labels, '{}'), coalesce(s.draining, false),
			`+count+`
		FROM nodes n LEFT JOIN node_status s ON s.id = n.id AND s.boot_id = n.boot_id ORDER BY n.id`)
	if err != nil {
		return nil, fmt.Errorf("cannot list nodes: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (fleet.Member, error) {
		var m fleet.Member
		var labels []byte
		var owned int64
		err := row.Scan(&m.ID, &m.BootID, &m.Address, &m.Expires, &m.Live, &m.Capacity, &m.Load, &labels, &m.Draining, &owned)
		if err != nil {
			return m, err
		}
		m.Expires, m.Owned = utc(m.Expires), int(owned)
		if err := json.Unmarshal(labels, &m.Labels); err != nil {
			return m, fmt.Errorf("node %s: bad labels: %w", m.ID, err)
		}
		if len(m.Labels) == 0 {
			m.Labels = nil
		}
		return m, nil
	})
}

func (d *DB) Owner(ctx context.Context, id string) (fleet.Owner, error) {
	o := fleet.Owner{Sandbox: id}
	var epoch int64
	err := d.pool.QueryRow(ctx, `SELECT s.owner_node, s.owner_epoch, coalesce(n.address, ''),
			coalesce(n.lease_expires > now(), false), coalesce(st.draining, false)
		FROM sandboxes s LEFT JOIN nodes n ON n.id = s.owner_node AND s.owner_node <> ''
			LEFT JOIN node_status st ON st.id = n.id AND st.boot_id = n.boot_id
		WHERE s.id = $1`, id).Scan(&o.Node, &epoch, &o.Address, &o.Live, &o.Draining)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, unknownSandbox(id)
	}
	if err != nil {
		return o, fmt.Errorf("cannot read the owner of %s: %w", id, err)
	}
	o.Epoch = uint64(epoch)
	return o, nil
}

func (d *DB) TakeOver(ctx context.Context, id, node string, seen uint64) (uint64, error) {
	s, err := i64(seen)
	if err != nil {
		return 0, err
	}
	if node == "" {
		return 0, fmt.Errorf("take over of %s: no node", id)
	}
	var epoch int64
	err = d.pool.QueryRow(ctx, `UPDATE sandboxes SET owner_node = $2, owner_epoch = owner_epoch + 1
		WHERE id = $1 AND owner_epoch = $3 AND (owner_node = '' OR owner_node = $2
			OR NOT EXISTS (SELECT 1 FROM nodes WHERE id = owner_node AND lease_expires > now()))
		RETURNING owner_epoch`, id, node, s).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		h, err := readHead(ctx, d.pool, id)
		if err != nil {
			return 0, err
		}
		if h.Epoch == seen {
			return 0, &sandbox.FencedError{Sandbox: id, Head: h,
				Reason: fmt.Sprintf("node %s cannot take over: owner %s at epoch %d still holds a lease", node, h.Owner, h.Epoch)}
		}
		return 0, sandbox.ClaimFenced(id, node, seen, h)
	}
	if err != nil {
		return 0, fmt.Errorf("cannot take over %s: %w", id, err)
	}
	return uint64(epoch), nil
}

func (d *DB) WatchOwners(ctx context.Context, ready func(), fn func(string)) error {
	c, err := d.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("cannot listen for owner changes: %w", err)
	}
	// The connection keeps its LISTEN: it must not go back to the pool.
	conn := c.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN warren_owner"); err != nil {
		return fmt.Errorf("cannot listen for owner changes: %w", err)
	}
	if ready != nil {
		ready()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}

// Sandbox reads one record (sandbox.RecordReader): a node of a fleet
// loads a sandbox another node created when it first serves it.
func (d *DB) Sandbox(ctx context.Context, id string) (sandbox.Record, error) {
	var r sandbox.Record
	var cfg []byte
	err := d.pool.QueryRow(ctx, `SELECT id, tenant, config, image_digest, state_ref, state, parent, snapshot, created_at
		FROM sandboxes WHERE id = $1`, id).Scan(&r.ID, &r.Tenant, &cfg, &r.ImageDigest, &r.StateRef, &r.State, &r.Parent, &r.Snapshot, &r.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, unknownSandbox(id)
	}
	if err != nil {
		return r, fmt.Errorf("cannot read sandbox %s: %w", id, err)
	}
	r.CreatedAt = utc(r.CreatedAt)
	if err := json.Unmarshal(cfg, &r.Config); err != nil {
		return r, fmt.Errorf("corrupt config of sandbox %s: %w", r.ID, err)
	}
	return r, nil
}
