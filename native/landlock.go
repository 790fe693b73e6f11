package native

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is defense in depth under the mounts and the seccomp filter: in
// the default security mode every exec runs in a Landlock domain in which
// the sandbox may read, execute and write its own files anywhere ("/" is
// granted everything but device rights), while creating device nodes and
// ioctls on devices other than the ones listed in /dev (and /dev/pts) are
// refused with EACCES even if a mount or capability were to leak.
//
// Why not narrower: Landlock only grants, and a grant on a directory covers
// everything beneath it across mount points. Granting writes only beneath
// the root's top-level entries kept /proc unwritable, but then a native
// command could not create a file in "/" (gcc with a cwd of /) and a
// top-level directory it made (python3 -m venv /venv) became writable only
// from the next exec on: a surprise agents would hit, for little gain,
// since /proc/sys, /proc/sysrq-trigger and the rest are already read-only
// or masked mounts (security.go) and the user namespace owns nothing else
// there. The ruleset names each device node, so the spawner (harden.go)
// confines a new thread when /dev's listing changes.
//
// Why our own three syscalls rather than github.com/landlock-lsm/go-landlock:
// its Restrict functions confine every thread of the process (through
// libcap's psx, which wraps pthread_create in cgo binaries), and the init
// confines only the threads it forks from and stays unconfined itself. The
// kernel interface is three syscalls and a bitmask per ABI version.

// Filesystem access rights by the ABI version that introduced them.
const (
	llRead     = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llWrite    = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	llDirOps   = unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE
	llMakeNode = unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK
	llMakeDev  = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
	llV1       = llRead | llWrite | llDirOps | llMakeNode | llMakeDev
	llRefer    = unix.LANDLOCK_ACCESS_FS_REFER     // ABI 2
	llTruncate = unix.LANDLOCK_ACCESS_FS_TRUNCATE  // ABI 3
	llIoctlDev = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV // ABI 5
	// Rights that make sense on a file (the kernel refuses directory
	// rights in a rule on a file).
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | llWrite | llTruncate | llIoctlDev
)

// llMinABI is the oldest ABI used: ABI 1 refuses every rename and link
// across directories (EXDEV) under any ruleset, which would break git,
// package managers and most builds.
const llMinABI = 2

// llHandled is what a ruleset handles (restricts) at an ABI version.
// LANDLOCK_ACCESS_FS_RESOLVE_UNIX (connecting to path-named sockets) is
// left unhandled: sandbox programs talk to their own servers that way.
func llHandled(abi int) uint64 {
	h := uint64(llV1)
	if abi >= 2 {
		h |= llRefer
	}
	if abi >= 3 {
		h |= llTruncate
	}
	if abi >= 5 {
		h |= llIoctlDev
	}
	return h
}

// landlockABI reports the kernel's Landlock ABI version, or 0 and why it
// cannot be used.
func landlockABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case e == unix.ENOSYS:
		return 0, errors.New("the kernel was built without Landlock (CONFIG_SECURITY_LANDLOCK)")
	case e == unix.EOPNOTSUPP:
		return 0, errors.New("Landlock is not enabled at boot (add landlock to the lsm= kernel parameter)")
	case e != 0:
		return 0, fmt.Errorf("landlock_create_ruleset(version): %w", e)
	case int(v) < llMinABI:
		return 0, fmt.Errorf("Landlock ABI %d is too old (renames across directories are refused before ABI %d)", v, llMinABI)
	}
	return int(v), nil
}

// llRule grants access beneath path (a directory) or on it (a file).
type llRule struct {
	path   string
	access uint64
}

// llPlan is the ruleset at abi: which rights it handles and the rules
// that grant some of them back. devs names the device nodes in /dev.
func llPlan(abi int, devs []string) (handled uint64, rules []llRule) {
	handled = llHandled(abi)
	own := handled &^ (llMakeDev | llIoctlDev) // the sandbox's own files: all but device nodes
	// Everything but device nodes everywhere, "/" included, as in a Docker
	// container: a rule on "/" also covers /proc (Landlock only grants,
	// and a grant covers what is beneath), but refusing writes in "/"
	// broke `gcc` in a cwd of / and `python3 -m venv /venv` (a top-level
	// directory made by a native command was writable only from the next
	// command on). /proc/sys and the rest are already read-only mounts.
	rules = append(rules, llRule{"/", own})
	rules = append(rules, llRule{"/dev/shm", own}, llRule{"/dev/pts", handled & (llRead | llWrite | llTruncate | llIoctlDev)})
	for _, d := range devs {
		rules = append(rules, llRule{"/dev/" + d, handled & (unix.LANDLOCK_ACCESS_FS_READ_FILE | llWrite | llTruncate | llIoctlDev)})
	}
	for i := range rules {
		rules[i].access &= handled
	}
	return handled, rules
}

// llDevs lists /dev's device nodes and returns a key that changes when
// any of them changes (name, inode): the ruleset names each one.
func llDevs() ([]string, string, error) {
	var key strings.Builder
	var devs []string
	des, err := os.ReadDir("/dev")
	if err != nil {
		return nil, "", fmt.Errorf("list /dev: %w", err)
	}
	for _, d := range des {
		// The nodes are host devices bound over placeholder files:
		// readdir shows the placeholder, stat the device.
		var st unix.Stat_t
		if unix.Stat("/dev/"+d.Name(), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
			devs = append(devs, d.Name())
			fmt.Fprintf(&key, "dev %q %d\n", d.Name(), st.Ino)
		}
	}
	return devs, key.String(), nil
}

// llRulesetAttr is struct landlock_ruleset_attr up to handled_access_fs
// (the kernel takes a shorter struct as zeros beyond it).
type llRulesetAttr struct{ handledFS uint64 }

// llPathBeneath is struct landlock_path_beneath_attr (packed: 12 bytes).
type llPathBeneath struct {
	allowed  uint64
	parentFD int32
}

// restrictLandlock confines the calling thread (and what it forks) to the
// exec ruleset of llPlan at abi for the device nodes devs. It needs
// no_new_privs on the thread.
func restrictLandlock(abi int, devs []string) error {
	fd, err := llRuleset(abi, devs)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}

// llRuleset creates the ruleset of llPlan and returns its fd.
func llRuleset(abi int, devs []string) (int, error) {
	handled, rules := llPlan(abi, devs)
	attr := llRulesetAttr{handledFS: handled}
	rfd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	for _, r := range rules {
		if err := llAddRule(int(rfd), r); err != nil {
			unix.Close(int(rfd))
			return -1, err
		}
	}
	return int(rfd), nil
}

func llAddRule(rfd int, r llRule) error {
	// O_NOFOLLOW: a rule must land on the entry listed, never on where a
	// symlink the sandbox planted points.
	fd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil // removed since it was listed, or a device this host lacks
	}
	if err != nil {
		return fmt.Errorf("landlock: open %s: %w", r.path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock: stat %s: %w", r.path, err)
	}
	access := r.access
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		return nil // replaced by a symlink since it was listed
	default:
		access &= llFileRights
	}
	if access == 0 {
		return nil
	}
	pb := llPathBeneath{allowed: access, parentFD: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&pb)), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", filepath.Clean(r.path), e)
	}
	return nil
}
