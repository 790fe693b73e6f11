package metatest

import (
	"reflect"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/sandbox"
)

// short is the ttl of leases the tests let run out; wait sleeps past it.
// The store's clock may be another process's (PostgreSQL), so the tests
// only compare the store's times with each other, never with time.Now
// beyond a generous leeway.
const short = 150 * time.Millisecond

func wait() { time.Sleep(2 * short) }

func testCustody(t *testing.T, f Fixture) {
	m := f.Meta
	c := sandbox.CustodyRecord{Upload: "up-1", Node: "n", Sandbox: "sb", Epoch: 3,
		Keys: []string{"vfs/pack/aa", "vfs/pack/bb"}}
	exp, err := m.AddCustody(ctx, c, time.Hour)
	must(t, err, "AddCustody")
	if d := time.Until(exp); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("expiry %v is not an hour from now", exp)
	}
	_, err = m.AddCustody(ctx, c, time.Hour)
	wantIs(t, err, errdefs.ErrAlreadyExists, "AddCustody of an existing upload")
	// Custody needs no sandbox record, and may hold no keys yet.
	_, err = m.AddCustody(ctx, sandbox.CustodyRecord{Upload: "up-0", Node: "n", Sandbox: "gone"}, time.Hour)
	must(t, err, "AddCustody without keys")
	list, err := m.ListCustody(ctx)
	must(t, err, "ListCustody")
	want := c
	want.Expires = exp
	if len(list) != 2 || list[0].Upload != "up-0" || len(list[0].Keys) != 0 || !reflect.DeepEqual(list[1], want) {
		t.Fatalf("ListCustody = %+v, want [up-0, %+v]", list, want)
	}
	// An upload names each object before it writes it.
	must(t, m.AddCustodyKeys(ctx, "up-0", []string{"sessions/cc"}), "AddCustodyKeys")
	must(t, m.AddCustodyKeys(ctx, "up-0", []string{"vfs/pack/dd", "staterefs/ee"}), "AddCustodyKeys")
	list, _ = m.ListCustody(ctx)
	if len(list) != 2 || !reflect.DeepEqual(list[0].Keys, []string{"sessions/cc", "vfs/pack/dd", "staterefs/ee"}) {
		t.Fatalf("after AddCustodyKeys: %+v", list)
	}
	wantIs(t, m.AddCustodyKeys(ctx, "up-none", []string{"k"}), errdefs.ErrNotFound, "AddCustodyKeys without custody")
	exp2, err := m.RenewCustody(ctx, "up-1", 2*time.Hour)
	must(t, err, "RenewCustody")
	if !exp2.After(exp) {
		t.Fatalf("renewal moved expiry from %v to %v", exp, exp2)
	}
	list, _ = m.ListCustody(ctx)
	if len(list) != 2 || !list[1].Expires.Equal(exp2) {
		t.Fatalf("after renewal: %+v", list)
	}
	must(t, m.ReleaseCustody(ctx, "up-1"), "ReleaseCustody")
	list, _ = m.ListCustody(ctx)
	if len(list) != 1 || list[0].Upload != "up-0" {
		t.Fatalf("after release: %+v", list)
	}
	_, err = m.RenewCustody(ctx, "up-1", time.Hour)
	wantIs(t, err, errdefs.ErrNotFound, "RenewCustody after release")
}

func testCustodyExpiry(t *testing.T, f Fixture) {
	m := f.Meta
	_, err := m.AddCustody(ctx, sandbox.CustodyRecord{Upload: "long", Node: "n", Keys: []string{"k1"}}, time.Hour)
	must(t, err, "AddCustody long")
	_, err = m.AddCustody(ctx, sandbox.CustodyRecord{Upload: "short", Node: "n", Keys: []string{"k2"}}, short)
	must(t, err, "AddCustody short")
	wait()
	list, err := m.ListCustody(ctx)
	must(t, err, "ListCustody")
	if len(list) != 1 || list[0].Upload != "long" {
		t.Fatalf("ListCustody after expiry = %+v, want only long", list)
	}
	_, err = m.RenewCustody(ctx, "short", time.Hour)
	wantIs(t, err, sandbox.ErrCustodyExpired, "RenewCustody after expiry")
	wantIs(t, m.AddCustodyKeys(ctx, "short", []string{"k3"}), sandbox.ErrCustodyExpired, "AddCustodyKeys after expiry")
	wantIs(t, err, errdefs.ErrFailedPrecondition, "RenewCustody after expiry")
	n, err := m.ExpireCustody(ctx)
	must(t, err, "ExpireCustody")
	if n != 1 {
		t.Fatalf("ExpireCustody removed %d, want 1", n)
	}
	_, err = m.RenewCustody(ctx, "short", time.Hour)
	wantIs(t, err, errdefs.ErrNotFound, "RenewCustody after ExpireCustody")
	if n, _ := m.ExpireCustody(ctx); n != 0 {
		t.Fatalf("second ExpireCustody removed %d", n)
	}
	_, err = m.RenewCustody(ctx, "long", time.Hour)
	must(t, err, "RenewCustody of the unexpired one")
}

