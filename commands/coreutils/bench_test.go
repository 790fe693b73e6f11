package coreutils_test

import (
	"context"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// BenchmarkSortNumeric: sort -n of 1 MB of numbers (issue 4).
func BenchmarkSortNumeric(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString(strconv.FormatInt(rng.Int64N(1e9)-5e8, 10))
		sb.WriteByte('\n')
	}
	data := sb.String()
	fs := cmdtest.NewFiles(nil)
	b.SetBytes(int64(len(data)))
	var d []time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if code := coreutils.Sort(context.Background(), fs.Invocation([]string{"sort", "-n"}, strings.NewReader(data), io.Discard, io.Discard)); code != 0 {
			b.Fatalf("exit %d", code)
		}
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	cmdtest.ReportPercentiles(b, d)
}

// BenchmarkSortBaseline is the floor to compare sort -n with in the same
// run: Go's slices.SortFunc over the same count of parsed numbers.
func BenchmarkSortBaseline(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	type rec struct {
		line []byte
		f    float64
		idx  int
	}
	var base []rec
	for n := 0; n < 1<<20; {
		s := strconv.FormatInt(rng.Int64N(1e9)-5e8, 10)
		f, _ := strconv.ParseFloat(s, 64)
		base = append(base, rec{line: []byte(s), f: f, idx: len(base)})
		n += len(s) + 1
	}
	work := make([]rec, len(base))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(work, base)
		slices.SortFunc(work, func(a, b rec) int {
			if a.f < b.f {
				return -1
			}
			if a.f > b.f {
				return 1
			}
			return a.idx - b.idx
		})
	}
}

// cpuTime is the process's user+system CPU time: under a loaded machine
// it is a steadier per-op figure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
