package differential

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDivergenceReport turns saved campaign mismatches into the
// divergence report: DIFF_TRIAGE names the directories `warren
// conformance diff --save` wrote (comma-separated), DIFF_REPORT the
// markdown file, DIFF_MINIMIZE how many groups to minimize (default 60),
// DIFF_GROUPS a JSON file for the groups themselves.
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
	if js := os.Getenv("DIFF_GROUPS"); js != "" {
		b, err := json.MarshalIndent(groups, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(js, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d cases, %d groups, report in %s", len(cases), len(groups), out)
}

// TestTriage groups two scripts by the statement that diverges alone and
// minimizes it. The divergence is the harness's own: bash runs as the path
// exec found (/usr/bin/bash), so its $0 is that path, warren's is "bash".
func TestTriage(t *testing.T) {
	r := newRunner(t)
	scripts := map[uint64]Script{
		1: {Preamble: "x=1\ny=2\n", Stmts: []string{"echo same", "echo \"$0\" | grep -c /"}},
		2: {Preamble: "x=3\ny=4\n", Stmts: []string{"echo \"$0\" | grep -c /", "echo $x"}},
	}
	var cases []Case
	for seed, s := range scripts {
		s.Source = s.Preamble + strings.Join(s.Stmts, "\n") + "\n"
		scripts[seed] = s
		cases = append(cases, Case{Feature: "t", Seed: seed, Script: s.Source})
	}
	groups := r.triage(context.Background(), cases, func(c Case) Script { return scripts[c.Seed] }, 1, 40, 2)
	if len(groups) != 1 {
		t.Fatalf("%d groups, want 1: %+v", len(groups), groups)
	}
	g := groups[0]
	if g.Scripts != 2 || g.Contextual || g.Stmt != "echo \"$0\" | grep -c /" {
		t.Errorf("group %+v: want both scripts under the $0 statement", g)
	}
	if strings.Contains(g.Minimal, "x=") || !strings.Contains(g.Minimal, "$0") {
		t.Errorf("minimized to %q: the preamble should go, the statement stay", g.Minimal)
	}
	if g.Bash.Stdout != "1\n" || g.Warren.Stdout != "0\n" {
		t.Errorf("outcomes bash %q warren %q, want 1 and 0", g.Bash.Stdout, g.Warren.Stdout)
	}
}
