// probe: asks the kernel for what a sandbox must not have and prints one
// "name result" line per probe (result "ok" or the errno name). Each probe
// runs in a forked child, so probes that change process state (namespaces,
// personality, mounts) cannot disturb the next one or, run on the host,
// the host ("host" mode also skips the probes unsafe there).
//   probe [host]       all probes
//   probe getppid N    N getppid calls (seccomp cost on a syscall loop)
//   probe threads N    N threads that each sum a range, joined
//   probe forkloop     fork forever, in every child too (a fork bomb)
//   probe write PATH.. open each PATH for writing, creating it if missing
//                      ("write:PATH ok" or the errno; nothing is written)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int host;

// run reports, as "name result", how fn ended in a child: fn returns 0 or
// an errno.
static void run(const char *name, int (*fn)(void)) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn() & 0xff);
	int st;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("%s signal%d\n", name, WTERMSIG(st));
	else if (WEXITSTATUS(st) == 0)
		printf("%s ok\n", name);
	else
		printf("%s %s\n", name, strerrorname_np(WEXITSTATUS(st)));
}

#define RET(x) return (x) < 0 ? errno : 0
static int p_io_uring(void) { char p[120] = {0}; RET(syscall(SYS_io_uring_setup, 1, p)); }
static int p_perf(void) {
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof a, .config = PERF_COUNT_SW_CPU_CLOCK, .disabled = 1};
	RET(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}
