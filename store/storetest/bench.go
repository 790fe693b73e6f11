package storetest

import (
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store"
)

// benchKeys is how many distinct keys a benchmark cycles through: enough to
// leave caches of a single hot key, few enough that the data set stays small
// (256 MiB at 1 MiB).
const benchKeys = 256

// RunBenchmarks runs Put and Get of 4 KiB and 1 MiB objects. Besides ns/op
// it reports p50/p95/p99 latency (ns) over the b.N timed operations, and
// MB/s.
func RunBenchmarks(b *testing.B, newStore func(b *testing.B) store.Store) {
	for _, size := range []int{4 << 10, 1 << 20} {
		name := fmt.Sprintf("%dKiB", size>>10)
		b.Run("Put/"+name, func(b *testing.B) { benchPut(b, newStore(b), size) })
		b.Run("Get/"+name, func(b *testing.B) { benchGet(b, newStore(b), size) })
	}
}

func benchKey(i int) string { return fmt.Sprintf("bench/%02x/%064x", i%benchKeys%251, i%benchKeys) }

func benchPut(b *testing.B, s store.Store, size int) {
	data := payload(1, size)
	lat := make([]time.Duration, 0, b.N)
	r := &bytesReader{}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.reset(data)
		t0 := time.Now()
		if err := s.Put(ctx, benchKey(i), r); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func benchGet(b *testing.B, s store.Store, size int) {
	data := payload(1, size)
	for i := range benchKeys {
		if err := store.PutBytes(ctx, s, benchKey(i), data); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]byte, 256<<10)
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		rc, err := s.Get(ctx, benchKey(i))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, onlyReader{rc}, buf)
		rc.Close()
		if err != nil || n != int64(size) {
			b.Fatalf("get: %d bytes, %v", n, err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

type onlyReader struct{ io.Reader }

// bytesReader is a resettable reader, so the loop allocates nothing of its own.
type bytesReader struct{ b []byte }

func (r *bytesReader) reset(b []byte) { r.b = b }
func (r *bytesReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}
