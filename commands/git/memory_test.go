package git_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
)

// Blobs read whole for a diff are charged to the sandbox's budget first.
func TestDiffBlobsCharged(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/big": strings.Repeat("a\n", 1<<20)}, nil)
	tab := std.Table()
	for _, s := range [][]string{{"git", "init", "-q", "r"}, {"git", "-C", "r", "add", "."}, {"git", "-C", "r", "commit", "-qm", "one"}} {
		if _, errs, code := runIn(fsys, tab, s, "", ident...); code != 0 {
			t.Fatalf("%v: %d %s", s, code, errs)
		}
	}
	fsys.WriteFile(caseDir+"/r/big", []byte(strings.Repeat("b\n", 1<<20)), 0o644)
	if _, errs, code := runIn(fsys, tab, []string{"git", "-C", "r", "commit", "-qam", "two"}, "", ident...); code != 0 {
		t.Fatalf("commit: %d %s", code, errs)
	}
	mem := commands.NewMemory(1 << 20)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: []string{"git", "-C", "r", "diff", "HEAD~1", "HEAD"}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Dir: caseDir, FS: fsys, Env: ident, Sys: &commands.System{Memory: mem}}
	code := tab["git"](context.Background(), inv)
	if code != commands.StatusLimit || !strings.Contains(errb.String(), "warren: memory limit exceeded (1 MiB)") {
		t.Fatalf("git diff of two 2 MiB blobs at a 1 MiB budget: status %d stderr %q", code, errb.String())
	}
	if mem.Used() != 0 {
		t.Fatalf("%d bytes still charged", mem.Used())
	}
}