static int p_keyctl(void) { RET(syscall(SYS_keyctl, 0 /*GET_KEYRING_ID*/, -2 /*PROCESS*/, 1)); }
static int p_add_key(void) { RET(syscall(SYS_add_key, "user", "probe", "x", 1, -2)); }
static int p_request_key(void) {
	long r = syscall(SYS_request_key, "user", "warren-probe-none", NULL, 0);
	return r < 0 && errno == ENOKEY ? 0 : r < 0 ? errno : 0; // ENOKEY: the call ran
}
static int p_bpf(void) {
	uint32_t attr[16] = {2 /*ARRAY*/, 4, 4, 1};
	RET(syscall(SYS_bpf, 0 /*MAP_CREATE*/, attr, sizeof attr));
}
static int p_userfaultfd(void) { RET(syscall(SYS_userfaultfd, O_CLOEXEC)); }
static int p_unshare_user(void) { RET(unshare(CLONE_NEWUSER)); }
static int p_unshare_ns(void) { RET(unshare(CLONE_NEWNS)); }
static int p_mount(void) {
	unshare(CLONE_NEWNS); // on the host: a private namespace, so nothing shows outside
	mount("", "/", NULL, MS_REC | MS_PRIVATE, NULL);
	RET(mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m"));
}
static int clone_with(unsigned long flags) {
	long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r < 0)
		return errno;
	waitpid(r, NULL, 0);
	return 0;
}
static int p_clone_newuser(void) { return clone_with(CLONE_NEWUSER); }
static int p_clone_newns(void) { return clone_with(CLONE_NEWNS); }
static int p_clone_plain(void) { return clone_with(0); }
static int p_clone3(void) {
	struct clone_args a = {.exit_signal = SIGCHLD};
	long r = syscall(SYS_clone3, &a, sizeof a);
	if (r == 0)
		_exit(0);
	if (r < 0)
		return errno;
	waitpid(r, NULL, 0);
	return 0;
}
static int p_setns(void) { long r = syscall(SYS_setns, -1, 0); return r < 0 && errno == EBADF ? 0 : r < 0 ? errno : 0; }
static int p_pers_query(void) { RET(syscall(SYS_personality, 0xffffffff)); }
static int p_pers_norandom(void) { RET(syscall(SYS_personality, 0x0040000)); }
// Calls whose arguments are invalid on purpose: the host answers with a
// validation error (reported as "ok": the call reached its checks), a
// filter answers EPERM before any check.
static int reached(long r, int ok1, int ok2) {
	if (r >= 0 || errno == ok1 || errno == ok2)
		return 0;
	return errno;
}
static int p_kexec_load(void) { return reached(syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL), EINVAL, 0); }
static int p_kexec_file(void) { return reached(syscall(SYS_kexec_file_load, -1, -1, 0, "", 0), EBADF, EINVAL); }
static int p_init_module(void) { return reached(syscall(SYS_init_module, NULL, 0, ""), EINVAL, EFAULT); }
static int p_finit_module(void) { return reached(syscall(SYS_finit_module, -1, "", 0), EBADF, 0); }
static int p_delete_module(void) { return reached(syscall(SYS_delete_module, "warren_probe_none", O_NONBLOCK), ENOENT, 0); }
static int p_open_by_handle(void) {
	char h[16] = {0};
	return reached(syscall(SYS_open_by_handle_at, AT_FDCWD, h, O_RDONLY), EINVAL, EBADF);
}
static int p_umount2(void) { return reached(syscall(SYS_umount2, "/warren-probe-none", 0), ENOENT, EINVAL); }
static int p_pivot_root(void) { return reached(syscall(SYS_pivot_root, "/warren-probe-none", "/warren-probe-none"), ENOENT, 0); }
static int p_move_mount(void) { return reached(syscall(SYS_move_mount, -1, "", -1, "", 0), EBADF, ENOENT); }
static int p_fsopen(void) { return reached(syscall(SYS_fsopen, "warrenprobenonefs", 0), ENODEV, 0); }
static int p_open_tree(void) { return reached(syscall(SYS_open_tree, -1, "/warren-probe-none", 0), ENOENT, EBADF); }
static int p_syslog(void) { RET(syscall(SYS_syslog, 10 /*SIZE_BUFFER*/, NULL, 0)); }
static int p_acct(void) { RET(syscall(SYS_acct, NULL)); }
static int p_swapoff(void) { return reached(syscall(SYS_swapoff, "/warren-probe-none"), ENOENT, EINVAL); }
static int p_swapon(void) { return reached(syscall(SYS_swapon, "/warren-probe-none", 0), ENOENT, EINVAL); }
static int p_reboot(void) { return reached(syscall(SYS_reboot, 0, 0, 0, NULL), EINVAL, 0); }
static int p_settime(void) {
	struct timespec ts = {0, -1};
	return reached(syscall(SYS_clock_settime, CLOCK_REALTIME, &ts), EINVAL, 0);
}
static int p_settimeofday(void) {
	struct { long s, us; } tv = {0, -1};
	return reached(syscall(SYS_settimeofday, &tv, NULL), EINVAL, 0);
}
#ifdef SYS_iopl // x86 only
static int p_iopl(void) { RET(syscall(SYS_iopl, 0)); }
static int p_ioperm(void) { RET(syscall(SYS_ioperm, 0x80, 1, 0)); }
#endif
static int p_sethostname(void) {
	unshare(CLONE_NEWUTS); // on the host: its own UTS namespace
	RET(sethostname("probe", 5));
}
static int p_ptrace_traceme(void) { RET(ptrace(PTRACE_TRACEME, 0, 0, 0)); }
static int p_ptrace_init(void) {
	if (ptrace(PTRACE_ATTACH, 1, 0, 0) < 0)
		return errno;
	ptrace(PTRACE_DETACH, 1, 0, 0);
	return 0;
}
static int p_vsock(void) { RET(socket(40 /*AF_VSOCK*/, SOCK_STREAM, 0)); }
static int p_inet(void) { RET(socket(AF_INET, SOCK_STREAM, 0)); }

// file probes: "ok" with data, "empty" when it reads as nothing, or the errno.
static void readfile(const char *name, const char *path) {
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("%s %s\n", name, strerrorname_np(errno));
		return;
	}
	char b[64];
	ssize_t n = read(fd, b, sizeof b);
	close(fd);
	if (n < 0)
		printf("%s %s\n", name, strerrorname_np(errno));
	else
		printf("%s %s\n", name, n ? "ok" : "empty");
}
static void openwrite(const char *name, const char *path) {
	int fd = open(path, O_WRONLY);
	printf("%s %s\n", name, fd < 0 ? strerrorname_np(errno) : "ok");
	if (fd >= 0)
		close(fd); // nothing is written: on the host this must stay harmless
}
static void status(void) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f)) {
		if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10) || !strncmp(line, "Seccomp:", 8)) {
			char k[64], v[64];
			if (sscanf(line, "%63[^:]:%63s", k, v) == 2)
				printf("status.%s %s\n", k, v);
		}
	}
	if (f)
		fclose(f);
}

