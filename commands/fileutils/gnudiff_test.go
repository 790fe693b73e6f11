package fileutils_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/conformance/differential"
)

// TestAgainstGNU runs each script in bash with GNU cp and in warren's
// shell (the differential harness's runner): cp keeping hard links (a BusyBox-suite finding).
func TestAgainstGNU(t *testing.T) {
	for _, tool := range []string{"bash", "cp"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed: the reference for this test", tool)
			}
			t.Skipf("%s not installed: nothing to compare with", tool)
		}
	}
	r, err := differential.NewRunner(std.Table())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, s := range []string{
		"echo x > a; ln a b; mkdir d; cp -d a b d; stat -c %h d/a d/b",
		"echo x > a; ln a b; mkdir d; cp -a a b d; stat -c %h d/a",
		"echo x > a; ln a b; mkdir d; cp a b d; stat -c %h d/a",
		"mkdir s; echo x > s/a; ln s/a s/b; cp -a s t; stat -c %h t/a t/b",
		"mkdir s; echo x > s/a; ln s/a s/b; cp -r s t; stat -c %h t/a t/b",
		"echo x > a; ln a b; mkdir d; cp --preserve=links a b d; stat -c %h d/b",
	} {
		b, w, err := r.Both(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if v, why := differential.Compare(b, w); v != differential.Match {
			t.Errorf("%s: %s: %s\nGNU:    %q\nwarren: %q %q", s, v, why, b.Stdout, w.Stdout, w.Stderr)
		}
	}
}
