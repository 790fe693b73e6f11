package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
)

// Box is one sandbox as the in-process scenarios drive it.
type Box interface {
	// Run runs script to completion; stdout and stderr receive its output.
	Run(ctx context.Context, script string, stdout, stderr io.Writer) (int, error)
	// Fork returns an independent copy: filesystem and session.
	Fork() (Box, error)
}

// Runtime makes sandboxes over the base tree.
type Runtime interface {
	New(ctx context.Context) (Box, error)
}

// ShellRuntime is the resident tier as an embedder uses it: a vfs over the
// base image and a shell session over the vfs, both in this process.
type ShellRuntime struct {
	Base  fs.FS
	Table commands.Table
}

// NewShellRuntime returns the runtime over tree with warren's command table.
func NewShellRuntime(tree *BaseTree) (*ShellRuntime, error) {
	t := commandTable()
	for _, name := range []string{"cat", "grep", "wc"} {
		if t[name] == nil {
			return nil, fmt.Errorf("command table has no %s: the workload needs it", name)
		}
	}
	return &ShellRuntime{Base: tree.FS(), Table: t}, nil
}

// New creates a sandbox: vfs.New over the shared base, shell.New over it.
func (r *ShellRuntime) New(ctx context.Context) (Box, error) {
	sh, err := shell.New(shell.Config{
		FS:       vfs.New(vfs.Options{Base: r.Base}),
		Commands: r.Table,
		Env:      SandboxEnv,
		Dir:      SandboxCwd,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot create sandbox: %w", err)
	}
	return shellBox{sh}, nil
}

type shellBox struct{ sh *shell.Shell }

func (b shellBox) Run(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	return b.sh.Run(ctx, script, nil, stdout, stderr)
}

// Fork is warren's fork: vfs Fork (O(1), shares the tree) + shell Fork.
func (b shellBox) Fork() (Box, error) { return shellBox{b.sh.Fork(b.sh.FS().Fork())}, nil }
