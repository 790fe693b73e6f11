package native

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Security selects how tightly a workspace's processes are confined.
type Security int

const (
	// SecurityDefault: the seccomp filter (seccomp.go), Docker's default
	// capability set (bounding set too), masked and read-only /proc paths,
	// a non-dumpable init, and Landlock where the kernel has it
	// (landlock.go). At least as tight as a default Docker container.
	SecurityDefault Security = iota
	// SecurityRelaxed: no seccomp filter, no Landlock, every capability
	// inside the user namespace but CAP_SYS_PTRACE, /proc unmasked; for trusted images that need, e.g., nested
	// containers or mounts. The user namespace, the other namespaces,
	// cgroups and no_new_privs still hold.
	SecurityRelaxed
)

func (s Security) String() string {
	if s == SecurityRelaxed {
		return "relaxed"
	}
	return "default"
}

// WorkspaceOption changes how Runtime.Workspace builds a workspace.
type WorkspaceOption func(*workspaceOpts)

type workspaceOpts struct {
	security Security
}

// WithSecurity sets the workspace's security mode (default SecurityDefault).
func WithSecurity(s Security) WorkspaceOption { return func(o *workspaceOpts) { o.security = s } }

// dockerCaps is Docker's default capability set (CapEff 00000000a80425fb):
// CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP,
// NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD, AUDIT_WRITE, SETFCAP. They
// are capabilities over the sandbox's own user namespace; SYS_ADMIN,
// NET_ADMIN, SYS_PTRACE, SYS_MODULE, SYS_TIME, SYS_BOOT ... are gone.
const dockerCaps uint64 = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER |
	1<<unix.CAP_FSETID | 1<<unix.CAP_KILL | 1<<unix.CAP_SETGID | 1<<unix.CAP_SETUID |
	1<<unix.CAP_SETPCAP | 1<<unix.CAP_NET_BIND_SERVICE | 1<<unix.CAP_NET_RAW |
	1<<unix.CAP_SYS_CHROOT | 1<<unix.CAP_MKNOD | 1<<unix.CAP_AUDIT_WRITE | 1<<unix.CAP_SETFCAP

// dropCaps reduces the calling thread's bounding, permitted, effective and
// inheritable sets to keep and clears its ambient set. Capabilities are
// per thread: children forked from this thread inherit exactly these, and
// a root process they exec gets the bounding set, i.e. keep.
func dropCaps(keep uint64) error {
	for c := 0; c < 64; c++ {
		if keep&(1<<c) != 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the kernel's last capability
			}
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := [2]unix.CapUserData{
		{Effective: uint32(keep), Permitted: uint32(keep)},
		{Effective: uint32(keep >> 32), Permitted: uint32(keep >> 32)},
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// runc's default masked and read-only paths. Masked files get /dev/null
// bound over them, masked directories an empty read-only tmpfs; read-only
// paths are bound onto themselves read-only. The last two masks go beyond
// runc: the host's core dump handler and module loader paths are nobody's
// business inside.
var (
	procReadOnly = []string{"bus", "fs", "irq", "sys", "sysrq-trigger"}
	procMasked   = []string{"acpi", "asound", "kcore", "keys", "latency_stats", "timer_list",
		"timer_stats", "sched_debug", "scsi", "sys/kernel/core_pattern", "sys/kernel/modprobe"}
)

// hardenProc applies the read-only paths and masks to the /proc mounted
// at proc (read-only first: a read-only bind of /proc/sys would otherwise
// cover the masks under it). Paths the kernel does not have are skipped.
func hardenProc(proc string) error {
	for _, p := range procReadOnly {
		path := filepath.Join(proc, p)
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind /proc/%s: %w", p, err)
		}
		if err := unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("make /proc/%s read-only: %w", p, err)
		}
	}
	for _, p := range procMasked {
		path := filepath.Join(proc, p)
		st, err := os.Lstat(path)
		if err != nil {
			continue
		}
		if st.IsDir() {
			err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=0,mode=0555")
		} else {
			err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
		}
		if err != nil {
			return fmt.Errorf("mask /proc/%s: %w", p, err)
		}
	}
	return nil
}

