package differential

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// Divergence is one distinct way warren differs from bash: the statement
// that diverges on its own after the preamble (minimized for the most
// common ones) and how many campaign scripts it accounts for.
type Divergence struct {
	Feature    string
	Class      Verdict
	Why        string
	Stmt       string // the culprit statement as generated
	Minimal    string // the minimized script (Stmt plus what it needs)
	Bash       Outcome
	Warren     Outcome
	Scripts    int      // mismatching scripts attributed to it
	Seeds      []uint64 // their seeds, ascending
	Contextual bool     // no statement diverged alone: the whole script is kept
}

// regenerate rebuilds the script a campaign case came from.
func regenerate(c Case) Script {
	if c.Feature == "mixed" {
		return Generate(c.Seed)
	}
	return Only(c.Seed, c.Feature)
}

// Triage traces each mismatch to the first of its statements that
// mismatches alone after the preamble (a script whose statements only
// diverge together is kept whole), groups the scripts by that statement
// and minimizes the minimize most common groups (Shrink, maxTries runs
// each). It returns the groups, most scripts first.
func (r *Runner) Triage(ctx context.Context, cases []Case, minimize, maxTries, jobs int) []*Divergence {
	return r.triage(ctx, cases, regenerate, minimize, maxTries, jobs)
}

func (r *Runner) triage(ctx context.Context, cases []Case, scriptOf func(Case) Script, minimize, maxTries, jobs int) []*Divergence {
	type verdict struct {
		v     Verdict
		why   string
		b, w  Outcome
		err   error
		ready chan struct{}
	}
	var mu sync.Mutex
	cache := map[string]*verdict{}
	// run compares src once however many cases ask for it.
	run := func(src string) *verdict {
		mu.Lock()
		if v, ok := cache[src]; ok {
			mu.Unlock()
			<-v.ready
			return v
		}
		v := &verdict{ready: make(chan struct{})}
		cache[src] = v
		mu.Unlock()
		v.b, v.w, v.err = r.Both(ctx, src)
		if v.err == nil {
			v.v, v.why = Compare(v.b, v.w)
		}
		close(v.ready)
		return v
	}
	groups := map[string]*Divergence{}
	// Campaigns saved to several directories can hold the same script
	// twice (overlapping seed ranges): each counts once.
	seen := map[string]bool{}
	var uniq []Case
	for _, c := range cases {
		k := fmt.Sprintf("%s\x00%d", c.Feature, c.Seed)
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, c)
		}
	}
	parallel(ctx, uniq, jobs, func(c Case) error {
		s := scriptOf(c)
		if s.Source != c.Script {
			return nil // recorded by another generator version (or minimized): not traceable
		}
		key, d := "", &Divergence{Feature: c.Feature, Contextual: true, Stmt: s.Source}
		for _, st := range s.Stmts {
			src := s.Preamble + st + "\n"
			if v := run(src); v.err == nil && v.v != Match {
				key, d = c.Feature+"\x00"+st, &Divergence{Feature: c.Feature, Stmt: st, Minimal: src, Class: v.v, Why: v.why, Bash: v.b, Warren: v.w}
				break
			}
		}
		if key == "" {
			key = c.Feature + "\x00" + s.Source
			d.Minimal, d.Class, d.Why, d.Bash = s.Source, Verdict(c.Class), c.Why, c.Bash
		}
		mu.Lock()
		if g, ok := groups[key]; ok {
			d = g
		} else {
			groups[key] = d
		}
		d.Scripts++
		d.Seeds = append(d.Seeds, c.Seed)
		mu.Unlock()
		return nil
	})
	var out []*Divergence
	for _, d := range groups {
		sort.Slice(d.Seeds, func(i, j int) bool { return d.Seeds[i] < d.Seeds[j] })
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scripts != out[j].Scripts {
			return out[i].Scripts > out[j].Scripts
		}
		if out[i].Feature != out[j].Feature {
			return out[i].Feature < out[j].Feature
		}
		return out[i].Stmt < out[j].Stmt
	})
	top := out[:min(minimize, len(out))]
	parallel(ctx, top, jobs, func(d *Divergence) error {
		m := r.shrinkSame(ctx, d.Minimal, d.Why, maxTries)
		b, w, err := r.Both(ctx, m)
		if err != nil {
			return err
		}
		if v, why := Compare(b, w); v != Match {
			d.Minimal, d.Bash, d.Warren, d.Class, d.Why = m, b, w, v, why
		}
		return nil
	})
	return merge(out)
}

