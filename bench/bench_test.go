package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
)

func TestPercentile(t *testing.T) {
	seq := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i + 1)
		}
		return s
	}
	tests := []struct {
		name string
		s    []float64
		q    float64
		want float64
	}{
		{"empty", nil, 0.5, 0},
		{"one", []float64{7}, 0.99, 7},
		{"p50 of 100", seq(100), 0.5, 50},
		{"p95 of 100", seq(100), 0.95, 95},
		{"p99 of 100", seq(100), 0.99, 99},
		{"p50 of 10", seq(10), 0.5, 5},
		{"p95 of 10 rounds up", seq(10), 0.95, 10},
		{"p99 of 2000", seq(2000), 0.99, 1980},
		{"p50 of 3", seq(3), 0.5, 2},
		{"q=0 clamps to min", seq(5), 0, 1},
		{"q=1 is max", seq(5), 1, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.s, tc.q); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.s, tc.q, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{5, 1, 4, 2, 3}, 7)
	if s.N != 5 || s.Min != 1 || s.Max != 5 || s.Mean != 3 || s.P50 != 3 || s.P99 != 5 || s.Warmup != 7 || s.Unit != "us" {
		t.Fatalf("Summarize = %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"p50":3,"p95":5,"p99":5,"n":5,"unit":"us","min":1,"max":5,"mean":3,"warmup":7}`
	if string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	b, _ = json.Marshal(Summarize(nil, 0))
	if want := `{"p50":null,"p95":null,"p99":null,"n":0,"unit":"us"}`; string(b) != want {
		t.Errorf("empty JSON = %s, want %s", b, want)
	}
	// sub-microsecond figures keep 10 ns resolution
	b, _ = json.Marshal(Summarize([]float64{0.123456}, 0))
	if !strings.Contains(string(b), `"p50":0.12`) {
		t.Errorf("JSON = %s, want p50 0.12", b)
	}
}

func TestObjectKeepsOrder(t *testing.T) {
	var o Object
	o.Set("z", 1)
	o.Set("a", "x")
	o.Set("m", []int{1})
	o.Set("z", 2) // replaced in place
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":2,"a":"x","m":[1]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestBaseTree(t *testing.T) {
	emb, err := ParseBaseTree(embeddedBaseTree, "embedded")
	if err != nil {
		t.Fatalf("embedded copy: %v", err)
	}
	if len(emb.Files) != 200 || emb.Bytes != 51624 {
		t.Errorf("embedded tree: %d files, %d bytes; the peer README says 200 and 51,624", len(emb.Files), emb.Bytes)
	}
	shared := filepath.Join("..", "..", "shared", "peers", "justbash", "base-tree.json")
	if b, err := os.ReadFile(shared); err == nil {
		if !bytes.Equal(b, embeddedBaseTree) {
			t.Errorf("embedded base-tree.json differs from %s", shared)
		}
	} else {
		t.Logf("no shared folder at %s (%v): compared with the digest only", shared, err)
	}

	dir := t.TempDir()
	tampered := filepath.Join(dir, "tampered.json")
	if err := os.WriteFile(tampered, bytes.Replace(embeddedBaseTree, []byte("root"), []byte("toor"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBaseTree(tampered); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("tampered tree: err = %v, want a digest mismatch", err)
	}
	if _, err := LoadBaseTree(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing --base-tree: err = %v, want not exist", err)
	}
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, embeddedBaseTree, 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := LoadBaseTree(good)
	if err != nil || tr.Source != good {
		t.Fatalf("LoadBaseTree(%s) = %v, %v", good, tr, err)
	}

	fsys := tr.FS()
	if err := fstestCheck(fsys, tr); err != nil {
		t.Error(err)
	}
}

// fstestCheck compares the fs.FS with the tree's map.
func fstestCheck(fsys fs.FS, tr *BaseTree) error {
	n := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			info, _ := d.Info()
			if p == "tmp" && info.Mode()&fs.ModeSticky == 0 {
				return errors.New("/tmp is not sticky")
			}
			if p != "." && p != "tmp" && info.Mode().Perm() != 0o755 {
				return errors.New(p + ": directory not 0755")
			}
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if want, ok := tr.Files["/"+p]; !ok || want != string(b) {
			return errors.New(p + ": content differs from the tree")
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n != len(tr.Files) {
		return errors.New("file count differs")
	}
	return nil
}

func TestKeptUp(t *testing.T) {
	p := DensityParams{Agents: 10, Period: time.Second, Window: 10 * time.Second}
	tests := []struct {
		name      string
		completed int
		lagP99    float64
		want      bool
	}{
		{"all done, on time", 100, 1000, true},
		{"99% done", 99, 1000, true},
		{"98% done", 98, 1000, false},
		{"lag p99 equal to the period", 100, 1e6, true},
		{"lag p99 over the period", 100, 1e6 + 1, false},
		{"nothing measured", 0, 0, false},
	}
	for _, tc := range tests {
		d := Density{Params: p, Scheduled: 100, Completed: tc.completed, StartLag: Stats{N: tc.completed, P99: tc.lagP99}}
		if got := d.KeptUp(); got != tc.want {
			t.Errorf("%s: KeptUp = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestScheduledInWindow(t *testing.T) {
	tests := []struct {
		p    DensityParams
		want int
	}{
		// the peer's published runs (shared/peers/results)
		{DensityParams{Agents: 2000, Period: time.Second, Window: 10 * time.Second}, 20000},
		{DensityParams{Agents: 800, Period: time.Second, Window: 10 * time.Second}, 8000},
		{DensityParams{Agents: 2000, Period: 100 * time.Millisecond, Window: 10 * time.Second}, 200000},
		// window shorter than a period: only agents whose phase falls inside
		{DensityParams{Agents: 10, Period: time.Second, Window: 500 * time.Millisecond}, 5},
		{DensityParams{Agents: 4, Period: 100 * time.Millisecond, Window: 250 * time.Millisecond}, 4*2 + 2},
	}
	for _, tc := range tests {
		if got := ScheduledInWindow(tc.p); got != tc.want {
			t.Errorf("ScheduledInWindow(%+v) = %d, want %d", tc.p, got, tc.want)
		}
	}
}

func TestRunDensity(t *testing.T) {
	ctx := context.Background()
	t.Run("counts", func(t *testing.T) {
		// timing-free assertions only: the machine may be loaded
		p := DensityParams{Agents: 20, Period: 50 * time.Millisecond, Window: 300 * time.Millisecond}
		var calls atomic.Int64
		var per [20]atomic.Int64
		d := RunDensity(ctx, p, func(_ context.Context, i int) error { calls.Add(1); per[i].Add(1); return nil })
		if d.Scheduled != ScheduledInWindow(p) || d.Completed > d.Scheduled || int64(d.Completed) != calls.Load() {
			t.Errorf("completed %d, scheduled %d, calls %d", d.Completed, d.Scheduled, calls.Load())
		}
		for i := range per {
			if n := per[i].Load(); n < 1 || n > 6 {
				t.Errorf("agent %d ran %d times, want 1..6 (at most one per tick)", i, n)
			}
		}
		if d.Errors != 0 || d.StartLag.N != d.Completed || d.ExecLatency.N != d.Completed {
			t.Errorf("errors %d, samples %d/%d of %d", d.Errors, d.StartLag.N, d.ExecLatency.N, d.Completed)
		}
		if d.StartLag.Min < 0 {
			t.Errorf("an exec started early: start_lag min %v", d.StartLag.Min)
		}
		// the dispatcher slept and woke: its thread used some CPU, a part
		// of the process's
		if d.DispatcherCPU <= 0 || d.DispatcherCPU > d.ProcessCPU {
			t.Errorf("dispatcher CPU %v, process CPU %v: want 0 < dispatcher <= process", d.DispatcherCPU, d.ProcessCPU)
		}
		o := d.Object()
		if _, ok := o.Get("dispatcher_cpu_us_per_exec"); !ok {
			t.Error("density object has no dispatcher_cpu_us_per_exec")
		}
	})
	t.Run("overloaded", func(t *testing.T) {
		// one agent whose exec takes 3 periods: it stays late and completes
		// far fewer than scheduled, at most one in flight
		p := DensityParams{Agents: 1, Period: 10 * time.Millisecond, Window: 200 * time.Millisecond}
		var inflight, most atomic.Int64
		d := RunDensity(ctx, p, func(context.Context, int) error {
			if n := inflight.Add(1); n > most.Load() {
				most.Store(n)
			}
			time.Sleep(30 * time.Millisecond)
			inflight.Add(-1)
			return errors.New("wrong output")
		})
		if d.KeptUp() {
			t.Errorf("kept_up true with completed %d of %d", d.Completed, d.Scheduled)
		}
		if most.Load() != 1 || d.MaxInflight != 1 {
			t.Errorf("max in flight per agent %d (reported %d), want 1", most.Load(), d.MaxInflight)
		}
		if d.Errors != d.Completed || d.FirstError == nil {
			t.Errorf("errors %d of %d, first %v", d.Errors, d.Completed, d.FirstError)
		}
		if d.SchedToDone.P50 < d.ExecLatency.P50 {
			t.Errorf("sched_to_done p50 %v < exec_latency p50 %v", d.SchedToDone.P50, d.ExecLatency.P50)
		}
	})
}

// wrongBox is a deliberately broken shell: status 0, wrong output.
type wrongBox struct{ status int }

func (w wrongBox) Run(_ context.Context, _ string, stdout, _ io.Writer) (int, error) {
	io.WriteString(stdout, "wrong\n")
	return w.status, nil
}
func (w wrongBox) Fork() (Box, error) { return w, nil }

type wrongRuntime struct{ status int }

func (w wrongRuntime) New(context.Context) (Box, error) { return wrongBox(w), nil }

// wrongService breaks the output of every exec of a real service.
type wrongService struct{ api.Service }

func (w wrongService) Exec(ctx context.Context, id string, req api.ExecRequest, stdout, stderr io.Writer) (api.ExecResult, error) {
	res, err := w.Service.Exec(ctx, id, req, io.Discard, io.Discard)
	if stdout != nil {
		io.WriteString(stdout, "wrong\n")
	}
	return res, err
}

func tinyEnv(t *testing.T) *Env {
	t.Helper()
	tree, err := LoadBaseTree("")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := NewShellRuntime(tree)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{
		Opts:    Options{Version: "test", Quick: true, Scale: 0.001, MemN: 5, Agents: 5, PeriodMS: 50, Seconds: 0.2},
		Tree:    tree,
		Runtime: rt,
		Service: newServiceFactory(tree),
		Log:     t.Logf,
	}
}

// TestScenariosCheckOutput: with a broken shell every scenario fails
// instead of producing a figure.
func TestScenariosCheckOutput(t *testing.T) {
	ctx := context.Background()
	defer func(a []string) { nativeArgv = a }(nativeArgv)
	nativeArgv = []string{"/bin/echo", "wrong"}
	defer func(a []string) { wasmArgs = a }(wasmArgs)
	wasmArgs = []string{"wrong"}
	for _, status := range []int{0, 1} {
		e := tinyEnv(t)
		e.Runtime = wrongRuntime{status}
		e.WrapService = func(s api.Service) api.Service { return wrongService{s} }
		for _, s := range Registry {
			t.Run(s.Name, func(t *testing.T) {
				var r Result
				err := runOne(ctx, s, e, &r)
				if err == nil && len(r.Metrics.Keys()) > 0 {
					t.Fatalf("a broken shell produced %v", r.Metrics.Keys())
				}
				if err == nil {
					t.Logf("not measured here: %v", r.Notes.vals)
				} else if !strings.Contains(err.Error(), "wrong") && !strings.Contains(err.Error(), "exit=") {
					t.Errorf("error does not show the bad output: %v", err)
				}
			})
		}
	}
}

func TestSelect(t *testing.T) {
	sel, err := Select(Registry, []string{"fork_first_exec", "exec_rtt", "fork"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Names(sel), ","); got != "exec_rtt,fork" {
		t.Errorf("Select = %s, want exec_rtt,fork (registry order, metric keys map to their scenario)", got)
	}
	if _, err := Select(Registry, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "unknown scenario") {
		t.Errorf("unknown scenario: err = %v", err)
	}
}

func TestOptionsRejectBadInput(t *testing.T) {
	for _, o := range []Options{{Agents: -1}, {PeriodMS: math.NaN()}, {Seconds: -2}, {Scale: math.Inf(1)}, {Agents: 2_000_000}} {
		if err := o.defaults(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestReportSchema runs every scenario in a tiny configuration and
// validates the JSON against peer-bench/v1 (never the timings).
func TestReportSchema(t *testing.T) {
	e := tinyEnv(t)
	rep, err := RunScenarios(context.Background(), e, Registry)
	if rep == nil {
		t.Fatal(err)
	}
	b, jerr := json.Marshal(rep)
	if jerr != nil {
		t.Fatal(jerr)
	}
	if verr := Validate(b); verr != nil {
		t.Errorf("report does not validate: %v\n%s", verr, b)
	}
	if err != nil {
		t.Errorf("scenarios failed: %v", err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"create_first_exec", "exec_rtt", "exec_pipeline", "fork", "fork_first_exec", "mem_per_sandbox_bytes", "density"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report lacks %s", k)
		}
	}
	// density's floor: the same ticks to an empty exec cost less than the
	// heartbeat, and the difference is what the report says it is
	if d, ok := m["density"].(map[string]any); ok {
		cpu, _ := d["cpu_us_per_exec"].(float64)
		floor, okf := d["floor_cpu_us_per_exec"].(float64)
		above, oka := d["above_floor_cpu_us_per_exec"].(float64)
		if !okf || !oka || floor <= 0 || math.Abs(cpu-floor-above) > 0.15 {
			t.Errorf("density floor %v (ok %v), above %v (ok %v), cpu %v: want floor > 0 and cpu = floor + above", floor, okf, above, oka, cpu)
		}
		if _, ok := d["floor_sched_to_done"].(map[string]any); !ok {
			t.Error("density lacks floor_sched_to_done")
		}
	}
	if !strings.HasPrefix(m["peer"].(string), "warren ") {
		t.Errorf("peer = %v", m["peer"])
	}
	var tbl bytes.Buffer
	if err := WriteTable(&tbl, rep); err != nil || !strings.Contains(tbl.String(), "exec_rtt") {
		t.Errorf("table: %v\n%s", err, tbl.String())
	}
}

func TestValidate(t *testing.T) {
	// the peer's own published reports pass
	peers, _ := filepath.Glob(filepath.Join("..", "..", "shared", "peers", "results", "justbash-*.json"))
	for _, p := range peers {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(b); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	base := func() map[string]any {
		return map[string]any{
			"schema": Schema, "peer": "warren x",
			"machine":  map[string]any{"runtime": "go", "cpu_model": "c", "date": "d", "cores": 2, "loadavg_at_start": []float64{1, 2, 3}},
			"params":   map[string]any{},
			"notes":    map[string]any{},
			"exec_rtt": map[string]any{"p50": 1, "p95": 2, "p99": 3, "n": 10, "unit": "us"},
		}
	}
	tests := []struct {
		name string
		mod  func(m map[string]any)
		ok   bool
	}{
		{"valid", func(map[string]any) {}, true},
		{"failed scenario", func(m map[string]any) { m["fork"] = map[string]any{"error": "boom"} }, true},
		{"wrong schema", func(m map[string]any) { m["schema"] = "v0" }, false},
		{"no machine", func(m map[string]any) { delete(m, "machine") }, false},
		{"wrong unit", func(m map[string]any) { m["exec_rtt"].(map[string]any)["unit"] = "ms" }, false},
		{"string percentile", func(m map[string]any) { m["exec_rtt"].(map[string]any)["p95"] = "2" }, false},
		{"p99 below p50", func(m map[string]any) { m["exec_rtt"].(map[string]any)["p99"] = 0.5 }, false},
		{"fractional n", func(m map[string]any) { m["exec_rtt"].(map[string]any)["n"] = 1.5 }, false},
		{"mem in kB", func(m map[string]any) {
			m["mem_per_sandbox_bytes"] = map[string]any{"heap_used": 1, "rss": 2, "n": 3, "unit": "kB"}
		}, false},
		{"density without kept_up", func(m map[string]any) { m["density"] = map[string]any{"agents": 1} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.mod(m)
			b, _ := json.Marshal(m)
			if err := Validate(b); (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if err := Validate([]byte(`{"schema":"peer-bench/v1"} {}`)); err == nil {
		t.Error("two objects validated")
	}
}

// TestHistQuantile: runtime/metrics histograms read as bucket upper bounds,
// differences between two reads count only the events in between.
func TestHistQuantile(t *testing.T) {
	inf := math.Inf(1)
	a := Hist{counts: []uint64{1, 0, 0, 0}, buckets: []float64{0, 1e-6, 1e-5, 1e-3, inf}}
	b := Hist{counts: []uint64{91, 8, 1, 0}, buckets: a.buckets}
	d := b.minus(a)
	cases := []struct {
		q    float64
		want float64
	}{{0.5, 1e-6}, {0.9, 1e-6}, {0.95, 1e-5}, {0.98, 1e-5}, {0.99, 1e-3}, {1, 1e-3}}
	if d.N() != 99 {
		t.Fatalf("N = %d, want 99", d.N())
	}
	for _, c := range cases {
		if got := d.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := (Hist{counts: []uint64{0, 2}, buckets: []float64{0, 1, inf}}).Quantile(1); got != 1 {
		t.Errorf("last bucket open above: Quantile(1) = %v, want its lower bound 1", got)
	}
	if got := (Hist{}).Quantile(0.5); got != 0 {
		t.Errorf("empty: %v", got)
	}
}
