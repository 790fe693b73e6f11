package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/meta/postgres"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/wlog"
)

// durableManager is a Manager with a write log in dir/wlog-NODE over p.
// delay is the committer's time threshold (long: only explicit commits).
func durableManager(t testing.TB, p parts, dir, nodeID string, delay time.Duration) (*sandbox.Manager, *wlog.Log) {
	t.Helper()
	return durableManagerOn(t, p, p.meta, dir, nodeID, delay)
}

// durableManagerOn is durableManager with the metadata in meta.
func durableManagerOn(t testing.TB, p parts, meta sandbox.Meta, dir, nodeID string, delay time.Duration) (*sandbox.Manager, *wlog.Log) {
	t.Helper()
	l, err := wlog.Open(dir+"/wlog-"+nodeID, wlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs:        p.blobs,
		Deltas:       sandbox.VFSDeltas(p.blobs),
		Images:       sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()),
		Meta:         meta,
		TickInterval: 20 * time.Millisecond,
		Durable: &sandbox.Durable{Node: nodeID, Log: l,
			Commit: committer.Options{MaxDelay: delay}},
	})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	return m, l
}

func execOut(t testing.TB, svc api.Service, id string, req api.ExecRequest) (string, api.ExecResult, error) {
	t.Helper()
	var out bytes.Buffer
	res, err := svc.Exec(context.Background(), id, req, &out, nil)
	return out.String(), res, err
}

// TestDurable_AckLevels: each level is reported as reached, committed
// with the generation the head now holds.
func TestDurable_AckLevels(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m, l := durableManager(t, p, d, "node-a", time.Hour)
	defer l.Close()
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	own, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Durability: api.DurabilityCommitted})
	if err != nil || own.Durability != api.DurabilityCommitted {
		t.Fatalf("create with its own level: %+v, %v", own, err)
	}
	if _, res, err := execOut(t, svc, own.ID, api.ExecRequest{Script: "echo x > /x"}); err != nil || res.Durability != api.DurabilityCommitted || res.Generation == 0 {
		t.Fatalf("exec in a sandbox whose default is committed: %+v, %v", res, err)
	}
	for i, tc := range []struct {
		req, want string
		gen       bool
	}{
		{"", api.DurabilityLocal, false}, // the node's default
		{api.DurabilityMemory, api.DurabilityMemory, false},
		{api.DurabilityLocal, api.DurabilityLocal, false},
		{api.DurabilityCommitted, api.DurabilityCommitted, true},
	} {
		_, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo %d >> /log", i), Durability: tc.req})
		if err != nil || res.Durability != tc.want || (res.Generation != 0) != tc.gen {
			t.Fatalf("exec at %q: %+v, %v; want level %s (generation: %v)", tc.req, res, err, tc.want, tc.gen)
		}
		if tc.gen {
			h, err := p.meta.Head(ctx, sb.ID)
			if err != nil || h.Generation != res.Generation || h.Owner != "node-a" {
				t.Fatalf("head after a committed ack of generation %d: %+v, %v", res.Generation, h, err)
			}
		}
	}
	var ack api.Ack
	err = svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/f", Data: strings.NewReader("x"), Durability: api.DurabilityCommitted, Ack: &ack})
	if err != nil || ack.Durability != api.DurabilityCommitted || ack.Generation < 2 {
		t.Fatalf("committed write: %+v, %v", ack, err)
	}
	if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "true", Durability: "eventually"}); err == nil || !strings.Contains(err.Error(), "eventually") {
		t.Fatalf("a bad level was not refused by name: %v", err)
	}
	if _, err := svc.Create(ctx, api.CreateRequest{Durability: "disk"}); err == nil {
		t.Fatal("a bad sandbox default level was accepted")
	}
}

