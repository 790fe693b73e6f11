package oils

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
)

// suiteDir finds the developer conformance set: $WARREN_OILS_DIR, else the
// copy vendored in the repository (conformance/testdata/oils).
func suiteDir(t *testing.T) string {
	if d := os.Getenv("WARREN_OILS_DIR"); d != "" {
		return d
	}
	d, _ := filepath.Abs("../testdata/oils")
	if _, err := os.Stat(filepath.Join(d, "README.md")); err != nil {
		t.Fatalf("conformance set not found at %s (set WARREN_OILS_DIR)", d)
	}
	return d
}

// TestOilsFloor runs every case and fails if fewer pass than the floor
// recorded in testdata/floor.txt. Raise the floor as the shell improves.
func TestOilsFloor(t *testing.T) {
	dir := suiteDir(t)
	data, err := os.ReadFile("testdata/floor.txt")
	if err != nil {
		t.Fatal(err)
	}
	floor, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("bad floor file: %v", err)
	}
	// The floor is measured with what users get: commands/std, as
	// `warren conformance oils` runs it; Run adds the suite's helpers
	// (argv.py and friends).
	s, err := Run(context.Background(), []string{dir}, Options{Commands: std.Table()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", s.JSON())
	if s.Passed < floor {
		for _, r := range s.Results {
			if !r.Pass {
				t.Logf("FAIL %s #%d %s: %s", r.File, r.Index, r.Name, r.Why)
			}
		}
		t.Fatalf("conformance regressed: %d cases pass, floor is %d", s.Passed, floor)
	}
}

func TestParse(t *testing.T) {
	src := `## compare_shells: bash dash

#### echo
echo hi
# a comment
## stdout: hi

#### block
echo a; echo b
## STDOUT:
a
b
## END
## N-I dash stdout: x

#### override
false
## status: 1
## BUG bash status: 2
## OK bash stdout-json: "z"
`
	f, err := Parse("x.test.sh", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 3 {
		t.Fatalf("got %d cases", len(f.Cases))
	}
	tests := []struct {
		code, stdout string
		status       int
	}{
		{"echo hi\n", "hi\n", 0},
		{"echo a; echo b\n", "a\nb\n", 0},
		{"false\n", "z", 2},
	}
	for i, tt := range tests {
		c := f.Cases[i]
		if c.Code != tt.code || c.Stdout == nil || *c.Stdout != tt.stdout || c.Status != tt.status {
			t.Errorf("case %d: got code %q stdout %v status %d", i, c.Code, c.Stdout, c.Status)
		}
	}
	if f.Header["compare_shells"] != "bash dash" {
		t.Errorf("header: %v", f.Header)
	}
}

func TestPyRepr(t *testing.T) {
	for in, want := range map[string]string{
		"a":      "'a'",
		"it's":   `"it's"`,
		"x'\"y":  `'x\'"y'`,
		`a\b`:    `'a\\b'`,
		"\v\x7f": `'\x0b\x7f'`,
		"μ":      `'\xce\xbc'`,
	} {
		if got := pyRepr(in); got != want {
			t.Errorf("pyRepr(%q) = %s, want %s", in, got, want)
		}
	}
}
