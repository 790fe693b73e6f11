package native_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/native"
)

var (
	probeOnce sync.Once
	probeBin  string // the static probe, built on the host
	probeImg  string // busybox image with it at /bin/probe
	probeErr  error
)

// requireProbe builds testdata/probe.c with gcc -static and an image that
// holds it. Without gcc the test skips, except in CI, where it fails.
func requireProbe(t testing.TB) (bin, img string) {
	t.Helper()
	requireRuntime(t)
	probeOnce.Do(func() {
		if _, err := exec.LookPath("gcc"); err != nil {
			probeErr = fmt.Errorf("gcc not installed (apt-get install gcc libc6-dev): %w", err)
			return
		}
		dir := filepath.Join(sharedDir, "probe")
		if probeErr = os.MkdirAll(dir, 0o755); probeErr != nil {
			return
		}
		probeBin = filepath.Join(dir, "probe")
		out, err := exec.Command("gcc", "-static", "-O2", "-pthread", "-Wall", "-o", probeBin, "testdata/probe.c").CombinedOutput()
		if err != nil {
			probeErr = fmt.Errorf("gcc -static testdata/probe.c: %v\n%s", err, out)
			return
		}
		probeImg, probeErr = buildBusyboxImageWith(filepath.Join(dir, "img"), map[string]string{"bin/probe": probeBin})
	})
	if probeErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(probeErr)
		}
		t.Skip(probeErr)
	}
	return probeBin, probeImg
}

// parseProbe turns "name result" lines into a map.
func parseProbe(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(l, " ")
		if !ok {
			t.Fatalf("probe line %q", l)
		}
		m[k] = v
	}
	return m
}

func runProbe(t *testing.T, ws *native.Workspace, args ...string) map[string]string {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/probe", Args: append([]string{"probe"}, args...), Env: testEnv, Stdout: &out, Stderr: &errb})
	if err != nil || res.Status != 0 {
		t.Fatalf("probe: status %d err %v stderr %q", res.Status, err, errb.String())
	}
	return parseProbe(t, out.String())
}

