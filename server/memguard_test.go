package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/server"
)

// TestMemoryGuard_Sheds drives a real node's guard over its thresholds:
// above the high-water mark new creates and execs get 503 + Retry-After
// with an "overloaded" body the client maps back to api.ErrOverloaded,
// while reads and deletes go on; below the low-water mark work resumes;
// /metrics counts what was shed. The heap reading is injected, so the
// test does not have to exhaust the machine to reach the mark.
func TestMemoryGuard_Sheds(t *testing.T) {
	var heap atomic.Uint64
	heap.Store(10 << 20)
	g, err := server.NewMemoryGuard(server.MemoryGuardConfig{
		High: 100 << 20, Low: 80 << 20, RetryAfter: 3 * time.Second, SampleEvery: time.Nanosecond,
		ReadHeap: heap.Load,
	})
	if err != nil {
		t.Fatal(err)
	}
	tn := startNode(t, node.Options{Guard: g})
	c, key := tn.tenant(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatalf("create below the mark: %v", err)
	}

	heap.Store(150 << 20)
	if _, err := c.Create(ctx, api.CreateRequest{}); !errors.Is(err, api.ErrOverloaded) {
		t.Fatalf("create over the mark: %v, want ErrOverloaded", err)
	}
	if _, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "echo hi"}); !errors.Is(err, api.ErrOverloaded) || !strings.Contains(err.Error(), "memory pressure") {
		t.Fatalf("exec over the mark: %v, want ErrOverloaded naming memory pressure", err)
	}
	// The raw response: 503, Retry-After, the error body.
	req, _ := http.NewRequest("POST", tn.srv.URL+"/v1/sandboxes/"+sb.ID+"/exec", strings.NewReader(`{"script":"echo hi"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(string(body), `"code":"overloaded"`) {
		t.Fatalf("raw exec over the mark: %d Retry-After %q body %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// What gives memory back still works.
	if _, err := c.Get(ctx, sb.ID); err != nil {
		t.Fatalf("get under pressure: %v", err)
	}
	if _, err := c.List(ctx, api.ListOptions{}); err != nil {
		t.Fatalf("list under pressure: %v", err)
	}

	// Between the marks: still shedding (hysteresis).
	heap.Store(90 << 20)
	if _, err := c.Create(ctx, api.CreateRequest{}); !errors.Is(err, api.ErrOverloaded) {
		t.Fatalf("create between the marks: %v, want still ErrOverloaded", err)
	}
	heap.Store(70 << 20)
	res, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "echo back"})
	if err != nil || res.Stdout != "back\n" {
		t.Fatalf("exec below the low mark: %+v %v", res, err)
	}
	if err := c.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}

	m := metricsText(t, tn)
	for _, want := range []string{
		`warren_shed_requests_total{route="POST /v1/sandboxes"} 2`,
		`warren_shed_requests_total{route="POST /v1/sandboxes/{id}/exec"} 2`,
		`warren_memory_pressure 0`,
		`warren_memory_guard_bytes{kind="high"} 104857600`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestMemoryGuard_RealHeap: with the real runtime reading and a mark the
// heap is surely over, the guard sheds; with a mark far above it, not.
func TestMemoryGuard_RealHeap(t *testing.T) {
	for _, tc := range []struct {
		name string
		high uint64
		shed bool
	}{{"over", 1 << 10, true}, {"under", 1 << 50, false}} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := server.NewMemoryGuard(server.MemoryGuardConfig{High: tc.high})
			if err != nil {
				t.Fatal(err)
			}
			err = g.Check("POST /v1/sandboxes")
			if got := errors.Is(err, api.ErrOverloaded); got != tc.shed {
				t.Fatalf("Check = %v, want shedding %v", err, tc.shed)
			}
			if st := g.Stats(); st.Heap == 0 {
				t.Fatal("the guard read no heap from runtime/metrics")
			}
		})
	}
}

func metricsText(t *testing.T, tn *testNode) string {
	t.Helper()
	resp, err := http.Get(tn.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
