package native_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/native/imagemount"
)

func TestSecurity_CannotSeeHost(t *testing.T) {
	ws := newWorkspace(t, "isolated", nil, native.Limits{})
	t.Run("processes", func(t *testing.T) {
		out, _, _ := sh(t, ws, "ls -d /proc/[0-9]* | wc -l; test -e /proc/"+strconv.Itoa(os.Getpid())+" && echo host-pid-visible", native.Limits{})
		lines := strings.Fields(out)
		if len(lines) != 1 {
			t.Fatalf("got %q: host pid %d visible inside", out, os.Getpid())
		}
		// init, sh, ls (and wc) at most.
		if n, _ := strconv.Atoi(lines[0]); n < 2 || n > 4 {
			t.Fatalf("sandbox sees %d processes, want only its own (2-4)", n)
		}
	})
	t.Run("mounts", func(t *testing.T) {
		out, _, _ := sh(t, ws, "cat /proc/self/mounts", native.Limits{})
		allowed := map[string]bool{"overlay": true, "proc": true, "tmpfs": true, "devpts": true, "devtmpfs": true}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		// The root, /proc with its masks and read-only binds, /dev's few.
		if len(lines) > 30 {
			t.Fatalf("sandbox sees %d mounts, want its own few:\n%s", len(lines), out)
		}
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) < 3 || !allowed[f[2]] {
				t.Fatalf("unexpected mount visible inside: %q\nall:\n%s", l, out)
			}
		}
		if f := strings.Fields(lines[0]); f[1] != "/" || f[2] != "overlay" {
			t.Fatalf("root is not the overlay: %q", lines[0])
		}
		// runc's read-only /proc paths.
		for _, p := range []string{"/proc/sys", "/proc/bus", "/proc/fs", "/proc/irq"} {
			found := false
			for _, l := range lines {
				if f := strings.Fields(l); len(f) > 3 && f[1] == p {
					found = true
					if !strings.HasPrefix(f[3], "ro,") {
						t.Errorf("%s is mounted %s, want read-only", p, f[3])
					}
				}
			}
			if _, err := os.Stat(p); err == nil && !found {
				t.Errorf("%s is not mounted read-only inside", p)
			}
		}
	})
	t.Run("network", func(t *testing.T) {
		out, _, _ := sh(t, ws, "cat /proc/net/dev | grep : | cut -d: -f1 | tr -d ' '", native.Limits{})
		if strings.TrimSpace(out) != "lo" {
			t.Fatalf("interfaces inside: %q, want only lo", out)
		}
		out, _, _ = sh(t, ws, "cat /sys/class/net/lo/operstate 2>/dev/null; ping -c1 -W1 127.0.0.1 >/dev/null 2>&1; echo ping=$?", native.Limits{})
		// busybox ping needs a raw socket, which root in the userns has over
		// its own net namespace: loopback must be up.
		if !strings.Contains(out, "ping=0") {
			t.Fatalf("loopback not usable: %q", out)
		}
	})
	t.Run("cgroup paths", func(t *testing.T) {
		out, _, _ := sh(t, ws, "cat /proc/self/cgroup", native.Limits{})
		host, _ := os.ReadFile("/proc/self/cgroup")
		for _, l := range strings.Split(strings.TrimSpace(string(host)), "\n") {
			parts := strings.SplitN(l, ":", 3)
			if len(parts) == 3 && parts[2] != "/" && strings.Contains(out, parts[2]) {
				t.Fatalf("sandbox sees the host cgroup path %s:\n%s", parts[2], out)
			}
		}
	})
	t.Run("host uid", func(t *testing.T) {
		out, _, _ := sh(t, ws, "cat /proc/self/uid_map", native.Limits{})
		if f := strings.Fields(out); len(f) != 3 || f[0] != "0" || f[1] != "100000" {
			t.Fatalf("uid_map %q: root inside must be host uid 100000", out)
		}
		out, _, _ = sh(t, ws, "grep NoNewPrivs /proc/self/status", native.Limits{})
		if !strings.Contains(out, "1") {
			t.Fatalf("no_new_privs not set: %q", out)
		}
	})
}

