package drivetest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/drive"
)

// ReportPercentiles reports p50/p95/p99 of lat and its n.
func ReportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
	b.ReportMetric(at(0.99), "p99-ns")
	b.ReportMetric(float64(len(lat)), "n")
}

// Bench runs the drive benchmarks on f.
func Bench(b *testing.B, f Fixture) {
	b.Run("SequentialWrite64MiB", func(b *testing.B) { benchSequential(b, f, true) })
	b.Run("SequentialRead64MiB", func(b *testing.B) { benchSequential(b, f, false) })
	b.Run("SmallFileCreate", func(b *testing.B) { benchSmall(b, f) })
	b.Run("Visibility", func(b *testing.B) { benchVisibility(b, f) })
}

var benchN atomic.Int64

// uniq names a drive: a benchmark function runs more than once per fixture.
func uniq(name string) string { return fmt.Sprintf("%s%d", name, benchN.Add(1)) }

const seqSize = 64 << 20

// benchSequential writes a 64 MiB file on node a (4 MiB writes, Close
// included: that is when it is uploaded), or reads it whole on node b,
// whose 32 MiB chunk cache is smaller than the file, so every read
// fetches from the blob store.
func benchSequential(b *testing.B, f Fixture, write bool) {
	a, c := f.Nodes(b, drive.Options{})
	da, db := Open(b, a, c, uniq("seq"), 0)
	data := make([]byte, seqSize)
	rand.Read(data)
	var closes []time.Duration
	put := func() error {
		h, err := da.OpenFile("/big", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		for off := 0; off < len(data); off += 4 << 20 {
			if _, err := h.Write(data[off : off+4<<20]); err != nil {
				return err
			}
		}
		start := time.Now()
		err = h.Close()
		closes = append(closes, time.Since(start))
		return err
	}
	if !write {
		if err := put(); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]byte, 1<<20)
	var lat []time.Duration
	b.SetBytes(seqSize)
	b.ResetTimer()
	for i := range b.N {
		data[0] = byte(i) // a new first chunk each time
		start := time.Now()
		if write {
			if err := put(); err != nil {
				b.Fatal(err)
			}
		} else {
			h, err := db.OpenFile("/big", os.O_RDONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{h}, buf)
			h.Close()
			if err != nil || n != seqSize {
				b.Fatalf("read %d bytes: %v", n, err)
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	ReportPercentiles(b, lat)
	if write {
		slices.Sort(closes)
		b.ReportMetric(float64(closes[len(closes)/2].Nanoseconds()), "close-p50-ns")
	}
}

// benchSmall: create, write 1 KiB and close a new file, on one node.
func benchSmall(b *testing.B, f Fixture) {
	a, c := f.Nodes(b, drive.Options{})
	da, _ := Open(b, a, c, uniq("small"), 0)
	body := bytes.Repeat([]byte("x"), 1024)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := WriteFile(da, "/f"+strconv.Itoa(i), body); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	ReportPercentiles(b, lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// benchVisibility: node a rewrites a 4 KiB file; the time from its
// Close returning to node b's open and read returning the new content.
// The first open must see it (close-to-open): a miss fails.
func benchVisibility(b *testing.B, f Fixture) {
	a, c := f.Nodes(b, drive.Options{})
	da, db := Open(b, a, c, uniq("vis"), 0)
	body := make([]byte, 4096)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		copy(body, strconv.Itoa(i)+"\n")
		if err := WriteFile(da, "/v", body); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		got, err := ReadFile(db, "/v")
		lat = append(lat, time.Since(start))
		if err != nil || !bytes.Equal(got, body) {
			b.Fatalf("node b's first open after a's Close: %.10q, %v; want %.10q", got, err, body)
		}
	}
	b.StopTimer()
	ReportPercentiles(b, lat)
}
