package workerpool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// TestCollectGarbage: the pool's collector marks from both workers' roots
// (a deleted sandbox's data goes after two runs, the other worker's
// hibernated sandbox reads back from the store), and a run that meets a
// worker killed a moment ago fails before it sweeps.
func TestCollectGarbage(t *testing.T) {
	ctx := context.Background()
	o := testOptions(t, 2)
	o.NoCgroup = true
	p := openPool(t, o)
	f := newFront(t, p)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	mk := func(c api.Service) string {
		sb, err := c.Create(ctx, api.CreateRequest{StandbyAfter: -1})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: "head -c 200000 /dev/urandom > /d", Durability: api.DurabilityCommitted}, nil, nil); err != nil || res.Exit != 0 {
			t.Fatalf("write: %+v %v", res, err)
		}
		return sb.ID
	}
	doomed, kept := mk(a), mk(b)
	if workerOf(p, doomed) == workerOf(p, kept) {
		t.Fatalf("both sandboxes on worker %d", workerOf(p, kept))
	}
	if _, err := b.Hibernate(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	g := sandbox.GCOptions{Grace: time.Nanosecond}
	first, err := p.CollectGarbage(ctx, g)
	if err != nil || first.Swept != 0 || first.Candidates == 0 {
		t.Fatalf("first run: %+v %v; want candidates noted, nothing swept", first, err)
	}
	second, err := p.CollectGarbage(ctx, g)
	if err != nil || second.SweptBytes < 200000 {
		t.Fatalf("second run: %+v %v; want the deleted sandbox's 200 KB swept", second, err)
	}
	if out, _ := sh(t, b, kept, "wc -c < /d"); out != "200000\n" {
		t.Fatalf("the other worker's hibernated sandbox after gc: %q", out)
	}
	// Kill the worker holding kept and collect at once.
	w := p.workers[workerOf(p, kept)]
	w.mu.Lock()
	gen := w.gen
	w.mu.Unlock()
	gen.cmd.Process.Kill()
	if st, err := p.CollectGarbage(ctx, g); err == nil || !strings.Contains(err.Error(), "nothing is swept") {
		t.Fatalf("a run right after a worker's kill: %+v %v; want an error saying nothing is swept", st, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		w.mu.Lock()
		back := w.gen != nil && w.gen != gen
		w.mu.Unlock()
		if back {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("worker not back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := p.CollectGarbage(ctx, g); err != nil {
		t.Fatalf("a run once the worker is back: %v", err)
	}
	if out, _ := sh(t, b, kept, "wc -c < /d"); out != "200000\n" {
		t.Fatalf("hibernated sandbox after its worker's restart and gc: %q", out)
	}
}
