package git_test

import "testing"

func TestShortlogDifferential(t *testing.T) {
	files := map[string]string{"r/f": "1\n"}
	pre := []dstep{
		g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "base"),
		write("r/f", "2\n"), g("-C", "r", "commit", "-qam", "second", "--author=Zed Z <z@x>"),
		write("r/f", "3\n"), g("-C", "r", "commit", "-qam", "third\nwraps here\n\nbody", "--author=Amy <a@x>"),
		write("r/f", "4\n"), g("-C", "r", "commit", "-qam", "fourth"),
		write("r/f", "5\n"), g("-C", "r", "commit", "-qam", "fifth", "--author=Amy <other@x>"),
		g("-C", "r", "checkout", "-qb", "side", "HEAD~2"), write("r/g", "g\n"), g("-C", "r", "add", "g"),
		g("-C", "r", "commit", "-qm", "on side"), g("-C", "r", "checkout", "-q", "master"),
		g("-C", "r", "merge", "-q", "--no-ff", "-m", "merge side", "side"),
	}
	sl := func(args ...string) dstep { return g(append([]string{"-C", "r", "shortlog"}, args...)...) }
	cases := []dcase{
		{name: "forms", files: files, repo: "r", steps: append(append([]dstep{}, pre...),
			sl("HEAD"), sl("-s", "HEAD"), sl("-n", "HEAD"), sl("-sn", "HEAD"), sl("-e", "HEAD"), sl("-sne", "HEAD"),
			sl("HEAD~3..HEAD"), sl("-s", "master..side"), sl("side..master"), sl("--summary", "--numbered", "--email", "side"),
			sl("nope"), sl("HEAD..HEAD"))},
	}
	runDifferential(t, cases)
}