// TestDurable_LocalSurvivesCrash: writes acked at local are in the log
// only (no commit ran); a new Manager over the same stores and log (the
// first one abandoned without Close, as a crash leaves it) has them, and
// the session's shell state.
func TestDurable_LocalSurvivesCrash(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m1, l1 := durableManager(t, p, d, "node-a", time.Hour)
	svc := m1.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	// One committed generation, then local writes on top of it.
	if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "mkdir /d; echo 0 > /d/seq", Durability: api.DurabilityCommitted}); err != nil || res.Generation != 1 {
		t.Fatalf("first commit: %+v, %v", res, err)
	}
	const n = 20
	for i := 1; i <= n; i++ {
		if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo %d >> /d/seq; X=%d; cd /d", i, i), Durability: api.DurabilityLocal}); err != nil || res.Durability != api.DurabilityLocal {
			t.Fatalf("exec %d: %+v, %v", i, res, err)
		}
	}
	if err := svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/d/upload", Data: strings.NewReader("uploaded"), Durability: api.DurabilityLocal}); err != nil {
		t.Fatal(err)
	}
	// The crash: m1 is never closed; only its log's file lock goes.
	if err := l1.Close(); err != nil {
		t.Fatal(err)
	}
	m2, l2 := durableManager(t, p, d, "node-a", time.Hour)
	defer l2.Close()
	defer m2.Close(ctx)
	if st := m2.DurableStats(); st.RecoveredRecords != n+1 || st.AbandonedRecords != 0 {
		t.Fatalf("recovery: %+v; want %d records replayed, none abandoned", st, n+1)
	}
	out, _, err := execOut(t, m2.For("t"), sb.ID, api.ExecRequest{Script: "cat /d/seq | wc -l; cat /d/upload; echo; echo $X $PWD"})
	want := fmt.Sprintf("%d\nuploaded\n%d /d\n", n+1, n)
	if err != nil || out != want {
		t.Fatalf("after the crash: %q, %v; want %q", out, err, want)
	}
}

// TestDurable_Fencing: two nodes claim one sandbox over one metadata
// store. The later claim wins: exactly one publishes; the other's commit
// is fenced, it stops, and its later writes are refused with that error.
// Its log for the sandbox is abandoned (counted) when it restarts.
func TestDurable_Fencing(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		d := t.TempDir()
		p := openParts(t, d)
		defer p.close()
		fencing(t, p, d, p.meta, p.meta)
	})
	// Two connections to one real PostgreSQL database, as two nodes'
	// processes would have.
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.New(t)
		ctx := context.Background()
		open := func() *postgres.DB {
			db, err := postgres.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
		d := t.TempDir()
		p := openParts(t, d)
		defer p.close()
		fencing(t, p, d, open(), open())
	})
}

