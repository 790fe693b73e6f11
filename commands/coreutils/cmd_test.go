package coreutils_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

type goldenCase = cmdtest.Golden

// known lists recorded cases that differ from GNU on purpose (see cmdtest.RunGolden).
var known = map[string]string{}

func TestGolden(t *testing.T) {
	tab := commands.Table{}
	coreutils.Register(tab)
	cmdtest.RunGolden(t, tab, golden, known)
}

// Every command answers --help and --version with status 0.
func TestHelpVersion(t *testing.T) {
	tab := commands.Table{}
	coreutils.Register(tab)
	for _, name := range tab.Names() {
		switch name {
		case "echo", "printf", "yes", "expr":
			continue // these print their operands, as in GNU/bash
		}
		for _, flag := range []string{"--help", "--version"} {
			res := cmdtest.Run(tab[name], []string{name, flag}, "", nil)
			if res.Code != 0 || res.Stdout == "" || res.Stderr != "" {
				t.Errorf("%s %s: exit %d stdout %q stderr %q", name, flag, res.Code, res.Stdout, res.Stderr)
			}
		}
	}
}

// TestRevNUL: util-linux rev ends a line at a NUL, its newline included
// (BusyBox's rev.tests; recorded from util-linux 2.38).
func TestRevNUL(t *testing.T) {
	tab := commands.Table{}
	coreutils.Register(tab)
	cmdtest.RunGolden(t, tab, []goldenCase{
		{Name: "rev_nul", Args: []string{"rev"}, Stdin: "lin\x00e 1\n\nline 3\n", Files: map[string]string{},
			Stdout: "nil\n3 enil\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "rev_nul_last", Args: []string{"rev"}, Stdin: "ab\ncd\x00x", Files: map[string]string{},
			Stdout: "ba\ndc", Stderr: "", Code: 0, After: map[string]string{}},
	}, nil)
}
