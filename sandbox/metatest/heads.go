package metatest

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/sandbox"
)

func testClaimAndPublish(t *testing.T, f Fixture) {
	m := f.Meta
	putBox(t, m, "sb")
	wantHead(t, m, sandbox.Head{Sandbox: "sb"})
	e, err := m.Claim(ctx, "sb", "a", 0)
	must(t, err, "Claim")
	if e != 1 {
		t.Fatalf("Claim epoch %d, want 1", e)
	}
	wantHead(t, m, sandbox.Head{Sandbox: "sb", Owner: "a", Epoch: 1})

	g1, err := m.Publish(ctx, commit("sb", "a", 1, 0, "c1"))
	must(t, err, "Publish generation 1")
	if g1.Number != 1 || g1.Ref != "ref-c1" || g1.Epoch != 1 || g1.CommitID != "c1" || g1.Sandbox != "sb" {
		t.Fatalf("Publish returned %+v", g1)
	}
	wantHead(t, m, sandbox.Head{Sandbox: "sb", Owner: "a", Epoch: 1, Generation: 1, Ref: "ref-c1", CommitID: "c1"})

	// A retry of a commit that landed (its reply was lost) succeeds with
	// the same generation and moves nothing.
	again, err := m.Publish(ctx, commit("sb", "a", 1, 0, "c1"))
	must(t, err, "retried Publish of c1")
	if again != g1 {
		t.Fatalf("retry returned %+v, want %+v", again, g1)
	}
	// Another commit built on the old head is refused: the head moved.
	_, err = m.Publish(ctx, commit("sb", "a", 1, 0, "c1b"))
	fe := wantFenced(t, err, "Publish on a stale base")
	if fe.Head.Generation != 1 || fe.Sandbox != "sb" {
		t.Fatalf("FencedError %+v does not carry the current head", fe)
	}
	// Nor may a commit skip ahead.
	_, err = m.Publish(ctx, commit("sb", "a", 1, 5, "c6"))
	wantFenced(t, err, "Publish on a base ahead of the head")

	g2, err := m.Publish(ctx, commit("sb", "a", 1, 1, "c2"))
	must(t, err, "Publish generation 2")
	if g2.Number != 2 {
		t.Fatalf("second generation is %d", g2.Number)
	}
	// Rewriting the record (hibernate, config) never touches the head.
	must(t, m.PutSandbox(ctx, fullRecord("sb")), "PutSandbox over a head")
	wantHead(t, m, sandbox.Head{Sandbox: "sb", Owner: "a", Epoch: 1, Generation: 2, Ref: "ref-c2", CommitID: "c2"})
	gens, err := m.Generations(ctx, "sb")
	must(t, err, "Generations")
	if len(gens) != 2 || gens[0] != g1 || gens[1] != g2 {
		t.Fatalf("Generations = %+v, want [%+v %+v]", gens, g1, g2)
	}
}

func testTakeover(t *testing.T, f Fixture) {
	m := f.Meta
	claimed(t, m, "sb", "a")
	_, err := m.Publish(ctx, commit("sb", "a", 1, 0, "a1"))
	must(t, err, "Publish by a")
	// b took over (a's lease expired) from the epoch it saw.
	_, err = m.Claim(ctx, "sb", "c", 0)
	wantFenced(t, err, "Claim from a stale epoch")
	e, err := m.Claim(ctx, "sb", "b", 1)
	must(t, err, "takeover Claim")
	if e != 2 {
		t.Fatalf("takeover epoch %d, want 2", e)
	}
	// a, still alive, tries to publish: fenced, and told who owns it.
	_, err = m.Publish(ctx, commit("sb", "a", 1, 1, "a2"))
	fe := wantFenced(t, err, "Publish by the old owner")
	if fe.Head.Owner != "b" || fe.Head.Epoch != 2 {
		t.Fatalf("FencedError head %+v, want owner b at epoch 2", fe.Head)
	}
	// A retry of a's commit that had landed still succeeds.
	g, err := m.Publish(ctx, commit("sb", "a", 1, 0, "a1"))
	must(t, err, "retry of a landed commit after takeover")
	if g.Number != 1 || g.Epoch != 1 {
		t.Fatalf("landed commit = %+v", g)
	}
	// The new owner at the old epoch is refused too: the epoch is the fence.
	_, err = m.Publish(ctx, commit("sb", "b", 1, 1, "b0"))
	wantFenced(t, err, "Publish by the new owner at the old epoch")
	g2, err := m.Publish(ctx, commit("sb", "b", 2, 1, "b2"))
	must(t, err, "Publish by the new owner")
	if g2.Number != 2 || g2.Epoch != 2 || g2.Parent != "parent-of-b2" {
		t.Fatalf("new owner's generation = %+v", g2)
	}
	// A node claiming its own sandbox again starts a new epoch.
	e, err = m.Claim(ctx, "sb", "b", 2)
	must(t, err, "re-Claim by the owner")
	if e != 3 {
		t.Fatalf("re-Claim epoch %d, want 3", e)
	}
	_, err = m.Publish(ctx, commit("sb", "b", 2, 2, "b3"))
	wantFenced(t, err, "Publish from the owner's previous epoch")
	wantHead(t, m, sandbox.Head{Sandbox: "sb", Owner: "b", Epoch: 3, Generation: 2, Ref: "ref-b2", CommitID: "b2"})
}

