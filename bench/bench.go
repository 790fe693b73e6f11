// Package bench is `warren bench`: warren's benchmark suite. It measures the
// workloads of the peer harness (shared/peers/justbash) over the same base
// tree and prints the same schema, peer-bench/v1, so both can be compared
// metric by metric in one run (shared/peers/compare.mjs).
//
// Latencies are distributions (nearest-rank p50/p95/p99 with n, after
// warm-up), warm and cold paths are separate metrics, and every run carries
// a machine fingerprint. Every scenario checks its command's output: a broken
// shell fails the bench instead of producing a fast figure.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// Schema is the report format shared with the peer harnesses.
const Schema = "peer-bench/v1"

// Options configure a run. Zero values take the peer harness's defaults.
type Options struct {
	Version   string   // warren's version, for "peer"
	Quick     bool     // scale everything down: the whole run under 20 s
	Scale     float64  // multiplies the latency phases' iteration counts (default 1, quick 0.1)
	MemN      int      // mem_per_sandbox_bytes: sandboxes kept alive (default 2000, quick 200)
	Agents    int      // density: resident sandboxes (default 2000, quick 200)
	Executors int      // density: goroutines running due heartbeats (default 2 × GOMAXPROCS)
	PeriodMS  float64  // density: heartbeat period (default 1000)
	Seconds   float64  // density: measured window (default 10, quick 2)
	Scenarios []string // run only these (scenario names or metric keys); empty = all
	BaseTree  string   // base-tree.json to load; "" = default paths, else embedded
}

func (o *Options) defaults() error {
	if o.Scale == 0 {
		o.Scale = 1
		if o.Quick {
			o.Scale = 0.1
		}
	}
	if o.MemN == 0 {
		o.MemN = 2000
		if o.Quick {
			o.MemN = 200
		}
	}
	if o.Executors == 0 {
		o.Executors = 2 * runtime.GOMAXPROCS(0)
	}
	if o.Agents == 0 {
		o.Agents = 2000
		if o.Quick {
			o.Agents = 200
		}
	}
	if o.PeriodMS == 0 {
		o.PeriodMS = 1000
	}
	if o.Seconds == 0 {
		o.Seconds = 10
		if o.Quick {
			o.Seconds = 2
		}
	}
	for name, x := range map[string]float64{"scale": o.Scale, "mem-n": float64(o.MemN), "agents": float64(o.Agents), "executors": float64(o.Executors), "period-ms": o.PeriodMS, "seconds": o.Seconds} {
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("--%s must be a positive number, got %v", name, x)
		}
	}
	if o.Agents > 1_000_000 {
		return fmt.Errorf("--agents %d: at most 1,000,000", o.Agents)
	}
	if o.MemN > 1_000_000 {
		return fmt.Errorf("--mem-n %d: at most 1,000,000", o.MemN)
	}
	return nil
}

// iters scales a peer iteration count, like the peer's iters(): never below 10.
func (o *Options) iters(n int) int { return max(10, int(math.Round(float64(n)*o.Scale))) }

// Scenario is one measured phase. It may set several metric keys (fork sets
// fork and fork_first_exec from the same loop, as the peer does).
type Scenario struct {
	Name string
	Keys []string // metric keys it sets; default {Name}
	// Run measures and sets its keys (and notes) on r. An error marks the
	// scenario failed: its keys become {"error": ...} and the run fails.
	Run func(ctx context.Context, e *Env, r *Result) error
}

func (s Scenario) keys() []string {
	if len(s.Keys) == 0 {
		return []string{s.Name}
	}
	return s.Keys
}

func (s Scenario) matches(name string) bool {
	return s.Name == name || slices.Contains(s.keys(), name)
}

// Result collects what one scenario measured.
type Result struct {
	Metrics Object
	Notes   Object
}

// Env is what scenarios run against.
type Env struct {
	Opts    Options
	Tree    *BaseTree
	Runtime Runtime // in-process sandboxes (shell over vfs)
	// Service starts the sandbox service in process; tests substitute it.
	Service ServiceFactory
	// WrapService, when set, wraps every api.Service the scenarios use
	// (tests inject a broken exec through it).
	WrapService func(api.Service) api.Service
	Log         func(format string, args ...any)
}

// Registry is the ordered list of scenarios; the report follows its order.
var Registry []Scenario

// order is the report's order: in-process, lifecycle, HTTP API, native, wasm
// (each tier's file registers its own scenarios; init order is by file name).
var order = []string{
	"create_first_exec", "exec_rtt", "exec_pipeline", "fork", "mem_per_sandbox_bytes", "density",
	"hibernate", "resume_cold", "mem_per_hibernated_bytes",
	"api_create_first_exec", "api_exec_rtt", "api_resume", "api_fork",
	"native_exec", "wasm_exec", "wasm_exec_go",
}

