package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key every warren takes while it
// migrates, so two processes starting at once apply each step once.
const migrationLock = 0x77617272656e // "warren"

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded steps in version order. A file is
// NNNN_name.sql; versions start at 1 and have no gaps.
func migrations() ([]migration, error) {
	ents, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range ents {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations: version %d where %d was expected", m.version, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this build applies.
func SchemaVersion() int {
	ms, _ := migrations()
	return len(ms)
}

// Migrate brings the database at url to this build's schema: the missing
// steps, in order, in one transaction under an advisory lock (a second
// process waits, then finds nothing to do). A database with a newer
// schema than this build knows is refused.
func Migrate(ctx context.Context, url string) error {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("metadata: cannot connect to PostgreSQL: %w", err)
	}
	defer c.Close(ctx)
	return migrate(ctx, c)
}

// execer is what migrate needs from a connection or pool.
type execer interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

func migrate(ctx context.Context, db execer) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`)
		if err != nil {
			return fmt.Errorf("schema_migrations: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&have); err != nil {
			return fmt.Errorf("schema_migrations: %w", err)
		}
		if have > len(ms) {
			return fmt.Errorf("metadata schema is at version %d, newer than this warren knows (%d): upgrade warren", have, len(ms))
		}
		for _, m := range ms[have:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
			}
		}
		return nil
	})
}