func testRelease(t *testing.T, f Fixture) {
	m := f.Meta
	claimed(t, m, "sb", "a")
	wantFenced(t, m.Release(ctx, "sb", "b", 1), "Release by a non-owner")
	wantFenced(t, m.Release(ctx, "sb", "a", 2), "Release at another epoch")
	must(t, m.Release(ctx, "sb", "a", 1), "Release")
	wantHead(t, m, sandbox.Head{Sandbox: "sb", Epoch: 1})
	must(t, m.Release(ctx, "sb", "a", 1), "second Release")
	_, err := m.Publish(ctx, commit("sb", "a", 1, 0, "c"))
	wantFenced(t, err, "Publish after Release")
	e, err := m.Claim(ctx, "sb", "b", 1)
	if err != nil || e != 2 {
		t.Fatalf("Claim after Release: %d, %v; want 2", e, err)
	}
}

func testCommitIDUnique(t *testing.T, f Fixture) {
	m := f.Meta
	claimed(t, m, "sb1", "a")
	claimed(t, m, "sb2", "a")
	_, err := m.Publish(ctx, commit("sb1", "a", 1, 0, "c"))
	must(t, err, "Publish")
	_, err = m.Publish(ctx, commit("sb2", "a", 1, 0, "c"))
	wantIs(t, err, errdefs.ErrAlreadyExists, "the same commit id on another sandbox")
	c := commit("sb1", "a", 1, 1, "c")
	c.Ref = "ref-other"
	_, err = m.Publish(ctx, c)
	wantIs(t, err, errdefs.ErrAlreadyExists, "the same commit id with another ref")
	wantHead(t, m, sandbox.Head{Sandbox: "sb2", Owner: "a", Epoch: 1})
	wantHead(t, m, sandbox.Head{Sandbox: "sb1", Owner: "a", Epoch: 1, Generation: 1, Ref: "ref-c", CommitID: "c"})
}

func testGenerationRoundTrip(t *testing.T, f Fixture) {
	m := f.Meta
	claimed(t, m, "sb", "a")
	before := sandbox.StoreTime(time.Now()).Add(-time.Second) // leeway: the store's clock
	c := commit("sb", "a", 1, 0, "c1")
	c.Parent = "vfs2:fork-source"
	g, err := m.Publish(ctx, c)
	must(t, err, "Publish")
	after := time.Now().Add(time.Second)
	want := sandbox.Generation{Sandbox: "sb", Number: 1, Ref: "ref-c1", Parent: "vfs2:fork-source", Epoch: 1, CommitID: "c1", CreatedAt: g.CreatedAt}
	if g != want {
		t.Fatalf("Publish = %+v, want %+v", g, want)
	}
	if g.CreatedAt.Before(before) || g.CreatedAt.After(after) || g.CreatedAt.Location() != time.UTC {
		t.Fatalf("CreatedAt %v not the store's now (UTC) between %v and %v", g.CreatedAt, before, after)
	}
	got, err := m.Generation(ctx, "sb", 1)
	must(t, err, "Generation")
	if got != g {
		t.Fatalf("Generation = %+v, want %+v", got, g)
	}
}

