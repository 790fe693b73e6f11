package sandbox_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// BenchmarkExec_NoDurable: an exec that appends a line to a file, on a
// Manager without a write log (the memory-only path, as before issue 13).
func BenchmarkExec_NoDurable(b *testing.B) {
	p := openParts(b, b.TempDir())
	m := newManager(b, p)
	b.Cleanup(func() { m.Close(context.Background()); p.close() })
	benchExecs(b, m.For("bench"), "")
}

// BenchmarkExecAck: the same exec on a durable Manager, acked at each
// level, one at a time (p50/p95/p99 per exec; local pays one fsync of
// the write log, committed a commit to the blob directory and bbolt).
func BenchmarkExecAck(b *testing.B) {
	for _, level := range []string{api.DurabilityMemory, api.DurabilityLocal, api.DurabilityCommitted} {
		b.Run(level, func(b *testing.B) {
			d := b.TempDir()
			p := openParts(b, d)
			m, l := durableManager(b, p, d, "bench", time.Hour)
			b.Cleanup(func() { m.Close(context.Background()); l.Close(); p.close() })
			benchExecs(b, m.For("bench"), level)
		})
	}
}

func benchExecs(b *testing.B, svc api.Service, level string) {
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: api.Duration(-1)})
	if err != nil {
		b.Fatal(err)
	}
	ds := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		i++
		t0 := time.Now()
		if _, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo %d >> /f", i), Durability: level}, nil, nil); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkExecAck_Paced1000: 1,000 execs/s offered across 16 sandboxes
// (each exec appends a line), the load point for the `local`
// target; concurrent acks share the write log's fsyncs (group commit).
// Reports per-exec latency and the records per fsync.
func BenchmarkExecAck_Paced1000(b *testing.B) {
	for _, level := range []string{api.DurabilityMemory, api.DurabilityLocal} {
		b.Run(level, func(b *testing.B) {
			d := b.TempDir()
			p := openParts(b, d)
			m, l := durableManager(b, p, d, "bench", time.Hour)
			b.Cleanup(func() { m.Close(context.Background()); l.Close(); p.close() })
			svc := m.For("bench")
			ctx := context.Background()
			const boxes = 16
			ids := make([]string, boxes)
			for i := range ids {
				sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: api.Duration(-1)})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = sb.ID
			}
			n := b.N
			ds := make([]time.Duration, n)
			before := m.DurableStats().Log
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range boxes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := w; k < n; k += boxes {
						// exec k is due at start + k ms: 1,000/s in all.
						if d := time.Until(start.Add(time.Duration(k) * time.Millisecond)); d > 0 {
							time.Sleep(d)
						}
						t0 := time.Now()
						if _, err := svc.Exec(ctx, ids[w], api.ExecRequest{Script: fmt.Sprintf("echo %d >> /f", k), Durability: level}, nil, nil); err != nil {
							b.Error(err)
							return
						}
						ds[k] = time.Since(t0)
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			percentiles(b, ds)
			after := m.DurableStats().Log
			if s := after.Syncs - before.Syncs; s > 0 {
				b.ReportMetric(float64(after.Appends-before.Appends)/float64(s), "records/fsync")
				b.ReportMetric(float64(after.Bytes-before.Bytes)/float64(after.Appends-before.Appends), "B/record")
			}
		})
	}
}
