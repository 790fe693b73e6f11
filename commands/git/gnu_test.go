package git_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/commands/gnucase"
	"github.com/warren-sandbox/warren/commands/std"
)

// The cases in testdata/gnu.json were recorded with the Debian tools
// (git 2.39.5); package gnucase replays them.

const caseDir = gnucase.Dir

var (
	newSandbox = gnucase.NewSandbox
	runIn      = gnucase.RunIn
)

// knownDiff lists recorded steps whose output legitimately differs in the
// sandbox, with the reason (key: "case name/argv joined by spaces").
var knownDiff = map[string]string{
	"line merge/git -C r log --oneline --graph": "--graph is drawn only for linear history",
}

func TestGNU(t *testing.T) {
	gnucase.Replay(t, os.DirFS("testdata"), "gnu.json", std.Table(), gnucase.Options{KnownDiff: knownDiff})
}