func TestSecurity_BaseIsReadOnlyAndPrivate(t *testing.T) {
	_, img := requireRuntime(t)
	sum := func() [32]byte {
		b, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()
	a := newWorkspace(t, "writer", nil, native.Limits{})
	out, errs, res := sh(t, a, `echo pwned > /bin/busybox.new; echo pwned >> /etc/motd; rm /etc/passwd; echo secret > /root/secret;
		mount -o remount,rw / 2>&1 && echo remounted; cat /etc/motd`, native.Limits{})
	if res.Status != 0 || strings.Contains(out, "remounted") || !strings.Contains(out, "pwned") {
		t.Fatalf("writer: %q %q status %d", out, errs, res.Status)
	}
	b := newWorkspace(t, "reader", nil, native.Limits{})
	out, _, _ = sh(t, b, "cat /etc/motd; test -e /etc/passwd && echo passwd; cat /root/secret 2>&1; test -e /bin/busybox.new && echo new", native.Limits{})
	if out != "from the base image\npasswd\ncat: can't open '/root/secret': No such file or directory\n" {
		t.Fatalf("second sandbox sees the first one's writes: %q", out)
	}
	if sum() != before {
		t.Fatal("the image file changed")
	}
}

func TestSecurity_MemoryLimit(t *testing.T) {
	tests := []struct {
		name      string
		ws, exec  native.Limits
		wantLimit string
	}{
		{"exec limit", native.Limits{}, native.Limits{Memory: 32 << 20}, "32MiB"},
		{"workspace limit", native.Limits{Memory: 48 << 20}, native.Limits{}, "48MiB"},
		{"exec limit under workspace limit", native.Limits{Memory: 256 << 20}, native.Limits{Memory: 24 << 20}, "24MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWorkspace(t, "memory", nil, tc.ws)
			var errb bytes.Buffer
			tc.exec.Timeout = 30 * time.Second
			res, err := ws.Exec(context.Background(), native.Cmd{
				Path: "/bin/sh", Args: []string{"sh", "-c", `x=$(head -c 300000000 /dev/zero | tr '\0' a); echo survived ${#x}`},
				Env: testEnv, Stderr: &errb, Limits: tc.exec,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != 137 || !res.OOMKilled || !strings.Contains(errb.String(), "out of memory (limit "+tc.wantLimit+")") {
				t.Fatalf("status %d oom %v stderr %q: want 137, OOM, a message naming the limit", res.Status, res.OOMKilled, errb.String())
			}
			// The workspace survives its command's OOM kill.
			if out, _, res := sh(t, ws, "echo alive", native.Limits{}); out != "alive\n" || res.Status != 0 || res.OOMKilled {
				t.Fatalf("after OOM: %q %d %v", out, res.Status, res.OOMKilled)
			}
		})
	}
}

func TestSecurity_PidsLimit(t *testing.T) {
	ws := newWorkspace(t, "pids", nil, native.Limits{Pids: 24})
	// The shell dies when fork fails; its children stay behind, counted from
	// the host.
	sh(t, ws, `for i in $(seq 60); do sleep 30 >/dev/null 2>&1 & done`, native.Limits{Timeout: 20 * time.Second})
	initPid, cgDirs, _ := ws.HostState()
	n := 0
	filepath.WalkDir(cgDirs[0], func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Name() == "cgroup.procs" {
			b, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(b)) {
				if f != strconv.Itoa(initPid) { // the init is outside the limit
					n++
				}
			}
		}
		return nil
	})
	if n < 20 || n > 24 {
		t.Fatalf("%d sandbox processes in the workspace with a limit of 24", n)
	}
}

