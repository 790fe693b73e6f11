// Package std assembles warren's default resident command table from every
// command package.
package std

import (
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/archive"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/bc"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/diff"
	"github.com/warren-sandbox/warren/commands/fileutils"
	"github.com/warren-sandbox/warren/commands/find"
	"github.com/warren-sandbox/warren/commands/git"
	"github.com/warren-sandbox/warren/commands/grep"
	"github.com/warren-sandbox/warren/commands/jq"
	"github.com/warren-sandbox/warren/commands/net"
	"github.com/warren-sandbox/warren/commands/sed"
	"github.com/warren-sandbox/warren/commands/sqlite"
	"github.com/warren-sandbox/warren/commands/sysinfo"
)

// registers lists every package's Register in the order they are applied;
// a later package wins a name both define.
var registers = []func(commands.Table){
	coreutils.Register,
	grep.Register,
	sed.Register,
	awk.Register,
	jq.Register,
	diff.Register,
	fileutils.Register,
	find.Register,
	archive.Register,
	sysinfo.Register,
	net.Register,
	git.Register,
	sqlite.Register,
	bc.Register,
}

// Table returns a fresh table holding every resident command.
func Table() commands.Table {
	t := commands.Table{}
	for _, r := range registers {
		r(t)
	}
	return t
}
