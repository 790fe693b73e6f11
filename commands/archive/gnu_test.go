package archive_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/commands/gnucase"
	"github.com/warren-sandbox/warren/commands/std"
)

// The cases in testdata/gnu.json were recorded with the Debian tools
// (GNU tar 1.34, gzip 1.12, Info-ZIP zip 3.0 / unzip 6.0); package gnucase replays them.

const caseDir = gnucase.Dir

var (
	newSandbox = gnucase.NewSandbox
	runIn      = gnucase.RunIn
)

// knownDiff lists recorded steps whose output legitimately differs in the
// sandbox, with the reason (key: "case name/argv joined by spaces").
var knownDiff = map[string]string{
	"tar/ls -lR o": "the vfs has no lutimes: an extracted symlink gets the extraction time",
}

func TestGNU(t *testing.T) {
	gnucase.Replay(t, os.DirFS("testdata"), "gnu.json", std.Table(), gnucase.Options{KnownDiff: knownDiff, Unordered: true})
}
