package differential

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/warren-sandbox/warren/commands"
)

// CheckAgainst runs each script (after prelude) in real bash with the
// Debian tools and in warren's shell with tab, and fails t on any verdict
// but Match (stdout, status, files, presence of stderr). need names the
// tools the scripts compare with: missing ones fail the test under CI
// (scripts/test-packages.txt installs them) and skip it elsewhere.
func CheckAgainst(t testing.TB, tab commands.Table, need []string, prelude string, scripts []string) {
	t.Helper()
	for _, tool := range append([]string{"bash"}, need...) {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed: the reference for this test (scripts/test-packages.txt)", tool)
			}
			t.Skipf("%s not installed: nothing to compare with", tool)
		}
	}
	r, err := NewRunner(tab)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, s := range scripts {
		b, w, err := r.Both(context.Background(), prelude+s)
		if err != nil {
			t.Fatal(err)
		}
		if v, why := Compare(b, w); v != Match {
			t.Errorf("%s: %s: %s\nGNU:    %q %q %d\nwarren: %q %q %d", s, v, why, b.Stdout, b.Stderr, b.Status, w.Stdout, w.Stderr, w.Status)
		}
	}
}
