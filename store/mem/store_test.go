package mem_test

import (
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/mem"
	"github.com/warren-sandbox/warren/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.RunSuite(t, func(t *testing.T) store.Store { return mem.New() })
}

func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, func(b *testing.B) store.Store { return mem.New() })
}

// TestPut_HoldsOnce: a 64 MiB Put allocates the object once (segments), not
// through a doubling buffer (which would allocate about twice its size).
func TestPut_HoldsOnce(t *testing.T) {
	s := mem.New()
	const size = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := s.Put(context.Background(), "big", io.LimitReader(zeros{}, size)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size+size/16 {
		t.Fatalf("put of 64 MiB allocated %d MiB", alloc>>20)
	}
	rc, err := s.Get(context.Background(), "big")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if n, err := io.Copy(io.Discard, rc); n != size || err != nil {
		t.Fatalf("get: %d bytes, %v", n, err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
