package sandbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// recordingInterps wraps the real shell interpreters and keeps the
// memory budget every session was built with, by sandbox directory.
type recordingInterps struct {
	sandbox.Interpreters
	mu   sync.Mutex
	mems []*commands.Memory
}

func (r *recordingInterps) New(cfg sandbox.SessionConfig) (sandbox.Interp, error) {
	r.mu.Lock()
	r.mems = append(r.mems, cfg.Memory)
	r.mu.Unlock()
	return r.Interpreters.New(cfg)
}

// TestLimits_DefaultsAndSharedMemory: a sandbox created with no limits
// gets every default of api.DefaultLimits, and all its sessions and
// background processes share one memory budget of its MaxMemoryBytes,
// while another sandbox has its own.
func TestLimits_DefaultsAndSharedMemory(t *testing.T) {
	p := openParts(t, t.TempDir())
	defer p.close()
	rec := &recordingInterps{Interpreters: sandbox.ShellInterpreters(node.Commands())}
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: p.blobs, Deltas: sandbox.VFSDeltas(p.blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: rec, Meta: p.meta,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	ctx := context.Background()
	svc := m.For("t")
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	d := api.DefaultLimits
	if l := sb.Limits; l.Timeout != d.Timeout || l.MaxOutputBytes != d.MaxOutputBytes || l.MaxMemoryBytes != d.MaxMemoryBytes ||
		l.DiskBytes != d.DiskBytes || l.DiskInodes != d.DiskInodes || l.Jobs != d.Jobs || l.CPUs != d.CPUs || l.Pids != d.Pids {
		t.Fatalf("limits of a sandbox created without any: %+v, want %+v", l, d)
	}
	other, err := svc.Create(ctx, api.CreateRequest{Limits: api.Limits{MaxMemoryBytes: 32 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b"} {
		if _, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "true", Session: s}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	pr, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "true", Session: "bg"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := svc.WaitProcess(wctx, sb.ID, pr.PID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Exec(ctx, other.ID, api.ExecRequest{Script: "true"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	mems := rec.mems
	rec.mu.Unlock()
	if len(mems) != 4 {
		t.Fatalf("%d sessions built, want 4", len(mems))
	}
	if mems[0] == nil || mems[0] != mems[1] || mems[1] != mems[2] {
		t.Fatalf("the sessions and the background process of one sandbox have different budgets: %p %p %p", mems[0], mems[1], mems[2])
	}
	if mems[0].Max() != d.MaxMemoryBytes {
		t.Fatalf("budget %d, want the sandbox's limit %d", mems[0].Max(), d.MaxMemoryBytes)
	}
	if mems[3] == mems[0] || mems[3].Max() != 32<<20 {
		t.Fatalf("another sandbox shares the budget or has the wrong size (%d)", mems[3].Max())
	}
	// The shell configuration carries the budget to the commands.
	if cfg := sandbox.ShellConfig(node.Commands(), sandbox.SessionConfig{Memory: mems[0]}); cfg.Sys == nil || cfg.Sys.Memory != mems[0] {
		t.Fatal("ShellConfig does not pass the sandbox's budget to the commands")
	}
}
