package coreutils_test

import (
	"bytes"
	"context"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/shell"
)

// runShell runs script in warren's own shell (package shell: a commands
// _test file may import it; the layering rule is for non-test code) over
// the fixture's files, with tab as the resident commands, in cmdtest.Cwd,
// as the recordings ran (HOME=/root, LC_ALL=C).
func runShell(ctx context.Context, tab commands.Table, files *cmdtest.Files, script string) (cmdtest.Result, error) {
	fsys := files.FS
	if err := shell.MakeDev(fsys); err != nil {
		return cmdtest.Result{}, err
	}
	fsys.MkdirAll("/tmp", 0o1777)
	sh, err := shell.New(shell.Config{FS: fsys, Commands: tab, Dir: cmdtest.Cwd,
		Env: []string{"HOME=/root", "PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}})
	if err != nil {
		return cmdtest.Result{}, err
	}
	var out, errb bytes.Buffer
	st, err := sh.Run(ctx, script, strings.NewReader(""), &out, &errb)
	return cmdtest.Result{Stdout: out.String(), Stderr: errb.String(), Code: st}, err
}
