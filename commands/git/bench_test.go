package git_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/std"
)

// BenchmarkStatus runs git status --short on a committed 1,000-file repo
// (20 directories of 50 files) with 10 modified files, reporting the
// per-op latency distribution.
func BenchmarkStatus(b *testing.B) {
	files := map[string]string{}
	for d := 0; d < 20; d++ {
		for f := 0; f < 50; f++ {
			files[fmt.Sprintf("repo/d%02d/f%02d.txt", d, f)] = fmt.Sprintf("file %d %d\n", d, f)
		}
	}
	fsys := newSandbox(b, files, nil)
	tab := std.Table()
	env := []string{"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x"}
	for _, argv := range [][]string{{"git", "init", "-q", "repo"}, {"git", "-C", "repo", "add", "-A"}, {"git", "-C", "repo", "commit", "-q", "-m", "init"}} {
		if _, errs, code := runIn(fsys, tab, argv, "", env...); code != 0 {
			b.Fatalf("%v: %d %s", argv, code, errs)
		}
	}
	for f := 0; f < 10; f++ {
		fsys.WriteFile(fmt.Sprintf("%s/repo/d%02d/f%02d.txt", caseDir, f, f), []byte("changed\n"), 0o644)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out, errs, code := runIn(fsys, tab, []string{"git", "-C", "repo", "status", "--short"}, "", env...)
		lat = append(lat, time.Since(start))
		if code != 0 || len(out) != 10*len(" M d00/f00.txt\n") {
			b.Fatalf("status: %d %q %s", code, out, errs)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.95), "p95-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
