package vfs_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/vfs/memdrive"
)

// percentiles reports p50/p95/p99 of per-op durations (as bench_test.go's
// reportPercentiles, which this external test package cannot reach).
func percentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

// BenchmarkRemoteMount is the mount's own cost per call: Stat and an
// uncontended flock/unlock pair in the sandbox's tree, a volume and a
// drive (memdrive, so the drive's own cost is a map lookup).
func BenchmarkRemoteMount(b *testing.B) {
	root := vfs.New(vfs.Options{})
	if err := root.Mount("/vol", vfs.New(vfs.Options{}), vfs.MountOptions{Name: "volume v"}); err != nil {
		b.Fatal(err)
	}
	if err := root.MountRemote("/drive", memdrive.New(0), vfs.MountOptions{Name: "drive d"}); err != nil {
		b.Fatal(err)
	}
	for _, dir := range []string{"/own", "/vol", "/drive"} {
		if err := root.MkdirAll(dir+"/a/b", 0o755); err != nil {
			b.Fatal(err)
		}
		if err := root.WriteFile(dir+"/a/b/f", []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, dir := range []string{"/own", "/vol", "/drive"} {
		b.Run("stat"+dir, func(b *testing.B) {
			var d []time.Duration
			for b.Loop() {
				t := time.Now()
				if _, err := root.Stat(dir + "/a/b/f"); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t))
			}
			percentiles(b, d)
		})
		b.Run("flock"+dir, func(b *testing.B) {
			h, err := root.Open(dir + "/a/b/f")
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			ctx := context.Background()
			var d []time.Duration
			for b.Loop() {
				t := time.Now()
				if err := h.Flock(ctx, vfs.LOCK_EX); err != nil {
					b.Fatal(err)
				}
				if err := h.Flock(ctx, vfs.LOCK_UN); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t))
			}
			percentiles(b, d)
		})
	}
}
