package coreutils_test

import (
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/diff"
	"github.com/warren-sandbox/warren/commands/jq"
	"github.com/warren-sandbox/warren/commands/sed"
)

// registerExtra adds the sibling packages' commands (sed, awk, jq, diff).
func registerExtra(t commands.Table) {
	awk.Register(t)
	jq.Register(t)
	sed.Register(t)
	diff.Register(t)
}
