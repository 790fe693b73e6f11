package native

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// initProc is a namespace init: warren re-executed in new user, mount, pid,
// ipc, uts, net and cgroup namespaces, waiting on its control socket for the
// setup that turns it into one workspace's pid 1.
type initProc struct {
	cmd    *exec.Cmd
	ctl    int // host end of the control socket
	stderr lockedBuffer
	dead   chan struct{} // closed when it has exited and been reaped
}

// spawnInit starts an init; it says "ready" on the control socket once its
// Go runtime is up (startInit reads that after sending the setup, so the
// host's cgroup work overlaps the init's start).
//
// (A pool of inits started ahead of demand was tried: on this loaded 2-core
// machine BenchmarkTrue/native-cold showed no gain, 17-19 ms p50 pooled vs
// 12-16 ms unpooled, so it was removed.)
func (r *Runtime) spawnInit() (*initProc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "ctl")
	defer child.Close()
	ip := &initProc{ctl: fds[0], dead: make(chan struct{})}
	uids, gids := r.idMaps()
	cmd := exec.Command(r.cfg.InitPath)
	cmd.Args = []string{initArg0}
	// One P keeps the init small: fewer threads count against the
	// workspace's pids limit, and it only shuffles fds and waits.
	cmd.Env = []string{"GOMAXPROCS=1"}
	cmd.ExtraFiles = []*os.File{child}
	cmd.Stderr = &ip.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// The cgroup namespace is rooted at warren's own cgroup (where the
		// init starts), hiding the host's cgroup paths above it.
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWNET | syscall.CLONE_NEWCGROUP,
		UidMappings: uids, GidMappings: gids,
		GidMappingsEnableSetgroups: true,
		// Without an explicit credential Go leaves the child as host uid 0.
		Credential: &syscall.Credential{Uid: 0, Gid: 0},
	}
	if err := cmd.Start(); err != nil {
		unix.Close(ip.ctl)
		return nil, fmt.Errorf("cannot start the namespace init %s: %w", r.cfg.InitPath, err)
	}
	ip.cmd = cmd
	go func() { cmd.Wait(); close(ip.dead) }()
	return ip, nil
}

// stop kills the init (and with it its pid namespace) and waits for it.
func (ip *initProc) stop() error {
	ip.cmd.Process.Kill()
	defer unix.Close(ip.ctl)
	select {
	case <-ip.dead:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("did not exit within 5 s of SIGKILL")
	}
}
