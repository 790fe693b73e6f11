package diff_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/conformance/differential"
)

// TestAgainstGNU runs each script in bash with GNU diff and in warren's
// shell (the differential harness's runner): diff - - and -B (BusyBox-suite findings).
func TestAgainstGNU(t *testing.T) {
	for _, tool := range []string{"bash", "diff"} {
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
		"printf 'x\n' | diff - -; echo $?",
		"printf 'x\n' | diff -s - -; echo $?",
		"printf 'a\n\nb\n' > f1; printf 'a\nb\n' > f2; diff -B f1 f2; echo $?",
		"printf 'a\n\n\nb\n' > f1; printf 'a\nb\n\n' > f2; diff -B f1 f2; echo $?",
		"printf 'a\n \nb\n' > f1; printf 'a\nb\n' > f2; diff -B f1 f2; echo $?",
		"printf 'a\n \nb\n' > f1; printf 'a\nb\n' > f2; diff -Bw f1 f2; echo $?",
		"printf 'a\n\nb\n' > f1; printf 'a\nc\n' > f2; diff -B f1 f2; echo $?",
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
