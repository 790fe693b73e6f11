package git_test

import "testing"

// history makes r with a merge: base, a commit on master, a side branch
// merged in with a merge commit, then one more commit.
func history() (map[string]string, []dstep) {
	return map[string]string{"r/f": "1\n2\n3\n"}, []dstep{
		g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "base"),
		g("-C", "r", "switch", "-qc", "side"), write("r/s", "side\n"), g("-C", "r", "add", "s"), g("-C", "r", "commit", "-qm", "side one"),
		write("r/s", "side\ntwo\n"), g("-C", "r", "commit", "-qam", "side two"),
		g("-C", "r", "switch", "-q", "master"), write("r/f", "1\n2\n3\n4\n"), g("-C", "r", "commit", "-qam", "master one"),
		g("-C", "r", "merge", "-q", "--no-edit", "side"),
		write("r/f", "0\n1\n2\n3\n4\n"), g("-C", "r", "commit", "-qam", "after"),
	}
}

func TestLogMergesDifferential(t *testing.T) {
	files, pre := history()
	steps := append(pre,
		g("-C", "r", "log", "--oneline"),
		g("-C", "r", "log", "--merges", "--oneline"),
		g("-C", "r", "log", "--merges"),
		g("-C", "r", "log", "--no-merges", "--format=%s"),
		g("-C", "r", "log", "--first-parent", "--oneline"),
		g("-C", "r", "log", "--first-parent", "--format=%s %p"),
		g("-C", "r", "log", "--first-parent", "--no-merges", "--oneline"),
		g("-C", "r", "log", "--first-parent", "--merges", "--format=%s"),
		g("-C", "r", "log", "--first-parent", "-n", "2", "--format=%s"),
		g("-C", "r", "log", "--first-parent", "HEAD~1", "--format=%s"),
		g("-C", "r", "log", "--first-parent", "side..HEAD", "--format=%s"),
		g("-C", "r", "log", "--first-parent", "--stat", "--format=%s"),
		g("-C", "r", "log", "--first-parent", "-p", "-2", "--format=%s"),
		g("-C", "r", "log", "--first-parent", "--reverse", "--format=%s"),
	)
	runDifferential(t, []dcase{{name: "merges", files: files, repo: "r", steps: steps}})
}
