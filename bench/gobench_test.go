package bench

import (
	"context"
	"testing"
	"time"
)

// Go benchmarks of the in-process workloads, for `go test -bench` and
// benchstat; each op is timed and the nearest-rank p50/p95/p99 reported
// next to ns/op and allocs/op. `warren bench` is the comparable suite.

func benchRuntime(b *testing.B) *ShellRuntime {
	b.Helper()
	tree, err := LoadBaseTree("")
	if err != nil {
		b.Fatal(err)
	}
	rt, err := NewShellRuntime(tree)
	if err != nil {
		b.Fatal(err)
	}
	return rt
}

func reportPercentiles(b *testing.B, samples []float64) {
	s := Summarize(samples, 0)
	b.ReportMetric(s.P50, "p50-us")
	b.ReportMetric(s.P95, "p95-us")
	b.ReportMetric(s.P99, "p99-us")
}

func benchWarm(b *testing.B, script string, c Check) {
	ctx := context.Background()
	box, err := benchRuntime(b).New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var buf buffers
	samples := make([]float64, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		buf.reset()
		t0 := time.Now()
		st, err := box.Run(ctx, script, &buf.out, &buf.err)
		samples = append(samples, Micros(time.Since(t0)))
		if err := verify(script, st, err, buf.out.Bytes(), buf.err.Bytes(), c); err != nil {
			b.Fatal(err)
		}
	}
	reportPercentiles(b, samples)
}

func BenchmarkExecRTT(b *testing.B)      { benchWarm(b, CmdRTT, isHi) }
func BenchmarkExecPipeline(b *testing.B) { benchWarm(b, CmdPipe, isOne) }

func BenchmarkCreateFirstExec(b *testing.B) {
	ctx := context.Background()
	rt := benchRuntime(b)
	var buf buffers
	samples := make([]float64, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		buf.reset()
		t0 := time.Now()
		box, err := rt.New(ctx)
		if err != nil {
			b.Fatal(err)
		}
		st, err := box.Run(ctx, CmdFirst, &buf.out, &buf.err)
		samples = append(samples, Micros(time.Since(t0)))
		if err := verify(CmdFirst, st, err, buf.out.Bytes(), buf.err.Bytes(), isHello); err != nil {
			b.Fatal(err)
		}
	}
	reportPercentiles(b, samples)
}

func BenchmarkFork(b *testing.B) {
	ctx := context.Background()
	parent, err := benchRuntime(b).New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var buf buffers
	if err := prepare(ctx, parent, &buf, 7); err != nil {
		b.Fatal(err)
	}
	samples := make([]float64, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		child, err := parent.Fork()
		samples = append(samples, Micros(time.Since(t0)))
		if err != nil || child == nil {
			b.Fatal(err)
		}
	}
	reportPercentiles(b, samples)
	if err := buf.run(ctx, parent, CmdForkRead, isHello); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkHeartbeat is density's service time: the heartbeat on a warm
// sandbox whose /log is truncated every 10 runs (a density agent appends
// one line per period over a 10 s window).
func BenchmarkHeartbeat(b *testing.B) {
	ctx := context.Background()
	box, err := benchRuntime(b).New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var buf buffers
	samples := make([]float64, 0, b.N)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i++; i%10 == 0 {
			b.StopTimer()
			if err := buf.run(ctx, box, ": > /log", isEmpty); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		buf.reset()
		t0 := time.Now()
		st, err := box.Run(ctx, CmdHeartbeat, &buf.out, &buf.err)
		samples = append(samples, Micros(time.Since(t0)))
		if err := verify(CmdHeartbeat, st, err, buf.out.Bytes(), buf.err.Bytes(), isCount); err != nil {
			b.Fatal(err)
		}
	}
	reportPercentiles(b, samples)
}

// BenchmarkHeartbeatFirst is the first heartbeat of a freshly created
// sandbox, the first of density's ten execs per agent: sandboxes are made
// untimed in batches, and only their first Run is timed (the session's
// first environ, the delta's first directory copy and /log's creation).
func BenchmarkHeartbeatFirst(b *testing.B) {
	ctx := context.Background()
	rt := benchRuntime(b)
	var buf buffers
	samples := make([]float64, 0, b.N)
	const batch = 1000
	boxes := make([]Box, 0, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(boxes) == 0 {
			b.StopTimer()
			for range min(batch, b.N-i) {
				box, err := rt.New(ctx)
				if err != nil {
					b.Fatal(err)
				}
				boxes = append(boxes, box)
			}
			b.StartTimer()
		}
		box := boxes[len(boxes)-1]
		boxes = boxes[:len(boxes)-1]
		buf.reset()
		t0 := time.Now()
		st, err := box.Run(ctx, CmdHeartbeat, &buf.out, &buf.err)
		samples = append(samples, Micros(time.Since(t0)))
		if err := verify(CmdHeartbeat, st, err, buf.out.Bytes(), buf.err.Bytes(), isCount); err != nil {
			b.Fatal(err)
		}
	}
	reportPercentiles(b, samples)
}
