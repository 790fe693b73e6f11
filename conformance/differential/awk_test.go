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
)

const awkCorpus = "testdata/awk-corpus"

func needGawk(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(AwkReference); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed: the reference for the awk differential tests (scripts/test-packages.txt)", AwkReference)
		}
		t.Skipf("%s not installed: nothing to compare warren's awk with", AwkReference)
	}
}

func TestGenerateAwk(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range AwkFeatures {
		for seed := uint64(1); seed <= 20; seed++ {
			a, b := GenerateAwk(seed, f), GenerateAwk(seed, f)
			if a.Script() != b.Script() {
				t.Fatalf("%s seed %d: two generations differ", f, seed)
			}
			if strings.Contains(a.Program(), "unknown feature") {
				t.Fatalf("feature %s has no producer", f)
			}
			seen[a.Script()] = true
		}
	}
	// gawk is the judge of well-formedness: --pretty-print parses
	// without running.
	if gawk, err := exec.LookPath(AwkReference); err == nil {
		for _, f := range AwkFeatures {
			for seed := uint64(1); seed <= 5; seed++ {
				p := GenerateAwk(seed, f)
				out, err := exec.Command(gawk, "-o/dev/null", p.Program()).CombinedOutput()
				// a constant division by zero is a parse-time error the
				// divzero feature asks for
				if err != nil && !(f == "divzero" && strings.Contains(string(out), "division by zero attempted")) {
					t.Errorf("%s seed %d: gawk does not parse it: %v %s\n%s", f, seed, err, out, p.Program())
				}
			}
		}
	}
	if len(seen) < len(AwkFeatures)*10 {
		t.Errorf("only %d distinct programs from %d", len(seen), len(AwkFeatures)*20)
	}
	// The input reaches the file byte for byte.
	p := AwkProg{Input: []string{"a\\b%c'd\r\n", "\t\x01end"}, Rules: []string{"{print}"}}
	cmd := exec.Command("bash", "-c", strings.SplitN(p.Script(), "\n", 2)[0]+" ; cat in")
	cmd.Dir = t.TempDir()
	if out, err := cmd.Output(); err == nil && string(out) != "a\\b%c'd\r\n\t\x01end" {
		t.Errorf("printfEscape: wrote %q", out)
	}
}

func TestShrinkAwk(t *testing.T) {
	p := AwkProg{Begin: []string{"x = 1", "y = 2"}, Rules: []string{"{print}", "{print NF}"}, End: []string{"print NR"}, Input: []string{"a\n", "b\n"}, Opts: []string{"-v z=1"}}
	got := shrinkAwk(p, func(c AwkProg) bool { return strings.Contains(c.Program(), "NF") }, 100)
	if len(got.Rules) != 1 || got.Rules[0] != "{print NF}" || len(got.Begin)+len(got.End)+len(got.Input)+len(got.Opts) != 0 {
		t.Errorf("shrinkAwk kept too much: %+v", got)
	}
}

func TestCompareAwk(t *testing.T) {
	for _, tc := range []struct {
		ref, w Outcome
		want   Verdict
		kind   string
	}{
		{Outcome{Stdout: "a"}, Outcome{Stdout: "a"}, Match, ""},
		{Outcome{Stderr: "gawk: x\n", Status: 2}, Outcome{Stderr: "awk: x\n", Status: 2}, Match, ""},
		{Outcome{Stderr: "gawk: x\n", Status: 2}, Outcome{Stderr: "awk: y\n", Status: 2}, Loud, "stderr"},
		{Outcome{Stdout: "a"}, Outcome{Stdout: "b"}, Silent, "stdout"},
	} {
		if v, k, why := CompareAwk(tc.ref, tc.w); v != tc.want || k != tc.kind {
			t.Errorf("CompareAwk(%+v, %+v) = %s %s (%s), want %s %s", tc.ref, tc.w, v, k, why, tc.want, tc.kind)
		}
	}
}

