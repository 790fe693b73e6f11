// Package metatest is the conformance suite every sandbox.DurableMeta must
// pass (memMeta, boltmeta, meta/postgres). A backend's test calls
//
//	metatest.RunSuite(t, func(t *testing.T) metatest.Fixture { ... })
//
// and the constructor returns an empty store, arranging its cleanup with
// t.Cleanup.
package metatest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// Fixture is one empty store and, where the backend has them, ways to
// reach the same data again.
type Fixture struct {
	Meta sandbox.DurableMeta
	// Peer opens a second handle on the same data that may be used at the
	// same time, as a second process would (PostgreSQL: another
	// connection pool). Nil: the races run on Meta alone.
	Peer func(t *testing.T) sandbox.DurableMeta
	// Reopen closes Meta and opens the same data again (nil: the store
	// keeps nothing across a reopen).
	Reopen func(t *testing.T) sandbox.DurableMeta
}

// RunSuite runs every conformance test against stores made by newStore.
func RunSuite(t *testing.T, newStore func(t *testing.T) Fixture) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Fixture)
	}{
		{"Empty", testEmpty},
		{"RecordRoundTrip", testRecordRoundTrip},
		{"RecordReplace", testRecordReplace},
		{"SnapshotRoundTrip", testSnapshotRoundTrip},
		{"SnapshotUnique", testSnapshotUnique},
		{"Ordering", testOrdering},
		{"Missing", testMissing},
		{"BadInput", testBadInput},
		{"ClaimAndPublish", testClaimAndPublish},
		{"Takeover", testTakeover},
		{"Release", testRelease},
		{"CommitIDUnique", testCommitIDUnique},
		{"GenerationRoundTrip", testGenerationRoundTrip},
		{"GenerationRetention", testGenerationRetention},
		{"DeleteSandboxDropsHead", testDeleteSandboxDropsHead},
		{"PublishRace", testPublishRace},
		{"ClaimRace", testClaimRace},
		{"TakeoverRace", testTakeoverRace},
		{"SnapshotRace", testSnapshotRace},
		{"Custody", testCustody},
		{"CustodyExpiry", testCustodyExpiry},
		{"Nodes", testNodes},
		{"NodeLeaseExpiry", testNodeLeaseExpiry},
		{"Reopen", testReopen},
		{"VolumeRoundTrip", testVolumeRoundTrip},
		{"VolumeUpdateDelete", testVolumeUpdateDelete},
		{"VolumeLeaseRace", testVolumeLeaseRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Each test has its own store, so they overlap their waits.
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

var ctx = context.Background()

func must(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

func wantIs(t testing.TB, err, target error, what string, args ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got %v, want an error matching %v", fmt.Sprintf(what, args...), err, target)
	}
}

func wantFenced(t testing.TB, err error, what string, args ...any) *sandbox.FencedError {
	t.Helper()
	wantIs(t, err, sandbox.ErrFenced, what, args...)
	wantIs(t, err, errdefs.ErrFailedPrecondition, what, args...)
	var fe *sandbox.FencedError
	if !errors.As(err, &fe) {
		t.Fatalf("%s: %v is not a *sandbox.FencedError", fmt.Sprintf(what, args...), err)
	}
	return fe
}

func record(id string) sandbox.Record {
	return sandbox.Record{ID: id, Tenant: "t", State: "running", CreatedAt: sandbox.StoreTime(time.Now())}
}

func putBox(t testing.TB, m sandbox.Meta, id string) {
	t.Helper()
	must(t, m.PutSandbox(ctx, record(id)), "PutSandbox %s", id)
}

// claimed makes a record for id and claims it for node; it returns the epoch.
func claimed(t testing.TB, m sandbox.DurableMeta, id, node string) uint64 {
	t.Helper()
	putBox(t, m, id)
	e, err := m.Claim(ctx, id, node, 0)
	must(t, err, "Claim %s", id)
	if e != 1 {
		t.Fatalf("first Claim of %s: epoch %d, want 1", id, e)
	}
	return e
}

func commit(id, node string, epoch, base uint64, cid string) sandbox.Commit {
	return sandbox.Commit{Sandbox: id, Node: node, Epoch: epoch, Base: base,
		Ref: "ref-" + cid, Parent: fmt.Sprintf("parent-of-%s", cid), CommitID: cid}
}

func wantHead(t testing.TB, m sandbox.DurableMeta, want sandbox.Head) {
	t.Helper()
	h, err := m.Head(ctx, want.Sandbox)
	must(t, err, "Head %s", want.Sandbox)
	if h != want {
		t.Fatalf("Head %s = %+v, want %+v", want.Sandbox, h, want)
	}
}

func testEmpty(t *testing.T, f Fixture) {
	m := f.Meta
	recs, err := m.Sandboxes(ctx)
	must(t, err, "Sandboxes")
	snaps, err := m.Snapshots(ctx)
	must(t, err, "Snapshots")
	heads, err := m.ListHeads(ctx)
	must(t, err, "ListHeads")
	cust, err := m.ListCustody(ctx)
	must(t, err, "ListCustody")
	nodes, err := m.ListNodes(ctx)
	must(t, err, "ListNodes")
	if len(recs)+len(snaps)+len(heads)+len(cust)+len(nodes) != 0 {
		t.Fatalf("fresh store holds %d records, %d snapshots, %d heads, %d custody, %d nodes",
			len(recs), len(snaps), len(heads), len(cust), len(nodes))
	}
}

// fullRecord sets every field of a Record, so a store that drops one fails.
func fullRecord(id string) sandbox.Record {
	native := true
	r := sandbox.Record{
		ID: id, Tenant: "tenant-é", ImageDigest: "sha256:" + id, StateRef: "vfs2:abc/" + id,
		State: "standby", Parent: "sb-parent", Snapshot: "snap-1",
		CreatedAt: time.Date(2026, 12, 2, 1, 2, 3, 456789000, time.UTC),
	}
	r.Config.Image = "alpine"
	r.Config.Snapshot = "snap-1"
	r.Config.Env = map[string]string{"A": "1", "B": "two words"}
	r.Config.Cwd = "/home/user"
	r.Config.User = "user"
	r.Config.Hostname = "box"
	r.Config.Labels = map[string]string{"team": "x"}
	r.Config.Limits.Timeout = 1234
	r.Config.Limits.MaxOutputBytes = 1 << 20
	r.Config.Limits.MaxMemoryBytes = 1 << 28
	r.Config.Limits.DiskBytes = 1 << 30
	r.Config.Limits.DiskInodes = 99
	r.Config.Limits.Native = &native
	r.Config.Limits.CPUs = 0.5
	r.Config.Limits.Pids = 64
	r.Config.Limits.Jobs = 32
	r.Config.Security = "relaxed"
	r.Config.Commands = "native-first,git=resident"
	r.Config.Volumes = []api.VolumeMount{{Name: "data", Path: "/data"}, {Name: "ref", Path: "/ref", ReadOnly: true}}
	r.Config.Drives = []api.DriveMount{{Drive: "team", Path: "/team"}, {Drive: "docs", Path: "/docs", ReadOnly: true}}
	r.Config.Durability = "committed"
	r.Config.NodeSelector = map[string]string{"zone": "z1"}
	r.Config.StandbyAfter = -1
	r.Config.StandbyWithJobs = true
	r.Config.TTL = 3600
	r.Config.Network = &api.NetworkPolicy{Allow: []string{"api.example.com", "*.example.org:443"}, Deny: []string{"10.0.0.0/8"}}
	r.Config.FromGeneration = &api.GenerationRef{Sandbox: "sb-source", Generation: 7}
	r.Config.Retention = &api.Retention{KeepLast: 3, KeepFor: -1}
	return r
}

// neverStored are fields a record never carries (so fullRecord leaves
// them zero): a create request's secrets stay in memory (sandbox/network.go).
var neverStored = map[string]bool{"Record.Config.Secrets": true, "SnapshotRecord.Config.Secrets": true}

// checkFilled fails if any field of v (recursively) is its zero value:
// it keeps fullRecord honest when Record grows a field.
func checkFilled(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			if v.Interface().(time.Time).IsZero() {
				t.Errorf("fullRecord leaves %s zero", path)
			}
			return
		}
		for i := range v.NumField() {
			if p := path + "." + v.Type().Field(i).Name; !neverStored[p] {
				checkFilled(t, v.Field(i), p)
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			t.Errorf("fullRecord leaves %s nil", path)
		}
	default:
		if v.IsZero() {
			t.Errorf("fullRecord leaves %s zero", path)
		}
	}
}

func testRecordRoundTrip(t *testing.T, f Fixture) {
	r := fullRecord("sb-full")
	checkFilled(t, reflect.ValueOf(r), "Record")
	must(t, f.Meta.PutSandbox(ctx, r), "PutSandbox")
	recs, err := f.Meta.Sandboxes(ctx)
	must(t, err, "Sandboxes")
	if len(recs) != 1 || !reflect.DeepEqual(recs[0], r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", recs, r)
	}
	if recs[0].CreatedAt.Location() != time.UTC {
		t.Fatalf("CreatedAt in %v, want UTC", recs[0].CreatedAt.Location())
	}
	// A nanosecond time comes back to the microsecond.
	r.ID, r.CreatedAt = "sb-nanos", time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.FixedZone("x", 3600))
	must(t, f.Meta.PutSandbox(ctx, r), "PutSandbox")
	recs, _ = f.Meta.Sandboxes(ctx)
	if want := sandbox.StoreTime(r.CreatedAt); len(recs) != 2 || recs[1].CreatedAt != want {
		t.Fatalf("CreatedAt %v, want %v", recs[1].CreatedAt, want)
	}
}