func fencing(t *testing.T, p parts, d string, metaA, metaB sandbox.DurableMeta) {
	ctx := context.Background()
	a, la := durableManagerOn(t, p, metaA, d, "node-a", time.Hour)
	sb, err := a.For("t").Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := execOut(t, a.For("t"), sb.ID, api.ExecRequest{Script: "echo a > /owner", Durability: api.DurabilityLocal}); err != nil {
		t.Fatal(err)
	}
	b, lb := durableManagerOn(t, p, metaB, d, "node-b", time.Hour)
	defer lb.Close()
	defer b.Close(ctx)
	// b resumes the sandbox from its head (generation 0: fresh), claiming it.
	if _, res, err := execOut(t, b.For("t"), sb.ID, api.ExecRequest{Script: "echo b > /owner", Durability: api.DurabilityCommitted}); err != nil || res.Generation != 1 {
		t.Fatalf("b's committed exec: %+v, %v", res, err)
	}
	_, _, err = execOut(t, a.For("t"), sb.ID, api.ExecRequest{Script: "echo a2 > /owner", Durability: api.DurabilityCommitted})
	if !errors.Is(err, sandbox.ErrFenced) {
		t.Fatalf("a's commit after b's claim: %v; want a fenced error", err)
	}
	t.Logf("a's refusal: %v", err)
	for _, lvl := range []string{api.DurabilityMemory, api.DurabilityLocal} {
		if _, _, err := execOut(t, a.For("t"), sb.ID, api.ExecRequest{Script: "echo a3 > /owner", Durability: lvl}); !errors.Is(err, sandbox.ErrFenced) {
			t.Fatalf("a's later write at %s: %v; want it refused as fenced", lvl, err)
		}
	}
	if err := a.For("t").WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/x", Data: strings.NewReader("x")}); !errors.Is(err, sandbox.ErrFenced) {
		t.Fatalf("a's later file write: %v; want it refused as fenced", err)
	}
	gens, err := metaA.Generations(ctx, sb.ID)
	if err != nil || len(gens) != 1 || gens[0].Epoch != 2 {
		t.Fatalf("generations: %+v, %v; want exactly b's (epoch 2)", gens, err)
	}
	if st := a.DurableStats(); st.Fenced != 1 {
		t.Fatalf("a's stats: %+v; want one fenced commit", st)
	}
	out, _, err := execOut(t, b.For("t"), sb.ID, api.ExecRequest{Script: "cat /owner"})
	if err != nil || out != "b\n" {
		t.Fatalf("b's view: %q, %v", out, err)
	}
	// a stops cleanly (the fenced sandbox is dropped, not an error) and
	// restarts: its logged writes of the sandbox cannot be published.
	if err := a.Close(ctx); err != nil {
		t.Fatalf("a's shutdown with a fenced sandbox: %v", err)
	}
	la.Close()
	a2, la2 := durableManagerOn(t, p, metaA, d, "node-a", time.Hour)
	defer la2.Close()
	defer a2.Close(ctx)
	if st := a2.DurableStats(); st.AbandonedRecords == 0 || st.RecoveredRecords != 0 {
		t.Fatalf("a's restart: %+v; want its records abandoned, none replayed", st)
	}
}

// TestDurable_BackgroundCommit: without any committed ack, the committer
// publishes on its time threshold and trims the log.
func TestDurable_BackgroundCommit(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m, l := durableManager(t, p, d, "node-a", 50*time.Millisecond)
	defer l.Close()
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo hi > /f", Durability: api.DurabilityLocal}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := p.meta.Head(ctx, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if h.Generation >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no background commit after 10 s: head %+v", h)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Hibernate commits and drops; resume reads the head.
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	out, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "cat /f"})
	if err != nil || out != "hi\n" {
		t.Fatalf("after hibernate: %q, %v", out, err)
	}
}

// TestDurable_BigWriteCommits: a write too big for the log is committed
// instead (and acked as committed); later small writes go to the log
// again and a crash keeps both.
func TestDurable_BigWriteCommits(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m1, l1 := durableManager(t, p, d, "node-a", time.Hour)
	svc := m1.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "head -c 40000000 /dev/urandom > /big; sha256sum /big > /big.sum", Durability: api.DurabilityLocal})
	if err != nil || res.Durability != api.DurabilityCommitted || res.Generation == 0 {
		t.Fatalf("40 MB write at local: %+v, %v; want it committed", res, err)
	}
	if st := m1.DurableStats(); st.Log.Bytes > 1<<20 {
		t.Fatalf("the big write went to the log anyway (%d bytes)", st.Log.Bytes)
	}
	if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo small > /small", Durability: api.DurabilityLocal}); err != nil || res.Durability != api.DurabilityLocal {
		t.Fatalf("small write after it: %+v, %v; want local", res, err)
	}
	l1.Close() // the crash
	m2, l2 := durableManager(t, p, d, "node-a", time.Hour)
	defer l2.Close()
	defer m2.Close(ctx)
	out, _, err := execOut(t, m2.For("t"), sb.ID, api.ExecRequest{Script: "sha256sum -c /big.sum && cat /small"})
	if err != nil || out != "/big: OK\nsmall\n" {
		t.Fatalf("after the crash: %q, %v", out, err)
	}
}

