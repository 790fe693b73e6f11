package git_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// Differential tests: the same steps run with the host's git (2.39, in a
// temporary directory) and with the resident git (over a vfs), comparing
// every step's stdout, stderr and status, then the files left and the
// repository's HEAD, index and status.

const realGit = "/usr/bin/git"

// dstep is one step: a git command, or a pseudo command acting on both
// sides: "write PATH CONTENT", "chmod 755 PATH", "rm PATH", "symlink TARGET
// PATH", "save PATH" (the previous step's stdout, each side its own).
type dstep struct {
	argv  []string
	stdin string
	// ignoreOut skips comparing this step's stdout and stderr (only the
	// status is compared), for output the resident git formats otherwise
	// on purpose
	ignoreOut bool
}

type dcase struct {
	name  string
	files map[string]string
	repo  string // the repository whose state is compared at the end
	steps []dstep
	// known lists differences that are not this test's subject, with the
	// reason: a step's argv joined by spaces, or "*" for the whole case;
	// they are logged instead of failing
	known map[string]string
}

func g(args ...string) dstep { return dstep{argv: append([]string{"git"}, args...)} }

func gin(stdin string, args ...string) dstep {
	return dstep{argv: append([]string{"git"}, args...), stdin: stdin}
}

func write(p, content string) dstep { return dstep{argv: []string{"write", p, content}} }

func save(p string) dstep { return dstep{argv: []string{"save", p}} }

var realEnv = []string{"LC_ALL=C", "TZ=UTC", "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=init.defaultBranch", "GIT_CONFIG_VALUE_0=master"}

type result struct {
	out, err string
	code     int
}

func runReal(t *testing.T, dir string, st dstep, env []string) result {
	t.Helper()
	cmd := exec.Command(realGit, st.argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{"HOME=" + dir + "/.home"}, realEnv...), env...)
	cmd.Stdin = strings.NewReader(st.stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", st.argv, err)
	}
	fix := func(s string) string { return strings.ReplaceAll(s, dir, caseDir) }
	return result{fix(out.String()), fix(errb.String()), code}
}

// pseudo runs a pseudo step on both sides.
func pseudo(t *testing.T, dir string, fsys *vfs.FS, st dstep, lastReal, lastRes string) {
	t.Helper()
	a := st.argv
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%v: %v", a, err)
		}
	}
	switch a[0] {
	case "write", "save":
		realData, resData := "", ""
		if a[0] == "write" {
			realData, resData = a[2], a[2]
		} else {
			realData, resData = lastReal, lastRes
		}
		must(os.MkdirAll(filepath.Dir(filepath.Join(dir, a[1])), 0o755))
		must(os.WriteFile(filepath.Join(dir, a[1]), []byte(realData), 0o644))
		must(fsys.MkdirAll(path.Dir(path.Join(caseDir, a[1])), 0o755))
		must(fsys.WriteFile(path.Join(caseDir, a[1]), []byte(resData), 0o644))
	case "chmod":
		mode := fs.FileMode(0o644)
		if a[1] == "755" {
			mode = 0o755
		}
		must(os.Chmod(filepath.Join(dir, a[2]), mode))
		must(fsys.Chmod(path.Join(caseDir, a[2]), mode))
	case "rm":
		must(os.Remove(filepath.Join(dir, a[1])))
		must(fsys.Remove(path.Join(caseDir, a[1])))
	case "symlink":
		must(os.Symlink(a[1], filepath.Join(dir, a[2])))
		must(fsys.Symlink(a[1], path.Join(caseDir, a[2])))
	default:
		t.Fatalf("unknown step %v", a)
	}
}

// treeOf lists the files under root (outside .git directories) with their
// kind and content.
func realTree(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".home") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, _ := os.Lstat(p)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		case fi.Mode()&0o111 != 0:
			b, _ := os.ReadFile(p)
			out[rel] = "exec:" + string(b)
		default:
			b, _ := os.ReadFile(p)
			out[rel] = "file:" + string(b)
		}
		return nil
	})
	return out
}

func vfsTree(t *testing.T, fsys *vfs.FS, root string) map[string]string {
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			rel := strings.TrimPrefix(p, root+"/")
			fi, err := fsys.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				target, _ := fsys.Readlink(p)
				out[rel] = "link:" + target
			case fi.IsDir():
				if e.Name() != ".git" {
					walk(p)
				}
			case fi.Mode()&0o111 != 0:
				b, _ := fsys.ReadFile(p)
				out[rel] = "exec:" + string(b)
			default:
				b, _ := fsys.ReadFile(p)
				out[rel] = "file:" + string(b)
			}
		}
	}
	walk(root)
	return out
}

func runDifferential(t *testing.T, cases []dcase) {
	if _, err := os.Stat(realGit); err != nil {
		t.Skipf("no reference git at %s: %v", realGit, err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, content := range c.files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fsys := newSandbox(t, c.files, nil)
			tab := std.Table()
			var lastReal, lastRes string
			steps := c.steps
			if c.repo != "" {
				steps = append(steps, g("-C", c.repo, "rev-parse", "HEAD"), g("-C", c.repo, "ls-files", "-s"),
					g("-C", c.repo, "status", "--porcelain"))
			}
			for i, st := range steps {
				if st.argv[0] != "git" {
					pseudo(t, dir, fsys, st, lastReal, lastRes)
					continue
				}
				want := runReal(t, dir, st, ident)
				out, errs, code := runIn(fsys, tab, st.argv, st.stdin, ident...)
				got := result{out, errs, code}
				lastReal, lastRes = want.out, got.out
				if got.code != want.code || !st.ignoreOut && (got.out != want.out || got.err != want.err) {
					report := t.Errorf
					if why := c.known[strings.Join(st.argv, " ")] + c.known["*"]; why != "" {
						report = func(f string, a ...any) { t.Logf("known difference (%s): "+f, append([]any{why}, a...)...) }
					}
					report("step %d %q:\n git:      status %d\n  stdout %q\n  stderr %q\n resident: status %d\n  stdout %q\n  stderr %q",
						i, st.argv, want.code, want.out, want.err, got.code, got.out, got.err)
				}
			}
			rt, vt := realTree(t, dir), vfsTree(t, fsys, caseDir)
			var names []string
			for n := range rt {
				names = append(names, n)
			}
			for n := range vt {
				if _, ok := rt[n]; !ok {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			for _, n := range names {
				if rt[n] != vt[n] {
					report := t.Errorf
					if why := c.known["*"]; why != "" {
						report = func(f string, a ...any) { t.Logf("known difference (%s): "+f, append([]any{why}, a...)...) }
					}
					report("file %s: git left %q, resident left %q", n, rt[n], vt[n])
				}
			}
		})
	}
}
