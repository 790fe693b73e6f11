package sed_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/sed"
)

type goldenCase = cmdtest.Golden

// known lists recorded cases that differ from GNU on purpose (see cmdtest.RunGolden).
var known = map[string]string{
	"backref_pattern": "unsupported: RE2 has no back-references",
}

func TestGolden(t *testing.T) {
	tab := commands.Table{}
	sed.Register(tab)
	cmdtest.RunGolden(t, tab, golden, known)
}

// Commands that would run host programs are refused with a clear error.
func TestExecRefused(t *testing.T) {
	for _, script := range []string{"e", "1e ls", "s/x/ls/e"} {
		res := cmdtest.Run(sed.Sed, []string{"sed", script}, "x\n", nil)
		if res.Code != 1 || !strings.Contains(res.Stderr, "not supported") {
			t.Errorf("sed %q: exit %d stderr %q", script, res.Code, res.Stderr)
		}
	}
}

// Accumulating the input in the hold space stops at the memory limit.
func TestMemoryLimit(t *testing.T) {
	files := cmdtest.NewFiles(nil)
	var out, errb strings.Builder
	inv := files.Invocation([]string{"sed", "-n", "H;${x;p}"}, strings.NewReader(strings.Repeat("line of text\n", 10000)), &out, &errb)
	inv.Sys = &commands.System{MaxMemoryBytes: 16 << 10}
	code := sed.Sed(context.Background(), inv)
	if code != commands.StatusLimit || errb.String() != "warren: memory limit exceeded (0 MiB)\n" || out.Len() != 0 {
		t.Fatalf("exit %d stderr %q out %d bytes", code, errb.String(), out.Len())
	}
}

// A script that loops forever on one line stops when its context ends.
func TestEndlessLoopCancelled(t *testing.T) {
	for _, script := range []string{":a;ba", ":a;s/x*/x/;ta", ":a;N;ba"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		files := cmdtest.NewFiles(nil)
		var out, errb strings.Builder
		done := make(chan int, 1)
		go func() { done <- sed.Sed(ctx, files.Invocation([]string{"sed", script}, endless{}, &out, &errb)) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("sed %q did not stop after cancellation", script)
		}
		cancel()
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
