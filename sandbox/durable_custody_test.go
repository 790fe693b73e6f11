package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/boltmeta"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/wlog"
)

// collector is another process's Manager over the same metadata and blobs
// (`warren gc` elsewhere): it sees none of the first one's sandboxes in
// memory, only what the metadata says, custody included.
func collector(t *testing.T, p parts, d string) *sandbox.Manager {
	t.Helper()
	l, err := wlog.Open(d+"/wlog-collector", wlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: p.blobs, Deltas: sandbox.VFSDeltas(p.blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: p.meta, TickInterval: time.Hour,
		Durable: &sandbox.Durable{Node: "node-gc", Log: l, Commit: committer.Options{MaxDelay: time.Hour}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// TestGCCustodyKeys: a collector in another process, with no grace, never
// deletes an object an in-flight upload has named in its custody or one a
// running sandbox loaded lazily (its record and its node's load custody), while it does
// sweep other garbage in the same runs (custody holds exactly its keys,
// not the whole sweep).
func TestGCCustodyKeys(t *testing.T) {
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
	exec := func(id, script, level string) string {
		t.Helper()
		out, res, err := execOut(t, svc, id, api.ExecRequest{Script: script, Durability: level})
		if err != nil || res.Exit != 0 {
			t.Fatalf("%s: %v (%s)", script, err, res.Stderr)
		}
		return out
	}
	keep, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Retention: one})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Retention: one})
	if err != nil {
		t.Fatal(err)
	}
	exec(keep.ID, "head -c 300000 /dev/urandom > /r; echo snap > /s", api.DurabilityCommitted)
	exec(gone.ID, "head -c 200000 /dev/urandom > /g", api.DurabilityCommitted)
	// A snapshot, a fork of it running (it touched /s only: the rest of
	// its tree is still in the store), then the snapshot deleted and the
	// source moved on: only the fork's node still needs that generation.
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
	exec(fork.ID, "cat /s > /dev/null", api.DurabilityMemory)
	if err := svc.DeleteSnapshot(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	exec(keep.ID, "rm /r; echo after > /s", api.DurabilityCommitted)
	if err := svc.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	// The fork's node records what it loaded (within a second of an exec).
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, err := p.meta.ListCustody(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(cs, func(c sandbox.CustodyRecord) bool {
			return strings.HasPrefix(c.Upload, "load/node-a/") && len(c.Keys) > 0
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no load custody of node-a: %+v", cs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// An upload in flight: its packs are written, its StateRef stalled.
	blobs.mu.Lock()
	blobs.only, blobs.stalled = "staterefs/", make(chan string, 1)
	blobs.mu.Unlock()
	blobs.stall()
	done := make(chan error, 1)
	go func() {
		_, _, err := execOut(t, svc, keep.ID, api.ExecRequest{Script: "head -c 400000 /dev/urandom > /inflight", Durability: api.DurabilityCommitted})
		done <- err
	}()
	select {
	case <-blobs.stalled:
	case <-time.After(20 * time.Second):
		t.Fatal("the commit never reached its StateRef upload")
	}
	cs, err := p.meta.ListCustody(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inflight []string
	for _, c := range cs {
		if strings.HasPrefix(c.Upload, "up-") {
			inflight = append(inflight, c.Keys...)
		}
	}
	packs := 0
	var written []string // the stalled StateRef is named but not written yet
	for _, k := range inflight {
		if strings.HasPrefix(k, "vfs/pack/") {
			packs++
		}
		if ok, _ := p.blobs.Has(ctx, k); ok {
			written = append(written, k)
		}
	}
	if packs == 0 {
		t.Fatalf("the upload in flight names no packs in its custody: %v", inflight)
	}
	gc := collector(t, p, d)
	var swept int
	for run := range 3 {
		st, err := gc.CollectGarbage(ctx, sandbox.GCOptions{Grace: time.Nanosecond})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if st.Held != "" {
			t.Fatalf("run %d held the whole sweep: %s", run, st.Held)
		}
		swept += st.Swept
	}
	if swept == 0 {
		t.Fatal("the collector swept nothing: the deleted sandbox's objects should go while the upload is in flight")
	}
	for _, k := range written {
		if ok, err := p.blobs.Has(ctx, k); err != nil || !ok {
			t.Fatalf("custody key %s of the upload in flight is gone (%v)", k, err)
		}
	}
	blobs.resume()
	if err := <-done; err != nil {
		t.Fatalf("the commit in flight: %v", err)
	}
	// The fork reads what it had not touched, from the generation only
	// its node's load custody kept; the source reads its new head cold.
	if out := exec(fork.ID, "wc -c < /r; cat /s", api.DurabilityMemory); out != "300000\nsnap\n" {
		t.Fatalf("fork after GC: %q", out)
	}
	if _, err := svc.Hibernate(ctx, keep.ID); err != nil {
		t.Fatal(err)
	}
	if out := exec(keep.ID, "wc -c < /inflight; cat /s", api.DurabilityMemory); out != "400000\nafter\n" {
		t.Fatalf("source after GC: %q", out)
	}
	if _, err := svc.Hibernate(ctx, fork.ID); err != nil {
		t.Fatal(err)
	}
	if out := exec(fork.ID, "wc -c < /r", api.DurabilityMemory); out != "300000\n" {
		t.Fatalf("fork resumed after GC: %q", out)
	}
	verifyHeads(t, p, blobs)
	fmt.Fprintf(testWriter{t}, "collector swept %d objects; the in-flight upload named %d keys (%d packs), all kept\n", swept, len(inflight), packs)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// failingPublish is the real metadata store whose Publish fails while
// fail is set (the database unreachable at the last step of a commit).
type failingPublish struct {
	*boltmeta.DB
	fail atomic.Bool
}

func (f *failingPublish) Publish(ctx context.Context, c sandbox.Commit) (sandbox.Generation, error) {
	if f.fail.Load() {
		return sandbox.Generation{}, errors.New("connection to the metadata store lost")
	}
	return f.DB.Publish(ctx, c)
}

// TestGCLoadCustodyKeepsReusedPacks: a commit whose packs were written but
// whose publish failed leaves them referenced by no head; the sandbox's
// next commit reuses them (dedup by lineage). Only the node's load
// custody (its delta's last generation) keeps a collector elsewhere from
// deleting them in between; afterwards the data reads back cold.
func TestGCLoadCustodyKeepsReusedPacks(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	meta := &failingPublish{DB: p.meta}
	l, err := wlog.Open(d+"/wlog", wlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: p.blobs, Deltas: sandbox.VFSDeltas(p.blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: meta, TickInterval: 20 * time.Millisecond,
		Durable: &sandbox.Durable{Node: "node-a", Log: l, Commit: committer.Options{MaxDelay: time.Hour}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Retention: &api.Retention{KeepLast: 1, KeepFor: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo a > /a", Durability: api.DurabilityCommitted}); err != nil || res.Exit != 0 {
		t.Fatalf("first commit: %+v, %v", res, err)
	}
	packs := func() map[string]bool {
		out := map[string]bool{}
		p.blobs.List(ctx, "vfs/pack/", func(k string, _ int64) error { out[k] = true; return nil })
		return out
	}
	before := packs()
	meta.fail.Store(true)
	if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "head -c 300000 /dev/urandom > /b", Durability: api.DurabilityCommitted}); err == nil {
		t.Fatal("a commit whose publish fails was acknowledged")
	}
	written := packs()
	fresh := map[string]bool{} // the packs of the commit that did not publish
	for k := range written {
		if !before[k] {
			fresh[k] = true
		}
	}
	if len(fresh) == 0 {
		t.Fatal("the failed commit wrote no pack")
	}
	// The load custody names the delta's last generation within a second
	// of an exec.
	execOut(t, svc, sb.ID, api.ExecRequest{Script: "true", Durability: api.DurabilityMemory})
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, _ := p.meta.ListCustody(ctx)
		if slices.ContainsFunc(cs, func(c sandbox.CustodyRecord) bool {
			return strings.HasPrefix(c.Upload, "load/node-a/") && slices.ContainsFunc(c.Keys, func(k string) bool { return fresh[k] })
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no load custody naming the generation that did not publish: %+v", cs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	gc := collector(t, p, d)
	for run := range 2 {
		if _, err := gc.CollectGarbage(ctx, sandbox.GCOptions{Grace: time.Nanosecond}); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	for k := range written {
		if ok, _ := p.blobs.Has(ctx, k); !ok {
			t.Fatalf("pack %s (written by the commit that did not publish, reused by the next) was collected", k)
		}
	}
	meta.fail.Store(false)
	if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo c > /c", Durability: api.DurabilityCommitted}); err != nil || res.Exit != 0 {
		t.Fatalf("the commit after: %+v, %v", res, err)
	}
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if out, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "wc -c < /b; cat /a /c"}); err != nil || out != "300000\na\nc\n" {
		t.Fatalf("after GC and a cold resume: %q, %v", out, err)
	}
}
