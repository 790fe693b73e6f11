package fileutils_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/conformance/differential"
)

// TestAgainstGNU runs each script in bash with GNU cp and in warren's
// shell (the differential harness's runner): cp keeping hard links (a BusyBox-suite finding).
func TestAgainstGNU(t *testing.T) {
	differential.CheckAgainst(t, std.Table(), []string{"cp"}, "", []string{
		"echo x > a; ln a b; mkdir d; cp -d a b d; stat -c %h d/a d/b",
		"echo x > a; ln a b; mkdir d; cp -a a b d; stat -c %h d/a",
		"echo x > a; ln a b; mkdir d; cp a b d; stat -c %h d/a",
		"mkdir s; echo x > s/a; ln s/a s/b; cp -a s t; stat -c %h t/a t/b",
		"mkdir s; echo x > s/a; ln s/a s/b; cp -r s t; stat -c %h t/a t/b",
		"echo x > a; ln a b; mkdir d; cp --preserve=links a b d; stat -c %h d/b",
	})
}
