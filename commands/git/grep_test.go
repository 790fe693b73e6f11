package git_test

import "testing"

// grepRepo is a repository with a subdirectory, a binary file, a symlink,
// a change in the worktree, one staged and an untracked file.
func grepRepo() (map[string]string, []dstep) {
	return map[string]string{"r/a.txt": "hello world\nfoo bar\nHello again\nfoo_x\n", "r/sub/b.txt": "foo\nfoobar\nx foo-y\n",
			"r/bin.dat": "bin\x00foo\n", "r/last": "no newline foo"}, []dstep{
			g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "one"),
			{argv: []string{"symlink", "a.txt", "r/link"}}, g("-C", "r", "add", "link"), g("-C", "r", "commit", "-qm", "link"),
			write("r/a.txt", "hello world\nfoo bar\nHello again\nfoo_x\nfoo new\n"),
			write("r/sub/b.txt", "foo\nfoobar\nx foo-y\nstaged foo\n"), g("-C", "r", "add", "sub/b.txt"),
			write("r/untracked", "foo\n"),
		}
}

func TestGrepDifferential(t *testing.T) {
	files, pre := grepRepo()
	c := func(name string, steps ...dstep) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...), steps...)}
	}
	gr := func(args ...string) dstep { return g(append([]string{"-C", "r", "grep"}, args...)...) }
	cases := []dcase{
		c("plain", gr("foo"), gr("-n", "foo"), gr("nomatch"), gr("-h", "foo")),
		c("count and names", gr("-c", "foo"), gr("-l", "foo"), gr("-L", "hello"), gr("-L", "foo"), gr("-c", "-v", "foo"), gr("-q", "foo")),
		c("word and case", gr("-w", "foo"), gr("-i", "hello"), gr("-iw", "HELLO"), gr("-v", "foo"), gr("-in", "-e", "HELLO", "-e", "bar")),
		c("regexp kinds", gr("fo\\+"), gr("fo+"), gr("-E", "fo+|again"), gr("-F", "fo+"), gr("-F", "-e", "x foo", "-e", "[a"), gr("-G", "o\\{2\\}"),
			gr("^foo$"), gr("-E", "(ba|ne)[rw]$")),
		c("cached and revs", gr("--cached", "foo"), gr("foo", "HEAD"), gr("-n", "foo", "HEAD~1"), gr("foo", "HEAD", "HEAD~1", "--", "sub"),
			gr("-c", "foo", "HEAD"), gr("-l", "foo", "HEAD")),
		c("pathspecs", gr("foo", "--", "sub"), gr("foo", "sub"), gr("foo", "a.txt", "sub/b.txt"), gr("foo", "--", "*.txt"), gr("foo", "nope")),
		c("in a subdirectory", g("-C", "r/sub", "grep", "foo"), g("-C", "r/sub", "grep", "-n", "foo", "HEAD"),
			g("-C", "r/sub", "grep", "foo", "--", ".."), g("-C", "r/sub", "grep", "-l", "foo", "HEAD", "--", "..")),
		c("combined", gr("-c", "-h", "foo"), gr("-ln", "-e", "foo", "-e", "hello"), gr("-nw", "foo", "--", "*.txt"),
			gr("-l", "foo", "HEAD~1"), gr("-vc", "-e", "o"), gr("-L", "-i", "HELLO", "HEAD")),
		c("errors", gr(), gr("--cached", "foo", "HEAD"), gr("-e")),
		c("deleted in worktree", dstep{argv: []string{"rm", "r/sub/b.txt"}}, gr("foo"), gr("--cached", "-c", "foo")),
	}
	runDifferential(t, cases)
}