func testRecordReplace(t *testing.T, f Fixture) {
	r := fullRecord("sb-1")
	must(t, f.Meta.PutSandbox(ctx, r), "PutSandbox")
	r.State, r.StateRef, r.Config.Env = "running", "vfs2:new", map[string]string{"C": "3"}
	must(t, f.Meta.PutSandbox(ctx, r), "second PutSandbox")
	recs, err := f.Meta.Sandboxes(ctx)
	must(t, err, "Sandboxes")
	if len(recs) != 1 || !reflect.DeepEqual(recs[0], r) {
		t.Fatalf("after replace: %+v, want %+v", recs, r)
	}
}

func fullSnapshot(tenant, name string) sandbox.SnapshotRecord {
	s := sandbox.SnapshotRecord{Tenant: tenant, Name: name, Sandbox: "sb-" + name, Image: "sha256:img",
		StateRef: "vfs2:" + name, CreatedAt: time.Date(2026, 12, 2, 0, 0, 0, 1000, time.UTC)}
	s.Config = fullRecord("x").Config
	return s
}

func testSnapshotRoundTrip(t *testing.T, f Fixture) {
	s := fullSnapshot("t", "s")
	checkFilled(t, reflect.ValueOf(s), "SnapshotRecord")
	must(t, f.Meta.CreateSnapshot(ctx, s), "CreateSnapshot")
	got, err := f.Meta.Snapshots(ctx)
	must(t, err, "Snapshots")
	if len(got) != 1 || !reflect.DeepEqual(got[0], s) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, s)
	}
	must(t, f.Meta.DeleteSnapshot(ctx, "t", "s"), "DeleteSnapshot")
	if got, _ := f.Meta.Snapshots(ctx); len(got) != 0 {
		t.Fatalf("after delete: %+v", got)
	}
}