// spawner confines and forks sandbox processes. Seccomp filters,
// capabilities and Landlock domains belong to a thread, and Go gives no
// portable way to change them on all of a process's threads (with cgo,
// AllThreadsSyscall is unavailable), so the init confines one locked OS
// thread and forks only from it; its other threads stay unconfined. Go
// never creates new threads from a locked thread (it hands that to a
// template thread), so the confinement stays on that thread and its
// children.
//
// The Landlock ruleset names /dev's device nodes (landlock.go). A
// confined thread serves every exec while the listing it was built for
// holds; when it changes, the next
// exec gets a new thread confined for the new listing, and the old one
// ends (never unlocked, so Go ends the OS thread) once the commands it
// forked have exited: it is their parent thread, and PR_SET_PDEATHSIG
// fires when a parent thread exits.
type spawner struct {
	prog     []unix.SockFilter // seccomp program; nil: relaxed
	landlock int               // Landlock ABI to use; 0: none
	mu       sync.Mutex
	cur      *confThread
}

// confThread is one confined thread.
type confThread struct {
	key     string      // the root listing it was confined for
	work    chan func() // closed when it is retired and idle
	live    int         // execs using it: spawning or running (under spawner.mu)
	retired bool
}

// newSpawner prepares the confinement of sec (with Landlock at ABI
// landlock, 0 for none) and confines the first thread, so a host that
// cannot apply it fails the workspace at creation rather than at its
// first exec.
func newSpawner(sec Security, landlock int) (*spawner, error) {
	sp := &spawner{}
	if sec == SecurityDefault {
		a, err := hostSeccompArch()
		if err != nil {
			return nil, err
		}
		if sp.prog, err = seccompFilter(a); err != nil {
			return nil, err
		}
		sp.landlock = landlock
	}
	t, err := sp.acquire()
	if err != nil {
		return nil, err
	}
	sp.release(t)
	return sp, nil
}

// confined runs f on a confined thread. When f succeeds the thread stays
// in use until hold is closed (after the command f forked has ended).
func (sp *spawner) confined(f func() error, hold <-chan struct{}) error {
	t, err := sp.acquire()
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	t.work <- func() { errc <- f() }
	if err := <-errc; err != nil {
		sp.release(t)
		return err
	}
	go func() { <-hold; sp.release(t) }()
	return nil
}

// acquire returns the thread for the root as it is now, confining a new
// one if the listing changed.
func (sp *spawner) acquire() (*confThread, error) {
	var devs []string
	var key string
	if sp.landlock > 0 {
		var err error
		if devs, key, err = llDevs(); err != nil {
			return nil, fmt.Errorf("landlock: %w", err)
		}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.cur != nil && sp.cur.key == key {
		sp.cur.live++
		return sp.cur, nil
	}
	t := &confThread{key: key, work: make(chan func())}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		err := sp.confineThread(devs)
		ready <- err
		if err != nil {
			return
		}
		for f := range t.work {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("cannot confine the exec thread: %w", err)
	}
	if old := sp.cur; old != nil {
		old.retired = true
		if old.live == 0 {
			close(old.work)
		}
	}
	t.live = 1
	sp.cur = t
	return t, nil
}

func (sp *spawner) release(t *confThread) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	t.live--
	if t.retired && t.live == 0 {
		close(t.work)
	}
}

// confineThread sets no_new_privs, drops capabilities and applies
// Landlock for the device nodes devs and the seccomp program (relaxed: only
// no_new_privs and every capability but CAP_SYS_PTRACE) on the calling
// thread.
func (sp *spawner) confineThread(devs []string) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if sp.prog == nil {
		// Even relaxed, no CAP_SYS_PTRACE: with it a sandbox process could
		// attach to the (non-dumpable) init, which holds cgroup.procs fds
		// outside the sandbox's limits.
		return dropCaps(^uint64(0) &^ (1 << unix.CAP_SYS_PTRACE))
	}
	if err := dropCaps(dockerCaps); err != nil {
		return err
	}
	if sp.landlock > 0 {
		if err := restrictLandlock(sp.landlock, devs); err != nil {
			return err
		}
	}
	return installSeccomp(sp.prog)
}
