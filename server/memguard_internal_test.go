package server

import (
	"os"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"testing"
	"time"
)

// TestShedRoutes_AreRoutes: a typo in the shed table would leave a route
// that starts work unguarded.
func TestShedRoutes_AreRoutes(t *testing.T) {
	s := &Server{}
	have := map[string]bool{}
	for _, r := range s.routes() {
		have[r.method+" "+r.pattern] = true
	}
	for rt := range shedRoutes {
		if !have[rt] {
			t.Errorf("shedRoutes has %q, which is not a route", rt)
		}
	}
}

var sink [][]byte

// TestMemoryGuard_FreesAfterSpike: after a 256 MiB spike is dropped, an
// idle node returns the memory to the OS (heap released grows); a busy
// node, or one that freed a moment ago, does not.
func TestMemoryGuard_FreesAfterSpike(t *testing.T) {
	g, err := NewMemoryGuard(MemoryGuardConfig{High: 1 << 50, FreeAfterDrop: 128 << 20, FreeEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for range 256 {
		sink = append(sink, make([]byte, 1<<20))
	}
	for i := range sink {
		sink[i][0] = 1
	}
	if g.maybeFree(now, nil) {
		t.Fatal("freed at the peak")
	}
	sink = nil
	runtime.GC()
	if g.maybeFree(now, func() bool { return false }) {
		t.Fatal("freed while the node was busy")
	}
	before := released()
	if !g.maybeFree(now, func() bool { return true }) {
		t.Fatal("did not free after the spike while idle")
	}
	if after := released(); after < before+100<<20 {
		t.Fatalf("heap released %d -> %d MiB: the spike was not returned", before>>20, after>>20)
	}
	for range 256 {
		sink = append(sink, make([]byte, 1<<20))
	}
	sink = nil
	runtime.GC()
	if g.maybeFree(now.Add(time.Minute), func() bool { return true }) {
		t.Fatal("freed again within FreeEvery")
	}
	if g.Stats().Frees != 1 {
		t.Fatalf("frees = %d, want 1", g.Stats().Frees)
	}
}

func released() uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// TestCgroupLimit reads v1 and v2 limits from a fake /sys/fs/cgroup tree:
// the smallest limit on the path up wins; "max" and v1's huge "no limit"
// count as none.
func TestCgroupLimit(t *testing.T) {
	root := t.TempDir()
	write := func(p, v string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/b/memory.max", "max")
	write("a/memory.max", "2147483648")
	write("memory/x/y/memory.limit_in_bytes", "9223372036854771712")
	write("memory/x/memory.limit_in_bytes", "1073741824")
	tests := []struct {
		name, proc string
		want       int64
	}{
		{"v2 parent limit", "0::/a/b\n", 2 << 30},
		{"v1 parent limit", "4:memory:/x/y\n0::/\n", 1 << 30},
		{"v1 with other controllers", "4:cpu,memory:/x/y\n", 1 << 30},
		{"none", "0::/c\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, where := cgroupLimit(root, tt.proc)
			if got != tt.want {
				t.Fatalf("cgroupLimit = %d (%s), want %d", got, where, tt.want)
			}
		})
	}
	mi := filepath.Join(root, "meminfo")
	os.WriteFile(mi, []byte("MemFree: 1 kB\nMemTotal:       16384 kB\n"), 0o644)
	if n, err := memTotal(mi); err != nil || n != 16<<20 {
		t.Fatalf("memTotal = %d, %v", n, err)
	}
	os.WriteFile(mi, []byte("MemTotal: lots\n"), 0o644)
	if _, err := memTotal(mi); err == nil || !strings.Contains(err.Error(), "MemTotal") {
		t.Fatalf("bad meminfo: %v", err)
	}
	if n, src, err := NodeMemory(); err != nil || n <= 0 || src == "" {
		t.Fatalf("NodeMemory on this machine = %d %q %v", n, src, err)
	}
}
