package native_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/native"
)

// TestSecurity_Landlock: in the default mode a sandbox process can write
// its own files, /dev/shm and the device nodes, but not /proc (nor, in the
// same exec, a top-level entry it has just created, nor through a
// planted symlink); a relaxed workspace has no Landlock and can.
func TestSecurity_Landlock(t *testing.T) {
	_, img := requireProbe(t)
	rt, _ := requireRuntime(t)
	abi, off := rt.Landlock()
	// The runtime logs either way at start-up.
	if log := sharedLog.String(); off != nil && !strings.Contains(log, "Landlock off") ||
		off == nil && !strings.Contains(log, fmt.Sprintf("Landlock on\" abi=%d", abi)) {
		t.Errorf("start-up log %q does not report Landlock (abi %d, off %v)", log, abi, off)
	}
	if off != nil {
		t.Skip("Landlock is off on this host: ", off)
	}
	t.Logf("Landlock ABI %d", abi)
	open := func(id string, opts ...native.WorkspaceOption) *native.Workspace {
		ws, err := rt.Workspace(context.Background(), id, img, nil, native.Limits{}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}
	def, relaxed := open("landlock-default"), open("landlock-relaxed", native.WithSecurity(native.SecurityRelaxed))
	// One exec per script; "probe write" prints "write:PATH result".
	run := func(ws *native.Workspace, script string) map[string]string {
		t.Helper()
		var out, errb bytes.Buffer
		res, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: testEnv, Dir: "/", Stdout: &out, Stderr: &errb})
		if err != nil || res.Status != 0 {
			t.Fatalf("%q: status %d err %v stderr %q", script, res.Status, err, errb.String())
		}
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if k, v, ok := strings.Cut(l, " "); ok {
				m[strings.TrimPrefix(k, "write:")] = v
			}
		}
		return m
	}
	const paths = "/tmp/f /root/f /home/user/f /etc/f /dev/shm/f /dev/null /dev/zero /dev/pts/ptmx " +
		"/proc/self/comm /proc/self/oom_score_adj /proc/self/coredump_filter /newfile"
	both := "mkdir /newtop && ln -s /proc /proclink && probe write " + paths + " /newtop/f"
	type want struct{ def, relaxed []string }
	allowed := want{[]string{"ok"}, []string{"ok"}}
	cases := map[string]want{
		"/tmp/f": allowed, "/root/f": allowed, "/home/user/f": allowed, "/etc/f": allowed,
		"/dev/shm/f": allowed, "/dev/null": allowed, "/dev/zero": allowed, "/dev/pts/ptmx": allowed,
		// "/" is granted (see llPlan), so /proc's per-process files and new
		// top-level entries are writable as in Docker; device nodes are not.
		"/proc/self/comm": allowed, "/proc/self/oom_score_adj": allowed, "/newfile": allowed, "/newtop/f": allowed,
	}
	got := map[string]map[string]string{"default": run(def, both), "relaxed": run(relaxed, both)}
	for path, w := range cases {
		for mode, vs := range map[string][]string{"default": w.def, "relaxed": w.relaxed} {
			g := got[mode][path]
			ok := false
			for _, v := range vs {
				ok = ok || g == v
			}
			if !ok {
				t.Errorf("%s: write %s = %q, want %s", mode, path, g, strings.Join(vs, " or "))
			}
		}
	}
	// The next exec lists /newtop and may write beneath it; the symlink
	// the sandbox planted at the top level does not open /proc.
	next := run(def, "probe write /newtop/f")
	if next["/newtop/f"] != "ok" {
		t.Errorf("next exec: write /newtop/f = %q (want ok)", next["/newtop/f"])
	}
	// Creating device nodes stays refused (Landlock grants no MAKE_CHAR,
	// and the user namespace refuses it too; TestLandlockPlan checks the rule).
	var out, errb bytes.Buffer
	res, err := def.Exec(context.Background(), native.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "mknod /tmp/null2 c 1 3 2>&1; echo rc=$?"}, Env: testEnv, Dir: "/", Stdout: &out, Stderr: &errb})
	if err != nil || res.Status != 0 || strings.Contains(out.String(), "rc=0") {
		t.Errorf("mknod in default mode: %q status %d err %v: want refused", out.String(), res.Status, err)
	}
}

// TestSecurity_LandlockThreads: execs that change the root reuse the
// confined thread (only a change of /dev's nodes needs a new one), so the
// init does not grow a thread per exec.
func TestSecurity_LandlockThreads(t *testing.T) {
	rt, _ := requireRuntime(t)
	if _, off := rt.Landlock(); off != nil {
		t.Skip("Landlock is off on this host (no per-listing threads): ", off)
	}
	ws := newWorkspace(t, "landlock-threads", nil, native.Limits{})
	pid, _, _ := ws.HostState()
	threads := func() int {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	for i := 0; i < 3; i++ { // the init's runtime grows its thread pool on first use
		sh(t, ws, "true", native.Limits{})
	}
	before := threads()
	for i := 1; i <= 20; i++ {
		// A new top-level directory per exec, written in the same exec
		// (the ruleset grants "/"), and a new device-less listing: no new
		// confined thread is needed.
		script := fmt.Sprintf("mkdir /d%d && echo %d > /d%d/f && cat /d%d/f", i, i, i, i)
		out, errs, res := sh(t, ws, script, native.Limits{})
		if res.Status != 0 || out != fmt.Sprintf("%d\n", i) {
			t.Fatalf("exec %d: out %q stderr %q status %d", i, out, errs, res.Status)
		}
	}
	// Retired threads exit asynchronously after their last command.
	deadline := time.Now().Add(5 * time.Second)
	for threads() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := threads(); n > before+2 {
		t.Fatalf("init has %d threads after 20 execs changing the root, %d before", n, before)
	}
	t.Logf("init threads: %d before, %d after 20 execs changing the root", before, threads())
}
