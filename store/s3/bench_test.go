package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/s3/s3test"
	"github.com/warren-sandbox/warren/store/storetest"
)

// BenchmarkStore: the shared store benchmarks (4 KiB and 1 MiB objects)
// against versitygw on loopback.
func BenchmarkStore(b *testing.B) {
	srv := s3test.Start(b)
	storetest.RunBenchmarks(b, func(b *testing.B) store.Store { return srv.NewStore(b) })
}

func percentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat)), "n")
}

const packSize = 4 << 20

// Benchmark4MiB: Put and Get throughput of 4 MiB objects (a vfs pack's
// size), one stream and four concurrent streams (MB/s over all streams).
func Benchmark4MiB(b *testing.B) {
	srv := s3test.Start(b)
	ctx := context.Background()
	data := make([]byte, packSize)
	rand.NewChaCha8([32]byte{1}).Read(data)
	for _, streams := range []int{1, 4} {
		b.Run(fmt.Sprintf("Put/streams=%d", streams), func(b *testing.B) {
			s := srv.NewStore(b)
			var mu sync.Mutex
			var lat []time.Duration
			b.SetBytes(packSize * int64(streams))
			i := 0
			for b.Loop() {
				var wg sync.WaitGroup
				for k := range streams {
					key := fmt.Sprintf("packs/%08d-%d", i, k)
					wg.Go(func() {
						t0 := time.Now()
						if err := s.Put(ctx, key, bytes.NewReader(data)); err != nil {
							b.Error(err)
						}
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					})
				}
				wg.Wait()
				i++
			}
			percentiles(b, lat)
		})
		b.Run(fmt.Sprintf("Get/streams=%d", streams), func(b *testing.B) {
			s := srv.NewStore(b)
			for k := range 8 {
				if err := store.PutBytes(ctx, s, fmt.Sprintf("packs/%d", k), data); err != nil {
					b.Fatal(err)
				}
			}
			var mu sync.Mutex
			var lat []time.Duration
			b.SetBytes(packSize * int64(streams))
			i := 0
			for b.Loop() {
				var wg sync.WaitGroup
				for k := range streams {
					key := fmt.Sprintf("packs/%d", (i*streams+k)%8)
					wg.Go(func() {
						buf := make([]byte, 256<<10)
						t0 := time.Now()
						rc, err := s.Get(ctx, key)
						if err != nil {
							b.Error(err)
							return
						}
						n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{rc}, buf)
						rc.Close()
						if err != nil || n != packSize {
							b.Errorf("get %s: %d bytes, %v", key, n, err)
						}
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					})
				}
				wg.Wait()
				i++
			}
			percentiles(b, lat)
		})
	}
}

// BenchmarkGetRange: latency of ranged GETs at random offsets in 4 MiB
// packs, as the vfs loader reads single blobs out of packs.
func BenchmarkGetRange(b *testing.B) {
	srv := s3test.Start(b)
	ctx := context.Background()
	s := srv.NewStore(b)
	data := make([]byte, packSize)
	rand.NewChaCha8([32]byte{2}).Read(data)
	for k := range 8 {
		if err := store.PutBytes(ctx, s, fmt.Sprintf("packs/%d", k), data); err != nil {
			b.Fatal(err)
		}
	}
	for _, size := range []int64{4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, uint64(size)))
			buf := make([]byte, size)
			var lat []time.Duration
			b.SetBytes(size)
			i := 0
			for b.Loop() {
				off := rng.Int64N(packSize - size)
				t0 := time.Now()
				rc, err := s.GetRange(ctx, fmt.Sprintf("packs/%d", i%8), off, size)
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.ReadFull(rc, buf)
				rc.Close()
				if err != nil || !bytes.Equal(buf, data[off:off+size]) {
					b.Fatalf("range %d+%d: %v", off, size, err)
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			percentiles(b, lat)
		})
	}
}
