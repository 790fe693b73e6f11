package git_test

import (
	"strings"
	"testing"
)

// renameRepo moves files in one commit: an exact rename to another
// directory with a mode change, an empty file, a near-exact rename (96%),
// one at exactly 50%, one below it, and a symlink.
func renameRepo() (map[string]string, []dstep) {
	seq := func(a, b int) string {
		var sb strings.Builder
		for i := a; i <= b; i++ {
			sb.WriteString(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "\n")
		}
		return sb.String()
	}
	files := map[string]string{"r/d1/f": seq(1, 20), "r/g": seq(100, 130), "r/small": "x\n", "r/empty": "",
		"r/low": "one\ntwo\n", "r/keep": "keep\n", "r/crlf": "a\r\nb\r\nc\r\nd\r\n"}
	lines := strings.SplitAfter(seq(100, 130), "\n")
	lines[5] = "changed\n"
	g2 := strings.Join(lines, "")
	return files, []dstep{
		g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "base"),
		g("-C", "r", "mv", "d1/f", "d2f"), g("-C", "r", "mv", "d2f", "f2"),
		g("-C", "r", "mv", "g", "g2"), write("r/g2", g2), g("-C", "r", "mv", "small", "small2"), write("r/small2", "x\ny\n"),
		g("-C", "r", "mv", "empty", "empty2"), g("-C", "r", "mv", "low", "low2"), write("r/low2", "one\nTWO\nthree\n"),
		g("-C", "r", "rm", "-q", "crlf"), write("r/sub/crlf", "a\r\nb\r\nc\r\nd\r\ne\r\n"),
		{argv: []string{"chmod", "755", "r/f2"}}, g("-C", "r", "add", "-A"),
	}
}

func TestRenamesDifferential(t *testing.T) {
	files, pre := renameRepo()
	c := func(name string, steps ...dstep) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...), steps...)}
	}
	cases := []dcase{
		c("staged", g("-C", "r", "diff", "--cached"), g("-C", "r", "diff", "--cached", "--stat"),
			g("-C", "r", "diff", "--cached", "--name-status"), g("-C", "r", "diff", "--cached", "--numstat"),
			g("-C", "r", "diff", "--cached", "--name-only"), g("-C", "r", "diff", "--cached", "--no-renames", "--name-status"),
			g("-C", "r", "status", "--short")),
		c("committed", g("-C", "r", "commit", "-m", "move"), g("-C", "r", "show"), g("-C", "r", "show", "--stat"),
			g("-C", "r", "log", "--stat", "--format=%s"), g("-C", "r", "log", "--name-status", "--format=%s"),
			g("-C", "r", "show", "--no-renames", "--name-status"), g("-C", "r", "diff", "HEAD~1", "HEAD", "--stat"),
			g("-C", "r", "log", "--name-status", "--format=%s", "--", "g2"), g("-C", "r", "format-patch", "-1", "--stdout")),
		c("exact rename into a directory", g("-C", "r", "commit", "-qm", "move"), g("-C", "r", "rm", "-q", "keep"), write("r/a/b/keep", "keep\n"), g("-C", "r", "add", "a"),
			g("-C", "r", "commit", "-m", "deeper"), g("-C", "r", "show", "--stat", "--format="), g("-C", "r", "rm", "-q", "a/b/keep"), write("r/a/c/keep", "keep\n"), g("-C", "r", "add", "a"),
			g("-C", "r", "commit", "-m", "sideways"), g("-C", "r", "show", "--format=")),
		c("two candidates", g("-C", "r", "commit", "-qm", "move"), write("r/k2", "keep\n"), g("-C", "r", "add", "k2"),
			g("-C", "r", "commit", "-qm", "copy"), g("-C", "r", "rm", "-q", "keep", "k2"), write("r/x/keep", "keep\n"), write("r/x/k3", "keep\n"),
			g("-C", "r", "add", "-A"), g("-C", "r", "diff", "--cached", "--name-status")),
		c("flags", g("-C", "r", "commit", "-qm", "move"), g("-C", "r", "log", "-M", "--oneline", "--stat"),
			g("-C", "r", "diff", "-M", "--stat", "HEAD~1"), g("-C", "r", "log", "--no-renames", "--stat", "-1", "--format=%h")),
		c("mv into a missing directory", g("-C", "r", "mv", "keep", "no/such/keep"), g("-C", "r", "mv", "keep", "d1")),
	}
	runDifferential(t, cases)
}