// TestDurable_IdleHibernateAddsNoGeneration: a sandbox resumed only to
// be read hibernates without publishing a new generation.
func TestDurable_IdleHibernateAddsNoGeneration(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m, l := durableManager(t, p, d, "node-a", time.Hour)
	defer l.Close()
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo a > /a; X=1", Durability: api.DurabilityCommitted}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	h1, _ := p.meta.Head(ctx, sb.ID)
	for range 3 {
		if out, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "cat /a"}); err != nil || out != "a\n" {
			t.Fatalf("read: %q, %v", out, err)
		}
		if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
			t.Fatal(err)
		}
	}
	h2, _ := p.meta.Head(ctx, sb.ID)
	if h2.Generation != h1.Generation {
		t.Fatalf("read-only resumes moved the head from generation %d to %d", h1.Generation, h2.Generation)
	}
	// A change does publish.
	if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo b > /a", Durability: api.DurabilityMemory}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if h3, _ := p.meta.Head(ctx, sb.ID); h3.Generation != h1.Generation+1 {
		t.Fatalf("a change before hibernate: head at %d, want %d", h3.Generation, h1.Generation+1)
	}
	if out, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "cat /a; echo $X"}); err != nil || out != "b\n1\n" {
		t.Fatalf("after: %q, %v", out, err)
	}
}

// TestDurable_LiveForkChild: a live fork's delta is its parent's in
// memory, which no generation holds, so the child's first durable write
// waits for a commit (acked as committed); after that, local again. A
// crash keeps both.
func TestDurable_LiveForkChild(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m1, l1 := durableManager(t, p, d, "node-a", time.Hour)
	svc := m1.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo parent > /p", Durability: api.DurabilityMemory}); err != nil {
		t.Fatal(err)
	}
	kids, err := svc.Fork(ctx, sb.ID, 1)
	if err != nil || len(kids) != 1 {
		t.Fatalf("fork: %v, %v", kids, err)
	}
	kid := kids[0].ID
	_, res, err := execOut(t, svc, kid, api.ExecRequest{Script: "echo 1 > /k", Durability: api.DurabilityLocal})
	if err != nil || res.Durability != api.DurabilityCommitted || res.Generation != 1 {
		t.Fatalf("the child's first write: %+v, %v; want committed generation 1", res, err)
	}
	_, res, err = execOut(t, svc, kid, api.ExecRequest{Script: "echo 2 >> /k", Durability: api.DurabilityLocal})
	if err != nil || res.Durability != api.DurabilityLocal {
		t.Fatalf("the child's second write: %+v, %v; want local", res, err)
	}
	l1.Close() // the crash
	m2, l2 := durableManager(t, p, d, "node-a", time.Hour)
	defer l2.Close()
	defer m2.Close(ctx)
	out, _, err := execOut(t, m2.For("t"), kid, api.ExecRequest{Script: "cat /p /k"})
	if err != nil || out != "parent\n1\n2\n" {
		t.Fatalf("the child after the crash: %q, %v", out, err)
	}
}

// TestDurable_DeleteDuringCommits: deleting a sandbox while its commits
// run leaves no record behind (a restart does not bring it back).
func TestDurable_DeleteDuringCommits(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m, l := durableManager(t, p, d, "node-a", 5*time.Millisecond)
	defer l.Close()
	svc := m.For("t")
	ctx := context.Background()
	for i := range 10 {
		sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
		if err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo %d > /f%d", j, j)}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Duration(i) * time.Millisecond)
		if err := svc.Delete(ctx, sb.ID); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := p.meta.Sandboxes(ctx)
	if err != nil || len(recs) != 0 {
		t.Fatalf("records after deleting every sandbox: %d, %v", len(recs), err)
	}
}
