package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
)

// The native tier in a sandbox.
//
// A sandbox's native workspace (package native: overlay of the image's EROFS
// file and a tmpfs upper layer, namespaces, cgroup) is created by the first
// ELF exec of the running sandbox and kept while it runs. Hibernate (explicit
// or standby), delete and shutdown close it, killing whatever it still runs;
// the next ELF exec after a resume creates a new one. A workspace whose init
// died (native.ErrWorkspaceLost: killed from outside, or the OOM killer took
// it) is closed and recreated by the next ELF exec.
//
// Volumes: the workspace binds each of the sandbox's volumes at its path,
// a tmpfs filled from the volume's tree and harvested back into it (native
// volumes.go), so a native process sees the same bytes as the resident
// tier, read-only volumes are read-only in the kernel, and a write the
// volume's quota refuses fails the command (status 1, the QuotaError on its
// stderr) with the previous content kept. Volume writes never reach the
// sandbox's delta; release commits them like resident ones.
//
// Consistency rule: the vfs sees what a native command wrote when that
// command ends (its Exec harvests). While a native command is still running
// (a background job, or an exec in another session), every file call of the
// API and the start of every exec harvest first, so they see what it wrote
// up to that moment; a resident command inside the same script as a running
// native job sees its writes only at the job's end or the next harvest.

// NativeFunc runs the ELF file at path in the native tier (the shell's
// Native hook). It finds its sandbox through ctx.
type NativeFunc func(ctx context.Context, inv *commands.Invocation, path string) int

// runInfo travels in the context of one exec: the hook finds its sandbox
// there (a forked session's hook must not reach its parent) and adds the
// native CPU time and OOM kills it saw.
type runInfo struct {
	b       *box
	session string       // the exec's session (jobs.go lists its jobs under it)
	cpu     atomic.Int64 // nanoseconds
	oom     atomic.Bool
}

type runInfoKey struct{}

func withRunInfo(ctx context.Context, ri *runInfo) context.Context {
	return context.WithValue(ctx, runInfoKey{}, ri)
}

// nativeOff returns why b cannot run ELF files ("" when it can).
func (m *Manager) nativeOff(b *box) string {
	if !b.cfg.Limits.NativeAllowed() {
		return "the native tier is off for this sandbox (created with native: false / --no-native)"
	}
	if m.cfg.Native == nil {
		return "the native tier is disabled on this node (warren serve --no-native)"
	}
	if err := m.cfg.Native.Available(); err != nil {
		return err.Error()
	}
	return ""
}

// runNative is the shell's Native hook of every session.
func (m *Manager) runNative(ctx context.Context, inv *commands.Invocation, path string) int {
	stderr := inv.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	ri, _ := ctx.Value(runInfoKey{}).(*runInfo)
	if ri == nil {
		fmt.Fprintf(stderr, "warren: %s: cannot execute binary file: no sandbox for the native tier\n", path)
		return 126
	}
	b := ri.b
	if why := m.nativeOff(b); why != "" {
		fmt.Fprintf(stderr, "warren: %s: cannot execute binary file: %s\n", path, why)
		return 126
	}
	ws, err := b.workspace(ctx, inv.FS)
	if err != nil {
		fmt.Fprintf(stderr, "warren: %s: native tier: %v\n", path, err)
		return 126
	}
	b.nativeRunning.Add(1)
	// A native process keeps the sandbox out of standby; one in a
	// background job does as its job (jobs.go), which hibernate can end.
	inJob := shell.InJob(ctx)
	if !inJob {
		b.mu.Lock()
		b.active++
		b.mu.Unlock()
	}
	cmd := native.Cmd{
		Path: path, Args: inv.Args, Env: b.nativeEnv(inv.Env), Dir: inv.Dir,
		Stdin: inv.Stdin, Stdout: inv.Stdout, Stderr: inv.Stderr,
	}
	if done := nativePTY(&cmd); done != nil { // run from a terminal (ptynative.go)
		defer done()
	}
	res, err := ws.Exec(ctx, cmd)
	b.nativeRunning.Add(-1)
	if !inJob {
		b.release()
	}
	ri.cpu.Add(int64(res.CPU))
	b.m.native.cpu.Add(int64(res.CPU))
	if res.OOMKilled {
		ri.oom.Store(true)
		b.m.native.oomKills.Add(1)
		b.m.event("native_oom", b, "path", path, "memory_limit", b.cfg.Limits.MaxMemoryBytes)
	}
	if err != nil {
		if errors.Is(err, native.ErrMountsChanged) {
			// Raced with a mount change: the next native command gets a
			// workspace with the new table.
			b.dropWorkspace(ws)
			fmt.Fprintf(stderr, "warren: %s: native tier: %v; run it again\n", path, err)
			return 126
		}
		if errors.Is(err, native.ErrWorkspaceLost) {
			b.dropWorkspace(ws)
			hint := ""
			if lim := b.cfg.Limits.MaxMemoryBytes; lim > 0 && ctx.Err() == nil {
				hint = fmt.Sprintf(" (with the sandbox's memory limit of %d bytes, most likely an out-of-memory kill)", lim)
			}
			if ctx.Err() == nil {
				fmt.Fprintf(stderr, "warren: %s: killed: the native workspace was lost%s; the next native command starts a new one\n", path, hint)
			}
			if res.Status == 0 {
				res.Status = 137
			}
			return res.Status
		}
		if ctx.Err() != nil {
			// Timeout, signal, delete: the exec's own cause reports it.
			if res.Status == 0 {
				res.Status = 137
			}
			return res.Status
		}
		fmt.Fprintf(stderr, "warren: %s: native tier: %v\n", path, err)
		if res.Status == 0 {
			res.Status = 126
		}
	}
	return res.Status
}

