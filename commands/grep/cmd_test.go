package grep_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

type goldenCase = cmdtest.Golden

// known lists recorded cases that differ from GNU on purpose (see cmdtest.RunGolden).
var known = map[string]string{
	"backref":       "unsupported: RE2 has no back-references",
	"P_lookahead":   "unsupported: RE2 has no look-around",
	"r_exclude_dir": "order: GNU follows on-disk directory order; the vfs lists names sorted",
}

func TestGolden(t *testing.T) {
	tab := commands.Table{}
	grep.Register(tab)
	cmdtest.RunGolden(t, tab, golden, known)
}
