package sysinfo_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/commands/gnucase"
	"github.com/warren-sandbox/warren/commands/std"
)

// The cases in testdata/gnu.json were recorded with the Debian tools
// (coreutils 9.1); package gnucase replays them.

const caseDir = gnucase.Dir

var (
	newSandbox = gnucase.NewSandbox
	runIn      = gnucase.RunIn
)

// knownDiff lists recorded steps whose output legitimately differs in the
// sandbox, with the reason (key: "case name/argv joined by spaces").
var knownDiff = map[string]string{
	"misc/true --help": "warren's true ignores its arguments and prints no help",
}

func TestGNU(t *testing.T) {
	gnucase.Replay(t, os.DirFS("testdata"), "gnu.json", std.Table(), gnucase.Options{KnownDiff: knownDiff})
}
