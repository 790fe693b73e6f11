package main

import (
	"bytes"
	"testing"

	"github.com/warren-sandbox/warren/bench"
)

// TestBenchQuickJSON is what CI runs: `warren bench --quick --json` through
// the real CLI, stdout validated against peer-bench/v1 (timings are never
// asserted; a scenario whose output check fails fails the test).
func TestBenchQuickJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole quick benchmark (several seconds); skipped with -short")
	}
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs([]string{"bench", "--quick", "--json"})
	err := root.Execute()
	if verr := bench.Validate(out.Bytes()); verr != nil {
		t.Errorf("stdout is not one valid peer-bench/v1 object: %v\n%s", verr, out.Bytes())
	}
	if err != nil {
		t.Errorf("warren bench --quick --json: %v\nstderr:\n%s", err, errb.Bytes())
	}
}

func TestBenchRejectsUnknownScenario(t *testing.T) {
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs([]string{"bench", "--scenario", "no_such_thing"})
	if err := root.Execute(); err == nil {
		t.Fatal("unknown scenario accepted")
	}
	if out.Len() != 0 {
		t.Errorf("stdout not empty: %s", out.Bytes())
	}
}
