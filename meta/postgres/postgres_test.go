package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/metatest"
)

func TestMain(m *testing.M) { pgtest.Main(m, Migrate) }

func open(t *testing.T, url string) *DB {
	t.Helper()
	db, err := Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDB_Conformance runs metatest against a fresh database per test; the
// races run over two connection pools, as two processes would.
func TestDB_Conformance(t *testing.T) {
	metatest.RunSuite(t, func(t *testing.T) metatest.Fixture {
		url := pgtest.New(t)
		db := open(t, url)
		return metatest.Fixture{
			Meta: db,
			Peer: func(t *testing.T) sandbox.DurableMeta { return open(t, url) },
			Reopen: func(t *testing.T) sandbox.DurableMeta {
				db.Close()
				return open(t, url)
			},
		}
	})
}

// TestMigrate_Concurrent: several processes start at once on an empty
// database; the advisory lock lets each step apply once, and every one of
// them ends with the full schema.
func TestMigrate_Concurrent(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewEmpty(t)
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() { errs <- Migrate(ctx, url) }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent Migrate: %v", err)
		}
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var rows, top int
	if err := c.QueryRow(ctx, "SELECT count(*), max(version) FROM schema_migrations").Scan(&rows, &top); err != nil {
		t.Fatal(err)
	}
	if rows != SchemaVersion() || top != SchemaVersion() {
		t.Fatalf("schema_migrations has %d rows up to %d, want %d", rows, top, SchemaVersion())
	}
	// The store works on the result.
	db := open(t, url)
	if err := db.PutSandbox(ctx, sandbox.Record{ID: "sb"}); err != nil {
		t.Fatal(err)
	}
}

// TestMigrate_NewerSchema: a database migrated by a newer warren is
// refused with a message that says so, not half-used.
func TestMigrate_NewerSchema(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES (999, 'future')"); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, url)
	if err == nil || !strings.Contains(err.Error(), "newer than this warren") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

// TestOpen_BadURL: bad or unreachable URLs fail with an error naming the
// problem, without hanging.
func TestOpen_BadURL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct{ url, want string }{
		{"postgres://%zz", "metadata URL"},
		{"postgres://postgres@/nodb?host=/nonexistent-dir&sslmode=disable&connect_timeout=2", "cannot reach PostgreSQL"},
	} {
		_, err := Open(ctx, tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", tc.url, err, tc.want)
		}
	}
}

// TestKeys: API keys are stored by hash, looked up by value, replaced by
// a second PutKey, and an unknown key is ErrNotFound.
func TestKeys(t *testing.T) {
	ctx := context.Background()
	db := open(t, pgtest.New(t))
	if has, err := db.HasKeys(ctx); err != nil || has {
		t.Fatalf("fresh HasKeys = %v, %v", has, err)
	}
	if err := db.PutKey(ctx, "secret-key-0001", "t", false); err != nil {
		t.Fatal(err)
	}
	if err := db.PutKey(ctx, "secret-key-0001", "u", true); err != nil {
		t.Fatal(err)
	}
	tenant, admin, err := db.LookupKey(ctx, "secret-key-0001")
	if err != nil || tenant != "u" || !admin {
		t.Fatalf("LookupKey = %q %v %v", tenant, admin, err)
	}
	if _, _, err := db.LookupKey(ctx, "secret-key-0002"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	var stored string
	if err := db.pool.QueryRow(ctx, "SELECT key_hash FROM api_keys").Scan(&stored); err != nil || strings.Contains(stored, "secret") {
		t.Fatalf("stored key %q (%v): want its hash only", stored, err)
	}
	if has, _ := db.HasKeys(ctx); !has {
		t.Fatal("HasKeys after PutKey")
	}
}

// BenchmarkDB runs metatest's benchmarks against the throwaway server
// (unix socket, fsync off: round trips and locking, not disk latency).
func BenchmarkDB(b *testing.B) {
	metatest.RunBenchmarks(b, func(b *testing.B) sandbox.DurableMeta {
		db, err := Open(context.Background(), pgtest.New(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	})
}