// TestAwkCorpus replays the awk regression corpus: an entry not marked
// known must match gawk's recorded outcome byte for byte.
// AWK_CORPUS_UPDATE=1 turns known entries that now match into guards.
func TestAwkCorpus(t *testing.T) {
	needGawk(t)
	r := newRunner(t)
	cases, err := LoadAwkCorpus(awkCorpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("empty awk corpus: " + awkCorpus + " holds the minimized mismatches")
	}
	known, fixed := 0, 0
	for _, c := range cases {
		ref, w, err := r.Both(context.Background(), c.Prog.Script())
		if err != nil {
			t.Fatal(err)
		}
		if v, _, why := CompareAwk(c.Gawk, ref); v != Match {
			t.Errorf("%s: live gawk no longer gives the recorded outcome (%s); re-record it", c.Name, why)
			continue
		}
		v, _, why := CompareAwk(c.Gawk, w)
		switch {
		case !c.Known && v != Match:
			t.Errorf("%s: regression (%s): %s\nscript:\n%s\ngawk:   %q %q %d\nwarren: %q %q %d", c.Name, v, why, c.Prog.Script(),
				c.Gawk.Stdout, c.Gawk.Stderr, c.Gawk.Status, w.Stdout, w.Stderr, w.Status)
		case c.Known && v == Match:
			fixed++
			if os.Getenv("AWK_CORPUS_UPDATE") != "" {
				c.Known, c.Why, c.Class = false, "", ""
				if err := c.Save(awkCorpus); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: now matches gawk: kept as a guard (known: false)", c.Name)
				continue
			}
			t.Logf("%s: now matches gawk; set \"known\": false to keep it as a guard (AWK_CORPUS_UPDATE=1 does)", c.Name)
		case c.Known:
			known++
		}
	}
	t.Logf("awk corpus: %d cases, %d known divergences, %d known now fixed", len(cases), known, fixed)
}

// TestAwkSeeded runs a bounded seeded awk campaign (AWK_N programs per
// feature, default 5: the CI slice) and holds testdata/awk-floor.json's
// line on silent and loud mismatches per feature. AWK_UPDATE=1 rewrites
// the floor; AWK_SAVE=1 minimizes every mismatch and saves it to the
// corpus (as known, with gawk's outcome) unless it has an entry; AWK_SEED picks the first seed,
// AWK_FEATURES (comma-separated) the features; AWK_VERBOSE=1 prints every
// mismatch.
func TestAwkSeeded(t *testing.T) {
	needGawk(t)
	r := newRunner(t)
	n, seed := 5, uint64(1)
	if s := os.Getenv("AWK_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("AWK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	save := os.Getenv("AWK_SAVE") != ""
	var feats []string
	if s := os.Getenv("AWK_FEATURES"); s != "" {
		feats = strings.Split(s, ",")
	}
	rep, err := AwkCampaign(context.Background(), r, Options{Seed: seed, PerFeature: n, Jobs: 2, Minimize: save, Features: feats})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	t.Logf("seed %d, %d programs per feature, %s:\n%s", seed, n, rep.Elapsed.Round(1e6), b.String())
	if save {
		saved := 0
		for _, c := range rep.Mismatches {
			// an entry of the same name (a guard, or a known case being
			// worked on) is kept
			if _, err := os.Stat(filepath.Join(awkCorpus, c.Name+".json")); err == nil {
				continue
			}
			if err := c.Save(awkCorpus); err != nil {
				t.Fatal(err)
			}
			saved++
		}
		t.Logf("saved %d of %d mismatches to %s (the others have entries)", saved, len(rep.Mismatches), awkCorpus)
	}
	if os.Getenv("AWK_VERBOSE") != "" {
		for _, c := range rep.Mismatches {
			t.Logf("%s: %s\n%s", c.Name, c.Why, c.Script)
		}
	}
	floorPath := filepath.Join("testdata", "awk-floor.json")
	if os.Getenv("AWK_UPDATE") != "" {
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
	if floor["per_feature"] != n || seed != 1 || feats != nil {
		t.Logf("floor recorded with seed 1 and %d programs per feature, this run is seed %d with %d: not judged", floor["per_feature"], seed, n)
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
			t.Errorf("awk %s: %d mismatches, the floor is %d; e.g.\n%s", f, got, max, strings.Join(ex, "\n---\n"))
		}
	}
}
