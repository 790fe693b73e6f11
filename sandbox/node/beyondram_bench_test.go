package node_test

// Figures of issue 13's "data beyond RAM" against a real versitygw on
// loopback: go test -run '^$' -bench 'ColdResume|CommitS3|Sequential1GiB|HibernateCommitted' -benchtime 20x ./sandbox/node/
// (Sequential1GiB: -benchtime 2x). Latencies are reported as p50/p95/p99
// over the iterations (n = the iteration count).

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/chunkcache"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/s3/s3test"
	"github.com/warren-sandbox/warren/vfs"
)

func percentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(len(d)), "n")
}

// countingStore counts the GETs (whole and ranged) that reach the store.
type countingStore struct {
	store.Store
	rg   vfs.RangeGetter
	gets atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key)
}

func (s *countingStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	s.gets.Add(1)
	return s.rg.GetRange(ctx, key, off, n)
}

func s3Blobs(b *testing.B) *countingStore {
	srv := s3test.Start(b)
	st := srv.NewStore(b)
	return &countingStore{Store: st, rg: st}
}

// prng fills p with pseudo-random bytes (the same cost on every side of a
// comparison; incompressible, so nothing dedupes).
func prng(r *rand.ChaCha8, p []byte) { r.Read(p) }

// freshCache installs an empty chunk cache of mem bytes.
func freshCache(b *testing.B, mem int64) {
	c, err := chunkcache.Open(chunkcache.Options{Memory: mem})
	if err != nil {
		b.Fatal(err)
	}
	vfs.SetChunkCache(c)
}

// BenchmarkColdResume: load a persisted delta of 1,000 files from S3 with
// nothing cached in the process and read one file (what a resumed
// sandbox's first `cat` touches). gets/op counts the store requests. A
// sandbox's resume adds its StateRef document and one session state.
func BenchmarkColdResume(b *testing.B) {
	st := s3Blobs(b)
	ctx := context.Background()
	base := fstest.MapFS{}
	for _, size := range []int{10 << 20, 100 << 20} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			freshCache(b, 256<<20)
			defer vfs.SetChunkCache(nil)
			f := vfs.New(vfs.Options{Base: base, MaxBytes: 1 << 30})
			r := rand.NewChaCha8([32]byte{byte(size >> 20)})
			buf := make([]byte, size/1000)
			if err := f.MkdirAll("/d", 0o755); err != nil {
				b.Fatal(err)
			}
			for i := range 1000 {
				prng(r, buf)
				if err := f.WriteFile(fmt.Sprintf("/d/f%03d", i), buf, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			ref, err := f.Persist(ctx, st)
			if err != nil {
				b.Fatal(err)
			}
			var d []time.Duration
			var gets int64
			for b.Loop() {
				vfs.DropCaches()
				freshCache(b, 256<<20)
				g0 := st.gets.Load()
				t0 := time.Now()
				g, err := vfs.Load(ctx, vfs.Options{Base: base, MaxBytes: 1 << 30}, st, ref)
				if err != nil {
					b.Fatal(err)
				}
				got, err := g.ReadFile("/d/f500")
				if err != nil || len(got) != len(buf) {
					b.Fatalf("read: %d bytes, %v", len(got), err)
				}
				d = append(d, time.Since(t0))
				gets += st.gets.Load() - g0
			}
			percentiles(b, d)
			b.ReportMetric(float64(gets)/float64(len(d)), "gets/op")
		})
	}
}