func testNodes(t *testing.T, f Fixture) {
	m := f.Meta
	exp, err := m.Join(ctx, sandbox.NodeRecord{ID: "n1", BootID: "boot-1", Address: "10.0.0.1:7711"}, time.Minute)
	must(t, err, "Join")
	_, err = m.Join(ctx, sandbox.NodeRecord{ID: "n0", BootID: "b", Address: "10.0.0.0:7711"}, time.Minute)
	must(t, err, "Join n0")
	nodes, err := m.ListNodes(ctx)
	must(t, err, "ListNodes")
	want := sandbox.NodeRecord{ID: "n1", BootID: "boot-1", Address: "10.0.0.1:7711", Expires: exp, Live: true}
	if len(nodes) != 2 || nodes[0].ID != "n0" || nodes[1] != want {
		t.Fatalf("ListNodes = %+v, want [n0, %+v]", nodes, want)
	}
	exp2, err := m.RenewLease(ctx, "n1", "boot-1", 2*time.Minute)
	must(t, err, "RenewLease")
	if !exp2.After(exp) {
		t.Fatalf("renewal moved the lease from %v to %v", exp, exp2)
	}
	// The node restarts (a new boot) and takes its record over at once;
	// the old process's renewals are fenced.
	_, err = m.Join(ctx, sandbox.NodeRecord{ID: "n1", BootID: "boot-2", Address: "10.0.0.1:7712"}, time.Minute)
	must(t, err, "Join of a new boot")
	_, err = m.RenewLease(ctx, "n1", "boot-1", time.Minute)
	wantFenced(t, err, "RenewLease by the replaced boot")
	wantFenced(t, m.Leave(ctx, "n1", "boot-1"), "Leave by the replaced boot")
	nodes, _ = m.ListNodes(ctx)
	if len(nodes) != 2 || nodes[1].BootID != "boot-2" || nodes[1].Address != "10.0.0.1:7712" {
		t.Fatalf("after the new boot joined: %+v", nodes)
	}
	must(t, m.Leave(ctx, "n1", "boot-2"), "Leave")
	nodes, _ = m.ListNodes(ctx)
	if len(nodes) != 1 || nodes[0].ID != "n0" {
		t.Fatalf("after Leave: %+v", nodes)
	}
}

func testNodeLeaseExpiry(t *testing.T, f Fixture) {
	m := f.Meta
	_, err := m.Join(ctx, sandbox.NodeRecord{ID: "n", BootID: "b"}, short)
	must(t, err, "Join")
	wait()
	nodes, err := m.ListNodes(ctx)
	must(t, err, "ListNodes")
	if len(nodes) != 1 || nodes[0].Live {
		t.Fatalf("after the lease ran out: %+v, want one node, not live", nodes)
	}
	_, err = m.RenewLease(ctx, "n", "b", time.Minute)
	must(t, err, "RenewLease of an expired lease by its boot")
	nodes, _ = m.ListNodes(ctx)
	if len(nodes) != 1 || !nodes[0].Live {
		t.Fatalf("after renewal: %+v, want live", nodes)
	}
}

// testReopen: everything a store holds survives closing and reopening it.
func testReopen(t *testing.T, f Fixture) {
	if f.Reopen == nil {
		t.Skip("this store keeps nothing across a reopen (in memory)")
	}
	m := f.Meta
	r := fullRecord("sb")
	must(t, m.PutSandbox(ctx, r), "PutSandbox")
	s := fullSnapshot("t", "s")
	must(t, m.CreateSnapshot(ctx, s), "CreateSnapshot")
	_, err := m.Claim(ctx, "sb", "a", 0)
	must(t, err, "Claim")
	g, err := m.Publish(ctx, commit("sb", "a", 1, 0, "c1"))
	must(t, err, "Publish")
	cexp, err := m.AddCustody(ctx, sandbox.CustodyRecord{Upload: "u", Node: "a", Sandbox: "sb", Epoch: 1, Keys: []string{"k"}}, time.Hour)
	must(t, err, "AddCustody")
	nexp, err := m.Join(ctx, sandbox.NodeRecord{ID: "a", BootID: "b", Address: "x"}, time.Hour)
	must(t, err, "Join")

	m = f.Reopen(t)
	recs, err := m.Sandboxes(ctx)
	if err != nil || len(recs) != 1 || !reflect.DeepEqual(recs[0], r) {
		t.Fatalf("Sandboxes after reopen: %+v, %v", recs, err)
	}
	snaps, err := m.Snapshots(ctx)
	if err != nil || len(snaps) != 1 || !reflect.DeepEqual(snaps[0], s) {
		t.Fatalf("Snapshots after reopen: %+v, %v", snaps, err)
	}
	wantHead(t, m, sandbox.Head{Sandbox: "sb", Owner: "a", Epoch: 1, Generation: 1, Ref: "ref-c1", CommitID: "c1"})
	gens, err := m.Generations(ctx, "sb")
	if err != nil || len(gens) != 1 || gens[0] != g {
		t.Fatalf("Generations after reopen: %+v, %v", gens, err)
	}
	cs, err := m.ListCustody(ctx)
	if err != nil || len(cs) != 1 || !cs[0].Expires.Equal(cexp) || cs[0].Keys[0] != "k" {
		t.Fatalf("custody after reopen: %+v, %v", cs, err)
	}
	ns, err := m.ListNodes(ctx)
	if err != nil || len(ns) != 1 || !ns[0].Expires.Equal(nexp) || !ns[0].Live {
		t.Fatalf("nodes after reopen: %+v, %v", ns, err)
	}
	// The committed head still fences after the reopen.
	_, err = m.Publish(ctx, commit("sb", "a", 1, 0, "c2"))
	wantFenced(t, err, "stale Publish after reopen")
}
