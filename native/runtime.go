// Package native is warren's native tier: it runs real Linux ELF binaries
// over exactly the files a sandbox sees. Per sandbox it keeps a workspace: a
// tmpfs (sized to the disk quota) holding an overlay's upper and work
// directories, an overlay with the kernel-mounted EROFS base image as lower
// (idmapped, shared by all workspaces of that image), and a long-lived init
// process, pid 1 of new user, mount, pid, ipc, uts, net and cgroup
// namespaces, pivoted into the overlay. Each exec is a child of that init,
// born in its own cgroup (memory, CPU, pids limits; CPU time and OOM kills
// read back from it). Root inside maps to an unprivileged host uid range, so
// a process that escapes its mounts is nobody on the host; in the default
// security mode sandbox processes also run under a seccomp allowlist with
// Docker's default capabilities, a masked /proc and, where the kernel has
// it, Landlock (harden.go, seccomp.go, landlock.go).
//
// The sandbox's vfs delta is brought into the overlay before each exec, and
// what the exec changed is harvested back into the vfs after it (sync.go);
// the trees mounted into the vfs (volumes) the same way, each into a tmpfs
// of its own bound at its mount path (volumes.go).
//
// The binary must call MaybeInit first thing in main (and tests in
// TestMain): the init is warren re-executed with a marker argv[0].
package native

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/native/imagemount"
	"golang.org/x/sys/unix"
)

// Config configures a node's native runtime.
type Config struct {
	// RunDir holds image mounts and workspaces; everything below it belongs
	// to the runtime and is removed at start-up. Default /run/warren/native.
	RunDir string
	// CgroupName names warren's parent cgroup, created under this process's
	// own cgroup in each hierarchy used. Everything below it is removed at
	// start-up, so it must belong to this RunDir alone: the default is
	// "warren" for the default RunDir, else "warren-" + a hash of RunDir.
	CgroupName string
	// UIDBase and UIDCount are the host uid/gid range that ids 0..UIDCount-1
	// inside a sandbox map to. Default 100000 and 65536.
	UIDBase, UIDCount uint32
	// InitPath is the binary re-executed as a workspace's init; it must call
	// MaybeInit. Default /proc/self/exe.
	InitPath string
	// Defaults apply to every workspace where its Limits leave a field zero.
	Defaults Limits
	// Logger gets the runtime's start-up facts (the Landlock ABI level, or
	// why Landlock is off). Default: discard.
	Logger *slog.Logger
}

// Default native limits of a workspace whose Limits and the runtime's
// Config.Defaults leave them zero. Memory counts what the sandbox's
// processes write into the workspace's tmpfs too, so it is the disk quota
// plus 1 GiB to work in; 1024 processes and threads leave room for
// parallel builds and thread pools and stop a fork bomb within a second.
// warren run, the API and the Go library should share these values.
const (
	DefaultMemory int64 = 2 << 30
	DefaultPids   int64 = 1024
	DefaultDisk   int64 = 1 << 30
)

// Limits bound a workspace or one exec. Zero fields mean "inherit" (an exec
// inherits its workspace's, a workspace the runtime's defaults) and, at the
// end of the chain, DefaultMemory, DefaultPids and DefaultDisk; CPUs and
// Timeout are unlimited unless set. A default is lifted by a larger value.
type Limits struct {
	Memory  int64         // bytes of memory (RSS + page cache + tmpfs); no swap
	CPUs    float64       // CPU quota in cores, e.g. 0.5
	Pids    int64         // processes and threads
	Disk    int64         // bytes of the workspace's tmpfs (the upper layer)
	Timeout time.Duration // wall clock per exec
}

