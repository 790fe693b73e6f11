package std

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// The conformance fixtures for the file and system commands, replayed
// through warren's shell with the full table.
var fixtureFiles = []string{"find", "tar", "test", "basename-dirname", "glob"}

// fixtureFloor is the number of those fixtures that must pass; it only goes up.
const fixtureFloor = 101

type fixture struct {
	Command  string            `json:"command"`
	Files    map[string]string `json:"files"`
	Stdout   string            `json:"stdout"`
	ExitCode int               `json:"exitCode"`
}

func TestFixtures(t *testing.T) {
	dir := filepath.Join("..", "..", "conformance", "testdata", "commands")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("conformance fixtures not found at %s: %v", dir, err)
	}
	tab := Table()
	total, runnable, passed := 0, 0, 0
	for _, name := range fixtureFiles {
		data, err := os.ReadFile(filepath.Join(dir, name+".comparison.fixtures.json"))
		if err != nil {
			t.Fatal(err)
		}
		var fx map[string]fixture
		if err := json.Unmarshal(data, &fx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, id := range cmdtest.SortedKeys(fx) {
			f := fx[id]
			total++
			files := cmdtest.NewFiles(f.Files)
			if files.FS != nil {
				files.FS.MkdirAll("/tmp", 0o1777)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			res, err := runShell(ctx, tab, files, f.Command)
			cancel()
			if err != nil {
				t.Errorf("%s %s: %v", name, id, err)
				continue
			}
			runnable++
			if res.Stdout == f.Stdout && res.Code == f.ExitCode {
				passed++
				continue
			}
			t.Errorf("%s %s: %q\n got %q exit %d (stderr %q)\nwant %q exit %d",
				name, id, f.Command, res.Stdout, res.Code, res.Stderr, f.Stdout, f.ExitCode)
		}
	}
	t.Logf("fixtures: %d total, %d runnable, %d passed", total, runnable, passed)
	if passed < fixtureFloor {
		t.Errorf("passed %d fixtures, below the floor %d", passed, fixtureFloor)
	}
}
