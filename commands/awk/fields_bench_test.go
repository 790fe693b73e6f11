package awk_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// BenchmarkFields measures the per-record field hook (fields.go) on
// 40,000 lines with and without CRLF endings, a for-in over 40,000
// integer keys (compat.go's snapshot) and 200,000 substr calls with a
// variable start (compat.go's native substr): go test -run '^$' -bench Fields
// -benchtime 20x ./commands/awk. Latencies are p50/p95/p99 over the
// iterations (n = the iteration count).
func BenchmarkFields(b *testing.B) {
	tab := commands.Table{}
	awk.Register(tab)
	lf := strings.Repeat("alpha beta gamma 12\n", 40000)
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	for _, tc := range []struct{ name, prog, in string }{
		{"lf", `{n += NF; s = s < $NF ? $NF : s} END{print n, s}`, lf},
		{"crlf", `{n += NF; s = s < $NF ? $NF : s} END{print n, s}`, crlf},
		{"forin-int", `{a[NR] = $1} END{for (k in a) n++; print n}`, lf},
		{"substr-loop", `BEGIN{s = sprintf("%200000s", ""); n = length(s); for (i = 1; i <= n; i++) c = substr(s, i, 1); print length(c)}`, ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			files := cmdtest.NewFiles(nil)
			var d []time.Duration
			for b.Loop() {
				var out, errb strings.Builder
				inv := files.Invocation([]string{"awk", tc.prog}, strings.NewReader(tc.in), &out, &errb)
				start := time.Now()
				if code := tab["awk"](b.Context(), inv); code != 0 {
					b.Fatalf("status %d: %s", code, errb.String())
				}
				d = append(d, time.Since(start))
			}
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000 }
			b.ReportMetric(at(0.50), "p50-ms")
			b.ReportMetric(at(0.95), "p95-ms")
			b.ReportMetric(at(0.99), "p99-ms")
			b.ReportMetric(float64(len(d)), "n")
		})
	}
}
