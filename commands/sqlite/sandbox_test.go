package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/boltmeta"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/sandboxtest"
	"github.com/warren-sandbox/warren/store/dir"
)

// TestSandbox_HibernateFork: in a real sandbox (shell, store, manager), a
// database written by sqlite3 survives hibernation, and a fork gets its
// own copy that diverges from the parent's.
func TestSandbox_HibernateFork(t *testing.T) {
	d := t.TempDir()
	ctx := context.Background()
	blobs, err := dir.Open(d+"/blobs", dir.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	cat, err := image.NewCatalog(blobs, d+"/cache")
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := image.Default(ctx, cat); err != nil {
		t.Fatal(err)
	}
	meta, err := boltmeta.Open(d + "/meta.db")
	if err != nil {
		t.Fatal(err)
	}
	defer meta.Close()
	m, err := sandbox.New(ctx, sandbox.Config{
		Blobs: blobs, Deltas: sandbox.VFSDeltas(blobs), Images: sandbox.CatalogImages(cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: meta, TickInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	svc := m.For("t")
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sh := func(id, script, want string) {
		t.Helper()
		out, errs, st := sandboxtest.Sh(t, svc, id, script)
		if out != want || st != 0 {
			t.Fatalf("%s: out %q stderr %q status %d, want %q", script, out, errs, st, want)
		}
	}
	sh(sb.ID, `cd /tmp && sqlite3 app.db "create table t(x); insert into t values('before')" && sqlite3 -json app.db 'select * from t' | grep -c before`, "1\n")
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	sh(sb.ID, `sqlite3 /tmp/app.db "insert into t values('after')"; echo "select count(*) from t;" | sqlite3 /tmp/app.db`, "2\n")
	kids, err := svc.Fork(ctx, sb.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	sh(kids[0].ID, `sqlite3 /tmp/app.db "delete from t" "select count(*) from t"`, "0\n")
	sh(sb.ID, `sqlite3 /tmp/app.db "select group_concat(x) from t"`, "before,after\n")
}