func (l Limits) or(d Limits) Limits {
	if l.Memory == 0 {
		l.Memory = d.Memory
	}
	if l.CPUs == 0 {
		l.CPUs = d.CPUs
	}
	if l.Pids == 0 {
		l.Pids = d.Pids
	}
	if l.Disk == 0 {
		l.Disk = d.Disk
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// Runtime is the native tier of one node.
type Runtime struct {
	cfg       Config
	unavail   error // why native execution is unavailable (nil: available)
	cg        *cgroups
	images    *imagemount.Table
	lock      *os.File // flock on RunDir/lock: one runtime per run dir
	usernsFD  int
	mapKey    string
	devices   []string
	landlock  int   // Landlock ABI used in the default security mode; 0: none
	noLL      error // why Landlock is off
	mu        sync.Mutex
	spaces    map[*Workspace]struct{}
	seq       uint64
	closed    bool
	closeOnce sync.Once
}

// NewRuntime prepares the node: it takes the run directory, cleans what a
// previous process left (mounts under RunDir, cgroups under warren's
// parent), detects cgroups and creates a user namespace for idmapping.
// When the host cannot run native commands it still returns a Runtime whose
// Available reports why, so callers can print a precise message.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	const defaultRunDir = "/run/warren/native"
	if cfg.RunDir == "" {
		cfg.RunDir = defaultRunDir
	}
	if cfg.CgroupName == "" {
		cfg.CgroupName = "warren"
		if filepath.Clean(cfg.RunDir) != defaultRunDir {
			sum := sha256.Sum256([]byte(filepath.Clean(cfg.RunDir)))
			cfg.CgroupName = "warren-" + hex.EncodeToString(sum[:4])
		}
	}
	if cfg.UIDBase == 0 {
		cfg.UIDBase = 100000
	}
	if cfg.UIDCount == 0 {
		cfg.UIDCount = 65536
	}
	if cfg.InitPath == "" {
		cfg.InitPath = "/proc/self/exe"
	}
	if cfg.Defaults.Disk == 0 {
		cfg.Defaults.Disk = DefaultDisk
	}
	if cfg.Defaults.Memory == 0 {
		cfg.Defaults.Memory = DefaultMemory
	}
	if cfg.Defaults.Pids == 0 {
		cfg.Defaults.Pids = DefaultPids
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if !filepath.IsAbs(cfg.RunDir) {
		return nil, fmt.Errorf("native: run dir %q is not absolute", cfg.RunDir)
	}
	if strings.ContainsAny(cfg.CgroupName, "/\x00") || cfg.CgroupName == "." || cfg.CgroupName == ".." {
		return nil, fmt.Errorf("native: cgroup name %q must be a single path element", cfg.CgroupName)
	}
	r := &Runtime{cfg: cfg, usernsFD: -1, spaces: map[*Workspace]struct{}{}}
	r.mapKey = fmt.Sprintf("0:%d:%d", cfg.UIDBase, cfg.UIDCount)
	if err := r.start(ctx); err != nil {
		r.unavail = err
		r.release()
	}
	return r, nil
}

func (r *Runtime) start(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return errors.New("native: unavailable: warren is not running as root (needed for mounts, cgroups and user namespaces)")
	}
	if err := os.MkdirAll(r.cfg.RunDir, 0o711); err != nil {
		return fmt.Errorf("native: unavailable: cannot create run dir: %w", err)
	}
	// Workspace inits run as the mapped uid and reach their overlay through
	// RunDir: every directory on the way must be searchable by others.
	for d := r.cfg.RunDir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("native: unavailable: %s (on the way to run dir %s) is not searchable by other users (mode %v)", d, r.cfg.RunDir, st.Mode().Perm())
		}
		if d == "/" {
			break
		}
	}
	lock, err := os.OpenFile(filepath.Join(r.cfg.RunDir, "lock"), os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("native: unavailable: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return fmt.Errorf("native: unavailable: run dir %s is in use by another warren process: %w", r.cfg.RunDir, err)
	}
	r.lock = lock
	cg, err := detectCgroups(r.cfg.CgroupName)
	if err != nil {
		return fmt.Errorf("native: unavailable: %w", err)
	}
	r.cg = cg
	// Start-up cleanup: whatever a crashed predecessor left. Processes first
	// (they pin mounts), then mounts, then directories and cgroups.
	for _, child := range cg.children() {
		cg.kill(child)
		if err := cg.remove(child); err != nil {
			return fmt.Errorf("native: unavailable: stale state: %w", err)
		}
	}
	for _, sub := range []string{"ws", "images"} {
		dir := filepath.Join(r.cfg.RunDir, sub)
		if err := os.MkdirAll(dir, 0o711); err != nil {
			return fmt.Errorf("native: unavailable: %w", err)
		}
		if sub == "ws" {
			if err := imagemount.UnmountUnder(dir, false); err != nil {
				return fmt.Errorf("native: unavailable: stale state: %w", err)
			}
			if err := imagemount.CleanDir(dir); err != nil {
				return fmt.Errorf("native: unavailable: stale state: %w", err)
			}
		}
	}
	r.images, err = imagemount.New(filepath.Join(r.cfg.RunDir, "images"))
	if err != nil {
		return fmt.Errorf("native: unavailable: %w", err)
	}
	r.usernsFD, err = r.newUserns(ctx)
	if err != nil {
		return fmt.Errorf("native: unavailable: cannot create a user namespace: %w", err)
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		p := "/dev/" + d
		if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			r.devices = append(r.devices, p)
		}
	}
	// Landlock is best effort: a kernel without it still gets seccomp,
	// capabilities and the masks.
	if r.landlock, r.noLL = landlockABI(); r.noLL != nil {
		r.cfg.Logger.Warn("native: Landlock off, sandbox writes are confined by mounts only", "reason", r.noLL.Error())
	} else {
		r.cfg.Logger.Info("native: Landlock on", "abi", r.landlock)
	}
	return nil
}

