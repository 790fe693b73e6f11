package grep_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

// BenchmarkGrepRecursive: grep -r over a 2,000-file tree in the vfs (issue 4).
func BenchmarkGrepRecursive(b *testing.B) {
	files := map[string]string{}
	body := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 20)
	for i := 0; i < 2000; i++ {
		content := body
		if i%100 == 0 {
			content += "func needleHandler() {}\n"
		}
		files[fmt.Sprintf("src/pkg%02d/sub%d/file%04d.go", i%40, i%5, i)] = content
	}
	fs := cmdtest.NewFiles(files)
	if fs.FS == nil {
		b.Skip("vfs implementation not available: grep -r needs directory listings")
	}
	args := []string{"grep", "-rn", "needle", "src"}
	var d []time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out strings.Builder
		start := time.Now()
		code := grep.Grep(context.Background(), fs.Invocation(args, strings.NewReader(""), &out, io.Discard))
		d = append(d, time.Since(start))
		if code != 0 || strings.Count(out.String(), "\n") != 20 {
			b.Fatalf("exit %d, %d lines", code, strings.Count(out.String(), "\n"))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	cmdtest.ReportPercentiles(b, d)
}

// BenchmarkGrepStream: grep over 8 MiB of stdin, the "cat big | grep x" path.
func BenchmarkGrepStream(b *testing.B) {
	data := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 8<<20/56)
	fs := cmdtest.NewFiles(nil)
	b.SetBytes(int64(len(data)))
	var d []time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var inv *commands.Invocation = fs.Invocation([]string{"grep", "-c", "elit$"}, strings.NewReader(data), io.Discard, io.Discard)
		if code := grep.Grep(context.Background(), inv); code != 0 {
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
