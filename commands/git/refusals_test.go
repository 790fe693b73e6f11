package git_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// What grep, clean, revert, diff --no-index, shortlog and blame cannot do is
// refused with the contract's refusal naming the form, before any effect.
func TestNewFormsRefused(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		what string
	}{
		{[]string{"grep", "-A1", "foo"}, "grep -A"},
		{[]string{"grep", "-P", "foo"}, "grep -P"},
		{[]string{"grep", "-o", "foo"}, "grep -o"},
		{[]string{"grep", "--untracked", "foo"}, "grep --untracked"},
		{[]string{"grep", "foo", "HEAD:sub"}, "grep REV:PATH"},
		{[]string{"grep", "\\(a\\)\\1"}, "grep back-references"},
		{[]string{"clean", "-i"}, "clean -i"},
		{[]string{"clean", "-fdi"}, "clean -i"},
		{[]string{"revert", "HEAD"}, "revert without --no-edit"},
		{[]string{"revert", "-m", "1", "HEAD"}, "revert -m"},
		{[]string{"revert", "--no-edit", "HEAD", "HEAD"}, "revert of several commits"},
		{[]string{"revert", "--skip"}, "revert --skip"},
		{[]string{"revert", "--no-edit", "HEAD~1..HEAD"}, "revert of a range"},
		{[]string{"shortlog"}, "shortlog without a revision (reads a log from stdin)"},
		{[]string{"shortlog", "-sn"}, "shortlog without a revision"},
		{[]string{"shortlog", "-c", "HEAD"}, "shortlog -c"},
		{[]string{"shortlog", "HEAD", "HEAD~1"}, "shortlog of several revisions"},
		{[]string{"blame", "--porcelain", "f"}, "blame --porcelain"},
		{[]string{"blame", "-L", "/foo/,+2", "f"}, "blame -L /foo/,+2"},
		{[]string{"blame", "-w", "f"}, "blame -w"},
		{[]string{"root", "HEAD"}, "revert where f was added, deleted or changed in kind on both sides"},
	} {
		fsys := newSandbox(t, map[string]string{"r/f": "foo\n", "r/sub/g": "foo\n"}, nil)
		for _, s := range [][]string{{"git", "init", "-q", "r"}, {"git", "-C", "r", "add", "."}, {"git", "-C", "r", "commit", "-qm", "one"}} {
			if _, errs, code := runIn(fsys, std.Table(), s, "", ident...); code != 0 {
				t.Fatalf("%v: %d %s", s, code, errs)
			}
		}
		if tc.argv[0] == "root" {
			// f changed after the root commit: reverting the root is a
			// modify/delete conflict
			fsys.WriteFile(caseDir+"/r/f", []byte("changed\n"), 0o644)
			runIn(fsys, std.Table(), []string{"git", "-C", "r", "commit", "-qam", "two"}, "", ident...)
			tc.argv = []string{"revert", "--no-edit", "HEAD~1"}
		}
		want, _ := fsys.ReadFile(caseDir + "/r/f")
		argv := append([]string{"git", "-C", "r"}, tc.argv...)
		out, errs, code := runIn(fsys, std.Table(), argv, "", ident...)
		if code != 2 || out != "" || !strings.Contains(errs, "git "+tc.what) || !strings.Contains(errs, "not supported here") {
			t.Errorf("%v: status %d stdout %q stderr %q", argv, code, out, errs)
		}
		if b, _ := fsys.ReadFile(caseDir + "/r/f"); string(b) != string(want) {
			t.Errorf("%v changed f to %q", argv, b)
		}
	}
}

// bigRepo commits a 2 MiB file, for the memory tests.
func bigRepo(t *testing.T) *vfs.FS {
	fsys := newSandbox(t, map[string]string{"r/big": strings.Repeat("a\n", 1<<20)}, nil)
	for _, s := range [][]string{{"git", "init", "-q", "r"}, {"git", "-C", "r", "add", "."}, {"git", "-C", "r", "commit", "-qm", "one"}} {
		if _, errs, code := runIn(fsys, std.Table(), s, "", ident...); code != 0 {
			t.Fatalf("%v: %d %s", s, code, errs)
		}
	}
	return fsys
}

// Files read whole by the new subcommands are charged to the budget first.
func TestNewFormsCharged(t *testing.T) {
	for _, args := range [][]string{
		{"grep", "a"}, {"grep", "--cached", "a"}, {"grep", "-c", "a", "HEAD"}, {"diff", "--no-index", "big", "big"}, {"blame", "big"},
	} {
		fsys := bigRepo(t)
		mem := commands.NewMemory(1 << 20)
		var out, errb bytes.Buffer
		inv := &commands.Invocation{Args: append([]string{"git", "-C", "r"}, args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Dir: caseDir, FS: fsys, Env: ident, Sys: &commands.System{Memory: mem}}
		code := std.Table()["git"](context.Background(), inv)
		if code != commands.StatusLimit || !strings.Contains(errb.String(), "warren: memory limit exceeded (1 MiB)") {
			t.Errorf("git %v over a 2 MiB file at a 1 MiB budget: status %d stderr %q", args, code, errb.String())
		}
		if mem.Used() != 0 {
			t.Errorf("git %v: %d bytes still charged", args, mem.Used())
		}
	}
}
