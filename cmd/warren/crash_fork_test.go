package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

// crashFork is an acknowledged fork of the crash harness's sandbox and
// what its parent's committed writer had acked before the fork call.
type crashFork struct {
	id    string
	floor int
}

// crashForker forks the sandbox now and then during a round (a 409 while
// busy is fine) and remembers the acknowledged forks.
type crashForker struct {
	committed *crashWriter
	mu        sync.Mutex
	forks     []crashFork
	checked   int // forks[:checked] were read back after an earlier restart
}

func (f *crashForker) run(ctx context.Context, cl *client.Client, id string) {
	// One fork or two a round: each is a sandbox checked after restarts.
	for range 2 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(30+rand.IntN(250)) * time.Millisecond):
		}
		floor := int(atomic.LoadInt64(&f.committed.acked))
		sbs, err := cl.Fork(ctx, id, 1)
		if errdefs.IsFailedPrecondition(err) || errdefs.IsConflict(err) {
			continue
		}
		if err != nil {
			return // the server is gone
		}
		f.mu.Lock()
		for _, s := range sbs {
			f.forks = append(f.forks, crashFork{id: s.ID, floor: floor})
		}
		f.mu.Unlock()
	}
}

// check verifies after a restart that every acknowledged fork exists, and
// reads back the forks not read before (all with all set): each must hold
// the committed writer's numbers 1..k, nothing torn, k at least what was
// acked before the fork. It returns how many forks it read.
func (f *crashForker) check(t *testing.T, cl *client.Client, all bool) int {
	t.Helper()
	ctx := context.Background()
	f.mu.Lock()
	forks := append([]crashFork(nil), f.forks...)
	from := f.checked
	f.checked = len(forks)
	f.mu.Unlock()
	list, err := cl.List(ctx, api.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range list {
		have[s.ID] = true
	}
	if all {
		from = 0
	}
	for i, fk := range forks {
		if !have[fk.id] {
			t.Fatalf("fork %s was acknowledged but is gone after the restart", fk.id)
		}
		if i < from {
			continue
		}
		if k := seqLines(t, cl, fk.id, "/w/committed"); k < fk.floor {
			t.Fatalf("fork %s holds committed numbers 1..%d, but %d were acked at committed before the fork", fk.id, k, fk.floor)
		}
	}
	return len(forks) - from
}

// seqLines reads file in sandbox id and checks it holds exactly the lines
// 1..k (nothing torn, doubled or out of order); it returns k.
func seqLines(t *testing.T, cl *client.Client, id, file string) int {
	t.Helper()
	var out bytes.Buffer
	res, err := cl.Exec(context.Background(), id, api.ExecRequest{Script: fmt.Sprintf("touch %[1]s; cat %[1]s", file), Durability: api.DurabilityMemory}, &out, nil)
	if err != nil || res.Exit != 0 {
		t.Fatalf("%s: reading %s: %+v, %v", id, file, res, err)
	}
	if out.Len() == 0 {
		return 0
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i, l := range lines {
		if l != strconv.Itoa(i+1) {
			t.Fatalf("%s: %s line %d is %q, want %d (half-written or out of order):\n%s", id, file, i+1, l, i+1, out.String())
		}
	}
	return len(lines)
}

// checkGenerations starts a sandbox from the generations the restarted
// server lists for id (all, or 8 spread from oldest to head) and reads every file under /w (sha256sum of each:
// every chunk is fetched from its pack and verified on the way), then
// checks /w/committed: 1..k, k never shrinking from one generation to the
// next, and the head holding at least committedAcked. It returns how many
// generations it verified.
func checkGenerations(t *testing.T, cl *client.Client, id string, committedAcked int) int {
	t.Helper()
	ctx := context.Background()
	gens, err := cl.ListGenerations(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(gens) == 0 {
		t.Fatalf("%s lists no generations after a restart", id)
	}
	// At most 8, spread from the oldest to the head (each is a cold load
	// from the store, seconds under -race): the rest are only listed.
	if len(gens) > 8 {
		pick := make([]api.Generation, 0, 8)
		for i := range 8 {
			pick = append(pick, gens[i*(len(gens)-1)/7])
		}
		gens = pick
	}
	last, verified := 0, 0
	for _, g := range gens {
		sb, err := cl.Create(ctx, api.CreateRequest{StandbyAfter: api.Duration(-1),
			FromGeneration: &api.GenerationRef{Sandbox: id, Generation: g.Number}})
		if errdefs.IsNotFound(err) && !g.Head && !listed(t, cl, id, g.Number) {
			// Retention forgot it since the list: the restart's write-log
			// replay publishes generations, and keep_last is 4. Only a
			// generation still listed must open.
			t.Logf("generation %d of %s: forgotten by retention after it was listed", g.Number, id)
			continue
		}
		if err != nil {
			t.Fatalf("generation %d of %s: create from it: %v", g.Number, id, err)
		}
		var out, errb bytes.Buffer
		res, err := cl.Exec(ctx, sb.ID, api.ExecRequest{Durability: api.DurabilityMemory,
			Script: `sha256sum $(find /w -type f) > /dev/null`}, &out, &errb)
		if err != nil || res.Exit != 0 {
			t.Fatalf("generation %d of %s: reading its files: %+v, %v\n%s%s", g.Number, id, res, err, out.String(), errb.String())
		}
		k := seqLines(t, cl, sb.ID, "/w/committed")
		if k < last {
			t.Fatalf("generation %d of %s holds committed 1..%d, an older one held 1..%d", g.Number, id, k, last)
		}
		last = k
		if g.Head && k < committedAcked {
			t.Fatalf("head generation %d of %s holds committed 1..%d, but %d were acked", g.Number, id, k, committedAcked)
		}
		if err := cl.Delete(ctx, sb.ID); err != nil {
			t.Fatal(err)
		}
		verified++
	}
	return verified
}

// listed reports whether sandbox id lists generation number now.
func listed(t *testing.T, cl *client.Client, id string, number uint64) bool {
	t.Helper()
	gens, err := cl.ListGenerations(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gens {
		if g.Number == number {
			return true
		}
	}
	return false
}
