package git_test

import "testing"

// Every -q / --quiet is quiet, as real git's.
func TestQuietDifferential(t *testing.T) {
	files, pre := history()
	q := func(name string, steps ...dstep) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...), steps...)}
	}
	cases := []dcase{
		q("init", g("init", "-q", "r"), g("init", "--quiet", "other")),
		q("stash push and pop", write("r/f", "changed\n"), g("-C", "r", "stash", "push", "-q"), g("-C", "r", "stash", "pop", "-q")),
		q("stash bare -q", write("r/f", "changed\n"), g("-C", "r", "stash", "-q"), g("-C", "r", "stash", "apply", "-q"), g("-C", "r", "stash", "drop", "-q")),
		q("stash --quiet", write("r/f", "changed\n"), g("-C", "r", "stash", "push", "--quiet", "-m", "m"), g("-C", "r", "stash", "pop", "--quiet")),
		q("checkout", g("-C", "r", "checkout", "-q", "side"), g("-C", "r", "checkout", "-q", "-b", "nb"), g("-C", "r", "checkout", "--quiet", "HEAD~1"),
			g("-C", "r", "checkout", "-q", "master")),
		q("switch", g("-C", "r", "switch", "-q", "side"), g("-C", "r", "switch", "-qc", "nb2"), g("-C", "r", "switch", "--quiet", "--detach", "HEAD~1"),
			g("-C", "r", "switch", "-q", "master")),
		q("commit", write("r/f", "x\n"), g("-C", "r", "commit", "-q", "-am", "x"), g("-C", "r", "commit", "--quiet", "--amend", "-m", "y"),
			g("-C", "r", "commit", "-q", "--allow-empty", "-m", "e")),
		q("merge", g("-C", "r", "switch", "-qc", "ff", "HEAD~1"), g("-C", "r", "merge", "-q", "master"), g("-C", "r", "switch", "-q", "side"),
			write("r/s2", "x\n"), g("-C", "r", "add", "s2"), g("-C", "r", "commit", "-qm", "s2"), g("-C", "r", "merge", "-q", "--no-edit", "ff"),
			g("-C", "r", "merge", "--quiet", "master")),
		q("merge conflict", g("-C", "r", "switch", "-qc", "c", "HEAD~1"), write("r/f", "conflict\n"), g("-C", "r", "commit", "-qam", "c"),
			g("-C", "r", "merge", "-q", "master"), g("-C", "r", "merge", "--abort")),
		q("reset", write("r/f", "x\n"), g("-C", "r", "reset", "-q"), g("-C", "r", "add", "f"), g("-C", "r", "reset", "-q", "HEAD", "--", "f"),
			g("-C", "r", "reset", "--quiet", "--hard", "HEAD~1"), g("-C", "r", "reset", "-q", "--soft", "HEAD~1")),
		q("rm mv restore", g("-C", "r", "rm", "-q", "s"), g("-C", "r", "restore", "-q", "--staged", "s"), g("-C", "r", "restore", "-q", "s"),
			g("-C", "r", "mv", "s", "t"), g("-C", "r", "rm", "--quiet", "--cached", "t")),
		q("branch and tag", g("-C", "r", "branch", "-q", "b1"), g("-C", "r", "branch", "-q", "-d", "b1"), g("-C", "r", "tag", "v1")),
		q("clone", g("clone", "-q", "r", "c1"), g("clone", "--quiet", "r", "c2")),
	}
	runDifferential(t, cases)
}
