package native

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaybeInit turns the current process into a workspace's namespace init
// when warren re-executed itself for that purpose, and never returns then.
// Otherwise it returns at once. Call it first thing in main (cmd/warren does
// it from an init function) and in TestMain of packages that use native.
func MaybeInit() {
	switch filepath.Base(os.Args[0]) {
	case initArg0:
		if err := runInit(); err != nil {
			fmt.Fprintln(os.Stderr, "warren-native-init:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case holdArg0:
		// Hold the user namespace until the parent closes our stdin.
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
}

// runInit is pid 1 of a workspace: it builds the sandbox's root, then forks
// one process per exec request until the control socket closes, at which
// point it exits and the kernel kills everything left in its pid namespace.
func runInit() error {
	const ctl = 3
	syscall.Umask(0o022)
	// Tell the host the runtime is up (a start failure before this point
	// shows as a missing "ready" with the init's stderr).
	if err := sendFds(ctl, []byte("ready"), nil); err != nil {
		return err
	}
	payload, files, err := recvFds(ctl, 16)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	closeAll(files)
	var setup setupMsg
	if err := json.Unmarshal(payload, &setup); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if err := buildRoot(setup); err != nil {
		sendFds(ctl, []byte("error: "+err.Error()), nil)
		return err
	}
	sp, err := newSpawner(setup.Security, setup.Landlock)
	if err != nil {
		sendFds(ctl, []byte("error: "+err.Error()), nil)
		return err
	}
	if err := sendFds(ctl, []byte("ok"), nil); err != nil {
		return err
	}

	in := &initState{waiters: map[int]chan syscall.WaitStatus{}, sp: sp}
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGCHLD)
	go in.reap(sigs)
	// The sandbox may signal its pid 1. Go's default handlers would exit on
	// TERM, INT, HUP ...; catching them (not SIG_IGN, which children would
	// inherit across exec) makes them no-ops.
	ignored := make(chan os.Signal, 16)
	signal.Notify(ignored, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGPROF,
		syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	go func() {
		for range ignored {
		}
	}()
	for {
		_, fds, err := recvFds(ctl, 16)
		if err != nil {
			return nil // host closed the control socket: workspace is going away
		}
		if len(fds) < 4 {
			closeAll(fds)
			continue
		}
		go in.serveExec(fds[0], fds[1], fds[2], fds[3], fds[4:])
	}
}

type initState struct {
	sp      *spawner // the confined thread that forks (harden.go)
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
}

// reap collects every child, including orphans reparented to pid 1, and
// hands the status of exec'd processes to their waiters. mu is held across
// wait4 so the reaper never takes the ptrace stop of a child that spawn
// (which holds mu) is still placing in its cgroups.
func (in *initState) reap(sigs chan os.Signal) {
	for range sigs {
		for {
			var ws syscall.WaitStatus
			in.mu.Lock()
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				in.mu.Unlock()
				break
			}
			ch := in.waiters[pid]
			delete(in.waiters, pid)
			in.mu.Unlock()
			if ch != nil {
				ch <- ws
			}
		}
	}
}

func (in *initState) serveExec(stdin, stdout, stderr, connF *os.File, procs []*os.File) {
	defer closeAll(procs)
	conn, err := net.FileConn(connF)
	connF.Close()
	if err != nil {
		closeAll([]*os.File{stdin, stdout, stderr})
		return
	}
	defer conn.Close()
	dec, enc := json.NewDecoder(conn), json.NewEncoder(conn)
	var req execRequest
	if err := dec.Decode(&req); err != nil {
		closeAll([]*os.File{stdin, stdout, stderr})
		return
	}
	path, status, err := lookPath(req.Path, req.Env)
	if err == nil && req.Dir != "" {
		if st, serr := os.Stat(req.Dir); serr != nil || !st.IsDir() {
			closeAll([]*os.File{stdin, stdout, stderr})
			if serr == nil {
				serr = syscall.ENOTDIR
			}
			enc.Encode(execStarted{Err: fmt.Sprintf("working directory %s: %v", req.Dir, errText(serr)), Status: 126})
			return
		}
	}
	var pid int
	ch := make(chan syscall.WaitStatus, 1)
	hold := make(chan struct{})
	if err == nil {
		pid, err = in.spawn(path, req, stdin, stdout, stderr, procs, ch, hold)
		status = execFailStatus(err)
	}
	closeAll([]*os.File{stdin, stdout, stderr})
	if err != nil {
		enc.Encode(execStarted{Err: fmt.Sprintf("%s: %v", req.Path, errText(err)), Status: status})
		return
	}
	if enc.Encode(execStarted{Pid: pid}) != nil {
		return
	}
	ws := <-ch
	close(hold) // the spawning thread may end now
	enc.Encode(execExited{WaitStatus: uint32(ws)})
}

// spawn starts the command and places it in the exec's cgroups (procs,
// one per hierarchy) before it runs its first instruction: the child is
// forked traced, so it stops right after execve; the init writes its pid
// into the cgroups and detaches. The init itself never enters the
// sandbox's cgroups: a child that filled the sandbox's pids or memory
// limit at once could otherwise fail the init's next thread creation (a
// fatal error in Go) or make it the OOM victim.
//
// The fork happens on the spawner's confined thread (harden.go), which
// stays this command's parent thread at least until hold is closed.
func (in *initState) spawn(path string, req execRequest, stdin, stdout, stderr *os.File, procs []*os.File, ch chan syscall.WaitStatus, hold <-chan struct{}) (int, error) {
	dir := req.Dir
	if dir == "" {
		dir = "/"
	}
	var pid int
	// ptrace requests must come from the tracer thread: all of it runs on
	// the confined one. (syscall.ForkExec forks with clone; options that
	// make Go use clone3, such as UseCgroupFD or PidFD, would meet the
	// filter's ENOSYS on this thread.)
	err := in.sp.confined(func() (err error) {
		in.mu.Lock() // held until the child is placed (see reap)
		defer in.mu.Unlock()
		pid, err = syscall.ForkExec(path, req.Args, &syscall.ProcAttr{
			Dir:   dir,
			Env:   req.Env,
			Files: []uintptr{stdin.Fd(), stdout.Fd(), stderr.Fd()},
			// A command whose stdin is a terminal (a pty from a terminal
			// session) gets it as its controlling terminal, so ^C, ^Z and
			// resizes reach it as signals.
			Sys: &syscall.SysProcAttr{Setsid: true, Ptrace: true, Setctty: isTerminal(stdin), Ctty: 0},
		})
		if err != nil {
			return
		}
		var ws syscall.WaitStatus
		if ws, err = waitPid(pid); err != nil {
			return
		}
		if !ws.Stopped() {
			ch <- ws // killed before it ran: that is how it ended
			return
		}
		id := []byte(strconv.Itoa(pid))
		for _, f := range procs {
			if _, werr := unix.Write(int(f.Fd()), id); werr != nil {
				syscall.Kill(pid, syscall.SIGKILL)
				syscall.PtraceDetach(pid)
				waitPid(pid)
				err = fmt.Errorf("cannot enter exec cgroup: %w", werr)
				return
			}
		}
		if err = syscall.PtraceDetach(pid); err != nil {
			syscall.Kill(pid, syscall.SIGKILL)
			waitPid(pid)
			err = fmt.Errorf("detach: %w", err)
			return
		}
		in.waiters[pid] = ch
		return nil
	}, hold)
	return pid, err
}

// waitPid waits for pid's next state change (a stop or its end).
func waitPid(pid int) (syscall.WaitStatus, error) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WALL, nil)
		if err == syscall.EINTR {
			continue
		}
		return ws, err
	}
}

