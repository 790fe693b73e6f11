package native

//go:generate go run gen_sysnum.go

import (
	"fmt"
	"runtime"
	"sort"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of sandbox processes: default deny (EPERM) with the
// allowlist of Docker's default profile (github.com/moby/profiles/seccomp)
// for a container without CAP_SYS_ADMIN, compiled here to classic BPF.
//
// Why a small generator of our own rather than libseccomp (cgo) or a BPF
// library: the profile is one allowlist plus four argument rules, the
// program is ~100 instructions, and writing it directly keeps the init free
// of cgo and new dependencies; seccomp_test.go runs the generated programs
// for both arches in an interpreter, and the kernel verifies the amd64 one
// whenever a workspace starts.
//
// What it refuses that the issue names (all are outside Docker's default
// allowlist, or only in its CAP_SYS_ADMIN/CAP_SYS_* sections, which a
// sandbox never has): io_uring_*, keyctl/add_key/request_key,
// perf_event_open, bpf, userfaultfd, kexec_*, *_module, open_by_handle_at,
// mount/umount2/pivot_root/move_mount/fsopen/fsmount/fspick/fsconfig/
// open_tree/mount_setattr, unshare, setns, clone with namespace flags,
// personality except the standard values, syslog, acct, swapon/swapoff,
// reboot, settimeofday/clock_settime, iopl/ioperm, quotactl, sethostname.
// Refused calls return EPERM, not a kill, so programs that probe for
// features carry on; clone3 returns ENOSYS as in Docker, because its flags
// live in memory seccomp cannot read, and glibc then falls back to clone.
//
// Stricter than Docker: socket(AF_VSOCK) and socket(AF_ALG) are refused
// (host/VM sockets and the kernel crypto API, as current moby profiles do),
// and syscalls of another ABI (i386 via int 0x80, x32) are not allowed: a
// foreign arch kills the process with SIGSYS, an x32 number is refused.
//
// ptrace, process_vm_readv and process_vm_writev stay allowed (as in Docker
// on kernels >= 4.8, where seccomp rechecks after a tracer changes a
// syscall): strace and gdb work on the sandbox's own processes. They cannot
// reach anything else: the pid namespace holds only the sandbox, the init
// (pid 1) is not dumpable, and no sandbox process has CAP_SYS_PTRACE.

// seccompAllow is Docker's unconditional allowlist (moby/profiles default
// profile, plus the ptrace group it allows from kernel 4.8 and chroot,
// allowed with CAP_SYS_CHROOT, which the default capabilities keep). Names
// an arch does not have are skipped for it.
var seccompAllow = []string{
	"accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk", "cachestat", "capget", "capset",
	"chdir", "chmod", "chown", "chown32", "chroot", "clock_adjtime", "clock_adjtime64", "clock_getres",
	"clock_getres_time64", "clock_gettime", "clock_gettime64", "clock_nanosleep", "clock_nanosleep_time64",
	"close", "close_range", "connect", "copy_file_range", "creat", "dup", "dup2", "dup3",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait", "epoll_pwait2",
	"epoll_wait", "epoll_wait_old", "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group",
	"faccessat", "faccessat2", "fadvise64", "fadvise64_64", "fallocate", "fanotify_mark", "fchdir",
	"fchmod", "fchmodat", "fchmodat2", "fchown", "fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync",
	"fgetxattr", "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstat64",
	"fstatat64", "fstatfs", "fstatfs64", "fsync", "ftruncate", "ftruncate64", "futex", "futex_requeue",
	"futex_time64", "futex_wait", "futex_waitv", "futex_wake", "futimesat", "getcpu", "getcwd",
	"getdents", "getdents64", "getegid", "getegid32", "geteuid", "geteuid32", "getgid", "getgid32",
	"getgroups", "getgroups32", "getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
	"getpriority", "getrandom", "getresgid", "getresgid32", "getresuid", "getresuid32", "getrlimit",
	"get_robust_list", "getrusage", "getsid", "getsockname", "getsockopt", "get_thread_area", "gettid",
	"gettimeofday", "getuid", "getuid32", "getxattr", "getxattrat", "inotify_add_watch", "inotify_init",
	"inotify_init1", "inotify_rm_watch", "io_cancel", "ioctl", "io_destroy", "io_getevents",
	"io_pgetevents", "io_pgetevents_time64", "ioprio_get", "ioprio_set", "io_setup", "io_submit", "ipc",
	"kill", "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "lchown",
	"lchown32", "lgetxattr", "link", "linkat", "listen", "listmount", "listxattr", "listxattrat",
	"llistxattr", "_llseek", "lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64", "madvise",
	"map_shadow_stack", "membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat",
	"mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mmap2", "mprotect", "mq_getsetattr",
	"mq_notify", "mq_open", "mq_timedreceive", "mq_timedreceive_time64", "mq_timedsend",
	"mq_timedsend_time64", "mq_unlink", "mremap", "mseal", "msgctl", "msgget", "msgrcv", "msgsnd",
	"msync", "munlock", "munlockall", "munmap", "name_to_handle_at", "nanosleep", "newfstatat",
	"_newselect", "open", "openat", "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe",
	"pipe2", "pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "ppoll_time64", "prctl",
	"pread64", "preadv", "preadv2", "prlimit64", "process_mrelease", "process_vm_readv",
	"process_vm_writev", "pselect6", "pselect6_time64", "ptrace", "pwrite64", "pwritev", "pwritev2",
	"read", "readahead", "readlink", "readlinkat", "readv", "recv", "recvfrom", "recvmmsg",
	"recvmmsg_time64", "recvmsg", "remap_file_pages", "removexattr", "removexattrat", "rename",
	"renameat", "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction", "rt_sigpending",
	"rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
	"rt_sigtimedwait_time64", "rt_tgsigqueueinfo", "sched_getaffinity", "sched_getattr",
	"sched_getparam", "sched_get_priority_max", "sched_get_priority_min", "sched_getscheduler",
	"sched_rr_get_interval", "sched_rr_get_interval_time64", "sched_setaffinity", "sched_setattr",
	"sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select", "semctl", "semget",
	"semop", "semtimedop", "semtimedop_time64", "send", "sendfile", "sendfile64", "sendmmsg", "sendmsg",
	"sendto", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid", "setgid32", "setgroups",
	"setgroups32", "setitimer", "setpgid", "setpriority", "setregid", "setregid32", "setresgid",
	"setresgid32", "setresuid", "setresuid32", "setreuid", "setreuid32", "setrlimit", "set_robust_list",
	"setsid", "setsockopt", "set_thread_area", "set_tid_address", "setuid", "setuid32", "setxattr",
	"setxattrat", "shmat", "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd",
	"signalfd4", "sigprocmask", "sigreturn", "socketcall", "socketpair", "splice", "stat", "stat64",
	"statfs", "statfs64", "statmount", "statx", "symlink", "symlinkat", "sync", "sync_file_range",
	"syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_gettime64", "timer_settime", "timer_settime64", "timerfd_create",
	"timerfd_gettime", "timerfd_gettime64", "timerfd_settime", "timerfd_settime64", "times", "tkill",
	"truncate", "truncate64", "ugetrlimit", "umask", "uname", "unlink", "unlinkat", "uretprobe", "utime",
	"utimensat", "utimensat_time64", "utimes", "vfork", "vmsplice", "wait4", "waitid", "waitpid",
	"write", "writev",
}

// Argument rules. Each compares the low 32 bits of argument 0: the kernel
// truncates these arguments to int/unsigned int (clone's namespace flags
// are all in the low word), so the high word cannot smuggle a value past.
const (
	// cloneNSFlags: CLONE_NEWNS|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWCGROUP.
	cloneNSFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
		unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP
)

// personalityAllowed are the personas Docker allows: PER_LINUX,
// PER_LINUX32, UNAME26, UNAME26|PER_LINUX32 and 0xffffffff (query only).
// ADDR_NO_RANDOMIZE (what setarch -R uses to turn ASLR off) is not among them.
var personalityAllowed = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// socketRefused are address families refused even though socket is allowed.
var socketRefused = []uint32{unix.AF_VSOCK, unix.AF_ALG}

// seccompArch is what the generator needs to know about one ABI.
type seccompArch struct {
	name  string
	audit uint32            // AUDIT_ARCH_* the kernel reports in seccomp_data.arch
	nums  map[string]uint32 // syscall numbers
	extra []string          // arch-specific allowed syscalls (Docker's per-arch sections)
}

var (
	seccompAMD64 = seccompArch{name: "amd64", audit: unix.AUDIT_ARCH_X86_64, nums: sysnumAMD64,
		extra: []string{"arch_prctl", "modify_ldt"}}
	seccompARM64 = seccompArch{name: "arm64", audit: unix.AUDIT_ARCH_AARCH64, nums: sysnumARM64,
		extra: []string{"arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint", "cacheflush", "set_tls"}}
)

// Return values (linux/seccomp.h).
const (
	secRetKillProcess = 0x80000000
	secRetErrno       = 0x00050000
	secRetAllow       = 0x7fff0000
)

// seccomp_data offsets: nr, arch, instruction pointer, then six u64 args
// (little-endian on both arches here, so an arg's low word comes first).
const (
	offNr      = 0
	offArch    = 4
	offArg0Low = 16
)

// insn is one BPF instruction with symbolic jump targets, resolved by asm.
type insn struct {
	code   uint16
	k      uint32
	jt, jf string // labels ("" for conditional: next instruction)
	label  string // this instruction's label
}

// bpfProgram assembles insns, resolving labels to relative offsets; classic
// BPF conditional jumps reach at most 255 instructions ahead.
func bpfProgram(ins []insn) ([]unix.SockFilter, error) {
	at := map[string]int{}
	for i, in := range ins {
		if in.label != "" {
			if _, dup := at[in.label]; dup {
				return nil, fmt.Errorf("seccomp: duplicate label %s", in.label)
			}
			at[in.label] = i
		}
	}
	off := func(i int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		t, ok := at[label]
		if !ok {
			return 0, fmt.Errorf("seccomp: undefined label %s", label)
		}
		d := t - i - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("seccomp: jump from %d to %s (%d) out of range", i, label, t)
		}
		return uint8(d), nil
	}
	out := make([]unix.SockFilter, len(ins))
	for i, in := range ins {
		jt, err := off(i, in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := off(i, in.jf)
		if err != nil {
			return nil, err
		}
		out[i] = unix.SockFilter{Code: in.code, Jt: jt, Jf: jf, K: in.k}
	}
	if len(out) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: program of %d instructions is too long", len(out))
	}
	return out, nil
}

