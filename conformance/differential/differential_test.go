package differential

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
)

func newRunner(t *testing.T) *Runner {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bash not found: the differential tests need the reference shell")
		}
		t.Skip("bash not found: no reference shell to compare with")
	}
	r, err := NewRunner(std.Table())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestGenerate(t *testing.T) {
	bash, _ := exec.LookPath("bash")
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 300; seed++ {
		a, b := Generate(seed), Generate(seed)
		if a.Source != b.Source {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		seen[a.Source] = true
		// bash is the judge of well-formedness: some valid scripts are
		// ones warren's parser refuses, which is what the harness is for.
		if bash != "" {
			cmd := exec.Command(bash, "-O", "extglob", "-n") // -n runs no shopt
			cmd.Stdin = strings.NewReader(a.Source)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("seed %d: bash -n: %v %s\n%s", seed, err, out, a.Source)
			}
		}
	}
	if len(seen) < 290 {
		t.Errorf("only %d distinct scripts from 300 seeds", len(seen))
	}
	for _, f := range append(append([]string{}, Features...), CommandFeatures...) {
		s := Only(7, f)
		for _, g := range s.Features {
			if g != f {
				t.Fatalf("Only(%s) produced a %s statement", f, g)
			}
		}
		if strings.Contains(s.Source, "unknown feature") {
			t.Errorf("feature %s has no producer", f)
		}
	}
}

func TestOutcomeJSON(t *testing.T) {
	in := Outcome{Stdout: "\xb6\x17ok", Stderr: "plain", Status: 3, Files: []string{"a f 644 00"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Outcome
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Stdout != in.Stdout || out.Stderr != in.Stderr || out.Status != 3 || len(out.Files) != 1 {
		t.Fatalf("round trip: %+v from %s", out, b)
	}
}

func TestCompare(t *testing.T) {
	ok := Outcome{Stdout: "a\n", Status: 0}
	for _, tc := range []struct {
		name   string
		bash   Outcome
		warren Outcome
		want   Verdict
		why    string
	}{
		{"same", ok, ok, Match, ""},
		{"stdout", ok, Outcome{Stdout: "b\n"}, Silent, "stdout: line 1"},
		{"status", ok, Outcome{Stdout: "a\n", Status: 1}, Silent, "status: bash 0, warren 1"},
		{"loud", ok, Outcome{Stderr: "warren: coproc: not supported", Status: 2}, Loud, "status"},
		{"stderr text ignored", Outcome{Stderr: "bash: line 1: x: command not found", Status: 127}, Outcome{Stderr: "warren: x: command not found", Status: 127}, Match, ""},
		{"stderr presence", ok, Outcome{Stdout: "a\n", Stderr: "oops"}, Silent, "stderr"},
		{"files", Outcome{Files: []string{"a f 644 00"}}, Outcome{Files: []string{"a f 600 00"}}, Silent, "files"},
		{"timeout", Outcome{TimedOut: true}, Outcome{}, Silent, "timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, why := Compare(tc.bash, tc.warren)
			if v != tc.want || !strings.HasPrefix(why, tc.why) {
				t.Errorf("Compare = %s %q, want %s %q…", v, why, tc.want, tc.why)
			}
		})
	}
}

func TestMinimize(t *testing.T) {
	src := "echo a\nif true; then\n  echo b\n  echo keep\nfi\nfor i in 1; do echo c; done\necho d\n"
	got := Minimize(src, func(s string) bool { return strings.Contains(s, "echo keep") }, 100)
	if !strings.Contains(got, "echo keep") {
		t.Fatalf("minimized away the needle:\n%s", got)
	}
	for _, gone := range []string{"echo a", "echo b", "echo c", "echo d"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q survived minimization:\n%s", gone, got)
		}
	}
	bad := "echo a\necho ${m[sp ace]}\necho b\n"
	if got := Minimize(bad, func(s string) bool { return strings.Contains(s, "sp ace") }, 10); got != "echo ${m[sp ace]}\n" {
		t.Errorf("a script the parser refuses is shrunk by lines: got %q", got)
	}
}

