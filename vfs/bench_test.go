package vfs

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"sort"
	"testing"
	"time"
)

// reportPercentiles reports p50/p95/p99 of per-op durations.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

func BenchmarkFork(b *testing.B) {
	f := New(Options{Base: testBase()})
	for i := 0; i < 1000; i++ {
		must(b, f.WriteFile(fmt.Sprintf("/f%d", i), []byte("x"), 0o644))
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Fork()
	}
}

// BenchmarkNewEntry creates a new file in a directory that already holds
// n entries; each op is timed for the percentiles.
func BenchmarkNewEntry(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("dir=%d", n), func(b *testing.B) {
			f := New(Options{})
			must(b, f.Mkdir("/d", 0o755))
			for i := 0; i < n; i++ {
				must(b, f.WriteFile(fmt.Sprintf("/d/e%d", i), nil, 0o644))
			}
			names := make([]string, b.N)
			for i := range names {
				names[i] = fmt.Sprintf("/d/new%d", i)
			}
			d := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				h, err := f.OpenFile(names[i], O_WRONLY|O_CREATE|O_EXCL, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				h.Close()
				d = append(d, time.Since(t0))
				if n == 10 && i%64 == 63 {
					// Keep the directory at about n entries.
					b.StopTimer()
					for j := i - 63; j <= i; j++ {
						f.Remove(names[j])
					}
					b.StartTimer()
				}
			}
			b.StopTimer()
			reportPercentiles(b, d)
		})
	}
}

func BenchmarkRead1MiB(b *testing.B) {
	f := New(Options{})
	data := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(data)
	must(b, f.WriteFile("/big", data, 0o644))
	buf := make([]byte, 1<<20)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		h, err := f.Open("/big")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(h, buf); err != nil {
			b.Fatal(err)
		}
		h.Close()
	}
}

func BenchmarkStat(b *testing.B) {
	f := New(Options{})
	must(b, f.MkdirAll("/usr/local/lib", 0o755))
	must(b, f.WriteFile("/usr/local/lib/x.so", []byte("x"), 0o644))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Stat("/usr/local/lib/x.so"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenReadSmall(b *testing.B) {
	f := New(Options{})
	must(b, f.WriteFile("/etc-passwd", []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644))
	buf := make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		h, err := f.Open("/etc-passwd")
		if err != nil {
			b.Fatal(err)
		}
		h.Read(buf)
		h.Close()
	}
}

func BenchmarkCreateSmall(b *testing.B) {
	f := New(Options{})
	data := []byte("hello world\n")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := f.WriteFile("/tmpfile", data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// delta10MB builds 1,000 files of 10 KB (10 MB) of distinct data.
func delta10MB(b *testing.B, seed int64) *FS {
	f := New(Options{})
	rnd := rand.New(rand.NewSource(seed))
	buf := make([]byte, 10000)
	for d := 0; d < 10; d++ {
		must(b, f.Mkdir(fmt.Sprintf("/d%d", d), 0o755))
		for i := 0; i < 100; i++ {
			rnd.Read(buf)
			must(b, f.WriteFile(fmt.Sprintf("/d%d/f%d", d, i), buf, 0o644))
		}
	}
	return f
}

// BenchmarkPersist10MB persists a fresh 10 MB / 1,000-file delta into an
// empty in-memory store per op (the store itself is package store's).
func BenchmarkPersist10MB(b *testing.B) {
	ctx := context.Background()
	var d []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f := delta10MB(b, int64(i))
		st := newMemStore()
		b.StartTimer()
		t0 := time.Now()
		if _, err := f.Persist(ctx, st); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, d)
}

// BenchmarkReload10MB loads a persisted 10 MB delta and reads every file:
// cold = a fresh Load whose nodes and chunks were never fetched (chunk and
// pack caches cleared, distinct data per op), warm = reading again once
// everything is loaded. store=mem reads whole packs (its reader cannot
// seek), store=mem-ranged reads one blob at a time, as from store/dir.
func BenchmarkReload10MB(b *testing.B) {
	for _, ranged := range []bool{false, true} {
		name := "mem"
		if ranged {
			name = "mem-ranged"
		}
		b.Run("store="+name, func(b *testing.B) {
			benchReload(b, func() BlobStore { st := newMemStore(); st.ranged = ranged; return st })
		})
	}
}

func readAll10MB(b *testing.B, f *FS) {
	for d := 0; d < 10; d++ {
		for i := 0; i < 100; i++ {
			if _, err := f.ReadFile(fmt.Sprintf("/d%d/f%d", d, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchReload(b *testing.B, newStore func() BlobStore) {
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		var d []time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			st := newStore()
			src := delta10MB(b, int64(1000+i))
			ref, err := src.Persist(ctx, st)
			must(b, err)
			src = nil
			clearChunkCache()
			clearPackCache()
			b.StartTimer()
			t0 := time.Now()
			f, err := Load(ctx, Options{}, st, ref)
			must(b, err)
			readAll10MB(b, f)
			d = append(d, time.Since(t0))
		}
		b.StopTimer()
		reportPercentiles(b, d)
	})
	b.Run("warm", func(b *testing.B) {
		st := newStore()
		ref, err := delta10MB(b, 7).Persist(ctx, st)
		must(b, err)
		f, err := Load(ctx, Options{}, st, ref)
		must(b, err)
		readAll10MB(b, f)
		var d []time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			readAll10MB(b, f)
			d = append(d, time.Since(t0))
		}
		b.StopTimer()
		reportPercentiles(b, d)
	})
}

// clearChunkCache forgets every interned chunk (benchmarks only).
func clearChunkCache() {
	chunkTable.Lock()
	clear(chunkTable.m)
	chunkTable.Unlock()
}
