package git_test

import "testing"

// cleanRepo has tracked, untracked, ignored files and directories, an
// untracked directory with ignored content, one with only ignored content
// and a nested repository.
func cleanRepo() (map[string]string, []dstep) {
	return map[string]string{"r/.gitignore": "ign*\nbuild/\n", "r/a": "a\n", "r/d/t": "t\n"}, []dstep{
		g("init", "-q", "r"), g("-C", "r", "add", "-A"), g("-C", "r", "commit", "-qm", "one"),
		write("r/u", "u\n"), write("r/d/u", "u\n"), write("r/new/sub/x", "x\n"), write("r/ign1", "i\n"),
		write("r/build/b", "b\n"), write("r/d/ign2", "i\n"), write("r/d/onlyign/ign3", "i\n"),
		write("r/mixed/x", "x\n"), write("r/mixed/ign4", "i\n"), write("r/mixed2/deep/ign5", "i\n"), write("r/mixed2/y", "y\n"),
		write("r/a-b", "x\n"), write("r/d/e/f", "f\n"),
		g("init", "-q", "r/nest"), write("r/nest/n", "n\n"),
	}
}

func TestCleanDifferential(t *testing.T) {
	files, pre := cleanRepo()
	c := func(name string, steps ...dstep) dcase {
		return dcase{name: name, files: files, repo: "r", steps: append(append([]dstep{}, pre...), steps...)}
	}
	cl := func(args ...string) dstep { return g(append([]string{"-C", "r", "clean"}, args...)...) }
	cases := []dcase{
		c("refuses without -f", cl(), cl("-d"), g("-C", "r", "-c", "clean.requireForce=true", "clean"), cl("-x", "-X", "-n"), cl("-X", "-x", "-n")),
		c("dry runs", cl("-n"), cl("-nd"), cl("-nx"), cl("-nX"), cl("-ndx"), cl("-ndX"), cl("-ndff"), cl("-nq"), cl("--dry-run", "-d")),
		c("excludes", cl("-n", "-e", "u"), cl("-nd", "-e", "new"), cl("-ndx", "--exclude=ign1", "-e", "build/"), cl("-nX", "-e", "u")),
		c("pathspecs", cl("-n", "d"), cl("-n", "new"), cl("-n", "n*"), cl("-n", "new/sub"), cl("-n", "mixed"), cl("-n", "--", "u", "nope"), cl("-n", ".")),
		c("in a subdirectory", g("-C", "r/d", "clean", "-n"), g("-C", "r/d", "clean", "-nd"), g("-C", "r/d", "clean", "-nd", "..")),
		c("force", cl("-f")),
		c("force dirs", cl("-fd")),
		c("force ignored", cl("-fX"), cl("-fdX")),
		c("force everything", cl("-fdx", "-e", "ign1")),
		c("force nested", cl("-ffdx")),
		c("quiet", cl("-fdq")),
		c("config allows", g("-C", "r", "-c", "clean.requireForce=false", "clean")),
	}
	runDifferential(t, cases)
}