// Landlock reports the Landlock ABI version that confines the writes of
// workspaces in the default security mode, or 0 and why Landlock is off.
func (r *Runtime) Landlock() (abi int, off error) {
	if r.landlock == 0 && r.noLL == nil {
		return 0, errors.New("native runtime unavailable")
	}
	return r.landlock, r.noLL
}

func (r *Runtime) idMaps() ([]syscall.SysProcIDMap, []syscall.SysProcIDMap) {
	m := []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(r.cfg.UIDBase), Size: int(r.cfg.UIDCount)}}
	return m, m
}

// newUserns returns an fd of a user namespace with the runtime's mapping,
// held by a short-lived child (the mapping outlives it through the fd).
func (r *Runtime) newUserns(ctx context.Context) (int, error) {
	uids, gids := r.idMaps()
	cmd := exec.CommandContext(ctx, r.cfg.InitPath)
	cmd.Args = []string{holdArg0}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: uids, GidMappings: gids,
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	return fd, nil
}

// Available returns nil when native execution works on this node, else an
// error that says why (not root, cgroup controllers missing ...).
func (r *Runtime) Available() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("native: unavailable: runtime closed")
	}
	return r.unavail
}

// Close tears down every workspace, unmounts every image and removes
// warren's cgroups.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	spaces := make([]*Workspace, 0, len(r.spaces))
	for w := range r.spaces {
		spaces = append(spaces, w)
	}
	r.mu.Unlock()
	var errs []error
	for _, w := range spaces {
		errs = append(errs, w.Close())
	}
	r.closeOnce.Do(func() { errs = append(errs, r.release()) })
	return errors.Join(errs...)
}

func (r *Runtime) release() error {
	var errs []error
	if r.cfg.RunDir != "" && r.lock != nil {
		errs = append(errs, imagemount.UnmountUnder(filepath.Join(r.cfg.RunDir, "ws"), true))
	}
	if r.images != nil {
		errs = append(errs, r.images.Close())
	}
	if r.usernsFD >= 0 {
		unix.Close(r.usernsFD)
		r.usernsFD = -1
	}
	if r.cg != nil {
		for _, child := range r.cg.children() {
			r.cg.kill(child)
			errs = append(errs, r.cg.remove(child))
		}
		for _, h := range r.cg.hier {
			if err := syscall.Rmdir(h.parent); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("native: cannot remove cgroup %s: %w", h.parent, err))
			}
		}
	}
	if r.lock != nil {
		r.lock.Close()
		r.lock = nil
	}
	return errors.Join(errs...)
}

// CgroupInfo describes the hierarchies the runtime uses (for diagnostics).
func (r *Runtime) CgroupInfo() string {
	if r.cg == nil {
		return "none"
	}
	return r.cg.String()
}