func ldAbs(off uint32) insn { return insn{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off} }
func ret(v uint32) insn     { return insn{code: unix.BPF_RET | unix.BPF_K, k: v} }
func jeq(k uint32, jt, jf string) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jge(k uint32, jt, jf string) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jset(k uint32, jt, jf string) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func labeled(l string, in insn) insn { in.label = l; return in }

// seccompFilter generates the sandbox filter for arch.
func seccompFilter(a seccompArch) ([]unix.SockFilter, error) {
	num := func(name string) (uint32, bool) { n, ok := a.nums[name]; return n, ok }
	allowed := map[uint32]bool{}
	for _, list := range [][]string{seccompAllow, a.extra} {
		for _, name := range list {
			if n, ok := num(name); ok {
				allowed[n] = true
			}
		}
	}
	// Syscalls with argument rules are decided in their own blocks.
	type special struct {
		name  string
		block []insn
	}
	var specials []special
	add := func(name string, block ...insn) {
		if n, ok := num(name); ok {
			delete(allowed, n)
			block[0].label = "sp_" + name
			specials = append(specials, special{name, block})
		}
	}
	add("clone", ldAbs(offArg0Low), jset(cloneNSFlags, "deny", "allow"))
	add("clone3", ret(secRetErrno|uint32(unix.ENOSYS)))
	var pers []insn
	pers = append(pers, ldAbs(offArg0Low))
	for _, v := range personalityAllowed {
		pers = append(pers, jeq(v, "allow", ""))
	}
	pers = append(pers, ret(secRetErrno|uint32(unix.EPERM)))
	add("personality", pers...)
	var sock []insn
	sock = append(sock, ldAbs(offArg0Low))
	for _, v := range socketRefused {
		sock = append(sock, jeq(v, "deny", ""))
	}
	sock = append(sock, ret(secRetAllow))
	add("socket", sock...)

	prog := []insn{
		ldAbs(offArch),
		jeq(a.audit, "", "kill"),
		ldAbs(offNr),
	}
	for _, s := range specials {
		prog = append(prog, jeq(a.nums[s.name], "sp_"+s.name, ""))
	}
	// The allowlist as ranges of consecutive numbers, searched as a binary
	// tree: ~9 comparisons per syscall instead of ~350. Everything outside
	// the ranges (including x32 numbers, which carry bit 30) is denied.
	prog = append(prog, rangeTree(ranges(allowed), "r")...)
	// BPF only jumps forward: the blocks come before the verdicts they use.
	for _, s := range specials {
		prog = append(prog, s.block...)
	}
	prog = append(prog,
		labeled("allow", ret(secRetAllow)),
		labeled("deny", ret(secRetErrno|uint32(unix.EPERM))),
		labeled("kill", ret(secRetKillProcess)),
	)
	return bpfProgram(prog)
}