// merge joins groups of one feature whose statements minimized to the
// same script (the same divergence reached with other parameters).
func merge(groups []*Divergence) []*Divergence {
	var out []*Divergence
	at := map[string]*Divergence{}
	for _, d := range groups {
		k := d.Feature + "\x00" + d.Minimal
		if m, ok := at[k]; ok {
			m.Scripts += d.Scripts
			m.Seeds = append(m.Seeds, d.Seeds...)
			sort.Slice(m.Seeds, func(i, j int) bool { return m.Seeds[i] < m.Seeds[j] })
			continue
		}
		at[k] = d
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Scripts > out[j].Scripts })
	return out
}

// WriteDivergences writes groups as markdown: a count per feature, then
// each divergence with its script and both shells' outcomes.
func WriteDivergences(w io.Writer, groups []*Divergence, limit int) {
	per := map[string][2]int{}
	for _, d := range groups {
		p := per[d.Feature]
		p[0]++
		p[1] += d.Scripts
		per[d.Feature] = p
	}
	var feats []string
	for f := range per {
		feats = append(feats, f)
	}
	sort.Slice(feats, func(i, j int) bool {
		if per[feats[i]][1] != per[feats[j]][1] {
			return per[feats[i]][1] > per[feats[j]][1]
		}
		return feats[i] < feats[j]
	})
	fmt.Fprintf(w, "| feature | distinct statements | scripts |\n|---|---|---|\n")
	for _, f := range feats {
		fmt.Fprintf(w, "| %s | %d | %d |\n", f, per[f][0], per[f][1])
	}
	for i, d := range groups {
		if i >= limit {
			break
		}
		kind := "minimized"
		if d.Contextual {
			kind = "whole script: no statement diverges alone"
		}
		fmt.Fprintf(w, "\n### %d. %s, %s, %d script(s)\n\n%s (%s). Seeds: %s\n\n```bash\n%s```\n\n", i+1, d.Feature, d.Class, d.Scripts, d.Why, kind, seedList(d.Seeds), strings.TrimRight(d.Minimal, "\n")+"\n")
		fmt.Fprintf(w, "- bash: status %d, stdout %q, stderr %q\n- warren: status %d, stdout %q, stderr %q\n", d.Bash.Status, clip(d.Bash.Stdout), clip(d.Bash.Stderr), d.Warren.Status, clip(d.Warren.Stdout), clip(d.Warren.Stderr))
	}
	if len(groups) <= limit {
		return
	}
	// The rest, not minimized: the statement each traced to, a few per
	// feature, so every feature's kinds of divergence show.
	fmt.Fprintf(w, "\n## The other %d groups (not minimized), up to %d per feature\n", len(groups)-limit, perFeature)
	for _, f := range feats {
		n := 0
		for _, d := range groups[limit:] {
			if d.Feature != f || n == perFeature {
				continue
			}
			if n == 0 {
				fmt.Fprintf(w, "\n%s:\n\n", f)
			}
			n++
			stmt := strings.ReplaceAll(d.Stmt, "\n", " ⏎ ")
			fmt.Fprintf(w, "- %d× %s: `` %s `` — %s\n", d.Scripts, d.Class, clip(stmt), clip(d.Why))
		}
	}
}

// perFeature bounds the unminimized groups listed for each feature.
const perFeature = 8

func seedList(s []uint64) string {
	var parts []string
	for i, x := range s {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… (%d)", len(s)))
			break
		}
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, " ")
}
