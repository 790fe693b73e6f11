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

// RunBenchmarks runs Put (overwriting one of benchKeys keys), PutNew (a
// fresh key each time, as content-addressed packs are written), Get and
// GetRange (4 KiB from the middle; stores that are RangeGetters) of 4 KiB
// and 1 MiB objects. Besides ns/op it reports p50/p95/p99 latency (ns) over
// the b.N timed operations, and MB/s.
func RunBenchmarks(b *testing.B, newStore func(b *testing.B) store.Store) {
	for _, size := range []int{4 << 10, 1 << 20} {
		name := fmt.Sprintf("%dKiB", size>>10)
		b.Run("Put/"+name, func(b *testing.B) { benchPut(b, newStore(b), size, benchKey) })
		b.Run("PutNew/"+name, func(b *testing.B) { benchPut(b, newStore(b), size, newKey) })
		b.Run("Get/"+name, func(b *testing.B) { benchGet(b, newStore(b), size, false) })
		if _, ok := newStore(b).(store.RangeGetter); ok {
			b.Run("GetRange/"+name, func(b *testing.B) { benchGet(b, newStore(b), size, true) })
		}
	}
}

func benchKey(i int) string { return fmt.Sprintf("bench/%02x/%064x", i%benchKeys%251, i%benchKeys) }

// newKey spreads fresh content-addressed-looking keys over the 256 fan-out
// directories of one prefix, as vfs packs are.
func newKey(i int) string { return fmt.Sprintf("new/%02x%062x", i%256, i) }

func benchPut(b *testing.B, s store.Store, size int, key func(int) string) {
	data := payload(1, size)
	lat := make([]time.Duration, 0, b.N)
	r := &bytesReader{}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.reset(data)
		t0 := time.Now()
		if err := s.Put(ctx, key(i), r); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// benchGet reads whole objects, or with ranged a 4 KiB range from the
// middle of each.
func benchGet(b *testing.B, s store.Store, size int, ranged bool) {
	data := payload(1, size)
	for i := range benchKeys {
		if err := store.PutBytes(ctx, s, benchKey(i), data); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]byte, 256<<10)
	lat := make([]time.Duration, 0, b.N)
	want := int64(size)
	if ranged {
		want = 4 << 10
	}
	b.SetBytes(want)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		var rc io.ReadCloser
		var err error
		if ranged {
			rc, err = store.GetRange(ctx, s, benchKey(i), int64(size)/2-want/2, want)
		} else {
			rc, err = s.Get(ctx, benchKey(i))
		}
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, onlyReader{rc}, buf)
		rc.Close()
		if err != nil || n != want {
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