// TestSecurity_Probe runs the probe on the host, in a relaxed workspace and
// in a default one, prints the three columns, and checks the default one
// refuses everything Docker's default container refuses (and a little
// more), while the host (and the relaxed sandbox) show the calls would
// otherwise work: the refusals are the filter's, not the host's.
func TestSecurity_Probe(t *testing.T) {
	bin, img := requireProbe(t)
	rt, _ := requireRuntime(t)
	hostOut, err := exec.Command(bin, "host").Output()
	if err != nil {
		t.Fatalf("probe on the host: %v", err)
	}
	host := parseProbe(t, string(hostOut))
	open := func(id string, opts ...native.WorkspaceOption) *native.Workspace {
		ws, err := rt.Workspace(context.Background(), id, img, nil, native.Limits{}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}
	relaxed := runProbe(t, open("probe-relaxed", native.WithSecurity(native.SecurityRelaxed)))
	def := runProbe(t, open("probe-default"))

	keys := make([]string, 0, len(def))
	for k := range def {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-36s %-10s %-10s %s\n", "probe", "host", "relaxed", "default")
	for _, k := range keys {
		fmt.Fprintf(&tab, "%-36s %-10s %-10s %s\n", k, host[k], relaxed[k], def[k])
	}
	t.Logf("probe results:\n%s", tab.String())

	eperm := []string{
		"io_uring_setup", "perf_event_open", "keyctl", "add_key", "request_key", "bpf", "userfaultfd",
		"unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNS)", "mount(tmpfs)", "clone(CLONE_NEWUSER)",
		"clone(CLONE_NEWNS)", "setns", "personality(ADDR_NO_RANDOMIZE)", "kexec_load", "kexec_file_load",
		"init_module", "finit_module", "delete_module", "open_by_handle_at", "umount2", "pivot_root",
		"move_mount", "fsopen", "open_tree", "syslog", "acct", "swapon", "swapoff", "reboot",
		"clock_settime", "settimeofday", "iopl", "ioperm", "sethostname", "socket(AF_VSOCK)",
		"ptrace(ATTACH,init)",
	}
	want := map[string][]string{
		"clone3":             {"ENOSYS"}, // as Docker: glibc falls back to clone
		"clone(plain)":       {"ok"},
		"personality(query)": {"ok"},
		"socket(AF_INET)":    {"ok"},
		"ptrace(TRACEME)":    {"ok"}, // strace/gdb on the sandbox's own processes
		// Masked: empty, or absent on kernels without them.
		"read:/proc/kcore":                   {"empty", "ENOENT"},
		"read:/proc/keys":                    {"empty", "ENOENT"},
		"read:/proc/timer_list":              {"empty", "ENOENT"},
		"read:/proc/sched_debug":             {"empty", "ENOENT"},
		"read:/proc/sys/kernel/core_pattern": {"empty"},
		"read:/proc/1/environ":               {"EACCES", "EPERM"},
		"read:/sys/firmware":                 {"ENOENT"},
		"write:/proc/sysrq-trigger":          {"EROFS", "ENOENT"},
		"write:/proc/sys/kernel/hostname":    {"EROFS", "EACCES"}, // owned by the host's root
		// Per network namespace: writable with CAP_NET_ADMIN (the relaxed
		// column), refused without it and by the read-only /proc/sys.
		"write:/proc/sys/net/ipv4/ping_group_range": {"EROFS", "EACCES"},
		"status.CapEff":     {"00000000a80425fb"},
		"status.CapPrm":     {"00000000a80425fb"},
		"status.CapBnd":     {"00000000a80425fb"},
		"status.CapInh":     {"0000000000000000"},
		"status.CapAmb":     {"0000000000000000"},
		"status.NoNewPrivs": {"1"},
		"status.Seccomp":    {"2"},
	}
	for _, k := range eperm {
		want[k] = []string{"EPERM"}
	}
	if runtime.GOARCH != "amd64" {
		delete(want, "iopl") // x86 only
		delete(want, "ioperm")
	}
	for k, vs := range want {
		got, ok := def[k]
		if !ok {
			t.Errorf("probe did not report %s", k)
			continue
		}
		match := false
		for _, v := range vs {
			match = match || got == v
		}
		if !match {
			t.Errorf("%s: %s in the sandbox, want %s", k, got, strings.Join(vs, " or "))
		}
	}
	// The host allows these (it runs them as root), so the sandbox's EPERM
	// is the sandbox's doing; the relaxed sandbox shows the same for the
	// namespace and mount calls the filter and capabilities remove.
	for _, k := range []string{"io_uring_setup", "perf_event_open", "keyctl", "add_key", "bpf", "userfaultfd",
		"unshare(CLONE_NEWUSER)", "mount(tmpfs)", "clone(CLONE_NEWNS)", "personality(ADDR_NO_RANDOMIZE)", "syslog"} {
		if host[k] != "ok" {
			t.Logf("note: the host itself refuses %s (%s)", k, host[k])
		}
	}
	for _, k := range []string{"unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNS)", "mount(tmpfs)", "io_uring_setup", "keyctl", "clone3"} {
		if relaxed[k] != "ok" {
			t.Errorf("relaxed sandbox: %s = %s, want ok (the opt-out must lift the filter)", k, relaxed[k])
		}
	}
	if relaxed["write:/proc/sys/net/ipv4/ping_group_range"] != "ok" || relaxed["ptrace(ATTACH,init)"] != "EPERM" {
		t.Errorf("relaxed sandbox: ping_group_range writable %s (want ok), ptrace of the init %s (want EPERM: the init is never dumpable)",
			relaxed["write:/proc/sys/net/ipv4/ping_group_range"], relaxed["ptrace(ATTACH,init)"])
	}
	if relaxed["status.Seccomp"] != "0" || relaxed["status.NoNewPrivs"] != "1" {
		t.Errorf("relaxed sandbox: Seccomp %s NoNewPrivs %s, want 0 and 1", relaxed["status.Seccomp"], relaxed["status.NoNewPrivs"])
	}
}

// TestSecurity_Compat: ordinary programs still work under the default
// confinement (busybox applets, threads through glibc's clone3 -> clone
// fallback, signals, timeout, ps, archives, a big sort).
func TestSecurity_Compat(t *testing.T) {
	_, img := requireProbe(t)
	rt, _ := requireRuntime(t)
	ws, err := rt.Workspace(context.Background(), "compat", img, nil, native.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tests := []struct{ name, script, want string }{
		{"threads", "probe threads 8", "threads 8 ok\n"},
		{"sort big file", "seq 200000 > /tmp/n && sort -rn /tmp/n | head -1 && wc -l < /tmp/n", "200000\n200000\n"},
		{"tar", "mkdir -p /tmp/a/b && echo x > /tmp/a/b/f && tar -C /tmp -cf /tmp/a.tar a && tar -tf /tmp/a.tar | sort | tr '\\n' ' '", "a/ a/b/ a/b/f "},
		{"ps", "sleep 5 & p=$!; ps | awk '{print $1}' | grep -cx $p; kill $p", "1\n"},
		{"trap and kill", `trap 'echo got USR1' USR1; kill -USR1 $$; echo after`, "got USR1\nafter\n"},
		{"timeout", "timeout 1 sleep 10; echo status=$?", "status=143\n"},
		{"kill a child", "sleep 10 & kill -9 $!; wait $!; echo status=$?", "status=137\n"},
		{"chroot (CAP_SYS_CHROOT)", "chroot / true && echo fine", "fine\n"},
		{"ping over loopback (CAP_NET_RAW)", "ping -c1 -W1 127.0.0.1 >/dev/null && echo up", "up\n"},
		{"chown as root", "touch /tmp/o && chown 1000:1000 /tmp/o && stat -c %u /tmp/o", "1000\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, res := sh(t, ws, tc.script, native.Limits{})
			if out != tc.want || res.Status != 0 {
				t.Errorf("got %q status %d (stderr %q), want %q", out, res.Status, errs, tc.want)
			}
		})
	}
}
