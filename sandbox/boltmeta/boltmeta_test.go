package boltmeta

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/metatest"
)

// TestDB_ReopenKeepsEverything: records, snapshots and keys survive Close
// and Open; snapshots are create-only; keys are looked up by value only.
func TestDB_ReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "meta.db")
	db, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	r := sandbox.Record{ID: "sb-1", Tenant: "t", Config: api.CreateRequest{Labels: map[string]string{"a": "b"}}, StateRef: "abc", State: api.StateStandby, CreatedAt: now}
	if err := db.PutSandbox(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSandbox(ctx, sandbox.Record{ID: "sb-2", Tenant: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSandbox(ctx, "sb-2"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSandbox(ctx, "sb-absent"); err != nil {
		t.Fatalf("delete of a missing record: %v", err)
	}
	s := sandbox.SnapshotRecord{Tenant: "t", Name: "s", StateRef: "abc", CreatedAt: now}
	if err := db.CreateSnapshot(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSnapshot(ctx, s); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("second CreateSnapshot: %v, want ErrAlreadyExists", err)
	}
	if err := db.CreateSnapshot(ctx, sandbox.SnapshotRecord{Tenant: "u", Name: "s"}); err != nil {
		t.Fatalf("same name, other tenant: %v", err)
	}
	if has, _ := db.HasKeys(ctx); has {
		t.Fatal("fresh db has keys")
	}
	if err := db.PutKey(ctx, "secret-key-1", "t", true); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Sandboxes(ctx)
	if err != nil || len(recs) != 1 || recs[0].ID != "sb-1" || recs[0].StateRef != "abc" || recs[0].Config.Labels["a"] != "b" || !recs[0].CreatedAt.Equal(now) {
		t.Fatalf("Sandboxes after reopen: %+v, %v", recs, err)
	}
	snaps, err := db.Snapshots(ctx)
	if err != nil || len(snaps) != 2 {
		t.Fatalf("Snapshots after reopen: %+v, %v", snaps, err)
	}
	tenant, admin, err := db.LookupKey(ctx, "secret-key-1")
	if err != nil || tenant != "t" || !admin {
		t.Fatalf("LookupKey: %q %v %v", tenant, admin, err)
	}
	if _, _, err := db.LookupKey(ctx, "secret-key-2"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	if has, _ := db.HasKeys(ctx); !has {
		t.Fatal("HasKeys after reopen")
	}
	if err := db.DeleteSnapshot(ctx, "t", "s"); err != nil {
		t.Fatal(err)
	}
	if snaps, _ := db.Snapshots(ctx); len(snaps) != 1 || snaps[0].Tenant != "u" {
		t.Fatalf("after DeleteSnapshot: %+v", snaps)
	}
}

// TestOpen_Locked: a second process (here: a second Open) cannot open the
// same file while it is open; it fails with a clear error, not a hang.
func TestOpen_Locked(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meta.db")
	db, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := Open(p); err == nil {
		t.Fatal("opened a locked metadata file twice")
	}
}

func TestDB_Conformance(t *testing.T) {
	metatest.RunSuite(t, func(t *testing.T) metatest.Fixture {
		p := filepath.Join(t.TempDir(), "meta.db")
		db, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cur := db
		t.Cleanup(func() { cur.Close() })
		return metatest.Fixture{
			Meta: db,
			Reopen: func(t *testing.T) sandbox.DurableMeta {
				if err := cur.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				var err error
				if cur, err = Open(p); err != nil {
					t.Fatalf("reopen: %v", err)
				}
				return cur
			},
		}
	})
}

func BenchmarkDB(b *testing.B) {
	metatest.RunBenchmarks(b, func(b *testing.B) sandbox.DurableMeta {
		db, err := Open(filepath.Join(b.TempDir(), "meta.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	})
}
