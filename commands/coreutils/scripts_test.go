package coreutils_test

import (
	"context"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

type scriptCase struct {
	name, script, stdout string
	code                 int
}

// TestScripts replays agent-style pipelines recorded with bash and the
// Debian tools (testdata/record.py) through warren's shell.
func TestScripts(t *testing.T) {
	tab := table()
	for _, c := range scriptGolden {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := runShell(ctx, tab, cmdtest.NewFiles(scriptFiles), c.script)
			if err != nil {
				t.Fatalf("%s: %v", c.script, err)
			}
			if res.Stdout != c.stdout || res.Code != c.code {
				t.Errorf("%s\n got %q exit %d (stderr %q)\nwant %q exit %d", c.script, res.Stdout, res.Code, res.Stderr, c.stdout, c.code)
			}
		})
	}
}
