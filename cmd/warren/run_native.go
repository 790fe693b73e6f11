package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/vfs"
)

// runNativeDir is where `warren run` keeps its native workspace. It is
// fixed (not per process) so a crashed run's mounts and cgroups are cleaned
// up by the next one; a second concurrent `warren run` finds it locked and
// reports the native tier as unavailable.
const runNativeDir = "/run/warren/native-run"

// runNative is the shell's ELF hook for `warren run`: one workspace over
// the run's image and vfs, created on the first ELF command.
type runNative struct {
	off       bool
	imagePath string
	fsys      *vfs.FS
	limits    native.Limits
	security  string // api.SecurityDefault or api.SecurityRelaxed

	mu  sync.Mutex
	rt  *native.Runtime
	ws  *native.Workspace
	err error // why the tier cannot be used, once known
}

func (n *runNative) workspace(ctx context.Context) (*native.Workspace, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ws != nil || n.err != nil {
		return n.ws, n.err
	}
	if n.imagePath == "" {
		n.err = errors.New("the image has no EROFS file on this host")
		return nil, n.err
	}
	rt, err := native.NewRuntime(ctx, native.Config{RunDir: runNativeDir})
	if err != nil {
		n.err = err
		return nil, err
	}
	if err := rt.Available(); err != nil {
		rt.Close()
		n.err = err
		return nil, err
	}
	ws, err := rt.Workspace(ctx, fmt.Sprintf("run-%d", os.Getpid()), n.imagePath, n.fsys, n.limits, sandbox.NativeSecurity(n.security))
	if err != nil {
		rt.Close()
		n.err = err
		return nil, err
	}
	n.rt, n.ws = rt, ws
	return ws, nil
}

func (n *runNative) exec(ctx context.Context, inv *commands.Invocation, path string) int {
	stderr := inv.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	if n.off {
		fmt.Fprintf(stderr, "warren: %s: cannot execute binary file: the native tier is off (--no-native)\n", path)
		return 126
	}
	ws, err := n.workspace(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "warren: %s: cannot execute binary file: native tier unavailable: %v\n", path, err)
		return 126
	}
	res, err := ws.Exec(ctx, native.Cmd{Path: path, Args: inv.Args, Env: inv.Env, Dir: inv.Dir,
		Stdin: inv.Stdin, Stdout: inv.Stdout, Stderr: inv.Stderr})
	if err != nil && ctx.Err() == nil {
		if errors.Is(err, native.ErrWorkspaceLost) {
			n.mu.Lock()
			n.ws, n.err = nil, nil // the next ELF command starts a new workspace
			n.mu.Unlock()
			ws.Close()
			// The workspace's init shares the memory limit, so the kernel's
			// OOM killer may pick it rather than the command.
			if n.limits.Memory > 0 {
				fmt.Fprintf(stderr, "warren: %s: killed: the native workspace was lost, most likely out of memory (limit %d bytes)\n", path, n.limits.Memory)
				if res.Status == 0 {
					res.Status = 137
				}
				return res.Status
			}
		}
		fmt.Fprintf(stderr, "warren: %s: native tier: %v\n", path, err)
		if res.Status == 0 {
			res.Status = 126
		}
	}
	if err != nil && ctx.Err() != nil && res.Status == 0 {
		res.Status = 137
	}
	return res.Status
}

func (n *runNative) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ws != nil {
		n.ws.Close()
	}
	if n.rt != nil {
		n.rt.Close()
	}
}
