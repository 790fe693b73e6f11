package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/store/dir"
	"github.com/warren-sandbox/warren/wlog"
)

// stallStore is a real dir store whose Puts block while stalled (an
// object store outage, as SIGSTOP of the server makes it).
type stallStore struct {
	*dir.Store
	mu      sync.Mutex
	release chan struct{} // nil: not stalled
	only    string        // stall only keys with this prefix ("": all)
	stalled chan string   // gets the key of each stalled Put (if set)
}

func (s *stallStore) stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release == nil {
		s.release = make(chan struct{})
	}
}

func (s *stallStore) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release != nil {
		close(s.release)
		s.release = nil
	}
}

func (s *stallStore) Put(ctx context.Context, key string, r io.Reader) error {
	s.mu.Lock()
	ch := s.release
	if !strings.HasPrefix(key, s.only) {
		ch = nil
	}
	note := s.stalled
	s.mu.Unlock()
	if ch != nil && note != nil {
		select {
		case note <- key:
		default:
		}
	}
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.Put(ctx, key, r)
}

func budgetManager(t *testing.T, p parts, blobs *stallStore, dirname string, bg sandbox.Budget) (*sandbox.Manager, *wlog.Log) {
	t.Helper()
	l, err := wlog.Open(dirname+"/wlog", wlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: blobs, Deltas: sandbox.VFSDeltas(blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: p.meta, TickInterval: 20 * time.Millisecond,
		Durable: &sandbox.Durable{Node: "node-a", Log: l, Budget: bg, Commit: committer.Options{MaxDelay: time.Hour}},
	})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	return m, l
}

// TestDurable_Budget: with the blob store stalled, a writer over its
// sandbox's budget waits the bounded time, then fails with the
// documented error (in the shell, and as 507 + Retry-After from a file
// call); removing data still works; once the store is back the budget
// commit lands and writes pass again, nothing acknowledged lost.
func TestDurable_Budget(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	blobs := &stallStore{Store: p.blobs}
	const wait = 300 * time.Millisecond
	m, l := budgetManager(t, p, blobs, d, sandbox.Budget{Sandbox: 4 << 20, Node: -1, Wait: wait})
	defer l.Close()
	defer m.Close(context.Background())
	defer blobs.resume() // before Close: a failed test must not hang in its hibernates
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo acked > /acked"}); err != nil || res.Exit != 0 {
		t.Fatalf("a small write: %+v, %v", res, err)
	}
	blobs.stall()
	t0 := time.Now()
	out, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "head -c 8000000 /dev/zero 2>&1 > /big; echo status $?; rm -f /big; echo rm $?", Durability: api.DurabilityMemory})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the writer saw: %q", out)
	if !strings.Contains(out+res.Stderr, "warren: write budget exhausted (") || !strings.Contains(out, "status 1") || !strings.Contains(out, "rm 0") {
		t.Fatalf("an 8 MB write over a 4 MiB budget with the store stalled: stdout %q stderr %q; want the budget error, status 1, and rm to work", out, res.Stderr)
	}
	if el := time.Since(t0); el < wait {
		t.Fatalf("the writer failed after %v, before waiting %v", el, wait)
	}
	// A file call while still over budget: 507 with Retry-After.
	if _, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "head -c 6000000 /dev/zero > /fill 2>/dev/null", Durability: api.DurabilityMemory}); err != nil {
		t.Fatal(err)
	}
	err = svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/more", Data: strings.NewReader(strings.Repeat("x", 2<<20)), Durability: api.DurabilityMemory})
	var be *sandbox.BudgetError
	if !errors.Is(err, api.ErrWriteBudget) || !errors.As(err, &be) || be.Scope != "sandbox" || be.Limit != 4<<20 {
		t.Fatalf("a file write over budget: %v; want a sandbox BudgetError", err)
	}
	if st, code := api.ToHTTP(err); st != 507 || code != "write_budget_exhausted" || api.RetryAfterSeconds(err) < 1 {
		t.Fatalf("over budget maps to %d %s (retry after %d s); want 507 with Retry-After", st, code, api.RetryAfterSeconds(err))
	}
	blobs.resume()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err = svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/more", Data: strings.NewReader(strings.Repeat("x", 2<<20)), Durability: api.DurabilityMemory})
		if err == nil {
			break
		}
		if !errors.Is(err, api.ErrWriteBudget) || time.Now().After(deadline) {
			t.Fatalf("after the store came back: %v", err)
		}
	}
	out, _, err = execOut(t, svc, sb.ID, api.ExecRequest{Script: "cat /acked; wc -c < /more", Durability: api.DurabilityCommitted})
	if err != nil || out != "acked\n2097152\n" {
		t.Fatalf("after the outage: %q, %v", out, err)
	}
	if st := m.BudgetStats(); st.Waits == 0 || st.Refused < 2 {
		t.Fatalf("budget counters %+v: want waits and at least 2 refusals", st)
	}
}

// TestDurable_NodeBudget: the node's budget holds across sandboxes.
func TestDurable_NodeBudget(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	blobs := &stallStore{Store: p.blobs}
	m, l := budgetManager(t, p, blobs, d, sandbox.Budget{Sandbox: -1, Node: 4 << 20, Wait: 100 * time.Millisecond})
	defer l.Close()
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	a, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	blobs.stall()
	defer blobs.resume()
	if err := svc.WriteFile(ctx, a.ID, api.WriteFileRequest{Path: "/a", Data: bytes.NewReader(noise(5 << 20)), Durability: api.DurabilityMemory}); err != nil {
		t.Fatalf("the first write (under the node's budget when it started): %v", err)
	}
	// The node's sum is cached for up to nodeSumEvery (20 ms): a write
	// within that window of the last sum may still pass (documented
	// overshoot); past it the sum is fresh.
	time.Sleep(50 * time.Millisecond)
	err = svc.WriteFile(ctx, b.ID, api.WriteFileRequest{Path: "/b", Data: strings.NewReader("b"), Durability: api.DurabilityMemory})
	var be *sandbox.BudgetError
	if !errors.As(err, &be) || be.Scope != "node" || be.Uncommitted < 5<<20 {
		t.Fatalf("a write in another sandbox with the node over budget: %v; want a node BudgetError", err)
	}
}

// noise is n bytes that do not repeat: identical data is stored once
// (vfs dedups chunks as they are written), so it would not count against
// an uncommitted budget.
func noise(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{7})
	r.Read(b)
	return b
}