static void *work(void *arg) {
	long n = (long)arg, s = 0;
	for (long i = 0; i < 1000000; i++)
		s += i % (n + 1);
	return (void *)s;
}

int main(int argc, char **argv) {
	if (argc == 3 && !strcmp(argv[1], "getppid")) {
		long n = atol(argv[2]);
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "forkloop")) {
		for (;;) // every child forks on too, failures and all
			fork();
	}
	if (argc >= 3 && !strcmp(argv[1], "write")) {
		for (int i = 2; i < argc; i++) {
			int fd = open(argv[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			printf("write:%s %s\n", argv[i], fd < 0 ? strerrorname_np(errno) : "ok");
			if (fd >= 0)
				close(fd);
		}
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "threads")) {
		int n = atoi(argv[2]);
		pthread_t t[64];
		for (int i = 0; i < n && i < 64; i++)
			if (pthread_create(&t[i], NULL, work, (void *)(long)i) != 0) {
				printf("pthread_create: %s\n", strerror(errno));
				return 1;
			}
		for (int i = 0; i < n && i < 64; i++)
			pthread_join(t[i], NULL);
		printf("threads %d ok\n", n);
		return 0;
	}
	host = argc == 2 && !strcmp(argv[1], "host");
	run("io_uring_setup", p_io_uring);
	run("perf_event_open", p_perf);
	run("keyctl", p_keyctl);
	run("add_key", p_add_key);
	run("request_key", p_request_key);
	run("bpf", p_bpf);
	run("userfaultfd", p_userfaultfd);
	run("unshare(CLONE_NEWUSER)", p_unshare_user);
	run("unshare(CLONE_NEWNS)", p_unshare_ns);
	run("mount(tmpfs)", p_mount);
	run("clone(CLONE_NEWUSER)", p_clone_newuser);
	run("clone(CLONE_NEWNS)", p_clone_newns);
	run("clone(plain)", p_clone_plain);
	run("clone3", p_clone3);
	run("setns", p_setns);
	run("personality(query)", p_pers_query);
	run("personality(ADDR_NO_RANDOMIZE)", p_pers_norandom);
	run("kexec_load", p_kexec_load);
	run("kexec_file_load", p_kexec_file);
	run("init_module", p_init_module);
	run("finit_module", p_finit_module);
	run("delete_module", p_delete_module);
	run("open_by_handle_at", p_open_by_handle);
	run("umount2", p_umount2);
	run("pivot_root", p_pivot_root);
	run("move_mount", p_move_mount);
	run("fsopen", p_fsopen);
	run("open_tree", p_open_tree);
	run("syslog", p_syslog);
	run("acct", p_acct);
	run("swapon", p_swapon);
	run("swapoff", p_swapoff);
	run("reboot", p_reboot);
	run("clock_settime", p_settime);
	run("settimeofday", p_settimeofday);
#ifdef SYS_iopl
	run("iopl", p_iopl);
	run("ioperm", p_ioperm);
#endif
	run("sethostname", p_sethostname);
	run("socket(AF_VSOCK)", p_vsock);
	run("socket(AF_INET)", p_inet);
	run("ptrace(TRACEME)", p_ptrace_traceme);
	if (!host)
		run("ptrace(ATTACH,init)", p_ptrace_init);
	readfile("read:/proc/kcore", "/proc/kcore");
	readfile("read:/proc/keys", "/proc/keys");
	readfile("read:/proc/timer_list", "/proc/timer_list");
	readfile("read:/proc/sched_debug", "/proc/sched_debug");
	readfile("read:/proc/sys/kernel/core_pattern", "/proc/sys/kernel/core_pattern");
	readfile("read:/proc/1/environ", "/proc/1/environ");
	readfile("read:/sys/firmware", "/sys/firmware");
	openwrite("write:/proc/sysrq-trigger", "/proc/sysrq-trigger");
	openwrite("write:/proc/sys/kernel/hostname", "/proc/sys/kernel/hostname");
	openwrite("write:/proc/sys/net/ipv4/ping_group_range", "/proc/sys/net/ipv4/ping_group_range");
	status();
	return 0;
}