func testGenerationRetention(t *testing.T, f Fixture) {
	m := f.Meta
	claimed(t, m, "sb", "a")
	for i := range uint64(4) {
		_, err := m.Publish(ctx, commit("sb", "a", 1, i, fmt.Sprint("c", i+1)))
		must(t, err, "Publish %d", i+1)
	}
	wantIs(t, m.DeleteGeneration(ctx, "sb", 4), errdefs.ErrFailedPrecondition, "DeleteGeneration of the head")
	must(t, m.DeleteGeneration(ctx, "sb", 2), "DeleteGeneration 2")
	must(t, m.DeleteGeneration(ctx, "sb", 1), "DeleteGeneration 1")
	gens, err := m.Generations(ctx, "sb")
	must(t, err, "Generations")
	var nums []uint64
	for _, g := range gens {
		nums = append(nums, g.Number)
	}
	if !reflect.DeepEqual(nums, []uint64{3, 4}) {
		t.Fatalf("retained generations %v, want [3 4]", nums)
	}
	_, err = m.Generation(ctx, "sb", 2)
	wantIs(t, err, errdefs.ErrNotFound, "a deleted generation")
	// The head still publishes on top.
	g, err := m.Publish(ctx, commit("sb", "a", 1, 4, "c5"))
	if err != nil || g.Number != 5 {
		t.Fatalf("Publish after retention: %+v, %v", g, err)
	}
}

func testDeleteSandboxDropsHead(t *testing.T, f Fixture) {
	m := f.Meta
	claimed(t, m, "sb", "a")
	_, err := m.Publish(ctx, commit("sb", "a", 1, 0, "c1"))
	must(t, err, "Publish")
	must(t, m.DeleteSandbox(ctx, "sb"), "DeleteSandbox")
	_, err = m.Head(ctx, "sb")
	wantIs(t, err, errdefs.ErrNotFound, "Head of a deleted sandbox")
	_, err = m.Publish(ctx, commit("sb", "a", 1, 1, "c2"))
	wantIs(t, err, errdefs.ErrNotFound, "Publish to a deleted sandbox")
	if hs, _ := m.ListHeads(ctx); len(hs) != 0 {
		t.Fatalf("heads after delete: %+v", hs)
	}
	// Its commit ids went with it.
	claimed(t, m, "sb2", "a")
	if _, err := m.Publish(ctx, commit("sb2", "a", 1, 0, "c1")); err != nil {
		t.Fatalf("reusing a deleted sandbox's commit id: %v", err)
	}
}

// racers returns the handles the racing goroutines use: Meta, and a peer
// (another process) for every other goroutine when the backend has one.
func racers(t *testing.T, f Fixture) []sandbox.DurableMeta {
	hs := []sandbox.DurableMeta{f.Meta}
	if f.Peer != nil {
		hs = append(hs, f.Peer(t))
	}
	return hs
}

// testPublishRace: N goroutines (over two handles when the store has a
// peer) race to publish on each generation in turn. Each commit id is tried
// by two goroutines, as a committer retrying a lost reply would. Per round
// exactly one commit id lands: both of its goroutines succeed with the same
// generation, every other goroutine gets ErrFenced.
func testPublishRace(t *testing.T, f Fixture) {
	const n, rounds = 16, 8
	hs := racers(t, f)
	claimed(t, f.Meta, "sb", "a")
	for r := range uint64(rounds) {
		var wg sync.WaitGroup
		gens := make([]sandbox.Generation, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				c := commit("sb", "a", 1, r, fmt.Sprintf("r%d-c%d", r, i%(n/2)))
				gens[i], errs[i] = hs[i%len(hs)].Publish(ctx, c)
			}()
		}
		close(start)
		wg.Wait()
		var winners []int
		for i, err := range errs {
			switch {
			case err == nil:
				winners = append(winners, i)
			case errors.Is(err, sandbox.ErrFenced):
			default:
				t.Fatalf("round %d, goroutine %d: %v, want success or ErrFenced", r, i, err)
			}
		}
		if len(winners) != 2 || winners[1]-winners[0] != n/2 {
			t.Fatalf("round %d: winners %v, want the two goroutines of one commit id", r, winners)
		}
		g := gens[winners[0]]
		if g != gens[winners[1]] || g.Number != r+1 {
			t.Fatalf("round %d: winners got %+v and %+v", r, g, gens[winners[1]])
		}
		wantHead(t, f.Meta, sandbox.Head{Sandbox: "sb", Owner: "a", Epoch: 1, Generation: r + 1, Ref: g.Ref, CommitID: g.CommitID})
	}
	gens, err := f.Meta.Generations(ctx, "sb")
	must(t, err, "Generations")
	if len(gens) != rounds {
		t.Fatalf("%d generations recorded, want %d", len(gens), rounds)
	}
}

