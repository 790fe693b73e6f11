package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/meta/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m, postgres.Migrate) }

// TestOpen_PostgresAcrossRestart: a node whose metadata is in PostgreSQL
// creates a sandbox, writes to it and hibernates it; a new node over the
// same data directory and database knows the sandbox, its snapshot and
// the admin key, and resumes it with its file.
func TestOpen_PostgresAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir, url := t.TempDir(), pgtest.New(t)
	n, err := Open(ctx, Options{Dir: dir, Meta: url})
	if err != nil {
		t.Fatal(err)
	}
	if n.AdminKey == "" {
		t.Fatal("first start on an empty database made no admin key")
	}
	svc := n.Manager.For("t1")
	sb, err := svc.Create(ctx, api.CreateRequest{Labels: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "echo kept > /f; cat /f"}, &out, nil)
	if err != nil || res.Exit != 0 || out.String() != "kept\n" {
		t.Fatalf("exec: %q %+v, %v", out.String(), res, err)
	}
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateSnapshot(ctx, sb.ID, "snap"); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "meta.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("meta.db exists with --meta postgres (%v): records went to bbolt", err)
	}

	n, err = Open(ctx, Options{Dir: dir, Meta: url})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(ctx)
	if n.AdminKey != "" {
		t.Fatal("second start made another admin key: the first was not found in PostgreSQL")
	}
	svc = n.Manager.For("t1")
	list, err := svc.List(ctx, api.ListOptions{})
	if err != nil || len(list) != 1 || list[0].ID != sb.ID || list[0].State != api.StateStandby || list[0].Labels["k"] != "v" {
		t.Fatalf("List after restart: %+v, %v", list, err)
	}
	snaps, err := svc.ListSnapshots(ctx)
	if err != nil || len(snaps) != 1 || snaps[0].Name != "snap" {
		t.Fatalf("snapshots after restart: %+v, %v", snaps, err)
	}
	out.Reset()
	res, err = svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "cat /f"}, &out, nil)
	if err != nil || res.Exit != 0 || out.String() != "kept\n" {
		t.Fatalf("exec after restart: %q %+v, %v", out.String(), res, err)
	}
	heads, err := n.Meta.ListHeads(ctx)
	if err != nil || len(heads) != 1 || heads[0].Sandbox != sb.ID {
		t.Fatalf("heads in PostgreSQL: %+v, %v", heads, err)
	}
}

// TestOpenMeta_BadURL: an unknown scheme is refused naming what works,
// and a password never reaches the message.
func TestOpenMeta_BadURL(t *testing.T) {
	_, err := OpenMeta(context.Background(), "mysql://u:hunter2@h/db", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("OpenMeta(mysql://...) = %v", err)
	}
}

// TestOpen_BadMetaClosesWhatItOpened: a node whose metadata cannot open
// fails with that error (and closes its blob store), never a panic.
func TestOpen_BadMetaClosesWhatItOpened(t *testing.T) {
	n, err := Open(context.Background(), Options{Dir: t.TempDir(), Meta: "mysql://h/db"})
	if err == nil || n != nil || !strings.Contains(err.Error(), "want a postgres:// URL") {
		t.Fatalf("Open with a bad --meta: %v, %v", n, err)
	}
}
