package vfs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store/dir"
)

// The local directory store (package store/dir) satisfies BlobStore.
var _ BlobStore = (*dir.Store)(nil)

// TestPersistDirStore round-trips a delta through the real local store.
func TestPersistDirStore(t *testing.T) {
	ctx := context.Background()
	st, err := dir.Open(t.TempDir())
	must(t, err)
	defer st.Close()
	f := New(Options{Base: testBase()})
	must(t, f.MkdirAll("/x/y", 0o755))
	must(t, f.WriteFile("/x/y/big", make([]byte, 300000), 0o600))
	must(t, f.Remove("/etc/hosts"))
	ref, err := f.Persist(ctx, st)
	must(t, err)
	g, err := Load(ctx, Options{Base: testBase()}, st, ref)
	must(t, err)
	compareFS(t, f, g)
}

// BenchmarkPersist10MBDir persists a fresh 10 MB / 1,000-file delta into
// an empty local directory store (fsync on, as in production) per op.
func BenchmarkPersist10MBDir(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", sync), func(b *testing.B) {
			ctx := context.Background()
			var d []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f := delta10MB(b, int64(i))
				var opts []dir.Option
				if !sync {
					opts = append(opts, dir.WithoutSync())
				}
				st, err := dir.Open(b.TempDir(), opts...)
				must(b, err)
				b.StartTimer()
				t0 := time.Now()
				if _, err := f.Persist(ctx, st); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t0))
				b.StopTimer()
				st.Close()
			}
			reportPercentiles(b, d)
		})
	}
}

func openDir(b *testing.B, sync bool) *dir.Store {
	var opts []dir.Option
	if !sync {
		opts = append(opts, dir.WithoutSync())
	}
	st, err := dir.Open(b.TempDir(), opts...)
	must(b, err)
	b.Cleanup(func() { st.Close() })
	return st
}

// BenchmarkReload10MBDir is BenchmarkReload10MB through store/dir (ranged
// reads from its *os.File).
func BenchmarkReload10MBDir(b *testing.B) {
	benchReload(b, func() BlobStore { return openDir(b, false) })
}

// BenchmarkHibernate times the persist of a hibernate: a sandbox whose
// 1 MB delta (100 files of 10 KB) was persisted before changes one small
// file (delta) or a 10 KB file (delta10k) and persists again through
// store/dir with fsync. first = persisting the whole 1 MB delta once;
// delta-nosync = delta without fsync; delta-mem = delta into memory (the
// vfs's own share of the time). The store's fan-out directories exist
// beforehand, as in a store that has run for a while (creating one costs
// extra fsyncs once).
func BenchmarkHibernate(b *testing.B) {
	ctx := context.Background()
	mk := func(seed int64) *FS {
		f := New(Options{})
		rnd := rand.New(rand.NewSource(seed))
		buf := make([]byte, 10000)
		must(b, f.MkdirAll("/home/agent/work", 0o755))
		for i := 0; i < 100; i++ {
			rnd.Read(buf)
			must(b, f.WriteFile(fmt.Sprintf("/home/agent/work/f%d", i), buf, 0o644))
		}
		return f
	}
	for _, mode := range []string{"delta", "delta10k", "first", "delta-nosync", "delta-mem"} {
		b.Run(mode, func(b *testing.B) {
			var st BlobStore
			if mode == "delta-mem" {
				st = newMemStore()
			} else {
				d := b.TempDir()
				pre, err := dir.Open(d, dir.WithoutSync())
				must(b, err)
				for i := 0; i < 256; i++ {
					must(b, pre.Put(ctx, fmt.Sprintf("vfs/pack/%02x", i), bytes.NewReader(nil)))
				}
				pre.Close()
				var opts []dir.Option
				if mode == "delta-nosync" {
					opts = append(opts, dir.WithoutSync())
				}
				ds, err := dir.Open(d, opts...)
				must(b, err)
				b.Cleanup(func() { ds.Close() })
				st = ds
			}
			f := mk(1)
			if mode != "first" {
				_, err := f.Persist(ctx, st)
				must(b, err)
			}
			data := make([]byte, 10000)
			var d []time.Duration
			objects := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				switch mode {
				case "first":
					f = mk(int64(i + 2))
				case "delta", "delta-nosync", "delta-mem":
					must(b, f.WriteFile("/home/agent/.bash_history", fmt.Appendf(nil, "echo %d\n", i), 0o600))
				case "delta10k":
					data[i%len(data)]++
					must(b, f.WriteFile(fmt.Sprintf("/home/agent/work/f%d", i%100), data, 0o644))
				}
				b.StartTimer()
				t0 := time.Now()
				_, ps, err := f.PersistStats(ctx, st)
				if err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t0))
				objects += ps.Packs
			}
			b.StopTimer()
			b.ReportMetric(float64(objects)/float64(b.N), "objects/op")
			reportPercentiles(b, d)
		})
	}
}

// TestLoadDirConcurrent reads a lazily loaded delta from store/dir from
// several goroutines while the open-pack readers are evicted under them:
// no read may fail or see wrong bytes.
func TestLoadDirConcurrent(t *testing.T) {
	ctx := context.Background()
	st, err := dir.Open(t.TempDir(), dir.WithoutSync())
	must(t, err)
	defer st.Close()
	f := New(Options{})
	must(t, f.Mkdir("/d", 0o755))
	rnd := rand.New(rand.NewSource(9))
	want := map[string][]byte{}
	for i := 0; i < 200; i++ {
		b := make([]byte, 5000+rnd.Intn(60000))
		rnd.Read(b)
		p := fmt.Sprintf("/d/f%d", i)
		want[p] = b
		must(t, f.WriteFile(p, b, 0o644))
	}
	ref, err := f.Persist(ctx, st)
	must(t, err)
	clearChunkCache()
	clearPackCache()
	g, err := Load(ctx, Options{}, st, ref)
	must(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			closeOpenPacks()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func(w int) {
			for i := w; i < 200; i += 4 {
				p := fmt.Sprintf("/d/f%d", i)
				b, err := g.ReadFile(p)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(b, want[p]) {
					errs <- fmt.Errorf("%s: wrong content", p)
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	<-done
}
