package shell

import (
	"context"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// reportLatency times each op and reports p50/p95/p99 (ns) with n.
func reportLatency(b *testing.B, op func()) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		op()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Nanoseconds()) }
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.95), "p95-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
	b.ReportMetric(float64(len(lat)), "n")
}

func benchBase(b *testing.B) (*vfs.FS, commands.Table) {
	fsys := vfs.New(vfs.Options{})
	for _, d := range []string{"/tmp", "/home/user", "/etc"} {
		fsys.MkdirAll(d, 0o755)
	}
	fsys.WriteFile("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\ndaemon:x:1:1::/:/usr/sbin/nologin\n"), 0o644)
	return fsys, std.Table()
}

func benchRun(b *testing.B, script string) {
	fsys, tbl := benchBase(b)
	benchRunWith(b, fsys, tbl, script)
}

// stdTable is the real resident command set (what sandboxes run).
func stdTable() commands.Table {
	return std.Table()
}

func benchRunWith(b *testing.B, fsys *vfs.FS, tbl commands.Table, script string) {
	sh, err := New(Config{FS: fsys, Commands: tbl, Dir: "/home/user"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	in := strings.NewReader("")
	reportLatency(b, func() {
		if st, _ := sh.Run(ctx, script, in, io.Discard, io.Discard); st != 0 {
			b.Fatalf("status %d", st)
		}
	})
}

// The targets are with the real commands (commands/std).
func BenchmarkPipelineStd(b *testing.B) {
	fsys, _ := benchBase(b)
	benchRunWith(b, fsys, stdTable(), "cat /etc/passwd | grep root | wc -l")
}

func BenchmarkWarmEchoStd(b *testing.B) {
	fsys, _ := benchBase(b)
	benchRunWith(b, fsys, stdTable(), "echo hi")
}

// Create a sandbox over a shared base and run its first exec.
func BenchmarkCreateFirstExecStd(b *testing.B) {
	base, _ := benchBase(b)
	tbl := stdTable()
	ctx := context.Background()
	reportLatency(b, func() {
		sh, err := New(Config{FS: base.Fork(), Commands: tbl, Dir: "/home/user"})
		if err != nil {
			b.Fatal(err)
		}
		if st, _ := sh.Run(ctx, "echo hello > /tmp/a; cat /tmp/a", nil, io.Discard, io.Discard); st != 0 {
			b.Fatalf("status %d", st)
		}
	})
}

// Fork of a sandbox: vfs + shell state.
func BenchmarkFork(b *testing.B) {
	fsys, tbl := benchBase(b)
	sh, _ := New(Config{FS: fsys, Commands: tbl, Dir: "/home/user"})
	sh.Run(context.Background(), "x=1; f() { echo $x; }; a=(1 2 3)", nil, io.Discard, io.Discard)
	reportLatency(b, func() {
		_ = sh.Fork(sh.FS().Fork())
	})
}

// Resident memory per idle sandbox after a few commands, beyond its delta
// (the vfs base is shared; each sandbox gets a fork). b.N sandboxes are kept
// alive together.
func BenchmarkIdleMemory(b *testing.B) {
	base, tbl := benchBase(b)
	ctx := context.Background()
	n := b.N
	shells := make([]*Shell, 0, n)
	forks := make([]*vfs.FS, 0, n)
	for range n {
		forks = append(forks, base.Fork())
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for k := range n {
		sh, _ := New(Config{FS: forks[k], Commands: tbl, Dir: "/home/user"})
		sh.Run(ctx, "x=1; cd /tmp; echo hi; f() { echo $x; }; f", nil, io.Discard, io.Discard)
		shells = append(shells, sh)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "bytes/sandbox")
	runtime.KeepAlive(shells)
}

// A loop that assigns a variable and runs a resident command each turn:
// the exported environment must not be rebuilt per command.
func BenchmarkLoopAssignStd(b *testing.B) {
	fsys, _ := benchBase(b)
	benchRunWith(b, fsys, stdTable(), "for i in 1 2 3 4 5 6 7 8 9 10; do x=$i; true > /dev/null; wc -c /etc/passwd > /dev/null; done")
}

// BenchmarkHeartbeatStd is the density scenario's exec (bench.CmdHeartbeat)
// on a warm session with the real commands: $RANDOM, an append, a
// two-stage pipeline. /log is truncated every 10 runs, untimed, as a
// density agent's log grows by one line a period over its window.
func BenchmarkHeartbeatStd(b *testing.B) { benchHeartbeat(b, 1) }

// BenchmarkHeartbeatStdMany is the same heartbeat over 10,000 sessions in
// turn, as the density scenario runs them: every Run finds its session
// cold in the CPU caches, and stagePool hands its pipeline stage a runner
// last used by another session.
func BenchmarkHeartbeatStdMany(b *testing.B) { benchHeartbeat(b, 10000) }

func benchHeartbeat(b *testing.B, sessions int) {
	const script = "echo $RANDOM >> /log; cat /log | wc -l"
	type session struct {
		fsys *vfs.FS
		sh   *Shell
	}
	ss := make([]session, sessions)
	tbl := stdTable()
	for i := range ss {
		fsys, _ := benchBase(b)
		sh, err := New(Config{FS: fsys, Commands: tbl, Dir: "/home/user"})
		if err != nil {
			b.Fatal(err)
		}
		ss[i] = session{fsys, sh}
	}
	ctx := context.Background()
	var out strings.Builder
	lat := make([]time.Duration, 0, b.N)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := 0; i < b.N; i++ {
		s := &ss[i%sessions]
		round := i / sessions
		if round%10 == 0 {
			if err := s.fsys.WriteFile("/log", nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		out.Reset()
		t0 := time.Now()
		st, _ := s.sh.Run(ctx, script, nil, &out, io.Discard)
		lat = append(lat, time.Since(t0))
		if want := strconv.Itoa(round%10+1) + "\n"; st != 0 || out.String() != want {
			b.Fatalf("run %d: status %d, output %q, want %q", i, st, out.String(), want)
		}
	}
	b.StopTimer()
	// CPU of the whole process (GC and pipeline goroutines included), the
	// figure density's cpu µs/exec is made of.
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Nanoseconds()) }
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.95), "p95-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
	b.ReportMetric(float64(len(lat)), "n")
}

// processCPU is the user+system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
