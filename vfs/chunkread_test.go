package vfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/chunkcache"
)

// withCache installs a chunk cache of mem bytes (memory only) for one test.
func withCache(t *testing.T, mem int64) *chunkcache.Cache {
	t.Helper()
	c, err := chunkcache.Open(chunkcache.Options{Memory: mem})
	must(t, err)
	SetChunkCache(c)
	t.Cleanup(func() { SetChunkCache(nil) })
	return c
}

// downStore is a ranged store that can be taken down: its reads then block
// until their context ends (an unresponsive S3) or fail at once.
type downStore struct {
	rangeGetStore
	hang, fail atomic.Bool
	ranges     atomic.Int64
}

func (s *downStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	s.ranges.Add(1)
	if s.hang.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.fail.Load() {
		return nil, errors.New("connection refused")
	}
	return s.rangeGetStore.GetRange(ctx, key, off, n)
}

func cryptoBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func heldChunks(f *FS, name string) (held, total int) {
	in := f.cur.Load().get(mustIno(f, name))
	for _, e := range in.ext {
		if e.kind == extChunk {
			total++
			if e.ch.data.Load() != nil {
				held++
			}
		}
	}
	return held, total
}

func mustIno(f *FS, name string) uint64 {
	st, err := f.Stat(name)
	if err != nil {
		panic(err)
	}
	return st.Sys().(*Stat).Ino
}

// TestEvictAndReadBack: after a persist, a file's chunks leave memory, and
// reading the file fetches them (read-ahead ranges, verified) back through
// a cache smaller than the file.
func TestEvictAndReadBack(t *testing.T) {
	withCache(t, 1<<20)
	ctx := context.Background()
	st := &downStore{rangeGetStore: rangeGetStore{newMemStore()}}
	f := New(Options{Base: testBase(), MaxBytes: 64 << 20})
	data := cryptoBytes(t, 8<<20)
	must(t, f.WriteFile("/big", data, 0o644))
	if held, total := heldChunks(f, "/big"); held != total || total < 32 {
		t.Fatalf("before persist: %d of %d chunks held, want all (and many)", held, total)
	}
	before := ReadChunkStats()
	_, err := f.Persist(ctx, st)
	must(t, err)
	held, total := heldChunks(f, "/big")
	if held != 0 {
		t.Fatalf("after persist: %d of %d chunks still held in memory", held, total)
	}
	if got := ReadChunkStats().Released - before.Released; got < int64(total) {
		t.Fatalf("released %d chunks, want at least %d", got, total)
	}
	clearPackCache()
	got, err := f.ReadFile("/big")
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Fatal("read back differs from what was written")
	}
	// Sequential reads coalesce neighbours into ranged GETs of up to 4 MiB.
	if n := st.ranges.Load(); n >= int64(total)/2 {
		t.Fatalf("%d ranged GETs for %d chunks: read-ahead did not coalesce", n, total)
	}
	// A fork shares the chunks and reads them the same way.
	g := f.Fork()
	got, err = g.ReadFile("/big")
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Fatal("fork reads other bytes")
	}
}

// TestEvictedReadStoreDown: a read of an evicted chunk while the store is
// down fails with EIO and a message saying why, within the fetch timeout
// when the store hangs.
func TestEvictedReadStoreDown(t *testing.T) {
	withCache(t, 256<<10)
	old := time.Duration(fetchTimeout.Load())
	const timeout = time.Second
	SetFetchTimeout(timeout)
	defer SetFetchTimeout(old)
	ctx := context.Background()
	st := &downStore{rangeGetStore: rangeGetStore{newMemStore()}}
	f := New(Options{Base: testBase(), MaxBytes: 64 << 20})
	data := cryptoBytes(t, 4<<20)
	must(t, f.WriteFile("/big", data, 0o644))
	_, err := f.Persist(ctx, st)
	must(t, err)
	clearPackCache()
	for _, tc := range []struct {
		name string
		set  *atomic.Bool
		want string
	}{
		{"hangs", &st.hang, "did not answer within"},
		{"refuses", &st.fail, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.set.Store(true)
			defer tc.set.Store(false)
			t0 := time.Now()
			h, err := f.Open("/big")
			must(t, err)
			defer h.Close()
			buf := make([]byte, 64<<10)
			_, err = h.ReadAt(buf, 3<<20)
			if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read with the store down: %v, want EIO saying %q", err, tc.want)
			}
			// One fetch timeout, not one per waiter (a reader that
			// waited on a failed read-ahead reports its error).
			if d := time.Since(t0); d > timeout*9/5 {
				t.Fatalf("the failed read took %v (fetch timeout %v)", d, timeout)
			}
		})
	}
	// Back up: the same read succeeds (failures are not remembered).
	got, err := f.ReadFile("/big")
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Fatal("read after the store came back differs")
	}
}

