package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/fleet"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/meta/postgres"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/store/dir"
)

func TestMain(m *testing.M) { pgtest.Main(m, postgres.Migrate) }

func openDB(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func record(t *testing.T, db *postgres.DB, id string) {
	t.Helper()
	if err := db.PutSandbox(context.Background(), sandbox.Record{ID: id, Tenant: "t", State: api.StateStandby, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// TestTakeOver_ExactlyOneWins: two processes (two pools) race to take the
// same unowned sandbox over, round after round: each round exactly one
// wins at epoch+1 and the other gets ErrFenced.
func TestTakeOver_ExactlyOneWins(t *testing.T) {
	url := pgtest.New(t)
	dbs := []*postgres.DB{openDB(t, url), openDB(t, url)}
	ctx := context.Background()
	record(t, dbs[0], "sb-race")
	for round := range 30 {
		h, err := dbs[0].Head(ctx, "sb-race")
		if err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, db := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// Neither node has joined: no live lease, both may try.
				e, err := db.TakeOver(ctx, "sb-race", []string{"x", "y"}[i], h.Epoch)
				switch {
				case err == nil:
					if e != h.Epoch+1 {
						t.Errorf("round %d: won at epoch %d, want %d", round, e, h.Epoch+1)
					}
					wins.Add(1)
				case !errors.Is(err, sandbox.ErrFenced):
					t.Errorf("round %d: loser got %v, want ErrFenced", round, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners", round, wins.Load())
		}
	}
}

// TestTakeOver_LiveOwnerKeeps: a sandbox whose owner holds a live lease is
// not taken over; once the lease expires (the database's clock) it is.
func TestTakeOver_LiveOwnerKeeps(t *testing.T) {
	db := openDB(t, pgtest.New(t))
	ctx := context.Background()
	record(t, db, "sb-1")
	if _, err := db.Join(ctx, sandbox.NodeRecord{ID: "a", BootID: "b1", Address: "http://a"}, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	e, err := db.Claim(ctx, "sb-1", "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TakeOver(ctx, "sb-1", "b", e); !errors.Is(err, sandbox.ErrFenced) || !strings.Contains(err.Error(), "still holds a lease") {
		t.Fatalf("take over from a live owner: %v", err)
	}
	o, err := db.Owner(ctx, "sb-1")
	if err != nil || o.Node != "a" || !o.Live || o.Address != "http://a" || o.Epoch != e {
		t.Fatalf("owner: %+v %v", o, err)
	}
	time.Sleep(400 * time.Millisecond)
	if o, _ = db.Owner(ctx, "sb-1"); o.Live {
		t.Fatalf("owner still live after its lease: %+v", o)
	}
	if e2, err := db.TakeOver(ctx, "sb-1", "b", e); err != nil || e2 != e+1 {
		t.Fatalf("take over after the lease expired: %d %v", e2, err)
	}
	if _, err := db.TakeOver(ctx, "sb-1", "c", e); !errors.Is(err, sandbox.ErrFenced) {
		t.Fatalf("take over at a stale epoch: %v", err)
	}
	if _, err := db.Owner(ctx, "nope"); !errdefs.IsNotFound(err) {
		t.Fatalf("owner of an unknown sandbox: %v", err)
	}
}

// TestStatus_Members: a node's status is kept only by the boot holding its
// lease, and Members joins lease, status and owned count.
func TestStatus_Members(t *testing.T) {
	db := openDB(t, pgtest.New(t))
	ctx := context.Background()
	if _, err := db.Join(ctx, sandbox.NodeRecord{ID: "a", BootID: "b1", Address: "http://a"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := db.SetStatus(ctx, fleet.Status{Node: "a", Boot: "b1", Capacity: 10, Load: 3, Labels: map[string]string{"zone": "z1"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetStatus(ctx, fleet.Status{Node: "a", Boot: "old", Capacity: 10}); !errors.Is(err, sandbox.ErrFenced) {
		t.Fatalf("status from a replaced boot: %v", err)
	}
	if err := db.SetStatus(ctx, fleet.Status{Node: "ghost", Boot: "b", Capacity: 1}); !errdefs.IsNotFound(err) {
		t.Fatalf("status of a node that never joined: %v", err)
	}
	record(t, db, "sb-1")
	if _, err := db.Claim(ctx, "sb-1", "a", 0); err != nil {
		t.Fatal(err)
	}
	ms, err := db.Members(ctx, true)
	if err != nil || len(ms) != 1 {
		t.Fatalf("members: %+v %v", ms, err)
	}
	m := ms[0]
	if !m.Live || m.Capacity != 10 || m.Load != 3 || m.Labels["zone"] != "z1" || m.Owned != 1 || m.Address != "http://a" {
		t.Fatalf("member: %+v", m)
	}
}

// TestWatchOwners: a claim and a delete reach a listener.
func TestWatchOwners(t *testing.T) {
	db := openDB(t, pgtest.New(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	record(t, db, "sb-w")
	got := make(chan string, 8)
	ready := make(chan struct{})
	go db.WatchOwners(ctx, func() { close(ready) }, func(id string) { got <- id })
	<-ready
	if _, err := db.Claim(ctx, "sb-w", "a", 0); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSandbox(ctx, "sb-w"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case id := <-got:
			if id != "sb-w" {
				t.Fatalf("notified %q", id)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no notification of an owner change")
		}
	}
}

// flaky fails RenewLease while cut is set: a node cut off from the
// database (fault injection around the real store).
type flaky struct {
	*postgres.DB
	cut atomic.Bool
}

func (f *flaky) RenewLease(ctx context.Context, id, boot string, ttl time.Duration) (time.Time, error) {
	if f.cut.Load() {
		return time.Time{}, errors.New("injected: database unreachable")
	}
	return f.DB.RenewLease(ctx, id, boot, ttl)
}

type member struct {
	n  *node.Node
	fl *fleet.Node
}

func startMember(t *testing.T, url, blobs, id string, st fleet.Store, lease time.Duration) member {
	t.Helper()
	ctx := context.Background()
	bs, err := dir.Open(blobs, dir.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	d := t.TempDir()
	if err := writeNodeID(d, id); err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(ctx, node.Options{Dir: d, Meta: url, Blobs: bs, CommitDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := fleet.Start(ctx, fleet.Config{Store: st, Manager: n.Manager, ID: id, Address: "http://" + id + ".invalid", Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fl.Stop()
		n.Close(context.Background())
		bs.Close()
	})
	return member{n, fl}
}

// TestNode_GateTakeoverRevalidate: a node that cannot renew closes its
// write gate before its lease can expire (its execs fail, retryable);
// another node takes its sandbox over; once the first renews again it
// drops the sandbox, counts the write it had acked at local as lost, and
// routes to the new owner.
func TestNode_GateTakeoverRevalidate(t *testing.T) {
	const lease = time.Second
	url, blobs := pgtest.New(t), t.TempDir()
	ctx := context.Background()
	fa := &flaky{DB: openDB(t, url)}
	a := startMember(t, url, blobs, "a", fa, lease)
	b := startMember(t, url, blobs, "b", openDB(t, url), lease)

	big := map[string]string{}
	for i := range 65 {
		big[fmt.Sprint("k", i)] = "v"
	}
	for _, sel := range []map[string]string{big, {"": "x"}, {strings.Repeat("k", 64): "x"}} {
		if _, err := a.fl.Place(ctx, sel); !errors.Is(err, api.ErrUnprocessable) {
			t.Fatalf("place with a bad selector (%d labels): %v, want unprocessable", len(sel), err)
		}
	}
	if rt, err := a.fl.Place(ctx, map[string]string{"zone": "none"}); !errdefs.IsUnavailable(err) {
		t.Fatalf("place with a selector no node matches: %+v %v", rt, err)
	}

	svcA, svcB := a.n.Manager.For("t"), b.n.Manager.For("t")
	sb, err := svcA.Create(ctx, api.CreateRequest{})
	if err != nil || sb.Node != "a" {
		t.Fatalf("create on a: %+v %v", sb, err)
	}
	exec := func(svc api.Service, script, level string) (string, error) {
		var out strings.Builder
		res, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: script, Durability: level}, &out, nil)
		if err == nil && res.Exit != 0 {
			t.Fatalf("%q: exit %d", script, res.Exit)
		}
		return out.String(), err
	}
	if _, err := exec(svcA, "echo one > /c", api.DurabilityCommitted); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(svcA, "echo two > /l", api.DurabilityLocal); err != nil {
		t.Fatal(err)
	}
	if rt, err := b.fl.Route(ctx, sb.ID, fleet.Query{Fresh: true}); err != nil || rt.Local || rt.Node != "a" {
		t.Fatalf("route on b while a is live: %+v %v", rt, err)
	}

	// A path that bypasses routing (here: b's Manager directly) cannot
	// take a sandbox from its live owner.
	if err := b.n.Manager.Prepare(ctx, sb.ID, "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(svcB, "true", api.DurabilityMemory); !errors.Is(err, sandbox.ErrFenced) || !strings.Contains(err.Error(), "still holds a lease") {
		t.Fatalf("resume on b while a holds its lease: %v, want fenced", err)
	}
	if o, err := a.n.Meta.(fleet.Store).Owner(ctx, sb.ID); err != nil || o.Node != "a" || o.Epoch != sb.Epoch {
		t.Fatalf("owner after b's refused claim: %+v %v", o, err)
	}

	fa.cut.Store(true)
	cutAt := time.Now()
	for a.fl.AckAllowed() == nil {
		if time.Since(cutAt) > lease {
			t.Fatal("the write gate stayed open a whole lease without a renewal")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := exec(svcA, "echo three > /l", api.DurabilityLocal); !errdefs.IsUnavailable(err) {
		t.Fatalf("exec on a node with its gate closed: %v, want unavailable", err)
	}
	// The lease runs out on the database's clock: b takes over.
	var rt fleet.Route
	for {
		rt, err = b.fl.Route(ctx, sb.ID, fleet.Query{Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if rt.Local {
			break
		}
		if time.Since(cutAt) > 3*lease {
			t.Fatalf("b did not take over within %v: %+v", 3*lease, rt)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !rt.TookOver || rt.Epoch != sb.Epoch+1 {
		t.Fatalf("takeover route: %+v, want epoch %d", rt, sb.Epoch+1)
	}
	if out, err := exec(svcB, "cat /c; cat /l 2>/dev/null; true", api.DurabilityLocal); err != nil || out != "one\n" {
		t.Fatalf("on b after takeover: %q %v (want only the committed write)", out, err)
	}

	fa.cut.Store(false)
	for a.fl.AckAllowed() != nil {
		if time.Since(cutAt) > 10*lease {
			t.Fatal("a's gate did not reopen after renewing")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := a.n.Manager.FleetStats()
	if st.Dropped != 1 || st.LostRecords < 1 {
		t.Fatalf("a after renewing: %+v, want 1 dropped sandbox and its local write lost", st)
	}
	if rt, err := a.fl.Route(ctx, sb.ID, fleet.Query{}); err != nil || rt.Local || rt.Node != "b" {
		t.Fatalf("route on a after: %+v %v, want node b", rt, err)
	}
	if _, err := a.fl.Route(ctx, sb.ID, fleet.Query{Forwarded: true, Epoch: sb.Epoch}); !errors.Is(err, fleet.ErrMisdirected) {
		t.Fatalf("a forwarded request a no longer owns: %v, want misdirected", err)
	}
}

func writeNodeID(dir, id string) error {
	return os.WriteFile(filepath.Join(dir, "node-id"), []byte(id+"\n"), 0o600)
}
