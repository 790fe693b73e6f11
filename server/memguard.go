package server

import (
	"context"
	"fmt"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// MemoryGuard protects the node from running out of memory (issue 12): it
// sheds load when the Go heap passes a high-water mark, refusing new
// creates and execs with 503 + Retry-After until the heap falls below the
// low-water mark (hysteresis, so the node does not flap), and it returns
// memory to the OS after a spike when the node is idle.
//
// The heap is read with runtime/metrics (no stop-the-world, a few hundred
// ns), at most once per SampleEvery whatever the request rate.
type MemoryGuard struct {
	cfg MemoryGuardConfig

	lastSample atomic.Int64 // unix nanos of the last heap sample
	heap       atomic.Uint64
	shedding   atomic.Bool

	shed  sync.Map // route -> *atomic.Uint64: requests refused
	frees atomic.Uint64

	mu       sync.Mutex
	lastFree time.Time
	peak     uint64 // highest heap since the last free
}

// MemoryGuardConfig configures a MemoryGuard. High is required.
type MemoryGuardConfig struct {
	// High is the heap size (bytes) above which new work is refused.
	High uint64
	// Low is where refusing stops (default 85% of High).
	Low uint64
	// RetryAfter is what a refused client is told to wait (default 2s).
	RetryAfter time.Duration
	// SampleEvery bounds how often the heap is read (default 50ms).
	SampleEvery time.Duration
	// FreeAfterDrop: when the heap has fallen this far below its peak and
	// the node is idle, memory is returned to the OS (default 64 MiB).
	FreeAfterDrop uint64
	// FreeEvery bounds how often memory is returned (debug.FreeOSMemory
	// is a full GC; default 30s).
	FreeEvery time.Duration
	// ReadHeap returns the heap in bytes; nil reads runtime/metrics. Tests
	// inject a heap to drive the thresholds (fault injection around the
	// real runtime reading).
	ReadHeap func() uint64
}

// NewMemoryGuard returns a guard for cfg.
func NewMemoryGuard(cfg MemoryGuardConfig) (*MemoryGuard, error) {
	if cfg.High == 0 {
		return nil, fmt.Errorf("memory guard: no high-water mark")
	}
	if cfg.Low == 0 || cfg.Low > cfg.High {
		cfg.Low = cfg.High / 100 * 85
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 2 * time.Second
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = 50 * time.Millisecond
	}
	if cfg.FreeAfterDrop == 0 {
		cfg.FreeAfterDrop = 64 << 20
	}
	if cfg.FreeEvery <= 0 {
		cfg.FreeEvery = 30 * time.Second
	}
	if cfg.ReadHeap == nil {
		cfg.ReadHeap = readHeap
	}
	return &MemoryGuard{cfg: cfg}, nil
}

// heapMetric is the memory held by heap objects now, live or not yet
// swept: what the node holds, not what the last GC found live (that lags
// a fast-growing script by a whole GC cycle).
const heapMetric = "/memory/classes/heap/objects:bytes"

func readHeap() uint64 {
	s := []rtmetrics.Sample{{Name: heapMetric}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// sample reads the heap if the last reading is older than SampleEvery and
// updates the shedding state.
func (g *MemoryGuard) sample(now time.Time) {
	last := g.lastSample.Load()
	if now.UnixNano()-last < int64(g.cfg.SampleEvery) || !g.lastSample.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	h := g.cfg.ReadHeap()
	g.heap.Store(h)
	switch {
	case h >= g.cfg.High:
		g.shedding.Store(true)
	case h < g.cfg.Low:
		g.shedding.Store(false)
	}
}

// Check returns an api.ErrOverloaded error when the node sheds load, and
// counts it for route.
func (g *MemoryGuard) Check(route string) error {
	g.sample(time.Now())
	if !g.shedding.Load() {
		return nil
	}
	c, _ := g.shed.LoadOrStore(route, new(atomic.Uint64))
	c.(*atomic.Uint64).Add(1)
	return api.Errorf(api.ErrOverloaded, "warren is shedding load under memory pressure (heap %.1f MiB, over the %.1f MiB high-water mark); retry in %s",
		float64(g.heap.Load())/(1<<20), float64(g.cfg.High)/(1<<20), g.cfg.RetryAfter)
}

// RetryAfter is the wait a refused client is told (whole seconds, >= 1).
func (g *MemoryGuard) RetryAfter() int {
	return max(1, int(g.cfg.RetryAfter.Round(time.Second)/time.Second))
}

// Shedding reports whether new work is refused now.
func (g *MemoryGuard) Shedding() bool { return g.shedding.Load() }

// MemoryGuardStats are the guard's counters for /metrics.
type MemoryGuardStats struct {
	Heap, High, Low uint64
	Shedding        bool
	Shed            map[string]uint64 // by route
	Frees           uint64
}

// Stats returns the current counters.
func (g *MemoryGuard) Stats() MemoryGuardStats {
	st := MemoryGuardStats{Heap: g.heap.Load(), High: g.cfg.High, Low: g.cfg.Low, Shedding: g.shedding.Load(),
		Shed: map[string]uint64{}, Frees: g.frees.Load()}
	g.shed.Range(func(k, v any) bool {
		st.Shed[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return st
}

// Run samples the heap every second (so shedding ends when the node is
// quiet, too) and returns memory to the OS after a spike while idle()
// holds, until ctx ends.
func (g *MemoryGuard) Run(ctx context.Context, idle func() bool) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			g.sample(now)
			g.maybeFree(now, idle)
		}
	}
}

// maybeFree calls debug.FreeOSMemory when the heap dropped FreeAfterDrop
// below its peak since the last free, the node is idle, and the last free
// is FreeEvery ago. The Go scavenger returns memory too, but slowly (about
// 1% of a CPU); after a 2 GB spike the node would keep its RSS for minutes.
// It reports whether it freed.
func (g *MemoryGuard) maybeFree(now time.Time, idle func() bool) bool {
	h := g.cfg.ReadHeap()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.peak = max(g.peak, h)
	if g.peak < h+g.cfg.FreeAfterDrop || now.Sub(g.lastFree) < g.cfg.FreeEvery || (idle != nil && !idle()) {
		return false
	}
	debug.FreeOSMemory()
	g.lastFree, g.peak = now, g.cfg.ReadHeap()
	g.frees.Add(1)
	return true
}