func rank(name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

// register adds scenarios to Registry, kept in report order.
func register(s ...Scenario) {
	Registry = append(Registry, s...)
	slices.SortStableFunc(Registry, func(a, b Scenario) int { return rank(a.Name) - rank(b.Name) })
}

// Select returns the scenarios named in names (all when empty).
func Select(all []Scenario, names []string) ([]Scenario, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Scenario
	for _, n := range names {
		found := false
		for _, s := range all {
			if s.matches(n) {
				found = true
				if !slices.ContainsFunc(out, func(x Scenario) bool { return x.Name == s.Name }) {
					out = append(out, s)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", n, strings.Join(Names(all), ", "))
		}
	}
	// keep registry order
	slices.SortStableFunc(out, func(a, b Scenario) int {
		return slices.IndexFunc(all, func(x Scenario) bool { return x.Name == a.Name }) -
			slices.IndexFunc(all, func(x Scenario) bool { return x.Name == b.Name })
	})
	return out, nil
}

// Names lists the scenarios' names.
func Names(all []Scenario) []string {
	var n []string
	for _, s := range all {
		n = append(n, s.Name)
	}
	return n
}

// ErrFailed is returned (wrapped) by Run when any scenario failed; the
// report is still complete and says which.
var ErrFailed = errors.New("benchmark failed")

// Run runs the selected scenarios of Registry with the real runtime and
// returns the peer-bench/v1 report.
func Run(ctx context.Context, opts Options, progress io.Writer) (*Object, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	tree, err := LoadBaseTree(opts.BaseTree)
	if err != nil {
		return nil, err
	}
	e := &Env{Opts: opts, Tree: tree, Log: logger(progress)}
	e.Runtime, err = NewShellRuntime(tree)
	if err != nil {
		return nil, err
	}
	e.Service = newServiceFactory(tree)
	sel, err := Select(Registry, opts.Scenarios)
	if err != nil {
		return nil, err
	}
	return RunScenarios(ctx, e, sel)
}

func logger(w io.Writer) func(string, ...any) {
	if w == nil {
		w = io.Discard
	}
	return func(format string, args ...any) {
		fmt.Fprintf(w, "[bench %s] %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
}

// RunScenarios runs sel against e and assembles the report. A failed
// scenario's keys hold {"error": message}; the returned error wraps
// ErrFailed and names them.
func RunScenarios(ctx context.Context, e *Env, sel []Scenario) (*Object, error) {
	if err := e.Opts.defaults(); err != nil {
		return nil, err
	}
	if e.Log == nil {
		e.Log = logger(nil)
	}
	t0 := time.Now()
	out := &Object{}
	out.Set("schema", Schema)
	out.Set("peer", "warren "+e.Opts.Version)
	m := Machine(t0)
	out.Set("machine", &m)
	var params Object
	params.Set("agents", e.Opts.Agents)
	params.Set("period_ms", e.Opts.PeriodMS)
	params.Set("seconds", e.Opts.Seconds)
	params.Set("scale", e.Opts.Scale)
	params.Set("mem_n", e.Opts.MemN)
	params.Set("quick", e.Opts.Quick)
	params.Set("phases", Names(sel))
	params.Set("base_tree", e.Tree.Source)
	params.Set("base_tree_sha256", e.Tree.Digest)
	out.Set("params", params)
	notes := &Object{}
	var failed []string
	for _, s := range sel {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e.Log("phase %s ...", s.Name)
		var r Result
		err := runOne(ctx, s, e, &r)
		for _, k := range r.Metrics.Keys() {
			v, _ := r.Metrics.Get(k)
			out.Set(k, v)
		}
		for _, k := range r.Notes.Keys() {
			v, _ := r.Notes.Get(k)
			notes.Set(k, v)
		}
		if err != nil {
			e.Log("phase %s FAILED: %v", s.Name, err)
			failed = append(failed, s.Name)
			for _, k := range s.keys() {
				out.Set(k, map[string]string{"error": err.Error()})
			}
			continue
		}
		e.Log("phase %s done", s.Name)
	}
	notes.Set("percentiles", "nearest-rank (sorted[ceil(q*n)-1]) over all measured samples after warm-up; microseconds from Go's monotonic clock (time.Now/time.Since), rounded to 0.01 us.")
	notes.Set("base_tree", fmt.Sprintf("the peer's base-tree.json (sha256 %s, %d files, %d content bytes) from %s, as an fs.FS (fstest.MapFS; parents 0755, bin files 0755, others 0644, plus /tmp 1777, which just-bash creates itself) under each sandbox's vfs; cwd %s, env %s.",
		e.Tree.Digest, len(e.Tree.Files), e.Tree.Bytes, e.Tree.Source, SandboxCwd, strings.Join(SandboxEnv, " ")))
	out.Set("notes", notes)
	m.Set("loadavg_at_end", LoadAvg())
	out.Set("total_wall_s", math.Round(time.Since(t0).Seconds()*10)/10)
	if len(failed) > 0 {
		return out, fmt.Errorf("%w: %s", ErrFailed, strings.Join(failed, ", "))
	}
	return out, nil
}

// runOne turns a scenario's panic into its failure, so one broken part does
// not lose the rest of the report.
func runOne(ctx context.Context, s Scenario, e *Env, r *Result) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return s.Run(ctx, e, r)
}
