package git_test

import "testing"

func TestDiffNoIndexDifferential(t *testing.T) {
	files := map[string]string{"x": "foo\nbar\n", "y": "foo\nbaz\n", "same": "foo\nbar\n",
		"d1/a": "a\n", "d1/s/b": "b\n", "d1/o": "only1\n", "d2/a": "a\n", "d2/s/b": "B\n", "d2/c": "c\n",
		"e1/f": "a\n", "e2/f": "b\n", "bin1": "a\x00b\n", "bin2": "a\x00c\n", "d2/x": "foo\nbaz\n",
		"r/in": "inside\n", "r/other": "other\n"}
	nd := func(args ...string) dstep { return g(append([]string{"diff", "--no-index"}, args...)...) }
	cases := []dcase{
		{name: "two files", files: files, steps: []dstep{nd("x", "y"), nd("x", "same"), nd("--stat", "x", "y"),
			nd("--numstat", "x", "y"), nd("--name-only", "x", "y"), nd("--name-status", "x", "y"), nd("--quiet", "x", "y"),
			nd("-U1", "x", "y"), nd("./x", "d1/../y"), nd("bin1", "bin2"), nd("--stat", "e1/f", "e2/f"),
			nd("x", "/dev/null"), nd("/dev/null", "x"), nd("--stat", "/dev/null", "x"), nd("--name-status", "x", "/dev/null"),
			nd("--name-only", "x", "/dev/null"), nd("--numstat", "x", "/dev/null")}},
		{name: "directories", files: files, steps: []dstep{
			{argv: []string{"chmod", "755", "d2/a"}}, nd("d1", "d2"), nd("--stat", "d1", "d2"), nd("--numstat", "d1", "d2"),
			nd("--name-only", "d1", "d2"), nd("--name-status", "d1", "d2"), nd("--stat", "e1", "e2"), nd("d1/", "d2/")}},
		{name: "file and directory", files: files, steps: []dstep{nd("x", "d2"), nd("x", "d1")}},
		{name: "errors", files: files, steps: []dstep{nd("x", "nope"), nd("nope", "x")}},
		{name: "outside a repository", files: files, steps: []dstep{g("diff", "x", "y"), g("diff", "--stat", "x", "y")}},
		{name: "inside a repository", files: files, repo: "r", steps: []dstep{g("init", "-q", "r"), g("-C", "r", "add", "in"), g("-C", "r", "commit", "-qm", "in"),
			g("-C", "r", "diff", "--no-index", "in", "other"), g("-C", "r", "diff", "--no-index", "../x", "in"),
			g("-C", "r", "diff", "--no-index", "--", "in", "other")}},
	}
	runDifferential(t, cases)
}
