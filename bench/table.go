package bench

import (
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
)

// commandTable is the resident command table the in-process sandboxes get:
// the same as a node's (sandbox/node.Commands is std.Table too).
func commandTable() commands.Table { return std.Table() }
