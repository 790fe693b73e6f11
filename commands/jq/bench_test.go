package jq_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/jq"
)

// BenchmarkJq: a filter over a 1 MB JSON document (issue 4).
func BenchmarkJq(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":%d,"name":"user%d","score":%d.5,"tags":["a","b"],"active":%t}`, i, i, i%1000, i%3 == 0)
	}
	sb.WriteString("]")
	data := sb.String()
	fs := cmdtest.NewFiles(nil)
	args := []string{"jq", "-c", "[.[] | select(.active and .score > 500) | .id] | length"}
	b.SetBytes(int64(len(data)))
	var d []time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if code := jq.Jq(context.Background(), fs.Invocation(args, strings.NewReader(data), io.Discard, io.Discard)); code != 0 {
			b.Fatalf("exit %d", code)
		}
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	cmdtest.ReportPercentiles(b, d)
}

// cpuTime is the process's user+system CPU time: under a loaded machine
// it is a steadier per-op figure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
