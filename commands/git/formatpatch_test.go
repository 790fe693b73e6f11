package git_test

import "testing"

// series makes r with base and three commits after it.
func series() (map[string]string, []dstep) {
	return map[string]string{"r/f": "a\nb\nc\n", "r/g": "1\n2\n3\n"}, []dstep{
		g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "base"),
		write("r/f", "a\nB\nc\n"), g("-C", "r", "commit", "-qam", "change b"),
		write("r/g", "1\n2\n3\n4\n"), write("r/new", "new file\n"), g("-C", "r", "add", "-A"),
		g("-C", "r", "commit", "-q", "-m", "add four and a new file to the tree with a subject long enough to wrap around",
			"-m", "The body says why.\n\nIn two paragraphs."),
		g("-C", "r", "rm", "-q", "new"), write("r/f", "a\nB\nC\n"), g("-C", "r", "commit", "-qam", "drop new; change c",
			"--author=J. Doe <j@example.com>"),
	}
}

func TestFormatPatchDifferential(t *testing.T) {
	files, pre := series()
	c := func(name string, steps ...dstep) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...), steps...)}
	}
	cases := []dcase{
		c("stdout -3", g("-C", "r", "format-patch", "-3", "--stdout")),
		c("-1", g("-C", "r", "format-patch", "-1", "--stdout")),
		c("-1 rev", g("-C", "r", "format-patch", "-1", "HEAD~1", "--stdout")),
		c("files", g("-C", "r", "format-patch", "-2"), g("-C", "r", "format-patch", "-o", "../out", "HEAD~3")),
		c("since", g("-C", "r", "format-patch", "HEAD~2", "--stdout")),
		c("range", g("-C", "r", "format-patch", "HEAD~3..HEAD~1", "-o", "p")),
		c("numbered single", g("-C", "r", "format-patch", "-n", "-1", "--stdout"), g("-C", "r", "format-patch", "-N", "-2", "--stdout")),
		c("nothing", g("-C", "r", "format-patch"), g("-C", "r", "format-patch", "HEAD")),
		c("non-ascii", write("r/f", "x\n"), g("-C", "r", "commit", "-qam", "héllo wörld", "--author=Zoë Q <z@x>"),
			g("-C", "r", "format-patch", "-1", "--stdout")),
		c("bad revision", g("-C", "r", "format-patch", "nope")),
	}
	runDifferential(t, cases)
}

func TestAmDifferential(t *testing.T) {
	files, pre := series()
	c := func(name string, steps ...dstep) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...), steps...)}
	}
	p1, p2, p3 := "../p/0001-change-b.patch", "../p/0002-add-four-and-a-new-file-to-the-tree-with-a-subject-l.patch", "../p/0003-drop-new-change-c.patch"
	cases := []dcase{
		c("round trip files", g("-C", "r", "format-patch", "-q", "-o", "../p", "HEAD~3"), g("-C", "r", "reset", "-q", "--hard", "HEAD~3"),
			g("-C", "r", "am", p1, p2, p3), g("-C", "r", "log", "--format=%H %an <%ae> %ad %cn%n%B")),
		c("round trip mbox on stdin", g("-C", "r", "format-patch", "--stdout", "HEAD~3"), save("m.mbox"),
			g("-C", "r", "reset", "-q", "--hard", "HEAD~3"), dstep{argv: []string{"git", "-C", "r", "am", "-q"}, stdin: ""},
			g("-C", "r", "am", "../m.mbox")),
		c("quiet", g("-C", "r", "format-patch", "--stdout", "HEAD~2"), save("m.mbox"),
			g("-C", "r", "reset", "-q", "--hard", "HEAD~2"), g("-C", "r", "am", "-q", "../m.mbox")),
		c("fails then abort", g("-C", "r", "format-patch", "-q", "-o", "../p", "HEAD~3"), g("-C", "r", "reset", "-q", "--hard", "HEAD~3"),
			write("r/f", "a\nX\nc\n"), g("-C", "r", "commit", "-qam", "other"),
			g("-C", "r", "am", p1, p2, p3), g("-C", "r", "am", "../p/0001-change-b.patch"), g("-C", "r", "am", "--abort"),
			g("-C", "r", "am", "--abort")),
		c("fails then skip", g("-C", "r", "format-patch", "-q", "-o", "../p", "HEAD~3"), g("-C", "r", "reset", "-q", "--hard", "HEAD~3"),
			write("r/f", "a\nX\nc\n"), g("-C", "r", "commit", "-qam", "other"),
			g("-C", "r", "am", p1, p2), g("-C", "r", "am", "--skip")),
		c("fails then continue", g("-C", "r", "format-patch", "-q", "-o", "../p", "HEAD~3"), g("-C", "r", "reset", "-q", "--hard", "HEAD~3"),
			write("r/f", "a\nX\nc\n"), g("-C", "r", "commit", "-qam", "other"),
			g("-C", "r", "am", p1, p2), g("-C", "r", "am", "--continue"),
			write("r/f", "a\nB\nc\n"), g("-C", "r", "add", "f"), g("-C", "r", "am", "--continue")),
		c("not in progress", g("-C", "r", "am", "--continue"), g("-C", "r", "am", "--skip")),
		c("garbage", gin("garbage\n", "-C", "r", "am"), g("-C", "r", "am", "--abort")),
		c("dirty index", g("-C", "r", "format-patch", "-q", "-o", "../p", "-1"), g("-C", "r", "reset", "-q", "--hard", "HEAD~1"),
			write("r/g", "dirty\n"), g("-C", "r", "add", "g"), g("-C", "r", "am", p1)),
	}
	runDifferential(t, cases)
}

// A mail whose patch reaches outside the worktree or into .git stops am
// with git's errors and leaves nothing behind but the am state.
func TestAmHostileDifferential(t *testing.T) {
	files, pre := series()
	mail := func(diff string) string {
		return "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\nFrom: E <e@x>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\nSubject: [PATCH] evil\n\n---\n" + diff + "-- \n2.39.5\n\n"
	}
	c := func(name, diff string) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...),
			write("m.mbox", mail(diff)), g("-C", "r", "am", "../m.mbox"), g("-C", "r", "am", "--abort"))}
	}
	runDifferential(t, []dcase{
		c("into .git", "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+evil\n"),
		c("out of the tree", "diff --git a/../evil b/../evil\nnew file mode 100644\n--- /dev/null\n+++ b/../evil\n@@ -0,0 +1 @@\n+evil\n"),
		c("corrupt", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-B\n"),
		c("applies", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-B\n+X\n C\n"),
	})
}
