package differential

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// issue23Features are the producers added for issue 23's weak areas.
var issue23Features = []string{
	"exec", "time", "ulimit", "umask", "errtrap", "invoke", "sparse", "roundtrip",
	"globopt", "nameref", "ifs", "unicode",
}

// TestFeaturesWellFormed: every shell feature's scripts are the same for
// the same seed, differ between seeds, and parse in bash (bash -n; extglob
// on, as a script that sets it gets).
func TestFeaturesWellFormed(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found: nothing to judge well-formedness with")
	}
	for _, f := range Features {
		t.Run(f, func(t *testing.T) {
			seen := map[string]bool{}
			var all strings.Builder
			for seed := uint64(1); seed <= 20; seed++ {
				a, b := Only(seed, f), Only(seed, f)
				if a.Source != b.Source {
					t.Fatalf("seed %d: two generations differ", seed)
				}
				seen[a.Source] = true
				// One bash -n over all twenty keeps the test fast.
				all.WriteString(a.Source)
			}
			cmd := exec.Command(bash, "-O", "extglob", "-n")
			cmd.Stdin = strings.NewReader(all.String())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v %s", err, out)
			}
			if len(seen) < 15 && slices.Contains(issue23Features, f) {
				t.Errorf("only %d distinct scripts from 20 seeds", len(seen))
			}
		})
	}
}
