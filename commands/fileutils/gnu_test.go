package fileutils_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/commands/gnucase"
	"github.com/warren-sandbox/warren/commands/std"
)

// The cases in testdata/gnu.json were recorded with the Debian tools
// (coreutils 9.1, tree 2.1, file 5.44); package gnucase replays them.

const caseDir = gnucase.Dir

var (
	newSandbox = gnucase.NewSandbox
	runIn      = gnucase.RunIn
)

// knownDiff lists recorded steps whose output legitimately differs in the
// sandbox, with the reason (key: "case name/argv joined by spaces").
var knownDiff = map[string]string{
	"chown/stat -c %u %g %U a": "names come from the sandbox's /etc/passwd; the recording host calls uid 1000 cloudsdk",
	"agent idioms/ls -l abs":   "a link made during the run shows the recording host's clock",
	"ls long/ls -la":           "'..' is the host's /tmp in the recording",
	"cp/cp -rv d d/s":          "GNU copies one level before noticing the loop; warren refuses up front",
}

func TestGNU(t *testing.T) {
	gnucase.Replay(t, os.DirFS("testdata"), "gnu.json", std.Table(), gnucase.Options{KnownDiff: knownDiff})
}
