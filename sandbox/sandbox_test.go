package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/boltmeta"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/sandboxtest"
	"github.com/warren-sandbox/warren/store/dir"
)

// parts are the real pieces a manager runs on, under one directory.
type parts struct {
	blobs *dir.Store
	cat   *image.Catalog
	meta  *boltmeta.DB
}

func openParts(t testing.TB, d string) parts {
	t.Helper()
	blobs, err := dir.Open(d+"/blobs", dir.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	cat, err := image.NewCatalog(blobs, d+"/cache")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := image.Default(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	meta, err := boltmeta.Open(d + "/meta.db")
	if err != nil {
		t.Fatal(err)
	}
	return parts{blobs, cat, meta}
}

func (p parts) close() {
	p.meta.Close()
	p.cat.Close()
	p.blobs.Close()
}

func newManager(t testing.TB, p parts) *sandbox.Manager {
	t.Helper()
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs:        p.blobs,
		Deltas:       sandbox.VFSDeltas(p.blobs),
		Images:       sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()),
		Meta:         p.meta,
		TickInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSuite runs the behaviour suite in process, over the real shell,
// the real vfs and a real store/dir.
func TestSuite(t *testing.T) {
	p := openParts(t, t.TempDir())
	m := newManager(t, p)
	t.Cleanup(func() {
		m.Close(context.Background())
		p.close()
	})
	var n atomic.Int64
	sandboxtest.Run(t, sandboxtest.Harness{
		NewTenant: func(t *testing.T) api.Service { return m.For(fmt.Sprintf("tenant%d", n.Add(1))) },
	})
}

// TestManager_Restart: Close hibernates everything; a new manager over
// the same directory resumes each sandbox with files and shell state.
func TestManager_Restart(t *testing.T) {
	d := t.TempDir()
	ctx := context.Background()
	p := openParts(t, d)
	m := newManager(t, p)
	svc := m.For("t")
	sb, err := svc.Create(ctx, api.CreateRequest{Labels: map[string]string{"x": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.Sh(t, svc, sb.ID, `cd /tmp; echo kept > f; V=var; fn() { echo fn-ok; }`)
	idle, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateSnapshot(ctx, sb.ID, "snap"); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	p.close()

	p = openParts(t, d)
	defer p.close()
	m = newManager(t, p)
	defer m.Close(ctx)
	svc = m.For("t")
	got, err := svc.Get(ctx, sb.ID)
	if err != nil || got.State != api.StateStandby || got.Labels["x"] != "y" {
		t.Fatalf("after restart: %+v, %v", got, err)
	}
	out, _, st := sandboxtest.Sh(t, svc, sb.ID, `cat f; echo "$V $(pwd)"; fn`)
	if out != "kept\nvar /tmp\nfn-ok\n" || st != 0 {
		t.Fatalf("after restart: %q status %d", out, st)
	}
	if out, _, _ := sandboxtest.Sh(t, svc, idle.ID, `echo alive`); out != "alive\n" {
		t.Fatalf("untouched sandbox after restart: %q", out)
	}
	from, err := svc.Create(ctx, api.CreateRequest{Snapshot: "snap"})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, _ := sandboxtest.Sh(t, svc, from.ID, `cat /tmp/f; echo $V`); out != "kept\nvar\n" {
		t.Fatalf("snapshot after restart: %q", out)
	}
}

// TestManager_TTL: a sandbox past its ttl is deleted.
func TestManager_TTL(t *testing.T) {
	p := openParts(t, t.TempDir())
	defer p.close()
	m := newManager(t, p)
	defer m.Close(context.Background())
	svc := m.For("t")
	sb, err := svc.Create(context.Background(), api.CreateRequest{TTL: api.Duration(100 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := svc.Get(context.Background(), sb.ID); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sandbox with ttl 100ms still there after 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestManager_NoGoroutineLeak: after Close, everything a manager started
// (idle timer, background processes, execs) has returned.
func TestManager_NoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	p := openParts(t, t.TempDir())
	m := newManager(t, p)
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.Sh(t, svc, sb.ID, "seq 1 100 | sort -r | head -n 1 >/dev/null & wait")
	// A background job outlives its exec; Close ends it.
	sandboxtest.Sh(t, svc, sb.ID, "while :; do sleep 0.01; done &")
	if _, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "read x", Session: "bg"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "while true; do sleep 0.01; done", Session: "loop"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	p.close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestManager_ProcessLimit: a sandbox runs at most 64 background
// processes; the 65th is refused with ErrResourceExhausted.
func TestManager_ProcessLimit(t *testing.T) {
	p := openParts(t, t.TempDir())
	defer p.close()
	m := newManager(t, p)
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		if _, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "read x", Session: fmt.Sprintf("s%d", i%8), Isolated: true}); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	_, err = svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "read x", Isolated: true})
	if !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("65th process: %v, want ErrResourceExhausted", err)
	}
}

// TestManager_SessionLimit: a sandbox holds at most 64 sessions.
func TestManager_SessionLimit(t *testing.T) {
	p := openParts(t, t.TempDir())
	defer p.close()
	m := newManager(t, p)
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		if _, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "true", Session: fmt.Sprintf("s%d", i)}, nil, nil); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	_, err = svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "true", Session: "one-too-many"}, nil, nil)
	if !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("65th session: %v, want ErrResourceExhausted", err)
	}
}
