package grep_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

func TestHostile(t *testing.T) {
	tab := commands.Table{}
	grep.Register(tab)
	line := strings.Repeat("z", 24<<20) // one line, no newline
	cmdtest.RunHostile(t, tab, []cmdtest.Hostile{
		{Name: "one long line", Args: []string{"grep", "x"}, Stdin: strings.NewReader(line), Budget: 8 << 20, Status: 125, Msg: "warren: memory limit exceeded (8 MiB)", MaxHeap: 1 << 30},
		{Name: "long line in a file", Args: []string{"grep", "-c", "x", "big"}, Files: map[string]string{"big": line}, Budget: 8 << 20, Status: 125, Msg: "warren: memory limit exceeded (8 MiB)", MaxHeap: 1 << 30},
	})
}