func testSnapshotUnique(t *testing.T, f Fixture) {
	s := fullSnapshot("t", "s")
	must(t, f.Meta.CreateSnapshot(ctx, s), "CreateSnapshot")
	dup := s
	dup.StateRef = "vfs2:other"
	wantIs(t, f.Meta.CreateSnapshot(ctx, dup), errdefs.ErrAlreadyExists, "second CreateSnapshot of (t, s)")
	must(t, f.Meta.CreateSnapshot(ctx, fullSnapshot("u", "s")), "same name, other tenant")
	got, _ := f.Meta.Snapshots(ctx)
	if len(got) != 2 || got[0].StateRef != s.StateRef {
		t.Fatalf("the refused duplicate changed the snapshot: %+v", got)
	}
}

func testOrdering(t *testing.T, f Fixture) {
	// Bytewise order, which differs from most collations.
	ids := []string{"sb-b", "SB-Z", "sb-a", "sb-10", "sb-9", "sb_a", "sb-a-1"}
	for _, id := range ids {
		putBox(t, f.Meta, id)
	}
	recs, err := f.Meta.Sandboxes(ctx)
	must(t, err, "Sandboxes")
	want := []string{"SB-Z", "sb-10", "sb-9", "sb-a", "sb-a-1", "sb-b", "sb_a"}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Sandboxes order %q, want %q", got, want)
	}
	heads, err := f.Meta.ListHeads(ctx)
	must(t, err, "ListHeads")
	got = got[:0]
	for _, h := range heads {
		got = append(got, h.Sandbox)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListHeads order %q, want %q", got, want)
	}
	// (tenant, name) pairs, not the concatenation: ("a","z") < ("ab","a").
	for _, p := range [][2]string{{"ab", "a"}, {"a", "z"}, {"B", "x"}, {"a", "b"}} {
		must(t, f.Meta.CreateSnapshot(ctx, fullSnapshot(p[0], p[1])), "CreateSnapshot %v", p)
	}
	snaps, err := f.Meta.Snapshots(ctx)
	must(t, err, "Snapshots")
	var gotS [][2]string
	for _, s := range snaps {
		gotS = append(gotS, [2]string{s.Tenant, s.Name})
	}
	if wantS := [][2]string{{"B", "x"}, {"a", "b"}, {"a", "z"}, {"ab", "a"}}; !reflect.DeepEqual(gotS, wantS) {
		t.Fatalf("Snapshots order %q, want %q", gotS, wantS)
	}
}

