package sed_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/sed"
)

type endlessLines struct{}

func (endlessLines) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
		if i%80 == 79 {
			p[i] = '\n'
		}
	}
	return len(p), nil
}

func TestHostile(t *testing.T) {
	tab := commands.Table{}
	sed.Register(tab)
	const oom = "warren: memory limit exceeded (16 MiB)"
	cmdtest.RunHostile(t, tab, []cmdtest.Hostile{
		{Name: "hold everything", Args: []string{"sed", "-n", "H"}, Stdin: endlessLines{}, Budget: 16 << 20, Status: 125, Msg: oom},
		{Name: "double in a loop", Args: []string{"sed", ":a;s/x/xx/g;ba"}, Stdin: strings.NewReader("x\n"), Budget: 2 << 20, Status: 125, Msg: "warren: memory limit exceeded (2 MiB)"},
		{Name: "multiply in one command", Args: []string{"sed", "s/./&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&/g;s/./&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&/g;s/./&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&/g"}, Stdin: strings.NewReader(strings.Repeat("x", 200) + "\n"), Budget: 4 << 20, Status: 125, Msg: "warren: memory limit exceeded (4 MiB)"},
		{Name: "hold doubling", Args: []string{"sed", "h;:a;G;H;x;ba"}, Stdin: strings.NewReader("x\n"), Budget: 16 << 20, Status: 125, Msg: oom},
		{Name: "one endlessLines line", Args: []string{"sed", "p"}, Stdin: strings.NewReader(strings.Repeat("y", 40<<20)), Budget: 16 << 20, Status: 125, Msg: oom, MaxHeap: 1 << 30},
		{Name: "cancel branch loop", Args: []string{"sed", ":a;ba"}, Stdin: strings.NewReader("x\n"), Cancel: 50 * time.Millisecond, Status: 0, Within: time.Second},
	})
}