// testClaimRace: N nodes take over at once from the epoch they all saw;
// exactly one wins, and only the winner can publish.
func testClaimRace(t *testing.T, f Fixture) {
	const n = 16
	hs := racers(t, f)
	claimed(t, f.Meta, "sb", "old")
	var wg sync.WaitGroup
	epochs := make([]uint64, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			epochs[i], errs[i] = hs[i%len(hs)].Claim(ctx, "sb", fmt.Sprint("node-", i), 1)
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("nodes %d and %d both claimed", winner, i)
			}
			winner = i
			continue
		}
		wantFenced(t, err, "losing Claim %d", i)
	}
	if winner < 0 || epochs[winner] != 2 {
		t.Fatalf("winner %d with epoch %v", winner, epochs)
	}
	for i := range n {
		_, err := hs[i%len(hs)].Publish(ctx, commit("sb", fmt.Sprint("node-", i), 2, 0, fmt.Sprint("c", i)))
		if (err == nil) != (i == winner) {
			t.Fatalf("Publish by node-%d (winner node-%d): %v", i, winner, err)
		}
	}
}

// testSnapshotRace: N goroutines create the same snapshot name; exactly
// one succeeds.
func testSnapshotRace(t *testing.T, f Fixture) {
	const n = 16
	hs := racers(t, f)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := fullSnapshot("t", "same")
			s.StateRef = fmt.Sprint("vfs2:", i)
			errs[i] = hs[i%len(hs)].CreateSnapshot(ctx, s)
			// Records race too, each on its own id.
			if err := hs[i%len(hs)].PutSandbox(ctx, record(fmt.Sprint("sb-", i))); err != nil {
				errs[i] = errors.Join(errs[i], err)
			}
		}()
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		if err == nil {
			ok++
			continue
		}
		wantIs(t, err, errdefs.ErrAlreadyExists, "CreateSnapshot %d", i)
	}
	recs, _ := f.Meta.Sandboxes(ctx)
	if ok != 1 || len(recs) != n {
		t.Fatalf("%d snapshots created, %d records; want 1 and %d", ok, len(recs), n)
	}
}

// testTakeoverRace: node a commits generation after generation while node
// b (over the peer handle when there is one) takes the sandbox over. a's
// first refused commit is fenced naming b; every commit a was told landed
// is recorded, nothing else of a's is, and b publishes on top of a's last.
func testTakeoverRace(t *testing.T, f Fixture) {
	hs := racers(t, f)
	claimed(t, f.Meta, "sb", "a")
	var acked []sandbox.Generation
	var fencedErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Until fenced; the deadline only stops a store that never fences.
		deadline := time.Now().Add(30 * time.Second)
		for base := uint64(0); time.Now().Before(deadline); base++ {
			g, err := hs[0].Publish(ctx, commit("sb", "a", 1, base, fmt.Sprint("a", base+1)))
			if err != nil {
				fencedErr = err
				return
			}
			acked = append(acked, g)
		}
	}()
	time.Sleep(20 * time.Millisecond)
	b := hs[len(hs)-1]
	e, err := b.Claim(ctx, "sb", "b", 1)
	must(t, err, "takeover Claim")
	<-done
	fe := wantFenced(t, fencedErr, "a's commit after the takeover")
	if fe.Head.Owner != "b" || fe.Head.Epoch != e {
		t.Fatalf("a was fenced by %+v, want owner b at epoch %d", fe.Head, e)
	}
	gens, err := b.Generations(ctx, "sb")
	must(t, err, "Generations")
	if len(acked) == 0 || !reflect.DeepEqual(gens, acked) {
		t.Fatalf("recorded %d generations, a was acked %d: recorded must be exactly the acked", len(gens), len(acked))
	}
	h, err := b.Head(ctx, "sb")
	must(t, err, "Head")
	last := acked[len(acked)-1]
	if h.Generation != last.Number || h.CommitID != last.CommitID {
		t.Fatalf("head %+v, want a's last acked %+v", h, last)
	}
	if _, err := b.Publish(ctx, commit("sb", "b", e, h.Generation, "b1")); err != nil {
		t.Fatalf("b's first commit: %v", err)
	}
}