// NativeLimits are the native tier's limits of a sandbox with limits l
// (the same mapping for `warren run` and the API).
func NativeLimits(l api.Limits) native.Limits {
	return native.Limits{Memory: l.MaxMemoryBytes, CPUs: l.CPUs, Pids: l.Pids, Disk: l.DiskBytes}
}

// workspace returns b's native workspace over fsys, creating it on first use.
func (b *box) workspace(ctx context.Context, fsys *vfs.FS) (*native.Workspace, error) {
	b.nmu.Lock()
	defer b.nmu.Unlock()
	b.mu.Lock()
	if b.state != api.StateRunning || b.fs == nil {
		b.mu.Unlock()
		return nil, notFound(b.id)
	}
	if fsys != b.fs {
		b.mu.Unlock()
		return nil, errors.New("the session's filesystem is not the sandbox's")
	}
	// A workspace sees the volumes mounted when it started (native
	// volumes.go); they only change at resume, which makes a new one, but
	// a stale one is never used.
	if b.ws != nil && b.wsFS == fsys && !b.ws.MountsChanged() {
		ws := b.ws
		b.mu.Unlock()
		return ws, nil
	}
	old := b.ws
	b.ws, b.wsFS = nil, nil
	b.mu.Unlock()
	if old != nil {
		old.Close()
	}
	img, err := b.m.cfg.Images.Lookup(ctx, b.tenant, b.imageDigest)
	if err != nil {
		return nil, fmt.Errorf("cannot open image %s: %w", b.imageDigest, err)
	}
	if img.Path == "" {
		return nil, fmt.Errorf("image %s has no EROFS file on this node", b.imageDigest)
	}
	ws, err := b.m.cfg.Native.Workspace(ctx, b.id, img.Path, fsys, NativeLimits(b.cfg.Limits), NativeSecurity(b.cfg.Security))
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.state != api.StateRunning || b.fs != fsys {
		// Deleted or hibernated while the workspace was being made.
		b.mu.Unlock()
		ws.Close()
		return nil, notFound(b.id)
	}
	b.ws, b.wsFS = ws, fsys
	b.mu.Unlock()
	b.startProxy(ws, fsys) // netproxy.go
	return ws, nil
}

// dropWorkspace closes ws if it is still b's (after it was lost).
func (b *box) dropWorkspace(ws *native.Workspace) {
	b.mu.Lock()
	if b.ws == ws {
		b.ws, b.wsFS = nil, nil
	}
	b.mu.Unlock()
	ws.Close()
}

// takeWorkspaceLocked detaches b's workspace for closing (b.mu held); the
// caller closes it after unlocking, since Close kills and waits.
func (b *box) takeWorkspaceLocked() *native.Workspace {
	ws := b.ws
	b.ws, b.wsFS = nil, nil
	return ws
}

// harvestNative brings what running native processes wrote into the vfs
// (see the consistency rule above); a no-op when none runs.
func (b *box) harvestNative(ctx context.Context) error {
	if b.nativeRunning.Load() == 0 {
		return nil
	}
	b.mu.Lock()
	ws := b.ws
	b.mu.Unlock()
	if ws == nil {
		return nil
	}
	if err := ws.Harvest(ctx); err != nil {
		return fmt.Errorf("cannot bring native writes into the sandbox: %w", err)
	}
	return nil
}

// NativeSecurity maps a sandbox's confinement level to the native tier's
// option (api.CheckSecurity has refused anything else).
func NativeSecurity(level string) native.WorkspaceOption {
	if level == api.SecurityRelaxed {
		return native.WithSecurity(native.SecurityRelaxed)
	}
	return native.WithSecurity(native.SecurityDefault)
}