// TestSecurity_ForkBomb: a fork bomb is stopped within about a second,
// long before its exec's timeout, and says so. A C fork loop, whose
// processes fork on forever, is killed as a bomb (137); a shell bomb is
// killed too, or burns out first against the pids limit (its shells exit
// when fork fails), which the message then reports. Either way the
// workspace stays usable.
func TestSecurity_ForkBomb(t *testing.T) {
	_, img := requireProbe(t)
	rt, _ := requireRuntime(t)
	tests := []struct {
		name, script string
		killed       bool // must be killed as a bomb (else: may be)
	}{
		{"shell", `b(){ b | b & }; b`, false},
		{"C fork loop", `probe forkloop`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := rt.Workspace(context.Background(), "forkbomb", img, nil, native.Limits{Pids: 48})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			start := time.Now()
			_, errs, res := sh(t, ws, tc.script, native.Limits{Timeout: 20 * time.Second})
			took := time.Since(start)
			msg := lastLines(strings.TrimSpace(errs), 1)
			t.Logf("status %d after %v, %d forks refused, killed as a bomb %v: %s", res.Status, took, res.PidsRefused, res.ForkBomb, msg)
			if res.TimedOut || took > 10*time.Second || res.PidsRefused == 0 || (tc.killed && !res.ForkBomb) {
				t.Fatalf("status %d fork bomb %v timed out %v refused %d after %v", res.Status, res.ForkBomb, res.TimedOut, res.PidsRefused, took)
			}
			want := "process creations refused at the limit of 48 processes"
			if res.ForkBomb {
				want = "killed: fork bomb ("
				if res.Status != 137 || !strings.HasSuffix(msg, "at the limit of 48 processes)") {
					t.Fatalf("status %d, stderr %q", res.Status, msg)
				}
			}
			if !strings.Contains(msg, want) {
				t.Fatalf("stderr %q does not say %q", msg, want)
			}
			if out, _, _ := sh(t, ws, "echo ok", native.Limits{}); out != "ok\n" {
				t.Fatalf("workspace unusable after fork bomb: %q", out)
			}
		})
	}
	// Meeting the limit once is not a bomb: the shell sees fork fail.
	ws := newWorkspace(t, "pidswall", nil, native.Limits{Pids: 16})
	_, errs, res := sh(t, ws, `for i in $(seq 30); do sleep 1 & done; wait; echo done`, native.Limits{Timeout: 20 * time.Second})
	if res.ForkBomb || res.PidsRefused == 0 {
		t.Fatalf("a shell that met the limit once: fork bomb %v, %d refused (status %d, stderr %q)", res.ForkBomb, res.PidsRefused, res.Status, errs)
	}
}

