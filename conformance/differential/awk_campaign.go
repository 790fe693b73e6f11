package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// AwkCase is one entry of the awk regression corpus: a minimized program
// and gawk's outcome as the expectation.
type AwkCase struct {
	Name    string  `json:"name"`
	Feature string  `json:"feature"`
	Prog    AwkProg `json:"prog"`
	Script  string  `json:"script"` // Prog.Script(), for reading
	Gawk    Outcome `json:"gawk"`
	// Known: warren still diverges (documented in docs/commands.md); a
	// known case that starts matching is reported so it can become a guard.
	Known bool   `json:"known"`
	Why   string `json:"why,omitempty"`
	Class string `json:"class,omitempty"`
}

// Save writes c as DIR/NAME.json.
func (c AwkCase) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, c.Name+".json"), append(b, '\n'), 0o644)
}

// LoadAwkCorpus reads every *.json case in dir, sorted by name.
func LoadAwkCorpus(dir string) ([]AwkCase, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var cs []AwkCase
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var c AwkCase
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// awkName is a program name at the start of a diagnostic line.
var awkName = regexp.MustCompile(`(?m)^(g|m|n)?awk: `)

// normStderr makes diagnostics comparable across the names awk is run as.
func normStderr(s string) string { return awkName.ReplaceAllString(s, "awk: ") }

// CompareAwk judges warren's awk against gawk byte for byte: status,
// stdout, stderr (the program name at the start of a line normalized) and
// files. The verdict is Silent or Loud as in Compare; the kind names
// which of them differed first ("stderr" when only the diagnostic's
// wording did).
func CompareAwk(ref, w Outcome) (Verdict, string, string) {
	v, why := Compare(ref, w)
	if v != Match {
		kind, _, _ := strings.Cut(why, ":")
		return v, kind, why
	}
	if a, b := normStderr(ref.Stderr), normStderr(w.Stderr); a != b {
		return Loud, "stderr", "stderr: " + firstDiff(a, b)
	}
	return Match, "", ""
}

// AwkTally counts verdicts for one awk feature; Stderr counts the
// mismatches that differ only in a diagnostic's wording.
type AwkTally struct {
	Programs int `json:"programs"`
	Match    int `json:"match"`
	Silent   int `json:"silent"`
	Loud     int `json:"loud"`
	Stderr   int `json:"stderr"`
}

// AwkReport is an awk campaign's result.
type AwkReport struct {
	Seed       uint64
	PerFeature map[string]*AwkTally
	Mismatches []AwkCase
	Elapsed    time.Duration
}

// AwkCampaign runs opts.PerFeature generated programs for every awk
// feature (opts.Features, default AwkFeatures) in warren and in gawk.
func AwkCampaign(ctx context.Context, r *Runner, opts Options) (*AwkReport, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Jobs <= 0 {
		opts.Jobs = 2
	}
	feats := opts.Features
	if len(feats) == 0 {
		feats = AwkFeatures
	}
	rep := &AwkReport{Seed: opts.Seed, PerFeature: map[string]*AwkTally{}}
	var progs []AwkProg
	for _, f := range feats {
		rep.PerFeature[f] = &AwkTally{}
		for i := 0; i < opts.PerFeature; i++ {
			progs = append(progs, GenerateAwk(opts.Seed+uint64(i), f))
		}
	}
	start := time.Now()
	var mu sync.Mutex
	firstErr := parallel(ctx, progs, opts.Jobs, func(p AwkProg) error {
		ref, w, err := r.Both(ctx, p.Script())
		if err != nil {
			return err
		}
		v, kind, why := CompareAwk(ref, w)
		var c *AwkCase
		if v != Match {
			if opts.Minimize {
				// A shrunk program that matches when run again
				// (a flaky divergence: GoAWK's for-in order is
				// random) is not kept: the original is.
				small := r.ShrinkAwk(ctx, p, kind)
				if ref2, w2, err := r.Both(ctx, small.Script()); err == nil {
					if v2, k2, why2 := CompareAwk(ref2, w2); v2 != Match {
						p, ref, v, kind, why = small, ref2, v2, k2, why2
					}
				}
			}
			c = &AwkCase{
				Name: fmt.Sprintf("%s-%d", p.Feature, p.Seed), Feature: p.Feature, Prog: p,
				Script: p.Script(), Gawk: ref, Known: true, Why: why, Class: string(v),
			}
		}
		mu.Lock()
		t := rep.PerFeature[p.Feature]
		t.Programs++
		switch {
		case v == Match:
			t.Match++
		case kind == "stderr":
			t.Stderr++
		case v == Loud:
			t.Loud++
		default:
			t.Silent++
		}
		if c != nil {
			rep.Mismatches = append(rep.Mismatches, *c)
		}
		mu.Unlock()
		return nil
	})
	rep.Elapsed = time.Since(start)
	sort.Slice(rep.Mismatches, func(i, j int) bool { return rep.Mismatches[i].Name < rep.Mismatches[j].Name })
	return rep, firstErr
}

// ShrinkAwk minimizes p while it still mismatches with the same kind of
// first difference.
func (r *Runner) ShrinkAwk(ctx context.Context, p AwkProg, kind string) AwkProg {
	return shrinkAwk(p, func(c AwkProg) bool {
		ref, w, err := r.Both(ctx, c.Script())
		if err != nil {
			return false
		}
		v, k2, _ := CompareAwk(ref, w)
		return v != Match && k2 == kind
	}, 80)
}

// WriteTable prints the per-feature tally, worst first.
func (rep *AwkReport) WriteTable(w io.Writer) {
	var fs []string
	var tot AwkTally
	for f, t := range rep.PerFeature {
		fs = append(fs, f)
		tot.Programs += t.Programs
		tot.Match += t.Match
		tot.Silent += t.Silent
		tot.Loud += t.Loud
		tot.Stderr += t.Stderr
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := rep.PerFeature[fs[i]], rep.PerFeature[fs[j]]
		if a.Match*b.Programs != b.Match*a.Programs {
			return a.Match*b.Programs < b.Match*a.Programs
		}
		return fs[i] < fs[j]
	})
	fmt.Fprintf(w, "%-10s %8s %6s %6s %6s %6s\n", "feature", "programs", "match", "silent", "loud", "stderr")
	for _, f := range fs {
		t := rep.PerFeature[f]
		fmt.Fprintf(w, "%-10s %8d %6d %6d %6d %6d\n", f, t.Programs, t.Match, t.Silent, t.Loud, t.Stderr)
	}
	fmt.Fprintf(w, "%-10s %8d %6d %6d %6d %6d  (%.0f programs/s)\n", "total", tot.Programs, tot.Match, tot.Silent, tot.Loud, tot.Stderr, float64(tot.Programs)/rep.Elapsed.Seconds())
}
