package awk_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

type goldenCase = cmdtest.Golden

// known lists recorded cases that differ from GNU on purpose (see cmdtest.RunGolden).
var known = map[string]string{
	"syntax_err": "stderr: GoAWK words parse errors differently from mawk",
}

func TestGolden(t *testing.T) {
	tab := commands.Table{}
	awk.Register(tab)
	cmdtest.RunGolden(t, tab, golden, known)
}