// lookPath resolves a command name the way execvp does, inside the sandbox.
func lookPath(name string, env []string) (string, int, error) {
	if name == "" {
		return "", 127, syscall.ENOENT
	}
	if strings.Contains(name, "/") {
		return name, 0, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, 0, nil
		}
	}
	return "", 127, errors.New("command not found")
}

func execFailStatus(err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		return 127
	}
	return 126
}

func errText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}

// buildRoot turns the overlay at setup.Root into this mount namespace's
// root: private propagation, /proc for the new pid namespace, a minimal
// /dev, pivot_root, hostname, loopback up, no_new_privs and a non-dumpable
// init; in the default security mode also masked and read-only /proc paths.
func buildRoot(s setupMsg) error {
	root := s.Root
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if err := step("make / private", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")); err != nil {
		return err
	}
	// The overlay came from a more privileged mount namespace, so it is
	// locked; a bind of it onto itself is a mount pivot_root accepts.
	if err := step("bind root", unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, "")); err != nil {
		return err
	}
	mkdir := func(p string) { os.Mkdir(filepath.Join(root, p), 0o755) }
	mkdir("proc")
	// proc must be mounted while the host /proc is still visible, else the
	// kernel refuses it as "too revealing".
	if err := step("mount /proc", unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")); err != nil {
		return err
	}
	if s.Security == SecurityDefault {
		if err := hardenProc(filepath.Join(root, "proc")); err != nil {
			return err
		}
	}
	mkdir("dev")
	dev := filepath.Join(root, "dev")
	if err := step("mount /dev", unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=64k,nr_inodes=64")); err != nil {
		return err
	}
	for _, d := range s.Devices {
		p := filepath.Join(dev, filepath.Base(d))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		f.Close()
		if err := step("bind "+d, unix.Mount(d, p, "", unix.MS_BIND, "")); err != nil {
			return err
		}
	}
	os.Mkdir(filepath.Join(dev, "pts"), 0o755)
	if err := step("mount /dev/pts", unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")); err != nil {
		return err
	}
	os.Mkdir(filepath.Join(dev, "shm"), 0o1777)
	if err := step("mount /dev/shm", unix.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m")); err != nil {
		return err
	}
	for name, target := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("symlink /dev/%s: %w", name, err)
		}
	}
	// /dev itself is read-only from now on: the sandbox cannot plant nodes.
	if err := step("remount /dev read-only", unix.Mount("", dev, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, "")); err != nil {
		return err
	}
	if err := step("bind volumes", bindVolumes(root, s.Volumes)); err != nil {
		return err
	}
	if err := step("chdir root", unix.Chdir(root)); err != nil {
		return err
	}
	if err := step("pivot_root", unix.PivotRoot(".", ".")); err != nil {
		return err
	}
	if err := step("detach old root", unix.Unmount(".", unix.MNT_DETACH)); err != nil {
		return err
	}
	if err := step("chdir /", unix.Chdir("/")); err != nil {
		return err
	}
	if err := step("sethostname", unix.Sethostname([]byte(s.Hostname))); err != nil {
		return err
	}
	if err := loopbackUp(); err != nil {
		return err
	}
	// Not dumpable, in every security mode: sandbox processes (same uid)
	// can neither ptrace the init nor read its /proc/1/{mem,environ}; the
	// init holds cgroup.procs fds outside the sandbox's limits.
	if err := step("not dumpable", unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)); err != nil {
		return err
	}
	return step("no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// isTerminal reports whether f is a terminal (TCGETS succeeds).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
