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

// Case is one regression-corpus entry: a minimized script and bash's
// outcome as the expectation.
type Case struct {
	Name    string  `json:"name"`
	Feature string  `json:"feature"`
	Seed    uint64  `json:"seed,omitempty"`
	Script  string  `json:"script"`
	Bash    Outcome `json:"bash"`
	// Known: warren still diverges here (the entry documents it); a known
	// case that starts matching is reported so it can become a guard.
	Known bool   `json:"known"`
	Why   string `json:"why,omitempty"` // the divergence when recorded
	Class string `json:"class,omitempty"`
}

// LoadCorpus reads every *.json case in dir, sorted by name.
func LoadCorpus(dir string) ([]Case, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var cs []Case
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if c.Name == "" {
			c.Name = strings.TrimSuffix(filepath.Base(n), ".json")
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Save writes c as DIR/NAME.json.
func (c Case) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, c.Name+".json"), append(b, '\n'), 0o644)
}

// Tally counts verdicts for one feature.
type Tally struct {
	Scripts int `json:"scripts"`
	Match   int `json:"match"`
	Loud    int `json:"loud"`
	Silent  int `json:"silent"`
}

// Report is a campaign's result.
type Report struct {
	Seed       uint64            `json:"seed"`
	PerFeature map[string]*Tally `json:"per_feature"`
	Mismatches []Case            `json:"-"`
	Elapsed    time.Duration     `json:"elapsed_ns"`
}

// Options configure a campaign.
type Options struct {
	Seed       uint64   // first seed (default 1)
	PerFeature int      // scripts per feature (Only) plus as many mixed ones
	Features   []string // default all
	Jobs       int      // concurrent scripts (default 2)
	Minimize   bool     // shrink each mismatch (costs ~tens of runs each)
}

// Campaign runs opts.PerFeature generated scripts for every feature plus
// as many mixed ones, comparing each in both shells.
func Campaign(ctx context.Context, r *Runner, opts Options) (*Report, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Jobs <= 0 {
		opts.Jobs = 2
	}
	feats := opts.Features
	if len(feats) == 0 {
		feats = append(append(append([]string{}, Features...), "mixed"), CommandFeatures...)
	}
	type job struct {
		feature string
		s       Script
	}
	var jobs []job
	for _, f := range feats {
		for i := 0; i < opts.PerFeature; i++ {
			seed := opts.Seed + uint64(i)
			if f == "mixed" {
				jobs = append(jobs, job{f, Generate(seed)})
			} else {
				jobs = append(jobs, job{f, Only(seed, f)})
			}
		}
	}
	rep := &Report{Seed: opts.Seed, PerFeature: map[string]*Tally{}}
	for _, f := range feats {
		rep.PerFeature[f] = &Tally{}
	}
	start := time.Now()
	var mu sync.Mutex
	firstErr := parallel(ctx, jobs, opts.Jobs, func(j job) error {
		b, w, err := r.Both(ctx, j.s.Source)
		if err != nil {
			return err
		}
		v, why := Compare(b, w)
		var c *Case
		if v != Match {
			src := j.s.Source
			if opts.Minimize {
				src = r.Shrink(ctx, src, why)
				b, w, _ = r.Both(ctx, src)
				v2, why2 := Compare(b, w)
				if v2 != Match {
					v, why = v2, why2
				}
			}
			c = &Case{
				Name: fmt.Sprintf("%s-%d", j.feature, j.s.Seed), Feature: j.feature, Seed: j.s.Seed,
				Script: src, Bash: b, Known: true, Why: why, Class: string(v),
			}
		}
		mu.Lock()
		t := rep.PerFeature[j.feature]
		t.Scripts++
		switch v {
		case Match:
			t.Match++
		case Loud:
			t.Loud++
		case Silent:
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

// Shrink minimizes src while it still mismatches in the same way (the same
// kind of first difference: status, stdout, stderr, files or timeout).
func (r *Runner) Shrink(ctx context.Context, src, why string) string {
	return r.shrink(ctx, src, why, 60)
}

func (r *Runner) shrink(ctx context.Context, src, why string, maxTries int) string {
	kind, _, _ := strings.Cut(why, ":")
	return Minimize(src, func(cand string) bool {
		b, w, err := r.Both(ctx, cand)
		if err != nil {
			return false
		}
		v, why2 := Compare(b, w)
		k2, _, _ := strings.Cut(why2, ":")
		return v != Match && k2 == kind
	}, maxTries)
}

// shrinkSame minimizes src while it still differs with the same first
// difference (the same lines, wherever they now fall), so deleting a
// definition cannot turn one divergence into another (a command not found
// whose message reaches stdout).
func (r *Runner) shrinkSame(ctx context.Context, src, why string, maxTries int) string {
	want := lineless(why)
	return Minimize(src, func(cand string) bool {
		b, w, err := r.Both(ctx, cand)
		if err != nil {
			return false
		}
		v, why2 := Compare(b, w)
		return v != Match && lineless(why2) == want
	}, maxTries)
}

var lineNo = regexp.MustCompile(`line [0-9]+: `)

func lineless(why string) string { return lineNo.ReplaceAllString(why, "") }

// WriteTable prints the per-feature tally, worst first.
func (rep *Report) WriteTable(w io.Writer) {
	type row struct {
		f string
		t *Tally
	}
	var rows []row
	var tot Tally
	for f, t := range rep.PerFeature {
		rows = append(rows, row{f, t})
		tot.Scripts += t.Scripts
		tot.Match += t.Match
		tot.Loud += t.Loud
		tot.Silent += t.Silent
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].t.Match*rows[j].t.Scripts != rows[j].t.Match*rows[i].t.Scripts {
			return rows[i].t.Match*rows[j].t.Scripts < rows[j].t.Match*rows[i].t.Scripts
		}
		return rows[i].f < rows[j].f
	})
	fmt.Fprintf(w, "%-12s %7s %7s %6s %6s %6s\n", "feature", "scripts", "match", "loud", "silent", "rate")
	for _, r := range rows {
		fmt.Fprintf(w, "%-12s %7d %7d %6d %6d %6.3f\n", r.f, r.t.Scripts, r.t.Match, r.t.Loud, r.t.Silent, rate(r.t))
	}
	fmt.Fprintf(w, "%-12s %7d %7d %6d %6d %6.3f  (%.0f scripts/s)\n", "total", tot.Scripts, tot.Match, tot.Loud, tot.Silent, rate(&tot), float64(tot.Scripts)/rep.Elapsed.Seconds())
}

func rate(t *Tally) float64 {
	if t.Scripts == 0 {
		return 0
	}
	return float64(t.Match) / float64(t.Scripts)
}

// parallel runs fn on items with n workers until they are done or ctx
// ends (items not started by then are skipped); it returns fn's first
// error, the others keep going (a campaign reports what it could run).
func parallel[T any](ctx context.Context, items []T, n int, fn func(T) error) error {
	var mu sync.Mutex
	var first error
	ch := make(chan T)
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				if err := fn(it); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		ch <- it
	}
	close(ch)
	wg.Wait()
	return first
}
