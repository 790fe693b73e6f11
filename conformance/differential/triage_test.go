package differential

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDivergenceReport turns saved campaign mismatches into the
// divergence report: DIFF_TRIAGE names the directories `warren
// conformance diff --save` wrote (comma-separated), DIFF_REPORT the
// markdown file, DIFF_MINIMIZE how many groups to minimize (default 60).
func TestDivergenceReport(t *testing.T) {
	dirs := os.Getenv("DIFF_TRIAGE")
	if dirs == "" {
		t.Skip("DIFF_TRIAGE not set: no saved campaign to triage")
	}
	r := newRunner(t)
	var cases []Case
	for _, d := range strings.Split(dirs, ",") {
		cs, err := LoadCorpus(d)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, cs...)
	}
	n := 60
	if s := os.Getenv("DIFF_MINIMIZE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	groups := r.Triage(context.Background(), cases, n, 40, 2)
	if len(groups) == 0 {
		t.Fatalf("%d cases gave no divergence groups", len(cases))
	}
	out := os.Getenv("DIFF_REPORT")
	if out == "" {
		out = filepath.Join(t.TempDir(), "divergences.md")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	WriteDivergences(f, groups, n)
	t.Logf("%d cases, %d groups, report in %s", len(cases), len(groups), out)
}