// TestBothShells checks the harness itself on scripts whose outcome is
// known: the same pwd, files, statuses and stdout in both shells.
func TestBothShells(t *testing.T) {
	r := newRunner(t)
	ctx := context.Background()
	for _, src := range []string{
		"pwd; echo hi > f; mkdir d; exit 3",
		"printf '%s\\n' \"$HOME\" \"$LC_ALL\" \"$TZ\"; id -u",
		"echo err >&2",
	} {
		b, w, err := r.Both(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if v, why := Compare(b, w); v != Match {
			t.Errorf("%q: %s: %s\nbash:   %+v\nwarren: %+v", src, v, why, b, w)
		}
	}
	b, w, _ := r.Both(ctx, "echo $BASH_VERSION | cut -c1")
	if b.Stdout != "5\n" {
		t.Errorf("reference shell is not bash 5: %q", b.Stdout)
	}
	_ = w
}

// TestCorpus replays the regression corpus: every entry not marked known
// must match bash's recorded outcome; known divergences are counted and a
// known one that now matches is reported so it can be turned into a guard
// (DIFF_CORPUS_UPDATE=1 does: known becomes false).
func TestCorpus(t *testing.T) {
	r := newRunner(t)
	cases, err := LoadCorpus("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("empty corpus: testdata/corpus holds the minimized mismatches")
	}
	ctx := context.Background()
	known, fixed := 0, 0
	for _, c := range cases {
		b, w, err := r.Both(ctx, c.Script)
		if err != nil {
			t.Fatal(err)
		}
		if v, why := Compare(c.Bash, b); v != Match {
			t.Errorf("%s: live bash no longer gives the recorded outcome (%s); re-record it", c.Name, why)
			continue
		}
		v, why := Compare(c.Bash, w)
		switch {
		case !c.Known && v != Match:
			t.Errorf("%s: regression (%s): %s\nscript:\n%s", c.Name, v, why, c.Script)
		case c.Known && v == Match:
			fixed++
			if os.Getenv("DIFF_CORPUS_UPDATE") != "" {
				c.Known, c.Why, c.Class = false, "", ""
				if err := c.Save("testdata/corpus"); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: now matches bash: kept as a guard (known: false)", c.Name)
				continue
			}
			t.Logf("%s: now matches bash; set \"known\": false to keep it as a guard (DIFF_CORPUS_UPDATE=1 does)", c.Name)
		case c.Known:
			known++
		}
	}
	t.Logf("corpus: %d cases, %d known divergences, %d known now fixed", len(cases), known, fixed)
}

// TestGuards runs every script in testdata/guards (divergences that were
// fixed, and examples in the style of the bash manual's) in both shells:
// each must match live bash.
func TestGuards(t *testing.T) {
	r := newRunner(t)
	names, _ := filepath.Glob("testdata/guards/*.sh")
	if len(names) == 0 {
		t.Fatal("no guard scripts in testdata/guards")
	}
	for _, n := range names {
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		b, w, err := r.Both(context.Background(), string(src))
		if err != nil {
			t.Fatal(err)
		}
		if v, why := Compare(b, w); v != Match {
			t.Errorf("%s: %s: %s\nbash stdout:\n%s\nwarren stdout:\n%s\nwarren stderr:\n%s", n, v, why, b.Stdout, w.Stdout, w.Stderr)
		}
	}
}

// TestSeededPass runs a bounded seeded campaign and holds the line: no
// feature may have more silent divergences than testdata/floor.json
// records (run with DIFF_UPDATE=1 to rewrite the floor after fixing
// things; DIFF_N sets scripts per feature, default 8).
func TestSeededPass(t *testing.T) {
	r := newRunner(t)
	n := 8
	if s := os.Getenv("DIFF_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	rep, err := Campaign(context.Background(), r, Options{Seed: 1, PerFeature: n, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	t.Logf("seed 1, %d scripts per feature:\n%s", n, b.String())
	floorPath := filepath.Join("testdata", "floor.json")
	if os.Getenv("DIFF_UPDATE") != "" {
		floor := map[string]int{"per_feature": n}
		for f, tl := range rep.PerFeature {
			floor[f] = tl.Silent + tl.Loud
		}
		out, _ := json.MarshalIndent(floor, "", "  ")
		if err := os.WriteFile(floorPath, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(floorPath)
	if err != nil {
		t.Fatal(err)
	}
	var floor map[string]int
	if err := json.Unmarshal(raw, &floor); err != nil {
		t.Fatal(err)
	}
	if floor["per_feature"] != n {
		t.Logf("floor recorded with %d scripts per feature, this run has %d: not judged", floor["per_feature"], n)
		return
	}
	for f, tl := range rep.PerFeature {
		if got, max := tl.Silent+tl.Loud, floor[f]; got > max {
			var ex []string
			for _, c := range rep.Mismatches {
				if c.Feature == f && len(ex) < 3 {
					ex = append(ex, c.Why+"\n"+c.Script)
				}
			}
			t.Errorf("%s: %d mismatches, the floor is %d; e.g.\n%s", f, got, max, strings.Join(ex, "\n---\n"))
		}
	}
}
