package git_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
)

// base makes r a repository with files committed as "base".
func base(files map[string]string) (map[string]string, []dstep) {
	in := map[string]string{}
	for p, c := range files {
		in["r/"+p] = c
	}
	return in, []dstep{g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "base")}
}

func applyCase(name string, files map[string]string, steps ...dstep) dcase {
	in, pre := base(files)
	return dcase{name: name, files: in, repo: "r", steps: append(pre, steps...)}
}

const abc = "a\nb\nc\n"

var tenLines = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"

func TestApplyDifferential(t *testing.T) {
	modify := "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	gitModify := "diff --git a/f b/f\nindex de98044..0000000 100644\n" + modify
	cases := []dcase{
		applyCase("modify", map[string]string{"f": abc}, gin(modify, "-C", "r", "apply")),
		applyCase("modify from file -v", map[string]string{"f": abc}, write("p.diff", gitModify), g("-C", "r", "apply", "-v", "../p.diff")),
		applyCase("check only", map[string]string{"f": abc}, gin(modify, "-C", "r", "apply", "--check")),
		applyCase("stat numstat summary", map[string]string{"f": abc}, gin(modify, "-C", "r", "apply", "--stat", "--numstat", "--summary")),
		applyCase("stat with apply", map[string]string{"f": abc}, gin(modify, "-C", "r", "apply", "--stat", "--apply")),
		applyCase("context mismatch", map[string]string{"f": "a\nX\nc\n"}, gin(modify, "-C", "r", "apply")),
		applyCase("context mismatch -v", map[string]string{"f": "a\nX\nc\n"}, gin(modify, "-C", "r", "apply", "-v")),
		applyCase("offset", map[string]string{"f": "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n"},
			gin("--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n 5\n-6\n+SIX\n 7\n", "-C", "r", "apply", "-v")),
		applyCase("offset backwards", map[string]string{"f": tenLines},
			gin("--- a/f\n+++ b/f\n@@ -7,3 +7,3 @@\n 2\n-3\n+THREE\n 4\n", "-C", "r", "apply", "-v")),
		applyCase("no trailing context must match at end", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "-C", "r", "apply")),
		applyCase("zero context refused", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n+B\n", "-C", "r", "apply")),
		applyCase("unidiff-zero", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n+B\n", "-C", "r", "apply", "--unidiff-zero")),
		applyCase("reverse", map[string]string{"f": "a\nB\nc\n"}, gin(modify, "-C", "r", "apply", "-R")),
		applyCase("reverse of unapplied fails", map[string]string{"f": abc}, gin(modify, "-C", "r", "apply", "--reverse")),
		applyCase("two hunks", map[string]string{"f": tenLines},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n@@ -8,3 +8,4 @@\n 8\n 9\n+9.5\n 10\n", "-C", "r", "apply")),
		applyCase("atomic: second file fails", map[string]string{"f": abc, "g": "x\ny\n"},
			gin(modify+"--- a/g\n+++ b/g\n@@ -1,2 +1,2 @@\n x\n-Q\n+Y\n", "-C", "r", "apply")),
		applyCase("new file", map[string]string{"f": abc},
			gin("diff --git a/d/n b/d/n\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/d/n\n@@ -0,0 +1,2 @@\n+hello\n+world\n", "-C", "r", "apply", "--stat", "--summary", "--apply")),
		applyCase("new file exists", map[string]string{"f": abc},
			gin("diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n", "-C", "r", "apply")),
		applyCase("traditional new file", map[string]string{"f": abc},
			gin("--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n", "-C", "r", "apply", "--summary", "--apply")),
		applyCase("deleted file", map[string]string{"f": abc, "g": "x\n"},
			gin("diff --git a/f b/f\ndeleted file mode 100644\nindex de98044..0000000\n--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n", "-C", "r", "apply", "--summary", "--apply")),
		applyCase("deleted file with contents left", map[string]string{"f": "a\nb\nc\nd\n"},
			gin("diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n", "-C", "r", "apply")),
		applyCase("rename", map[string]string{"f": abc},
			gin("diff --git a/f b/sub/g\nsimilarity index 100%\nrename from f\nrename to sub/g\n", "-C", "r", "apply", "--summary", "--stat", "--apply", "-v")),
		applyCase("rename with change", map[string]string{"d/f": abc},
			gin("diff --git a/d/f b/d/g\nsimilarity index 60%\nrename from d/f\nrename to d/g\nindex de98044..1c0e5d9 100644\n--- a/d/f\n+++ b/d/g\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply", "--summary", "--apply")),
		applyCase("rename onto existing", map[string]string{"f": abc, "g": "x\n"},
			gin("diff --git a/f b/g\nsimilarity index 100%\nrename from f\nrename to g\n", "-C", "r", "apply")),
		applyCase("mode change", map[string]string{"f": abc},
			gin("diff --git a/f b/f\nold mode 100644\nnew mode 100755\n", "-C", "r", "apply", "--summary", "--apply")),
		applyCase("mode change with content", map[string]string{"f": abc},
			gin("diff --git a/f b/f\nold mode 100644\nnew mode 100755\nindex de98044..1c0e5d9\n"+modify, "-C", "r", "apply")),
		applyCase("no newline at end: remove it", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+c\n\\ No newline at end of file\n", "-C", "r", "apply")),
		applyCase("no newline at end: add it", map[string]string{"f": "a\nb\nc"},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n-c\n\\ No newline at end of file\n+c\n+d\n", "-C", "r", "apply")),
		applyCase("no newline context", map[string]string{"f": "a\nb\nc"},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n", "-C", "r", "apply")),
		applyCase("crlf lines", map[string]string{"f": "a\r\nb\r\nc\r\n"},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n", "-C", "r", "apply")),
		applyCase("crlf mismatch", map[string]string{"f": "a\r\nb\r\nc\r\n"}, gin(modify, "-C", "r", "apply")),
		applyCase("trailing whitespace warned", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B  \n c\n", "-C", "r", "apply")),
		applyCase("whitespace nowarn", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B  \n c\n", "-C", "r", "apply", "--whitespace=nowarn")),
		applyCase("whitespace fix", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n-b\n+B  \n+ \tx\n c\n", "-C", "r", "apply", "--whitespace=fix")),
		applyCase("whitespace error", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B \n c\n", "-C", "r", "apply", "--whitespace=error")),
		applyCase("many whitespace errors squelched", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,9 @@\n a\n-b\n+1 \n+2 \n+3 \n+4 \n+5 \n+6 \n+7 \n c\n", "-C", "r", "apply")),
		applyCase("index", map[string]string{"f": abc}, gin(modify, "-C", "r", "apply", "--index")),
		applyCase("index mismatch", map[string]string{"f": abc}, write("r/f", "a\nb\nc\nd\n"),
			gin("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "-C", "r", "apply", "--index")),
		applyCase("cached", map[string]string{"f": abc}, write("r/f", "a\nb\nc\nd\n"), gin(modify, "-C", "r", "apply", "--cached")),
		applyCase("index new and deleted", map[string]string{"f": abc},
			gin("diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\ndiff --git a/n b/n\nnew file mode 100755\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+#!/bin/sh\n", "-C", "r", "apply", "--index")),
		applyCase("cached not in index", map[string]string{"f": abc},
			gin("--- a/g\n+++ b/g\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply", "--cached")),
		applyCase("-p0", map[string]string{"f": abc}, gin("--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply", "-p0")),
		applyCase("-p2 and --directory", map[string]string{"sub/f": abc},
			gin("--- x/y/f\n+++ x/y/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply", "-p2", "--directory=sub")),
		applyCase("diff -u output", map[string]string{"f": abc},
			gin("--- f.orig\t2024-01-01 00:00:00.000000000 +0000\n+++ f\t2024-01-01 00:00:01.000000000 +0000\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply", "-p0")),
		applyCase("include exclude", map[string]string{"f": abc, "g": abc},
			gin(modify+strings.ReplaceAll(modify, "/f", "/g"), "-C", "r", "apply", "--exclude=g", "-v"),
			gin(strings.ReplaceAll(modify, "/f", "/g"), "-C", "r", "apply", "--include=*", "--exclude=f")),
		applyCase("subdirectory prefix", map[string]string{"sub/f": abc, "f": abc},
			gin(modify, "-C", "r/sub", "apply"), gin(modify, "-C", "r/sub", "apply", "--stat")),
		applyCase("same file twice", map[string]string{"f": abc},
			gin(modify+"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n B\n c\n", "-C", "r", "apply")),
		applyCase("empty context line", map[string]string{"f": "a\n\nc\n"},
			gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-c\n+C\n", "-C", "r", "apply")),
		applyCase("-C1 fuzz", map[string]string{"f": "a\nX\nc\nd\ne\n"},
			gin("--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n b\n c\n-d\n+D\n e\n", "-C", "r", "apply", "-C1")),
		applyCase("garbage", map[string]string{"f": abc}, gin("hello\nworld\n", "-C", "r", "apply")),
		applyCase("empty input", map[string]string{"f": abc}, gin("", "-C", "r", "apply"), gin("", "-C", "r", "apply", "--allow-empty")),
		applyCase("huge hunk count", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,99999999 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply")),
		applyCase("overflowing hunk count", map[string]string{"f": abc},
			gin("--- a/f\n+++ b/f\n@@ -1,99999999999999999999999 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply")),
		applyCase("truncated hunk", map[string]string{"f": abc}, gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n", "-C", "r", "apply")),
		applyCase("bad line in hunk", map[string]string{"f": abc}, gin("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n*b\n+B\n c\n", "-C", "r", "apply")),
		applyCase("fragment without header", map[string]string{"f": abc}, gin("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "-C", "r", "apply")),
		applyCase("missing file", map[string]string{"f": abc}, gin(strings.ReplaceAll(modify, "/f", "/nope"), "-C", "r", "apply")),
		applyCase("dotdot path missing", map[string]string{"f": abc}, gin(strings.ReplaceAll(modify, "/f", "/../f"), "-C", "r", "apply")),
		applyCase("dotdot path existing", map[string]string{"f": abc}, write("outside", abc),
			gin(strings.ReplaceAll(modify, "/f", "/../outside"), "-C", "r", "apply")),
		applyCase("dotdot new file", map[string]string{"f": abc}, gin("--- /dev/null\n+++ b/../evil\n@@ -0,0 +1 @@\n+x\n", "-C", "r", "apply")),
		applyCase("git dir path", map[string]string{"f": abc}, gin("--- /dev/null\n+++ b/.git/hooks/post-commit\n@@ -0,0 +1 @@\n+x\n", "-C", "r", "apply")),
		applyCase("git dir existing", map[string]string{"f": abc},
			gin("--- a/.git/HEAD\n+++ b/.git/HEAD\n@@ -1 +1 @@\n-ref: refs/heads/master\n+ref: refs/heads/evil\n", "-C", "r", "apply")),
		applyCase("absolute path", map[string]string{"f": abc}, gin("--- /dev/null\n+++ /tmp/evil\n@@ -0,0 +1 @@\n+x\n", "-C", "r", "apply", "-p0")),
		applyCase("beyond symlink", map[string]string{"f": abc}, dstep{argv: []string{"symlink", "..", "r/up"}},
			gin("--- /dev/null\n+++ b/up/evil\n@@ -0,0 +1 @@\n+x\n", "-C", "r", "apply")),
		applyCase("binary refused", map[string]string{"f": abc},
			gin("diff --git a/f b/f\nindex de98044..0000000 100644\nBinary files a/f and b/f differ\n", "-C", "r", "apply")),
		applyCase("only garbage after header", map[string]string{"f": abc}, gin("diff --git a/f b/f\nindex de98044..1c0e5d9 100644\nhello\n", "-C", "r", "apply")),
		applyCase("inconsistent headers", map[string]string{"f": abc},
			gin("diff --git a/f b/f\nnew file mode 100644\ndeleted file mode 100644\n", "-C", "r", "apply")),
		applyCase("bad mode", map[string]string{"f": abc}, gin("diff --git a/f b/f\nold mode 10x644\nnew mode 100755\n", "-C", "r", "apply")),
		applyCase("becomes empty", map[string]string{"f": abc}, gin("--- a/f\n+++ b/f\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n", "-C", "r", "apply")),
		applyCase("round trip of git diff", map[string]string{"f": abc, "g": "1\n2\n"},
			write("r/f", "a\nb2\nc\nd\n"), g("-C", "r", "rm", "-q", "g"), write("r/h", "new\n"), g("-C", "r", "add", "-A"),
			g("-C", "r", "diff", "--cached"), save("p.diff"), g("-C", "r", "reset", "-q", "--hard"),
			g("-C", "r", "apply", "--index", "../p.diff"), g("-C", "r", "apply", "-R", "--check", "../p.diff")),
		{name: "outside a repository", files: map[string]string{"f": abc, "d/g": abc},
			steps: []dstep{gin(modify, "apply", "-v"), gin(modify, "apply", "--index"), gin(modify, "apply", "--cached"),
				gin(strings.ReplaceAll(modify, "/f", "/g"), "-C", "d", "apply", "--stat", "--apply")}},
	}
	runDifferential(t, cases)
}

// A binary patch is refused with the commands contract's refusal, so the
// image's git can take it.
func TestApplyBinaryRefused(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/f": "x"}, nil)
	runIn(fsys, stdTable(), []string{"git", "init", "-q", "r"}, "")
	patch := "diff --git a/f b/f\nindex 1..2 100644\nGIT binary patch\nliteral 1\nIcmZ?d00001\n\nliteral 1\nIcmZ?d00001\n\n"
	_, errs, code := runIn(fsys, stdTable(), []string{"git", "-C", "r", "apply"}, patch)
	if code == 0 || !strings.Contains(errs, "not supported here") || !strings.Contains(errs, "binary patch") {
		t.Errorf("binary patch: status %d stderr %q", code, errs)
	}
}

func stdTable() commands.Table { return std.Table() }