func testMissing(t *testing.T, f Fixture) {
	m := f.Meta
	must(t, m.DeleteSandbox(ctx, "absent"), "DeleteSandbox of a missing record")
	must(t, m.DeleteSnapshot(ctx, "t", "absent"), "DeleteSnapshot of a missing snapshot")
	_, err := m.Head(ctx, "absent")
	wantIs(t, err, errdefs.ErrNotFound, "Head of a missing sandbox")
	_, err = m.Claim(ctx, "absent", "n", 0)
	wantIs(t, err, errdefs.ErrNotFound, "Claim of a missing sandbox")
	wantIs(t, m.Release(ctx, "absent", "n", 1), errdefs.ErrNotFound, "Release of a missing sandbox")
	_, err = m.Publish(ctx, commit("absent", "n", 1, 0, "c1"))
	wantIs(t, err, errdefs.ErrNotFound, "Publish to a missing sandbox")
	_, err = m.Generations(ctx, "absent")
	wantIs(t, err, errdefs.ErrNotFound, "Generations of a missing sandbox")
	_, err = m.Generation(ctx, "absent", 1)
	wantIs(t, err, errdefs.ErrNotFound, "Generation of a missing sandbox")
	must(t, m.DeleteGeneration(ctx, "absent", 1), "DeleteGeneration of a missing sandbox")
	putBox(t, m, "sb")
	_, err = m.Generation(ctx, "sb", 1)
	wantIs(t, err, errdefs.ErrNotFound, "Generation 1 of a sandbox without commits")
	must(t, m.DeleteGeneration(ctx, "sb", 7), "DeleteGeneration of a missing generation")
	gens, err := m.Generations(ctx, "sb")
	if err != nil || len(gens) != 0 {
		t.Fatalf("Generations of a sandbox without commits: %v, %v", gens, err)
	}
	_, err = m.RenewCustody(ctx, "absent", time.Minute)
	wantIs(t, err, errdefs.ErrNotFound, "RenewCustody of a missing upload")
	must(t, m.ReleaseCustody(ctx, "absent"), "ReleaseCustody of a missing upload")
	_, err = m.RenewLease(ctx, "absent", "boot", time.Minute)
	wantIs(t, err, errdefs.ErrNotFound, "RenewLease of a missing node")
	must(t, m.Leave(ctx, "absent", "boot"), "Leave of a missing node")
}

func testBadInput(t *testing.T, f Fixture) {
	m := f.Meta
	putBox(t, m, "sb")
	_, err := m.Claim(ctx, "sb", "", 0)
	wantIs(t, err, errdefs.ErrInvalidArgument, "Claim without a node")
	e, err := m.Claim(ctx, "sb", "n", 0)
	must(t, err, "Claim")
	for name, c := range map[string]sandbox.Commit{
		"no ref":       {Sandbox: "sb", Node: "n", Epoch: e, CommitID: "c"},
		"no commit id": {Sandbox: "sb", Node: "n", Epoch: e, Ref: "r"},
		"no node":      {Sandbox: "sb", Epoch: e, Ref: "r", CommitID: "c"},
		"epoch 0":      {Sandbox: "sb", Node: "n", Ref: "r", CommitID: "c"},
		"no sandbox":   {Node: "n", Epoch: e, Ref: "r", CommitID: "c"},
	} {
		_, err := m.Publish(ctx, c)
		wantIs(t, err, errdefs.ErrInvalidArgument, "Publish with %s", name)
	}
	wantHead(t, m, sandbox.Head{Sandbox: "sb", Owner: "n", Epoch: e})
	_, err = m.AddCustody(ctx, sandbox.CustodyRecord{Upload: "u", Node: "n"}, 0)
	wantIs(t, err, errdefs.ErrInvalidArgument, "AddCustody with ttl 0")
	_, err = m.AddCustody(ctx, sandbox.CustodyRecord{Node: "n"}, time.Minute)
	wantIs(t, err, errdefs.ErrInvalidArgument, "AddCustody without an upload id")
	_, err = m.AddCustody(ctx, sandbox.CustodyRecord{Upload: "u"}, time.Minute)
	wantIs(t, err, errdefs.ErrInvalidArgument, "AddCustody without a node")
	_, err = m.Join(ctx, sandbox.NodeRecord{ID: "n"}, time.Minute)
	wantIs(t, err, errdefs.ErrInvalidArgument, "Join without a boot id")
	_, err = m.Join(ctx, sandbox.NodeRecord{BootID: "b"}, time.Minute)
	wantIs(t, err, errdefs.ErrInvalidArgument, "Join without an id")
	_, err = m.Join(ctx, sandbox.NodeRecord{ID: "n", BootID: "b"}, -time.Second)
	wantIs(t, err, errdefs.ErrInvalidArgument, "Join with a negative ttl")
	_, err = m.RenewLease(ctx, "n", "b", 0)
	wantIs(t, err, errdefs.ErrInvalidArgument, "RenewLease with ttl 0")
	_, err = m.RenewCustody(ctx, "u", 0)
	wantIs(t, err, errdefs.ErrInvalidArgument, "RenewCustody with ttl 0")
}
