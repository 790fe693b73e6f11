package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"sort"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
)

func percentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.95), "p95-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(float64(len(ds)), "n")
}

// benchBox is a running sandbox holding a 1 MB file and some shell state.
func benchBox(b *testing.B) (api.Service, string) {
	p := openParts(b, b.TempDir())
	m := newManager(b, p)
	b.Cleanup(func() {
		m.Close(context.Background())
		p.close()
	})
	svc := m.For("bench")
	sb, err := svc.Create(context.Background(), api.CreateRequest{StandbyAfter: api.Duration(-1)})
	if err != nil {
		b.Fatal(err)
	}
	write1MB(b, svc, sb.ID, "/data/big")
	if _, err := svc.Exec(context.Background(), sb.ID, api.ExecRequest{Script: "cd /data; X=1; f() { echo f; }"}, nil, nil); err != nil {
		b.Fatal(err)
	}
	return svc, sb.ID
}

func write1MB(b *testing.B, svc api.Service, id, path string) {
	data := make([]byte, 1<<20)
	rand.Read(data)
	if err := svc.WriteFile(context.Background(), id, api.WriteFileRequest{Path: path, Data: bytes.NewReader(data)}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkHibernate_1MBNew: hibernate a sandbox whose 1 MB delta was
// all written since the last hibernate (every chunk is new to the store).
func BenchmarkHibernate_1MBNew(b *testing.B) {
	svc, id := benchBox(b)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		write1MB(b, svc, id, "/data/big") // resumes, replaces the 1 MB
		b.StartTimer()
		t0 := time.Now()
		if _, err := svc.Hibernate(ctx, id); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkHibernate_1MBSmallChange: the steady state: a sandbox holding a
// 1 MB delta, with one small file changed since its last hibernate.
func BenchmarkHibernate_1MBSmallChange(b *testing.B) {
	svc, id := benchBox(b)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if err := svc.WriteFile(ctx, id, api.WriteFileRequest{Path: "/data/small", Data: bytes.NewReader([]byte{byte(i), byte(i >> 8)})}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := svc.Hibernate(ctx, id); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkResume_1MB: explicit resume of a hibernated sandbox with a
// 1 MB delta (the vfs loads lazily: data is read on first use).
func BenchmarkResume_1MB(b *testing.B) {
	svc, id := benchBox(b)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		if _, err := svc.Hibernate(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := svc.Resume(ctx, id); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkResumeExec_1MB: resume by an exec that needs the session state
// and reads the whole 1 MB file (the cold path end to end).
func BenchmarkResumeExec_1MB(b *testing.B) {
	svc, id := benchBox(b)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		if _, err := svc.Hibernate(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		res, err := svc.Exec(ctx, id, api.ExecRequest{Script: "wc -c < big; echo $X"}, nil, nil)
		if err != nil || res.Exit != 0 {
			b.Fatal(res, err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}
