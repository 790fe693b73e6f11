package find_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/std"
)

// TestOrder checks that find walks in the vfs's sorted directory order,
// pre-order by default and post-order with -depth.
func TestOrder(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"b/2": "", "b/1": "", "a": "", "c/": ""}, nil)
	tab := std.Table()
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"find", "."}, ".\n./a\n./b\n./b/1\n./b/2\n./c\n"},
		{[]string{"find", ".", "-depth"}, "./a\n./b/1\n./b/2\n./b\n./c\n.\n"},
		{[]string{"find", ".", "-mindepth", "1", "-exec", "echo", "{}", "+"}, "./a ./b ./b/1 ./b/2 ./c\n"},
		{[]string{"find", ".", "-type", "f", "-delete"}, ""},
		{[]string{"find", "."}, ".\n./b\n./c\n"},
	} {
		out, errs, code := runIn(fsys, tab, c.argv, "")
		if out != c.want || code != 0 {
			t.Errorf("%q: got %q exit %d (%s), want %q", c.argv, out, code, errs, c.want)
		}
	}
}

// TestExecStatus checks that -exec's status drives the expression and
// that a failing batch makes find exit 1.
func TestExecStatus(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"a": "", "b": ""}, nil)
	tab := std.Table()
	out, _, code := runIn(fsys, tab, []string{"find", ".", "-type", "f", "-exec", "false", ";", "-o", "-print"}, "")
	if out != ".\n./a\n./b\n" || code != 0 {
		t.Errorf("got %q %d", out, code)
	}
	_, _, code = runIn(fsys, tab, []string{"find", ".", "-type", "f", "-exec", "false", "{}", "+"}, "")
	if code != 1 {
		t.Errorf("failing batch: exit %d, want 1", code)
	}
}

// BenchmarkFind walks a 2,000-file tree (40 directories of 50 files) with
// a -name test; each op is one full find run.
func BenchmarkFind(b *testing.B) {
	files := map[string]string{}
	for d := 0; d < 40; d++ {
		for f := 0; f < 50; f++ {
			files[fmt.Sprintf("d%02d/f%02d.txt", d, f)] = "x"
		}
	}
	fsys := newSandbox(b, files, nil)
	tab := std.Table()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out, _, code := runIn(fsys, tab, []string{"find", ".", "-name", "f1*.txt"}, "")
		lat = append(lat, time.Since(start))
		if code != 0 || strings.Count(out, "\n") != 400 {
			b.Fatalf("exit %d, %d lines", code, strings.Count(out, "\n"))
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.95), "p95-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
