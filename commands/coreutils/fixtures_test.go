package coreutils_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/fileutils"
	"github.com/warren-sandbox/warren/commands/grep"
)

// fixtureDir is the developer conformance set, vendored from shared/conformance/commands.
const fixtureDir = "../../conformance/testdata/commands"

// The fixture files whose commands this helper's packages implement.
var targets = []string{"grep", "grep-files-without-match", "grep-patterns-from-file", "sort", "uniq",
	"cut", "tr", "paste", "column-join", "text-processing", "strings-split", "awk", "jq",
	"jq.raw-input", "jq-args-positional", "cat", "basename-dirname"}

// Whitespace-normalised fixtures, as upstream compares them (see README).
var normalized = map[string]bool{"4baafcd0776bdda9": true, "63ad63113394243e": true, "9af750f90a24e236": true,
	"c904ada5e9bd622a": true, "e1365a02d3cb07d7": true, "182b9b5e6bfa1c28": true, "1f5358d0ff5415db": true,
	"abe00fe64964cee1": true}

// Known differences we accept, with the reason.
var knownDiff = map[string]string{
	"1b39c1945ca0d7ae": "grep -r file order follows host directory order (README)",
	"59124fd44c118019": "jq 1.7 vs 1.6 exit status (README)",
	"2f59c89728536647": "column -t pads short rows with blanks on Debian; the fixture has none (README)",
	"6e61839db2810b92": "nl pads an unnumbered line with 7 blanks on Debian; the fixture has 6 and a tab (README)",
}

// passFloor is the minimum number of runnable fixtures that must pass; it only goes up.
const passFloor = 321

// otherFloor is the same for TestFixturesOther: 217 of 258 passed when
// the shell first ran them, 216 under -race on a loaded machine (a case
// bound to timing); the floor leaves room for three such.
const otherFloor = 214

type fixture struct {
	Command  string            `json:"command"`
	Files    map[string]string `json:"files"`
	Stdout   string            `json:"stdout"`
	ExitCode int               `json:"exitCode"`
}

func normalize(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func table() commands.Table {
	t := commands.Table{}
	coreutils.Register(t)
	grep.Register(t)
	registerExtra(t)
	return t
}

func TestFixtures(t *testing.T) { replay(t, targets, true) }

// TestFixturesOther replays the rest of the developer set through the
// shell with this package's table: a failure is logged (most are shell
// features, or commands outside the table), and the count that passes has
// a floor, otherFloor.
func TestFixturesOther(t *testing.T) {
	all, _ := filepath.Glob(filepath.Join(fixtureDir, "*.comparison.fixtures.json"))
	var rest []string
	for _, f := range all {
		name := strings.TrimSuffix(filepath.Base(f), ".comparison.fixtures.json")
		found := false
		for _, t := range targets {
			found = found || t == name
		}
		if !found {
			rest = append(rest, name)
		}
	}
	replay(t, rest, false)
}

func replay(t *testing.T, files []string, strict bool) {
	tab := table()
	fileutils.Register(tab) // the split fixtures list what they made
	total, runnable, passed := 0, 0, 0
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(fixtureDir, name+".comparison.fixtures.json"))
		if err != nil {
			t.Fatalf("fixtures: %v", err)
		}
		var fx map[string]fixture
		if err := json.Unmarshal(data, &fx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fileRun, filePass := 0, 0
		for _, id := range cmdtest.SortedKeys(fx) {
			f := fx[id]
			total++
			files := cmdtest.NewFiles(f.Files)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			res, err := runShell(ctx, tab, files, f.Command)
			cancel()
			if err != nil {
				t.Errorf("%s %s: %v", name, id, err)
				continue
			}
			runnable++
			fileRun++
			got, want := res.Stdout, f.Stdout
			if normalized[id] {
				got, want = normalize(got), normalize(want)
			}
			if got == want && res.Code == f.ExitCode {
				passed++
				filePass++
				continue
			}
			if why, ok := knownDiff[id]; ok {
				t.Logf("%s %s: known difference: %s", name, id, why)
				continue
			}
			report := t.Errorf
			if !strict {
				report = t.Logf
			}
			report("%s %s: %q\n got stdout %q exit %d (stderr %q)\nwant stdout %q exit %d",
				name, id, f.Command, res.Stdout, res.Code, res.Stderr, f.Stdout, f.ExitCode)
		}
		t.Logf("%-26s %3d/%3d runnable fixtures pass", name, filePass, fileRun)
	}
	t.Logf("fixtures: %d total, %d runnable, %d passed", total, runnable, passed)
	if strict && passed < passFloor {
		t.Errorf("passed %d fixtures, below the floor %d", passed, passFloor)
	}
	if !strict && passed < otherFloor {
		t.Errorf("passed %d of the other fixtures, below the floor %d", passed, otherFloor)
	}
}