type numRange struct{ lo, hi uint32 }

func ranges(set map[uint32]bool) []numRange {
	ns := make([]uint32, 0, len(set))
	for n := range set {
		ns = append(ns, n)
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	var out []numRange
	for _, n := range ns {
		if len(out) > 0 && out[len(out)-1].hi+1 == n {
			out[len(out)-1].hi = n
			continue
		}
		out = append(out, numRange{n, n})
	}
	return out
}

// rangeTree emits a search of the accumulator (the syscall number) over
// sorted, disjoint rs, jumping to "allow" inside one and "deny" outside.
// Labels are prefixed with id so the subtrees' labels are unique.
func rangeTree(rs []numRange, id string) []insn {
	switch len(rs) {
	case 0:
		return []insn{jeq(0, "deny", "deny")}
	case 1:
		// lo <= nr <= hi: nr >= lo and not nr >= hi+1.
		return []insn{jge(rs[0].lo, "", "deny"), jge(rs[0].hi+1, "deny", "allow")}
	}
	mid := len(rs) / 2
	left, right := rangeTree(rs[:mid], id+"l"), rangeTree(rs[mid:], id+"r")
	right[0].label = id + "R"
	out := []insn{jge(rs[mid].lo, id+"R", "")}
	out = append(out, left...)
	return append(out, right...)
}

// hostSeccompArch is the generator's description of the ABI warren runs on.
func hostSeccompArch() (seccompArch, error) {
	switch runtime.GOARCH {
	case "amd64":
		return seccompAMD64, nil
	case "arm64":
		return seccompARM64, nil
	}
	return seccompArch{}, fmt.Errorf("seccomp: no filter for %s (amd64 and arm64 are supported; use the relaxed security mode to run without one)", runtime.GOARCH)
}

// installSeccomp loads prog as the calling thread's filter. The thread
// must have no_new_privs set; children forked from it inherit the filter.
func installSeccomp(prog []unix.SockFilter) error {
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp)))
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