// TestEvictedReadCorrupt: a stored copy that does not hash to the chunk's
// id is refused (EIO naming the corruption), never returned.
func TestEvictedReadCorrupt(t *testing.T) {
	withCache(t, 256<<10)
	ctx := context.Background()
	st := rangeGetStore{newMemStore()}
	f := New(Options{Base: testBase(), MaxBytes: 64 << 20})
	must(t, f.WriteFile("/big", cryptoBytes(t, 2<<20), 0o644))
	_, err := f.Persist(ctx, st)
	must(t, err)
	clearPackCache()
	st.mu.Lock()
	for k, b := range st.m {
		if len(b) > 1<<20 {
			b[1000] ^= 0xff
			st.m[k] = b
		}
	}
	st.mu.Unlock()
	_, err = f.ReadFile("/big")
	var ce *CorruptError
	if !errors.Is(err, syscall.EIO) || !errors.As(err, &ce) {
		t.Fatalf("read of a corrupted chunk: %v, want EIO with a CorruptError", err)
	}
}

// TestEvictInternedHolders: a chunk two lineages took from memory keeps its
// bytes until both stored it, so one sandbox's commit never leaves the
// other reading a copy it has no claim on.
func TestEvictInternedHolders(t *testing.T) {
	withCache(t, 1<<20)
	ctx := context.Background()
	data := cryptoBytes(t, 1<<20)
	a := New(Options{Base: testBase(), MaxBytes: 64 << 20})
	b := New(Options{Base: testBase(), MaxBytes: 64 << 20})
	must(t, a.WriteFile("/x", data, 0o644))
	must(t, b.WriteFile("/y", data, 0o644))
	sa := rangeGetStore{newMemStore()}
	_, err := a.Persist(ctx, sa)
	must(t, err)
	if held, total := heldChunks(b, "/y"); held != total {
		t.Fatalf("after a's persist: %d of %d chunks held, want all (b has no stored copy)", held, total)
	}
	// a's store goes away entirely: b still reads from memory.
	sa.mu.Lock()
	clear(sa.m)
	sa.mu.Unlock()
	got, err := b.ReadFile("/y")
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Fatal("b reads other bytes")
	}
	sb := rangeGetStore{newMemStore()}
	_, err = b.Persist(ctx, sb)
	must(t, err)
	if held, _ := heldChunks(b, "/y"); held != 0 {
		t.Fatalf("after both persisted: %d chunks still held", held)
	}
	clearPackCache()
	got, err = b.ReadFile("/y")
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Fatal("b reads other bytes after eviction")
	}
}

// TestSegReaderSeek: a pack body rewinds (store/retry replays it by
// seeking) and reports its size.
func TestSegReaderSeek(t *testing.T) {
	segs := [][]byte{[]byte("abc"), {}, []byte("defgh"), []byte("i")}
	r := newSegReader(segs)
	if n, err := r.Seek(0, io.SeekEnd); err != nil || n != 9 {
		t.Fatalf("size: %d, %v", n, err)
	}
	for _, start := range []int64{0, 2, 3, 8, 9} {
		if _, err := r.Seek(start, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil || string(b) != "abcdefghi"[start:] {
			t.Fatalf("from %d: %q, %v", start, b, err)
		}
	}
	if _, err := r.Seek(10, io.SeekStart); err == nil {
		t.Fatal("seek past the end succeeded")
	}
	r.Seek(4, io.SeekStart)
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil || buf.String() != "efghi" {
		t.Fatalf("WriteTo from 4: %q, %v", buf.String(), err)
	}
}
