package git_test

import "testing"

// revertRepo is a history of four commits: base, a change to line two, a
// change to line seven with a new file, and a deletion.
func revertRepo() (map[string]string, []dstep) {
	return map[string]string{"r/f": "1\n2\n3\n4\n5\n6\n7\n8\n", "r/g": "g\n", "r/gone": "x\n"}, []dstep{
		g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "base"),
		write("r/f", "1\ntwo\n3\n4\n5\n6\n7\n8\n"), g("-C", "r", "commit", "-qam", "change two"),
		write("r/f", "1\ntwo\n3\n4\n5\n6\nseven\n8\n"), write("r/h", "new\n"), g("-C", "r", "add", "h"),
		g("-C", "r", "commit", "-qam", "change seven, add h"),
		g("-C", "r", "rm", "-q", "gone"), g("-C", "r", "commit", "-qm", "remove gone"),
	}
}

func TestRevertDifferential(t *testing.T) {
	files, pre := revertRepo()
	c := func(name string, steps ...dstep) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...), steps...)}
	}
	rv := func(args ...string) dstep { return g(append([]string{"-C", "r", "revert"}, args...)...) }
	// git keeps a conflicted file's three stages in the index; warren keeps ours
	stages := map[string]string{"git -C r ls-files -s": "index conflict stages are not kept",
		"git -C r status --porcelain": "index conflict stages are not kept", "git -C r diff --cached --stat": "index conflict stages are not kept"}
	cases := []dcase{
		c("older commit", rv("--no-edit", "HEAD~2"), g("-C", "r", "log", "--format=%H %s%n%b")),
		c("head", rv("--no-edit", "HEAD")),
		c("a deletion and an addition", rv("--no-edit", "HEAD"), rv("--no-edit", "HEAD~2")),
		c("revert the revert", rv("--no-edit", "HEAD~1"), rv("--no-edit", "HEAD")),
		c("editor true", g("-C", "r", "-c", "core.editor=true", "revert", "HEAD~1")),
		c("no commit", rv("-n", "HEAD~2"), g("-C", "r", "status", "--short"), g("-C", "r", "diff", "--cached")),
		c("detached", g("-C", "r", "checkout", "-q", "HEAD~1"), rv("--no-edit", "HEAD~1")),
		{name: "root commit", files: map[string]string{"r/f": "f\n"}, repo: "r", steps: []dstep{
			g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "root"), rv("--no-edit", "HEAD")}},
		c("errors", rv("--no-edit", "nope"), rv("--no-edit", "HEAD^{tree}"), rv("--abort"), rv("--continue")),
		c("staged changes", write("r/g", "x\n"), g("-C", "r", "add", "g"), rv("--no-edit", "HEAD~1")),
		c("dirty file in the way", write("r/f", "dirty\n"), rv("--no-edit", "HEAD~1")),
		c("dirty file elsewhere", write("r/g", "dirty\n"), rv("--no-edit", "HEAD~2")),
		{name: "conflict", files: files, repo: "r", known: stages, steps: append(append([]dstep{}, pre...),
			write("r/f", "1\ntwo\n3\n4\n5\n6\nSEVEN\n8\n"), g("-C", "r", "commit", "-qam", "conflicting"),
			rv("--no-edit", "HEAD~2"), g("-C", "r", "status"), g("-C", "r", "diff", "--cached", "--stat"),
			rv("--no-edit", "HEAD~3"), g("-C", "r", "-c", "core.editor=true", "revert", "--continue"))},
		{name: "conflict resolved", files: files, repo: "r", steps: append(append([]dstep{}, pre...),
			write("r/f", "1\ntwo\n3\n4\n5\n6\nSEVEN\n8\n"), g("-C", "r", "commit", "-qam", "conflicting"),
			rv("--no-edit", "HEAD~2"), write("r/f", "resolved\n"), g("-C", "r", "add", "f"), g("-C", "r", "status"),
			g("-C", "r", "-c", "core.editor=true", "revert", "--continue"), g("-C", "r", "log", "-1", "--format=%B"))},
		{name: "conflict committed", files: files, repo: "r", steps: append(append([]dstep{}, pre...),
			write("r/f", "1\ntwo\n3\n4\n5\n6\nSEVEN\n8\n"), g("-C", "r", "commit", "-qam", "conflicting"),
			rv("--no-edit", "HEAD~2"), write("r/f", "resolved\n"), g("-C", "r", "commit", "-qam", "by hand"), g("-C", "r", "status"))},
		{name: "conflict aborted", files: files, repo: "r", steps: append(append([]dstep{}, pre...),
			write("r/f", "1\ntwo\n3\n4\n5\n6\nSEVEN\n8\n"), g("-C", "r", "commit", "-qam", "conflicting"),
			rv("--no-edit", "HEAD~2"), rv("--abort"), g("-C", "r", "status"))},
	}
	runDifferential(t, cases)
}