// BenchmarkCommitS3: persist a fresh 64 MiB delta (16 files of 4 MiB of
// random data) to versitygw per op: the commit's upload throughput.
func BenchmarkCommitS3(b *testing.B) {
	st := s3Blobs(b)
	ctx := context.Background()
	r := rand.NewChaCha8([32]byte{7})
	buf := make([]byte, 4<<20)
	b.SetBytes(64 << 20)
	var d []time.Duration
	for b.Loop() {
		b.StopTimer()
		f := vfs.New(vfs.Options{Base: fstest.MapFS{}, MaxBytes: 1 << 30})
		for i := range 16 {
			prng(r, buf)
			if err := f.WriteFile(fmt.Sprintf("/f%d", i), buf, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := f.Persist(ctx, st); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	percentiles(b, d)
}

// BenchmarkSequential1GiB: one op writes (or reads) a 1 GiB file in 1 MiB
// calls. vfs/write is the sandbox's write path (chunking, hashing,
// interning; the commit is BenchmarkCommitS3); vfs/read-evicted reads it
// back after a persist to versitygw evicted it, through a 256 MiB chunk
// cache (ranged GETs, read-ahead, verification); tmpfs is the same on the
// host's /dev/shm. Compare MB/s within one run.
func BenchmarkSequential1GiB(b *testing.B) {
	const size, step = 1 << 30, 1 << 20
	ctx := context.Background()
	// Unique data at memcpy cost: a random pool, every 4 KiB of each
	// write stamped with its file offset (so no chunk repeats and nothing
	// dedupes, and the generator does not dominate either side).
	data := make([]byte, step)
	pool := make([]byte, 8*step)
	prng(rand.NewChaCha8([32]byte{9}), pool)
	writeAll := func(b *testing.B, w io.Writer) {
		for off := 0; off < size; off += step {
			copy(data, pool[(off/step)%8*step:])
			for i := 0; i < step; i += 4096 {
				binary.LittleEndian.PutUint64(data[i:], uint64(off+i))
			}
			if _, err := w.Write(data); err != nil {
				b.Fatal(err)
			}
		}
	}
	readAll := func(b *testing.B, rd io.Reader) {
		for {
			_, err := io.ReadFull(rd, data)
			if err == io.EOF {
				return
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	freshCache(b, 256<<20)
	defer vfs.SetChunkCache(nil)
	var f *vfs.FS
	b.Run("vfs/write", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			f = vfs.New(vfs.Options{Base: fstest.MapFS{}, MaxBytes: 2 * size})
			h, err := f.Create("/big")
			if err != nil {
				b.Fatal(err)
			}
			writeAll(b, h)
			if err := h.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	shm, err := os.MkdirTemp("/dev/shm", "warren-bench-")
	if err != nil {
		b.Skip("no /dev/shm: " + err.Error())
	}
	defer os.RemoveAll(shm)
	b.Run("tmpfs/write", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			h, err := os.Create(shm + "/big")
			if err != nil {
				b.Fatal(err)
			}
			writeAll(b, h)
			h.Close()
		}
	})
	st := s3Blobs(b)
	if _, err := f.Persist(ctx, st); err != nil {
		b.Fatal(err)
	}
	b.Run("vfs/read-evicted", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			vfs.DropCaches()
			freshCache(b, 256<<20)
			h, err := f.Open("/big")
			if err != nil {
				b.Fatal(err)
			}
			readAll(b, h)
			h.Close()
		}
	})
	b.Run("tmpfs/read", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			h, err := os.Open(shm + "/big")
			if err != nil {
				b.Fatal(err)
			}
			readAll(b, h)
			h.Close()
		}
	})
}

// BenchmarkHibernateCommitted: a sandbox on a node whose blobs are in
// versitygw appends a line (acked in memory), then hibernates: the time
// from the hibernate call until its generation is published and the
// sandbox dropped from memory.
func BenchmarkHibernateCommitted(b *testing.B) {
	srv := s3test.Start(b)
	o := node.S3Options{URL: "s3://" + srv.NewBucket(b) + "/warren", Endpoint: srv.Endpoint, PathStyle: true, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}
	ctx := context.Background()
	blobs, closeBlobs, err := node.OpenS3(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	defer closeBlobs()
	n, err := node.Open(ctx, node.Options{Dir: b.TempDir(), Blobs: blobs})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close(ctx)
	svc := n.Manager.For("bench")
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		b.Fatal(err)
	}
	var d []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if res, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo %d >> /log", i), Durability: api.DurabilityMemory}, io.Discard, io.Discard); err != nil || res.Exit != 0 {
			b.Fatalf("exec: %+v, %v", res, err)
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	percentiles(b, d)
}
