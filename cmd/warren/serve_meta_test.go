package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/internal/pgtest"
)

// TestE2E_ServeMetaPostgres: `warren serve --meta postgres://...` keeps
// records and keys in PostgreSQL (no DATA/meta.db), and a restart that
// names the database through WARREN_META knows the hibernated sandbox,
// keeps its admin key and resumes the sandbox with its file.
func TestE2E_ServeMetaPostgres(t *testing.T) {
	dir, url := t.TempDir(), pgtest.New(t)
	ctx := context.Background()
	p := startServe(t, dir, "--no-native", "--meta", url)
	if !strings.Contains(p.header, "admin key created in") {
		t.Fatalf("first start on an empty database printed no admin key:\n%s", p.header)
	}
	c, err := client.New(p.url, p.adminKey(t))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := c.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if out, st := sh(t, c, sb.ID, "echo durable > /keep; cat /keep"); out != "durable\n" || st != 0 {
		t.Fatalf("exec: %q %d", out, st)
	}
	if _, err := c.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	if _, err := os.Stat(filepath.Join(dir, "meta.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DATA/meta.db exists (%v): records went to bbolt", err)
	}

	t.Setenv("WARREN_META", url)
	p = startServe(t, dir, "--no-native")
	defer p.stop(t)
	if strings.Contains(p.header, "admin key created") {
		t.Fatalf("restart made a new admin key: the first was not read from PostgreSQL:\n%s", p.header)
	}
	if c, err = client.New(p.url, p.adminKey(t)); err != nil {
		t.Fatal(err)
	}
	list, err := c.List(ctx, api.ListOptions{})
	if err != nil || len(list) != 1 || list[0].ID != sb.ID || list[0].State != api.StateStandby {
		t.Fatalf("List after restart: %+v, %v", list, err)
	}
	if out, _ := sh(t, c, sb.ID, "cat /keep"); out != "durable\n" {
		t.Fatalf("after restart /keep = %q", out)
	}
}

// TestServe_MetaBadScheme: a --meta that is not a postgres URL stops serve
// with a message naming what works.
func TestServe_MetaBadScheme(t *testing.T) {
	cmd := exec.Command(warrenBinary(t), "serve", "--no-native", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--meta", "mysql://u:pw@h/db")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(string(out), "want a postgres:// URL") {
		t.Fatalf("serve --meta mysql://: %v\n%s", err, out)
	}
}
