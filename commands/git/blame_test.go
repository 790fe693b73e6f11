package git_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
)

func TestBlameDifferential(t *testing.T) {
	files := map[string]string{"r/f": "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"}
	pre := []dstep{
		g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "base"),
		write("r/f", "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"),
		g("-C", "r", "-c", "user.name=x", "commit", "-qam", "two", "--author=Longer Name <l@x>"),
		g("-C", "r", "mv", "f", "g"), g("-C", "r", "commit", "-qm", "mv"),
		write("r/g", "1\n2\nthree\n4\n5\n6\n7\n8\nnine\n10\n11\n12\n"), g("-C", "r", "commit", "-qam", "nine"),
		write("r/g", "0\n1\n2\nthree\n4\n6\n7\n8\nnine\n10\n11\n12\nlast"), g("-C", "r", "commit", "-qam", "edges"),
	}
	bl := func(args ...string) dstep { return g(append([]string{"-C", "r", "blame"}, args...)...) }
	cases := []dcase{
		{name: "forms", files: files, repo: "r", steps: append(append([]dstep{}, pre...),
			bl("g"), bl("-L", "2,4", "g"), bl("-L", "3", "g"), bl("-L3,+2", "g"), bl("HEAD~1", "--", "g"), bl("HEAD~1", "g"),
			bl("HEAD~3", "f"), bl("-L", "20,30", "g"), bl("nope"), g("-C", "r/..", "blame", "r/g"))},
		{name: "merge passes the file on", files: files, repo: "r", steps: append(append([]dstep{}, pre...),
			g("-C", "r", "checkout", "-qb", "side", "HEAD~1"), write("r/h", "h\n"), g("-C", "r", "add", "h"),
			g("-C", "r", "commit", "-qm", "side"), g("-C", "r", "checkout", "-q", "master"),
			g("-C", "r", "merge", "-q", "--no-ff", "-m", "merge", "side"), bl("g"), bl("h"))},
	}
	runDifferential(t, cases)
}

// Lines changed in the worktree are "Not Committed Yet", dated now (git
// prints the clock's time, so this is checked by form, not against git).
func TestBlameNotCommitted(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/f": "a\nb\n"}, nil)
	for _, s := range [][]string{{"git", "init", "-q", "r"}, {"git", "-C", "r", "add", "."}, {"git", "-C", "r", "commit", "-qm", "one"}} {
		if _, errs, code := runIn(fsys, std.Table(), s, "", ident...); code != 0 {
			t.Fatalf("%v: %d %s", s, code, errs)
		}
	}
	fsys.WriteFile(caseDir+"/r/f", []byte("a\nB\nc\n"), 0o644)
	out, errs, code := runIn(fsys, std.Table(), []string{"git", "-C", "r", "blame", "f"}, "", ident...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	re := regexp.MustCompile(`^00000000 \(Not Committed Yet \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4} [23]\) [Bc]$`)
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "^") || !strings.Contains(lines[0], "(T                 2023-11-14 22:13:20 +0000 1) a") ||
		!re.MatchString(lines[1]) || !re.MatchString(lines[2]) {
		t.Errorf("status %d stderr %q stdout:\n%s", code, errs, out)
	}
}

// A merge whose file differs from each parent is refused loudly: git
// splits the blame between the parents, which warren does not do.
func TestBlameMergeRefused(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/f": "1\n2\n3\n4\n5\n6\n7\n8\n"}, nil)
	steps := [][]string{{"git", "init", "-q", "r"}, {"git", "-C", "r", "add", "."}, {"git", "-C", "r", "commit", "-qm", "one"},
		{"git", "-C", "r", "checkout", "-qb", "side"}, {"write", "1\n2\n3\n4\n5\n6\n7\nEIGHT\n"}, {"git", "-C", "r", "commit", "-qam", "side"},
		{"git", "-C", "r", "checkout", "-q", "master"}, {"write", "ONE\n2\n3\n4\n5\n6\n7\n8\n"}, {"git", "-C", "r", "commit", "-qam", "main"},
		{"git", "-C", "r", "merge", "-q", "-m", "m", "side"}}
	for _, s := range steps {
		if s[0] == "write" {
			fsys.WriteFile(caseDir+"/r/f", []byte(s[1]), 0o644)
			continue
		}
		if _, errs, code := runIn(fsys, std.Table(), s, "", ident...); code != 0 {
			t.Fatalf("%v: %d %s", s, code, errs)
		}
	}
	out, errs, code := runIn(fsys, std.Table(), []string{"git", "-C", "r", "blame", "f"}, "", ident...)
	if code != 2 || out != "" || !strings.Contains(errs, "git blame through a merge that changed the file against each parent: not supported here") {
		t.Errorf("status %d stdout %q stderr %q", code, out, errs)
	}
}
