package find_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/commands/gnucase"
	"github.com/warren-sandbox/warren/commands/std"
)

// The cases in testdata/gnu.json were recorded with the Debian tools
// (findutils 4.9); package gnucase replays them.

const caseDir = gnucase.Dir

var (
	newSandbox = gnucase.NewSandbox
	runIn      = gnucase.RunIn
)

// knownDiff lists recorded steps whose output legitimately differs in the
// sandbox, with the reason (key: "case name/argv joined by spaces").
var knownDiff = map[string]string{
	"basic/find . -name *.txt -exec echo X {} +": "one batch in the host's directory order",
	"xargs4/xargs nosuchcmd":                     "the not-found message comes from the shell's execution ladder",
}

func TestGNU(t *testing.T) {
	gnucase.Replay(t, os.DirFS("testdata"), "gnu.json", std.Table(), gnucase.Options{KnownDiff: knownDiff, Unordered: true})
}
