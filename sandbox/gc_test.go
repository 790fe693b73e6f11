package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wlog"
)

func gcManager(t *testing.T, p parts, blobs *stallStore, d string) *sandbox.Manager {
	t.Helper()
	l, err := wlog.Open(d+"/wlog", wlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: blobs, Deltas: sandbox.VFSDeltas(blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: p.meta, TickInterval: 20 * time.Millisecond,
		Durable: &sandbox.Durable{Node: "node-a", Log: l, Commit: committer.Options{MaxDelay: time.Hour}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func countObjects(t *testing.T, s *stallStore, prefix string) int {
	t.Helper()
	n := 0
	if err := s.List(context.Background(), prefix, func(string, int64) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGC: objects of forgotten generations and deleted sandboxes go after
// two runs; an upload in flight holds the sweep off and loses nothing;
// every kept sandbox reads back cold (hibernated, loaded from the store)
// afterwards, including a running fork whose snapshot was deleted.
func TestGC(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	blobs := &stallStore{Store: p.blobs}
	m := gcManager(t, p, blobs, d)
	defer m.Close(context.Background())
	defer blobs.resume()
	svc := m.For("t")
	ctx := context.Background()
	one := &api.Retention{KeepLast: 1, KeepFor: -1}
	keep, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Retention: one})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Retention: one})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(id, script, level string) {
		t.Helper()
		if _, _, err := execOut(t, svc, id, api.ExecRequest{Script: script, Durability: level}); err != nil {
			t.Fatalf("%s: %v", script, err)
		}
	}
	for i := range 4 {
		exec(keep.ID, fmt.Sprintf("head -c 100000 /dev/urandom > /r%d; echo %d > /v", i%2, i), api.DurabilityCommitted)
		exec(gone.ID, fmt.Sprintf("head -c 100000 /dev/urandom > /g%d", i), api.DurabilityCommitted)
	}
	// A snapshot, a fork of it running, then the snapshot deleted: the
	// fork's record and its loaded state keep its objects.
	exec(keep.ID, "echo snap > /s", api.DurabilityCommitted)
	if _, err := svc.Hibernate(ctx, keep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateSnapshot(ctx, keep.ID, "s"); err != nil {
		t.Fatal(err)
	}
	fork, err := svc.Create(ctx, api.CreateRequest{Snapshot: "s", StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	exec(fork.ID, "cat /s > /dev/null", api.DurabilityMemory) // running, loaded lazily
	if err := svc.DeleteSnapshot(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	exec(keep.ID, "echo after > /v", api.DurabilityCommitted)
	if err := svc.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	before := countObjects(t, blobs, "")
	o := sandbox.GCOptions{Grace: time.Nanosecond}
	st, err := m.CollectGarbage(ctx, o)
	if err != nil || st.Swept != 0 || st.Candidates == 0 {
		t.Fatalf("first run: %+v, %v; want candidates and nothing swept", st, err)
	}
	dry, err := m.CollectGarbage(ctx, sandbox.GCOptions{Grace: time.Nanosecond, DryRun: true})
	if err != nil || dry.Swept == 0 || countObjects(t, blobs, "") != before+1 { // +1: gc/state.json
		t.Fatalf("dry run: %+v, %v; objects %d, had %d", dry, err, countObjects(t, blobs, ""), before)
	}
	// An upload in flight: its packs are written, its StateRef document
	// is stalled; the sweep waits for it.
	blobs.mu.Lock()
	blobs.only, blobs.stalled = "staterefs/", make(chan string, 1)
	blobs.mu.Unlock()
	blobs.stall()
	done := make(chan error, 1)
	go func() {
		_, _, err := execOut(t, svc, keep.ID, api.ExecRequest{Script: "head -c 200000 /dev/urandom > /inflight; echo inflight > /v", Durability: api.DurabilityCommitted})
		done <- err
	}()
	select {
	case <-blobs.stalled:
	case <-time.After(20 * time.Second):
		t.Fatal("the commit never reached its StateRef upload")
	}
	gcDone := make(chan sandbox.GCStats, 1)
	go func() {
		st, err := m.CollectGarbage(ctx, o)
		if err != nil {
			t.Error(err)
		}
		gcDone <- st
	}()
	select {
	case st := <-gcDone:
		t.Fatalf("GC swept (%+v) while an upload was in flight", st)
	case <-time.After(300 * time.Millisecond):
	}
	blobs.resume()
	if err := <-done; err != nil {
		t.Fatalf("the commit in flight: %v", err)
	}
	st = <-gcDone
	if st.Swept == 0 || st.SweptBytes < 300000 {
		t.Fatalf("second run: %+v; want the forgotten generations' and the deleted sandbox's objects swept", st)
	}
	if _, err := m.CollectGarbage(ctx, o); err != nil { // and again: nothing kept is lost
		t.Fatal(err)
	}
	// Everything kept reads back from the store.
	for _, c := range []struct{ id, script, want string }{
		{keep.ID, "cat /v; wc -c < /inflight; cat /s", "inflight\n200000\nsnap\n"},
		{fork.ID, "cat /s; wc -c < /r1", "snap\n100000\n"},
	} {
		if _, err := svc.Hibernate(ctx, c.id); err != nil {
			t.Fatal(err)
		}
		out, res, err := execOut(t, svc, c.id, api.ExecRequest{Script: c.script})
		if err != nil || out != c.want {
			t.Fatalf("%s after GC: %q (%s), %v; want %q", c.id, out, res.Stderr, err, c.want)
		}
	}
	verifyHeads(t, p, blobs)
}

// verifyHeads checks that every object every head needs is in the store
// (Has on the store itself: reads could be served by a cache).
func verifyHeads(t *testing.T, p parts, blobs *stallStore) {
	t.Helper()
	ctx := context.Background()
	heads, err := p.meta.ListHeads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	need := func(key string) error {
		if ok, err := blobs.Store.Has(ctx, key); err != nil || !ok {
			return fmt.Errorf("object %s is gone (%v)", key, err)
		}
		return nil
	}
	checked := 0
	for _, h := range heads {
		if h.Ref == "" {
			continue
		}
		if err := need("staterefs/" + h.Ref); err != nil {
			t.Fatalf("head of %s: %v", h.Sandbox, err)
		}
		rc, err := blobs.Get(ctx, "staterefs/"+h.Ref)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Delta    string            `json:"delta"`
			Sessions map[string]string `json:"sessions"`
		}
		err = json.NewDecoder(rc).Decode(&doc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range doc.Sessions {
			if err := need(k); err != nil {
				t.Fatalf("head of %s: %v", h.Sandbox, err)
			}
		}
		ref, err := vfs.ParseRef(doc.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if err := vfs.Reachable(ctx, blobs.Store, ref, need); err != nil {
			t.Fatalf("head of %s: %v", h.Sandbox, err)
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("verified %d heads, want at least 2", checked)
	}
}
