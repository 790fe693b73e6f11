package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

func genSummary(gs []api.Generation) string {
	s := ""
	for _, g := range gs {
		s += fmt.Sprint(g.Number)
		if g.Head {
			s += "H"
		}
		if len(g.PinnedBy) > 0 {
			s += fmt.Sprint(g.PinnedBy)
		}
		s += " "
	}
	return s
}

// TestDurable_Generations: retention keeps the last N, the head and the
// pinned ones (a snapshot, a sandbox made from a generation); a sandbox
// made from a retained generation has that generation's files; a dropped
// one or a bad request is refused by name.
func TestDurable_Generations(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m, l := durableManager(t, p, d, "node-a", time.Hour)
	defer l.Close()
	defer m.Close(context.Background())
	svc := m.For("t")
	gsvc := svc.(api.Generations)
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Retention: &api.Retention{KeepLast: 2, KeepFor: -1}})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(id string, v int) {
		t.Helper()
		if _, res, err := execOut(t, svc, id, api.ExecRequest{Script: fmt.Sprintf("echo %d > /v", v), Durability: api.DurabilityCommitted}); err != nil || res.Generation == 0 {
			t.Fatalf("committed exec %d: %+v, %v", v, res, err)
		}
	}
	commit(sb.ID, 1)
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateSnapshot(ctx, sb.ID, "s1"); err != nil {
		t.Fatal(err)
	}
	for v := 2; v <= 5; v++ {
		commit(sb.ID, v)
	}
	// Retention runs after each commit's waiters wake; RetainAll waits
	// for it to be done.
	if err := m.RetainAll(ctx); err != nil {
		t.Fatal(err)
	}
	gs, err := gsvc.ListGenerations(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := genSummary(gs), "1[snapshot:s1] 4 5H "; got != want {
		t.Fatalf("generations after 5 commits, keep_last 2, a snapshot of 1: %q, want %q", got, want)
	}
	child, err := svc.Create(ctx, api.CreateRequest{FromGeneration: &api.GenerationRef{Sandbox: sb.ID, Generation: 4}, StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if child.Parent != sb.ID {
		t.Errorf("a sandbox from a generation has parent %q, want %s", child.Parent, sb.ID)
	}
	if out, _, err := execOut(t, svc, child.ID, api.ExecRequest{Script: "cat /v"}); err != nil || out != "4\n" {
		t.Fatalf("a sandbox from generation 4 reads %q, %v", out, err)
	}
	commit(sb.ID, 6)
	commit(sb.ID, 7)
	if err := m.RetainAll(ctx); err != nil {
		t.Fatal(err)
	}
	gs, err = gsvc.ListGenerations(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := genSummary(gs), fmt.Sprintf("1[snapshot:s1] 4[sandbox:%s] 6 7H ", child.ID); got != want {
		t.Fatalf("generations with 4 pinned by a sandbox: %q, want %q", got, want)
	}
	for _, c := range []struct {
		req   api.CreateRequest
		class error
	}{
		{api.CreateRequest{FromGeneration: &api.GenerationRef{Sandbox: sb.ID, Generation: 2}}, errdefs.ErrNotFound},
		{api.CreateRequest{FromGeneration: &api.GenerationRef{Sandbox: "sb-nope", Generation: 1}}, errdefs.ErrNotFound},
		{api.CreateRequest{FromGeneration: &api.GenerationRef{Sandbox: sb.ID}}, api.ErrUnprocessable},
		{api.CreateRequest{FromGeneration: &api.GenerationRef{Sandbox: sb.ID, Generation: 1}, Snapshot: "s1"}, api.ErrUnprocessable},
		{api.CreateRequest{Retention: &api.Retention{KeepLast: -1}}, api.ErrUnprocessable},
	} {
		if _, err := svc.Create(ctx, c.req); !errors.Is(err, c.class) {
			t.Errorf("create %+v: %v, want %v", c.req, err, c.class)
		}
	}
	if _, err := m.For("other").(api.Generations).ListGenerations(ctx, sb.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("another tenant lists the generations: %v", err)
	}
	// The snapshot's pin goes with the snapshot.
	if err := svc.DeleteSnapshot(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.RetainAll(ctx); err != nil {
		t.Fatal(err)
	}
	gs, _ = gsvc.ListGenerations(ctx, sb.ID)
	var nums []uint64
	for _, g := range gs {
		nums = append(nums, g.Number)
	}
	if !reflect.DeepEqual(nums, []uint64{4, 6, 7}) {
		t.Fatalf("after the snapshot went: %v, want [4 6 7]", nums)
	}
}
