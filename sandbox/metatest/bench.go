package metatest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/sandbox"
)

// RunBenchmarks measures the committer's metadata round trips: Publish
// (one head moving, generation after generation), the custody pair an
// upload takes (AddCustody + ReleaseCustody) and Head. Besides ns/op each
// reports p50/p95/p99 latency (ns) over the b.N timed operations.
// newStore returns an empty store and arranges its cleanup.
func RunBenchmarks(b *testing.B, newStore func(b *testing.B) sandbox.DurableMeta) {
	b.Run("Publish", func(b *testing.B) {
		m := newStore(b)
		claimed(b, m, "sb", "a")
		lat := make([]time.Duration, 0, b.N)
		for i := uint64(0); b.Loop(); i++ {
			t0 := time.Now()
			if _, err := m.Publish(ctx, commit("sb", "a", 1, i, fmt.Sprint("c", i))); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat)
	})
	b.Run("Custody", func(b *testing.B) {
		m := newStore(b)
		keys := []string{"vfs/pack/aa", "vfs/pack/bb", "vfs/pack/cc"}
		lat := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			t0 := time.Now()
			up := fmt.Sprint("up-", i)
			if _, err := m.AddCustody(ctx, sandbox.CustodyRecord{Upload: up, Node: "a", Sandbox: "sb", Epoch: 1, Keys: keys}, time.Minute); err != nil {
				b.Fatal(err)
			}
			if err := m.ReleaseCustody(ctx, up); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat)
	})
	b.Run("Head", func(b *testing.B) {
		m := newStore(b)
		claimed(b, m, "sb", "a")
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			if _, err := m.Head(ctx, "sb"); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat)
	})
}

func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}
