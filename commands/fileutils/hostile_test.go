package fileutils_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/fileutils"
)

func TestHostile(t *testing.T) {
	tab := commands.Table{}
	fileutils.Register(tab)
	cmdtest.RunHostile(t, tab, []cmdtest.Hostile{
		// split -n must hold its whole input to size the chunks.
		{Name: "split -n over budget", Args: []string{"split", "-n", "2", "big"}, Files: map[string]string{"big": strings.Repeat("x", 3<<20)},
			Budget: 1 << 20, Status: 125, Msg: "warren: memory limit exceeded (1 MiB)"},
	})
}
