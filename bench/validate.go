package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// StatsKeys are the latency metrics of peer-bench/v1 that are stats
// objects when present; a report may leave any of them out (not measured).
var StatsKeys = []string{
	"create_first_exec", "create_only", "exec_rtt", "exec_pipeline", "fork", "fork_first_exec",
	"hibernate", "resume_warm", "resume_cold", "resume_cold_first_exec", "resume_cold_read_10mb",
	"api_create_first_exec", "api_exec_rtt", "api_resume", "api_fork", "native_exec", "native_workspace_create",
	"wasm_exec", "wasm_compile_cold", "wasm_exec_native", "wasm_exec_go", "wasm_compile_cold_go",
}

// Validate checks a report against the peer-bench/v1 schema: the required
// top-level keys, the types and units of every stats, memory and density
// object, and that failed scenarios are reported as {"error": "..."}.
// It never looks at the values of timings.
func Validate(data []byte) error {
	var rep map[string]any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&rep); err != nil {
		return fmt.Errorf("not one JSON object: %w", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if rep["schema"] != Schema {
		bad("schema = %v, want %q", rep["schema"], Schema)
	}
	if p, ok := rep["peer"].(string); !ok || p == "" {
		bad("peer: want a non-empty string")
	}
	m, ok := rep["machine"].(map[string]any)
	if !ok {
		bad("machine: want an object")
	} else {
		for _, k := range []string{"runtime", "cpu_model", "date"} {
			if s, ok := m[k].(string); !ok || s == "" {
				bad("machine.%s: want a non-empty string", k)
			}
		}
		if n, ok := intOf(m["cores"]); !ok || n < 1 {
			bad("machine.cores: want a positive integer, got %v", m["cores"])
		}
		if g, present := m["gomaxprocs"]; present { // Go side only
			if n, ok := intOf(g); !ok || n < 1 {
				bad("machine.gomaxprocs: want a positive integer, got %v", g)
			}
		}
		if la, ok := m["loadavg_at_start"].([]any); !ok || len(la) != 3 {
			bad("machine.loadavg_at_start: want 3 numbers")
		}
	}
	if _, ok := rep["params"].(map[string]any); !ok {
		bad("params: want an object")
	}
	if _, ok := rep["notes"].(map[string]any); !ok {
		bad("notes: want an object")
	}
	failed := func(k string, v any) bool {
		o, ok := v.(map[string]any)
		if !ok {
			return false
		}
		e, ok := o["error"].(string)
		return ok && e != "" && len(o) == 1
	}
	for _, k := range StatsKeys {
		v, ok := rep[k]
		if !ok || failed(k, v) {
			continue
		}
		errs = append(errs, checkStats(k, v)...)
	}
	for _, k := range []string{"mem_per_sandbox_bytes", "mem_per_hibernated_bytes"} {
		v, ok := rep[k]
		if !ok || failed(k, v) {
			continue
		}
		o, ok := v.(map[string]any)
		if !ok {
			bad("%s: want an object", k)
			continue
		}
		for _, f := range []string{"heap_used", "rss"} {
			if _, ok := intOf(o[f]); !ok {
				bad("%s.%s: want an integer number of bytes, got %v", k, f, o[f])
			}
		}
		if n, ok := intOf(o["n"]); !ok || n < 1 {
			bad("%s.n: want a positive integer", k)
		}
		if o["unit"] != "bytes" {
			bad("%s.unit = %v, want bytes", k, o["unit"])
		}
	}
	if v, ok := rep["density"]; ok && !failed("density", v) {
		errs = append(errs, checkDensity(v)...)
	}
	return errors.Join(errs...)
}

func intOf(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func numOf(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func checkStats(k string, v any) []error {
	o, ok := v.(map[string]any)
	if !ok {
		return []error{fmt.Errorf("%s: want a stats object", k)}
	}
	var errs []error
	n, ok := intOf(o["n"])
	if !ok || n < 0 {
		errs = append(errs, fmt.Errorf("%s.n: want a non-negative integer, got %v", k, o["n"]))
	}
	if o["unit"] != "us" {
		errs = append(errs, fmt.Errorf("%s.unit = %v, want us", k, o["unit"]))
	}
	var prev float64
	for _, q := range []string{"p50", "p95", "p99"} {
		x, ok := numOf(o[q])
		switch {
		case n == 0 && o[q] == nil:
		case !ok || x < 0:
			errs = append(errs, fmt.Errorf("%s.%s: want a non-negative number, got %v", k, q, o[q]))
		case x < prev:
			errs = append(errs, fmt.Errorf("%s.%s = %v is below the previous percentile %v", k, q, x, prev))
		default:
			prev = x
		}
	}
	for _, f := range []string{"min", "max", "mean"} {
		if x, present := o[f]; present {
			if _, ok := numOf(x); !ok {
				errs = append(errs, fmt.Errorf("%s.%s: want a number", k, f))
			}
		}
	}
	if w, present := o["warmup"]; present {
		if _, ok := intOf(w); !ok {
			errs = append(errs, fmt.Errorf("%s.warmup: want an integer", k))
		}
	}
	if e, present := o["emulated"]; present {
		if _, ok := e.(bool); !ok {
			errs = append(errs, fmt.Errorf("%s.emulated: want a boolean", k))
		}
	}
	return errs
}

func checkDensity(v any) []error {
	o, ok := v.(map[string]any)
	if !ok {
		return []error{errors.New("density: want an object")}
	}
	var errs []error
	for _, k := range []string{"exec_latency", "start_lag", "sched_to_done"} {
		errs = append(errs, checkStats("density."+k, o[k])...)
	}
	for _, k := range []string{"agents", "scheduled_execs", "completed_execs", "errors", "processes"} {
		if n, ok := intOf(o[k]); !ok || n < 0 {
			errs = append(errs, fmt.Errorf("density.%s: want a non-negative integer, got %v", k, o[k]))
		}
	}
	for _, k := range []string{"period_ms", "seconds", "target_exec_per_s", "achieved_exec_per_s"} {
		if x, ok := numOf(o[k]); !ok || x < 0 {
			errs = append(errs, fmt.Errorf("density.%s: want a non-negative number, got %v", k, o[k]))
		}
	}
	if _, ok := o["kept_up"].(bool); !ok {
		errs = append(errs, errors.New("density.kept_up: want a boolean"))
	}
	return errs
}
