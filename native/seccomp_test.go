package native

import (
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// seccompData is the kernel's struct seccomp_data.
type seccompData struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

// runBPF interprets the subset of classic BPF the generator emits, over d
// as a little-endian kernel lays it out.
func runBPF(t *testing.T, prog []unix.SockFilter, d seccompData) uint32 {
	t.Helper()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			switch k := in.K; {
			case k == offNr:
				acc = d.nr
			case k == offArch:
				acc = d.arch
			case k >= 16 && k < 64 && k%4 == 0:
				a := d.args[(k-16)/8]
				if (k-16)%8 == 0 {
					acc = uint32(a)
				} else {
					acc = uint32(a >> 32)
				}
			default:
				t.Fatalf("pc %d: load from offset %d", pc, k)
			}
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var cond bool
			switch in.Code & 0xf0 {
			case unix.BPF_JEQ:
				cond = acc == in.K
			case unix.BPF_JGE:
				cond = acc >= in.K
			case unix.BPF_JSET:
				cond = acc&in.K != 0
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("pc %d: opcode %#x not emitted by the generator", pc, in.Code)
		}
	}
	t.Fatal("program fell off its end")
	return 0
}

func verdict(v uint32) string {
	switch {
	case v == secRetAllow:
		return "allow"
	case v == secRetKillProcess:
		return "kill"
	case v&0xffff0000 == secRetErrno:
		return unix.ErrnoName(unix.Errno(v & 0xffff))
	}
	return fmt.Sprintf("%#x", v)
}

func TestSeccompFilter_Verdicts(t *testing.T) {
	refused := []string{
		"io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key", "request_key",
		"perf_event_open", "bpf", "userfaultfd", "kexec_load", "kexec_file_load", "init_module",
		"finit_module", "delete_module", "open_by_handle_at", "mount", "umount2", "pivot_root",
		"move_mount", "fsopen", "fsmount", "fspick", "fsconfig", "open_tree", "mount_setattr",
		"unshare", "setns", "syslog", "acct", "swapon", "swapoff", "reboot", "settimeofday",
		"clock_settime", "sethostname", "quotactl", "fanotify_init", "vhangup", "mbind",
		"lookup_dcookie", "iopl", "ioperm", "kcmp", "pidfd_getfd",
	}
	for _, a := range []seccompArch{seccompAMD64, seccompARM64} {
		t.Run(a.name, func(t *testing.T) {
			prog, err := seccompFilter(a)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d instructions", a.name, len(prog))
			call := func(name string, args ...uint64) string {
				t.Helper()
				n, ok := a.nums[name]
				if !ok {
					t.Fatalf("%s has no syscall %s", a.name, name)
				}
				d := seccompData{nr: n, arch: a.audit}
				copy(d.args[:], args)
				return verdict(runBPF(t, prog, d))
			}
			for _, name := range refused {
				if _, ok := a.nums[name]; !ok {
					continue // iopl/ioperm are x86 only
				}
				if got := call(name); got != "EPERM" {
					t.Errorf("%s: %s, want EPERM", name, got)
				}
			}
			special := map[string]bool{"clone": true, "clone3": true, "personality": true, "socket": true}
			for _, list := range [][]string{seccompAllow, a.extra} {
				for _, name := range list {
					if _, ok := a.nums[name]; ok && !special[name] {
						if got := call(name); got != "allow" {
							t.Errorf("allowlisted %s: %s", name, got)
						}
					}
				}
			}
			tests := []struct {
				name string
				args []uint64
				want string
			}{
				{"clone", []uint64{uint64(unix.SIGCHLD)}, "allow"},
				{"clone", []uint64{unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND | unix.CLONE_SETTLS}, "allow"},
				{"clone", []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, "EPERM"},
				{"clone", []uint64{unix.CLONE_NEWNS}, "EPERM"},
				{"clone", []uint64{1<<40 | unix.CLONE_NEWNET}, "EPERM"},
				{"clone3", nil, "ENOSYS"},
				{"personality", []uint64{0}, "allow"},
				{"personality", []uint64{0xffffffff}, "allow"},
				{"personality", []uint64{0x20008}, "allow"},
				{"personality", []uint64{0x0040000}, "EPERM"}, // ADDR_NO_RANDOMIZE
				{"personality", []uint64{0x0400000}, "EPERM"}, // READ_IMPLIES_EXEC
				{"socket", []uint64{unix.AF_INET}, "allow"},
				{"socket", []uint64{unix.AF_UNIX}, "allow"},
				{"socket", []uint64{unix.AF_VSOCK}, "EPERM"},
				{"socket", []uint64{unix.AF_ALG}, "EPERM"},
			}
			for _, tc := range tests {
				if got := call(tc.name, tc.args...); got != tc.want {
					t.Errorf("%s(%#x): %s, want %s", tc.name, tc.args, got, tc.want)
				}
			}
			// Numbers past the table, another ABI's numbers, another arch.
			for _, nr := range []uint32{1000, 0xffffffff, 0x40000000 | a.nums["read"], 0x40000000 | a.nums["execve"]} {
				if got := verdict(runBPF(t, prog, seccompData{nr: nr, arch: a.audit})); got != "EPERM" {
					t.Errorf("nr %#x: %s, want EPERM", nr, got)
				}
			}
			for _, arch := range []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_ARM, 0} {
				if got := verdict(runBPF(t, prog, seccompData{nr: a.nums["read"], arch: arch})); got != "kill" {
					t.Errorf("arch %#x: %s, want kill", arch, got)
				}
			}
		})
	}
}

// TestSeccompFilter_Kernel installs the host arch's program on a thread of
// the test process that dies afterwards (a goroutine that ends while locked
// takes its thread with it), proving the kernel accepts it.
func TestSeccompFilter_Kernel(t *testing.T) {
	a, err := hostSeccompArch()
	if err != nil {
		t.Skip(err)
	}
	prog, err := seccompFilter(a)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		install            error
		ppid, unsh, clone3 unix.Errno
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		var r result
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			r.install = err
		} else if r.install = installSeccomp(prog); r.install == nil {
			_, _, r.ppid = unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
			_, _, r.unsh = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
			_, _, r.clone3 = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
		}
		ch <- r
	}()
	r := <-ch
	if r.install != nil {
		t.Fatalf("kernel refused the filter: %v", r.install)
	}
	if r.ppid != 0 || r.unsh != unix.EPERM || r.clone3 != unix.ENOSYS {
		t.Fatalf("under the filter: getppid %v, unshare(CLONE_NEWUSER) %v (want EPERM), clone3 %v (want ENOSYS)", r.ppid, r.unsh, r.clone3)
	}
}
