package diff_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/diff"
)

func TestHostile(t *testing.T) {
	tab := commands.Table{}
	diff.Register(tab)
	// Two inputs with no line in common: Myers keeps a frontier per edit
	// distance, (N+M)^2 words; 20000 lines each asked for ~12 GB.
	var a, b strings.Builder
	for i := range 20000 {
		a.WriteString("a" + strconv.Itoa(i) + "\n")
		b.WriteString("b" + strconv.Itoa(i) + "\n")
	}
	files := map[string]string{"a": a.String(), "b": b.String(), "big": strings.Repeat("x\n", 20<<20)}
	cmdtest.RunHostile(t, tab, []cmdtest.Hostile{
		{Name: "disjoint inputs", Args: []string{"diff", "a", "b"}, Files: files, Status: 125, Msg: "warren: memory limit exceeded (32 MiB)"},
		{Name: "input over budget", Args: []string{"diff", "big", "a"}, Files: files, Status: 125, Msg: "warren: memory limit exceeded (32 MiB)", MaxHeap: 1 << 30},
	})
}
