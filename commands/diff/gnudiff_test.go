package diff_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/conformance/differential"
)

// TestAgainstGNU runs each script in bash with GNU diff and in warren's
// shell (the differential harness's runner): diff - - and -B (BusyBox-suite findings).
func TestAgainstGNU(t *testing.T) {
	differential.CheckAgainst(t, std.Table(), []string{"diff"}, "", []string{
		"printf 'x\n' | diff - -; echo $?",
		"printf 'x\n' | diff -s - -; echo $?",
		"printf 'a\n\nb\n' > f1; printf 'a\nb\n' > f2; diff -B f1 f2; echo $?",
		"printf 'a\n\n\nb\n' > f1; printf 'a\nb\n\n' > f2; diff -B f1 f2; echo $?",
		"printf 'a\n \nb\n' > f1; printf 'a\nb\n' > f2; diff -B f1 f2; echo $?",
		"printf 'a\n \nb\n' > f1; printf 'a\nb\n' > f2; diff -Bw f1 f2; echo $?",
		"printf 'a\n\nb\n' > f1; printf 'a\nc\n' > f2; diff -B f1 f2; echo $?",
	})
}