func TestSecurity_Timeout(t *testing.T) {
	ws := newWorkspace(t, "timeout", nil, native.Limits{})
	start := time.Now()
	var errb bytes.Buffer
	res, err := ws.Exec(context.Background(), native.Cmd{
		Path: "/bin/sh", Args: []string{"sh", "-c", "sleep 30 & sleep 30"}, Env: testEnv, Stderr: &errb,
		Limits: native.Limits{Timeout: 300 * time.Millisecond},
	})
	if err != nil || !res.TimedOut || res.Status != 137 || time.Since(start) > 5*time.Second {
		t.Fatalf("status %d timedOut %v err %v after %v", res.Status, res.TimedOut, err, time.Since(start))
	}
	if !strings.Contains(errb.String(), "timeout of 300ms exceeded") {
		t.Fatalf("stderr %q does not say why", errb.String())
	}
	// Nothing of that exec survives: only the init and this sh are left
	// (retried briefly: killed processes may wait a moment to be reaped).
	var out string
	for try := 0; try < 20; try++ {
		out, _, _ = sh(t, ws, "set -- /proc/[0-9]*; echo $#", native.Limits{})
		if strings.TrimSpace(out) == "2" { // init and this sh
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.TrimSpace(out) != "2" {
		t.Fatalf("%s processes left after the timeout kill", strings.TrimSpace(out))
	}
	// Cancelling the context kills too.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err = ws.Exec(ctx, native.Cmd{Path: "/bin/sleep", Args: []string{"sleep", "30"}, Env: testEnv})
	if !errors.Is(err, context.DeadlineExceeded) || res.Status != 137 {
		t.Fatalf("ctx cancel: status %d err %v", res.Status, err)
	}
}

// alive reports whether pid still runs. A zombie is dead: an orphan is
// reparented to the machine's pid 1, which here (a sandbox harness) may never
// reap it.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return !strings.Contains(string(b), "State:\tZ")
}

func TestSecurity_NothingLeaksAfterClose(t *testing.T) {
	rt, img := requireRuntime(t)
	ws, err := rt.Workspace(context.Background(), "leaky", img, nil, native.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// A background process outlives its exec and the exec's stdout.
	if _, _, res := sh(t, ws, "setsid sleep 1000 >/dev/null 2>&1 &", native.Limits{}); res.Status != 0 {
		t.Fatalf("status %d", res.Status)
	}
	initPid, cgDirs, dir := ws.HostState()
	var pids []int
	for _, d := range cgDirs {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Name() == "cgroup.procs" {
				b, _ := os.ReadFile(p)
				for _, f := range strings.Fields(string(b)) {
					n, _ := strconv.Atoi(f)
					pids = append(pids, n)
				}
			}
			return nil
		})
	}
	if len(pids) < 2 || !alive(initPid) {
		t.Fatalf("expected the init and the background sleep in the cgroups, got %v", pids)
	}
	if mps, _ := imagemount.MountsUnder(dir); len(mps) == 0 {
		t.Fatal("no mounts under the workspace dir while open")
	}
	if err := ws.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	time.Sleep(10 * time.Millisecond)
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d survived Close", p)
		}
	}
	for _, d := range cgDirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cgroup %s survived Close", d)
		}
	}
	if mps, _ := imagemount.MountsUnder(dir); len(mps) != 0 {
		t.Errorf("mounts survived Close: %v", mps)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("workspace dir %s survived Close", dir)
	}
	if _, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/true"}); err == nil {
		t.Error("Exec after Close succeeded")
	}
}

// TestSecurity_CrashCleanup kills a warren process that holds a workspace
// with a running process, then checks a new runtime on the same run dir
// removes every mount, process and cgroup the dead one left.
func TestSecurity_CrashCleanup(t *testing.T) {
	_, img := requireRuntime(t)
	if os.Getenv("WARREN_NATIVE_CRASH_CHILD") != "" {
		return
	}
	run := filepath.Join(filepath.Dir(filepath.Dir(img)), "crashrun")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	cmd.Env = append(os.Environ(), "WARREN_NATIVE_CRASH_CHILD="+run, "WARREN_NATIVE_IMAGE="+img)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CRASHING") {
		t.Fatalf("crash child did not crash as planned: %v\n%s", err, out)
	}
	var sleepPid int
	fmt.Sscanf(string(out[strings.Index(string(out), "CRASHING")+len("CRASHING"):]), "%d", &sleepPid)
	mps, _ := imagemount.MountsUnder(run)
	if len(mps) == 0 {
		t.Fatal("the crashed runtime left no mounts: the test would prove nothing")
	}
	rt, err := native.NewRuntime(context.Background(), native.Config{RunDir: run, CgroupName: "warren-native-crash"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Available(); err != nil {
		t.Fatal(err)
	}
	if mps, _ := imagemount.MountsUnder(run); len(mps) != 0 {
		t.Errorf("stale mounts after start-up cleanup: %v", mps)
	}
	for _, p := range rt.CgroupParents() {
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			if e.IsDir() {
				t.Errorf("stale cgroup %s/%s after start-up cleanup", p, e.Name())
			}
		}
	}
	if sleepPid > 0 && alive(sleepPid) {
		t.Errorf("sandbox process %d survived its warren's crash", sleepPid)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if mps, _ := imagemount.MountsUnder(run); len(mps) != 0 {
		t.Errorf("mounts left after Runtime.Close: %v", mps)
	}
	for _, p := range rt.CgroupParents() {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("cgroup parent %s survived Runtime.Close", p)
		}
	}
}

