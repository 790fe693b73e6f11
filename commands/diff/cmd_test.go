package diff_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/diff"
)

type goldenCase = cmdtest.Golden

// known lists recorded cases that differ from GNU on purpose (see cmdtest.RunGolden).
var known = map[string]string{}

func TestGolden(t *testing.T) {
	tab := commands.Table{}
	diff.Register(tab)
	cmdtest.RunGolden(t, tab, golden, known)
}

func TestPatchRefusesEscapingNames(t *testing.T) {
	tab := commands.Table{}
	diff.Register(tab)
	for _, name := range []string{"../evil.txt", "/etc/evil.txt", "a/../../evil.txt"} {
		files := cmdtest.NewFiles(map[string]string{"p.diff": "--- /dev/null\n+++ " + name + "\n@@ -0,0 +1 @@\n+x\n"})
		res := cmdtest.Run(tab["patch"], []string{"patch", "-p0", "-i", "p.diff"}, "", files)
		if res.Code == 0 || !strings.Contains(res.Stderr, "dangerous file name") {
			t.Errorf("%s: exit %d stderr %q", name, res.Code, res.Stderr)
		}
		if files.FS != nil {
			if _, err := files.FS.Stat("/evil.txt"); err == nil {
				t.Errorf("%s: patch wrote outside the working directory", name)
			}
			if _, err := files.FS.Stat("/etc/evil.txt"); err == nil {
				t.Errorf("%s: patch wrote an absolute path", name)
			}
		}
	}
}

// Unified headers carry the vfs mtime in GNU's format.
func TestUnifiedHeaderTimes(t *testing.T) {
	tab := commands.Table{}
	diff.Register(tab)
	files := cmdtest.NewFiles(map[string]string{"x": "a\n", "y": "b\n"})
	if files.FS == nil {
		t.Skip("vfs implementation not available: mtimes need it")
	}
	res := cmdtest.Run(tab["diff"], []string{"diff", "-u", "x", "y"}, "", files)
	want := "--- x\t2023-11-14 22:13:20.000000000 +0000\n+++ y\t2023-11-14 22:13:20.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n"
	if res.Code != 1 || res.Stdout != want {
		t.Fatalf("exit %d\n got %q\nwant %q", res.Code, res.Stdout, want)
	}
}
