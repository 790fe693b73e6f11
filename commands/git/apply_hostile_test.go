package git_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
)

// mutate damages a patch: a line dropped, doubled or swapped, a number or
// a prefix character changed, a name pointed elsewhere.
func mutate(r *rand.Rand, p string) string {
	lines := strings.SplitAfter(p, "\n")
	i := r.Intn(len(lines))
	switch r.Intn(7) {
	case 0:
		lines = append(lines[:i], lines[i+1:]...)
	case 1:
		lines = append(lines[:i+1], lines[i:]...)
	case 2:
		j := r.Intn(len(lines))
		lines[i], lines[j] = lines[j], lines[i]
	case 3:
		lines[i] = strings.Map(func(c rune) rune {
			if c >= '0' && c <= '9' {
				return '0' + rune(r.Intn(10))
			}
			return c
		}, lines[i])
	case 4:
		if len(lines[i]) > 0 {
			lines[i] = string("+- \\@d"[r.Intn(6)]) + lines[i][1:]
		}
	case 5:
		lines[i] = strings.ReplaceAll(lines[i], "f", []string{"../f", ".git/f", "/f", "d/../f", "f\t"}[r.Intn(5)])
	case 6:
		lines[i] = strings.TrimSuffix(lines[i], "\n")
	}
	return strings.Join(lines, "")
}

var seedPatches = []string{
	"diff --git a/f b/f\nindex de98044..1c0e5d9 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
	"diff --git a/f b/g\nsimilarity index 90%\nrename from f\nrename to g\n--- a/f\n+++ b/g\n@@ -1,3 +1,4 @@\n a\n b\n c\n+d\n",
	"diff --git a/n b/n\nnew file mode 100755\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n",
	"diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n",
	"--- f\n+++ f\n@@ -2,2 +2,2 @@\n-b\n+B\n c\n@@ -1 +1,2 @@\n a\n+a2\n",
}

// TestApplyMutatedDifferential feeds damaged patches to both gits: the
// same status and messages, the same files left, and never a panic.
func TestApplyMutatedDifferential(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	var cases []dcase
	for n := 0; n < 60; n++ {
		p := seedPatches[n%len(seedPatches)]
		for k := 0; k <= n%3; k++ {
			p = mutate(r, p)
		}
		args := [][]string{{"-C", "r", "apply"}, {"-C", "r", "apply", "--index"}, {"-C", "r", "apply", "-R"}, {"-C", "r", "apply", "--stat", "--summary"}}[n%4]
		c := applyCase(fmt.Sprintf("mutation %d", n), map[string]string{"f": abc, "d/x": "x\n"}, gin(p, args...))
		c.known = map[string]string{
			// the resident status pairs only exact renames
			"git -C r status --porcelain": "status shows a staged rename with changes as D and A",
		}
		if n == 57 {
			// "diff --git" followed by a damaged line, then a creation
			c.known["*"] = "git 2.39 aborts on an assertion (apply.c:3727); the resident git creates the file as the traditional patch says"
		}
		cases = append(cases, c)
	}
	runDifferential(t, cases)
}

// A patch bigger than the sandbox's memory budget ends with the limit's
// status, not a partial apply.
func TestApplyCharged(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"r/f": abc}, nil)
	tab := stdTable()
	runIn(fsys, tab, []string{"git", "init", "-q", "r"}, "")
	big := "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+" + strings.Repeat("B", 2<<20) + "\n c\n"
	mem := commands.NewMemory(1 << 20)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: []string{"git", "-C", "r", "apply"}, Stdin: strings.NewReader(big), Stdout: &out, Stderr: &errb,
		Dir: caseDir, FS: fsys, Env: ident, Sys: &commands.System{Memory: mem}}
	code := tab["git"](context.Background(), inv)
	if code != commands.StatusLimit || !strings.Contains(errb.String(), "memory limit exceeded") {
		t.Fatalf("2 MiB patch at a 1 MiB budget: status %d stderr %q", code, errb.String())
	}
	if b, _ := fsys.ReadFile(caseDir + "/r/f"); string(b) != abc {
		t.Errorf("f changed to %.40q", b)
	}
	if mem.Used() != 0 {
		t.Errorf("%d bytes still charged", mem.Used())
	}
}

// What git apply and am cannot do here is refused with the contract's
// refusal, before anything changes.
func TestApplyRefusals(t *testing.T) {
	for _, argv := range [][]string{
		{"git", "-C", "r", "apply", "--3way"}, {"git", "-C", "r", "apply", "--reject"}, {"git", "-C", "r", "am", "-3"},
		{"git", "-C", "r", "format-patch", "--cover-letter", "-1"},
	} {
		fsys := newSandbox(t, map[string]string{"r/f": abc}, nil)
		runIn(fsys, stdTable(), []string{"git", "init", "-q", "r"}, "")
		_, errs, code := runIn(fsys, stdTable(), argv, "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", ident...)
		if code == 0 || !strings.Contains(errs, "not supported here") {
			t.Errorf("%v: status %d stderr %q", argv, code, errs)
		}
		if b, _ := fsys.ReadFile(caseDir + "/r/f"); string(b) != abc {
			t.Errorf("%v changed f to %q", argv, b)
		}
	}
}
