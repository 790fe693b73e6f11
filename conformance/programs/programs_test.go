package programs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/conformance/differential"
)

// loadFloor reads testdata/floor.json: the programs known to diverge,
// each with why. CI fails on any other mismatch and says when a listed one
// matches again.
func loadFloor(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/floor.json")
	if err != nil {
		t.Fatal(err)
	}
	var floor map[string]string
	if err := json.Unmarshal(b, &floor); err != nil {
		t.Fatalf("testdata/floor.json: %v", err)
	}
	names := map[string]bool{}
	for _, p := range Programs {
		names[p.Name] = true
	}
	for name := range floor {
		if !names[name] {
			t.Errorf("testdata/floor.json names %s, which is not a program", name)
		}
	}
	return floor
}

func TestPrograms(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed: nothing to compare with")
	}
	var missing []string
	for _, p := range Programs {
		for _, n := range p.Needs {
			if _, err := os.Stat(n); err != nil {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("not installed (scripts/test-packages.txt has bats, shunit2, bash-doc): %s", strings.Join(missing, ", "))
		}
		t.Skipf("not installed (bats, shunit2, bash-doc), nothing to run: %s", strings.Join(missing, ", "))
	}
	floor := loadFloor(t)
	r, err := differential.NewRunner(std.Table())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Timeout = 60 * time.Second
	copied := map[string]bool{}
	for _, p := range Programs {
		for _, n := range p.Needs {
			if !copied[n] {
				copied[n] = true
				if err := r.AddHostFiles(n); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	matched := 0
	var report strings.Builder
	for _, p := range Programs {
		b, w, err := r.Both(context.Background(), p.Script)
		if err != nil {
			t.Fatal(err)
		}
		v, why := differential.Compare(b, w)
		known, isKnown := floor[p.Name]
		switch {
		case v == differential.Match:
			matched++
			if isKnown {
				t.Logf("%s matches bash now: take it out of testdata/floor.json", p.Name)
			}
		case isKnown:
			t.Logf("%s: %s, known (%s): %s", p.Name, v, known, why)
		default:
			t.Errorf("%s: %s: %s\n--- bash stdout:\n%s--- bash stderr:\n%s--- warren stdout:\n%s--- warren stderr:\n%s", p.Name, v, why, b.Stdout, b.Stderr, w.Stdout, w.Stderr)
		}
		fmt.Fprintf(&report, "%-20s %s\n", p.Name, v)
	}
	t.Logf("programs matching bash: %d of %d\n%s", matched, len(Programs), report.String())
}