// TestCrashChild is the crashing half of TestSecurity_CrashCleanup; it does
// nothing unless that test started it.
func TestCrashChild(t *testing.T) {
	run := os.Getenv("WARREN_NATIVE_CRASH_CHILD")
	if run == "" {
		t.Skip("helper process for TestSecurity_CrashCleanup")
	}
	rt, err := native.NewRuntime(context.Background(), native.Config{RunDir: run, CgroupName: "warren-native-crash"})
	if err != nil || rt.Available() != nil {
		t.Fatalf("runtime: %v %v", err, rt.Available())
	}
	ws, err := rt.Workspace(context.Background(), "crash", os.Getenv("WARREN_NATIVE_IMAGE"), nil, native.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo started"}, Env: testEnv, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	_, cg, _ := ws.HostState()
	pid := 0
	filepath.WalkDir(cg[0], func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Name() == "cgroup.procs" && strings.Contains(p, "/e") {
			b, _ := os.ReadFile(p)
			if f := strings.Fields(string(b)); len(f) > 0 {
				pid, _ = strconv.Atoi(f[0])
			}
		}
		return nil
	})
	fmt.Printf("CRASHING %d\n", pid)
	os.Stdout.Sync()
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

func TestSecurity_CloseKillsRunningExec(t *testing.T) {
	rt, img := requireRuntime(t)
	ws, err := rt.Workspace(context.Background(), "closing", img, nil, native.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan native.Result, 1)
	errc := make(chan error, 1)
	go func() {
		res, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/sleep", Args: []string{"sleep", "30"}, Env: testEnv})
		done <- res
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := ws.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case res := <-done:
		if err := <-errc; res.Status != 137 || !errors.Is(err, native.ErrWorkspaceLost) {
			t.Fatalf("exec ended with status %d, %v; want 137 and ErrWorkspaceLost", res.Status, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("exec still running 5 s after Close")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("Close took %v", time.Since(start))
	}
}

func TestSecurity_DiskQuota(t *testing.T) {
	ws := newWorkspace(t, "disk", nil, native.Limits{Disk: 1 << 20})
	out, _, res := sh(t, ws, "head -c 3000000 /dev/zero > /tmp/big; echo status=$?; rm -f /tmp/big; echo small > /tmp/ok && cat /tmp/ok", native.Limits{})
	if res.Status != 0 || !strings.Contains(out, "status=1") || !strings.HasSuffix(out, "small\n") {
		t.Fatalf("1 MiB disk: %q status %d (want the big write refused, small ones fine)", out, res.Status)
	}
}

func TestSecurity_CPUQuota(t *testing.T) {
	ws := newWorkspace(t, "cpuquota", nil, native.Limits{})
	_, _, res := sh(t, ws, "while :; do :; done", native.Limits{CPUs: 0.2, Timeout: 1500 * time.Millisecond})
	// 0.2 CPU over 1.5 s is 0.3 s; an unthrottled loop would use ~1.5 s.
	if !res.TimedOut || res.CPU > 450*time.Millisecond || res.CPU < 20*time.Millisecond {
		t.Fatalf("CPU %v over wall %v with a 0.2 CPU quota (timed out %v)", res.CPU, res.Wall, res.TimedOut)
	}
	t.Logf("CPU %v over %v", res.CPU, res.Wall)
}

// TestSecurity_InitOutsideMemoryLimit: the OOM killer picks the task with
// the largest RSS in the memory cgroup over its limit, and the Go init is
// larger than each of many small sandbox processes. It lives outside the
// sandbox's memory cgroup, so only sandbox processes are victims and the
// workspace survives.
func TestSecurity_InitOutsideMemoryLimit(t *testing.T) {
	ws := newWorkspace(t, "tinymem", nil, native.Limits{Memory: 16 << 20})
	initPid, _, _ := ws.HostState()
	for i := 0; i < 2; i++ {
		var errb bytes.Buffer
		res, err := ws.Exec(context.Background(), native.Cmd{
			Path: "/bin/sh", Args: []string{"sh", "-c", `for i in $(seq 30); do (x=$(head -c 1000000 /dev/zero | tr '\0' a); sleep 2) & done; wait; exit 137`},
			Env: testEnv, Stderr: &errb, Limits: native.Limits{Timeout: 3 * time.Second}, // a thrashing 16 MiB cgroup is slow
		})
		if err != nil {
			t.Fatalf("round %d: %v (the init was an OOM victim)", i, err)
		}
		if !alive(initPid) {
			t.Fatalf("round %d: the init died", i)
		}
		t.Logf("round %d: status %d oom %v wall %v", i, res.Status, res.OOMKilled, res.Wall)
		if !res.OOMKilled {
			t.Fatalf("round %d: no OOM kill under a 16 MiB limit (status %d, stderr %q): the test proves nothing", i, res.Status, errb.String())
		}
	}
	if out, _, res := sh(t, ws, "echo alive", native.Limits{}); out != "alive\n" || res.Status != 0 {
		t.Fatalf("after the hogs: %q %d", out, res.Status)
	}
}

// TestSecurity_DefaultLimits: a workspace given no limits gets the
// runtime's default memory and pids limits on its sandbox cgroup.
func TestSecurity_DefaultLimits(t *testing.T) {
	ws := newWorkspace(t, "defaults", nil, native.Limits{})
	_, cgDirs, _ := ws.HostState()
	want := map[string]string{
		"memory.limit_in_bytes": strconv.FormatInt(native.DefaultMemory, 10), // v1
		"memory.max":            strconv.FormatInt(native.DefaultMemory, 10), // v2
		"pids.max":              strconv.FormatInt(native.DefaultPids, 10),
	}
	found := map[string]bool{}
	for _, d := range cgDirs {
		for file, v := range want {
			b, err := os.ReadFile(filepath.Join(d, "sb", file))
			if err != nil {
				continue
			}
			found[strings.TrimSuffix(file, ".limit_in_bytes")] = true
			if got := strings.TrimSpace(string(b)); got != v {
				t.Errorf("%s/sb/%s = %s, want %s", d, file, got, v)
			}
		}
	}
	if !found["pids.max"] || !(found["memory"] || found["memory.max"]) {
		t.Fatalf("default limits not found in %v (found %v)", cgDirs, found)
	}
}

// TestSecurity_OOMScoreAdj: sandbox processes are the host OOM killer's
// first choice, and (where warren holds CAP_SYS_RESOURCE, which sets the
// floor) cannot make themselves less so.
func TestSecurity_OOMScoreAdj(t *testing.T) {
	ws := newWorkspace(t, "oomadj", nil, native.Limits{})
	out, _, _ := sh(t, ws, "cat /proc/self/oom_score_adj; echo 0 > /proc/self/oom_score_adj 2>/dev/null; cat /proc/self/oom_score_adj", native.Limits{})
	lines := strings.Fields(out)
	if len(lines) != 2 || lines[0] != "500" {
		t.Fatalf("oom_score_adj %q, want 500", out)
	}
	status, _ := os.ReadFile("/proc/self/status")
	var capEff uint64
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:\t"); ok {
			capEff, _ = strconv.ParseUint(v, 16, 64)
		}
	}
	const capSysResource = 24
	if capEff&(1<<capSysResource) == 0 {
		t.Logf("this warren lacks CAP_SYS_RESOURCE: no floor, the sandbox lowered its oom_score_adj to %s", lines[1])
		return
	}
	if lines[1] != "500" {
		t.Fatalf("the sandbox lowered its oom_score_adj to %s", lines[1])
	}
}
