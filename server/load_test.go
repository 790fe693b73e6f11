package server_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// TestLoad: 1,000 sandboxes created and each exec'd 10 times, all at once
// through the API, without an error (100 under -short).
func TestLoad(t *testing.T) {
	boxes := 1000
	if testing.Short() {
		boxes = 100
	}
	const execs = 10
	tn := startNode(t, node.Options{})
	k, err := tn.admin.CreateKey(context.Background(), "load")
	if err != nil {
		t.Fatal(err)
	}
	// Bound connections, not concurrency: requests queue in the transport.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost = 256, 256
	c, err := client.New(tn.srv.URL, k.Key, client.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, boxes*(execs+1))
	t0 := time.Now()
	for i := range boxes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, err := c.Create(ctx, api.CreateRequest{Labels: map[string]string{"load": "1"}})
			if err != nil {
				errs <- fmt.Errorf("create %d: %w", i, err)
				return
			}
			var ewg sync.WaitGroup
			for j := range execs {
				ewg.Add(1)
				go func() {
					defer ewg.Done()
					res, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo $((%d * %d))", i, j)})
					if err != nil {
						errs <- fmt.Errorf("exec %d/%d: %w", i, j, err)
						return
					}
					if want := fmt.Sprintf("%d\n", i*j); res.Stdout != want || res.Exit != 0 {
						errs <- fmt.Errorf("exec %d/%d: %+v, want %q", i, j, res, want)
					}
				}()
			}
			ewg.Wait()
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 10 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Fatalf("%d errors", n)
	}
	list, err := c.List(ctx, api.ListOptions{Labels: map[string]string{"load": "1"}})
	if err != nil || len(list) != boxes {
		t.Fatalf("List: %d sandboxes, %v; want %d", len(list), err, boxes)
	}
	t.Logf("%d sandboxes x %d execs in %v", boxes, execs, time.Since(t0))
}

// percentiles reports p50/p95/p99 of ds (and n) on b.
func percentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(p float64) float64 {
		i := int(p * float64(len(ds)-1))
		return float64(ds[i].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.95), "p95-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(float64(len(ds)), "n")
}

func benchClient(b *testing.B) (*testNode, *client.Client) {
	tn := startNode(b, node.Options{DefaultStandbyAfter: time.Hour})
	k, err := tn.admin.CreateKey(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(tn.srv.URL, k.Key)
	if err != nil {
		b.Fatal(err)
	}
	return tn, c
}

func mustExec(b *testing.B, c *client.Client, id, script string) {
	res, err := c.ExecWait(context.Background(), id, api.ExecRequest{Script: script})
	if err != nil || res.Exit != 0 {
		b.Fatalf("exec %q: %+v %v", script, res, err)
	}
}

// BenchmarkAPI_CreateFirstExec: create a sandbox, then its first exec,
// over HTTP on loopback.
func BenchmarkAPI_CreateFirstExec(b *testing.B) {
	_, c := benchClient(b)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		sb, err := c.Create(ctx, api.CreateRequest{})
		if err != nil {
			b.Fatal(err)
		}
		mustExec(b, c, sb.ID, "echo hi")
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkAPI_ExecRoundTrip: one buffered exec on a running sandbox.
func BenchmarkAPI_ExecRoundTrip(b *testing.B) {
	_, c := benchClient(b)
	sb, err := c.Create(context.Background(), api.CreateRequest{})
	if err != nil {
		b.Fatal(err)
	}
	mustExec(b, c, sb.ID, "true")
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		mustExec(b, c, sb.ID, "echo hi")
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkAPI_ResumeExec: an exec on a sandbox in standby (hibernated
// untimed before each op), which resumes it transparently.
func BenchmarkAPI_ResumeExec(b *testing.B) {
	_, c := benchClient(b)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{})
	if err != nil {
		b.Fatal(err)
	}
	mustExec(b, c, sb.ID, "mkdir -p /w; seq 1 1000 > /w/f; X=1; f() { echo f; }")
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		if _, err := c.Hibernate(ctx, sb.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		mustExec(b, c, sb.ID, "echo $X")
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkAPI_Fork: fork one child of a running sandbox with state.
func BenchmarkAPI_Fork(b *testing.B) {
	_, c := benchClient(b)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{})
	if err != nil {
		b.Fatal(err)
	}
	mustExec(b, c, sb.ID, "mkdir -p /w; seq 1 1000 > /w/f; X=1")
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		if _, err := c.Fork(ctx, sb.ID, 1); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}
