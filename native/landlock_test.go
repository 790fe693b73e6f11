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
	denied := want{[]string{"EACCES"}, []string{"ok"}}
	cases := map[string]want{
		"/tmp/f": allowed, "/root/f": allowed, "/home/user/f": allowed, "/etc/f": allowed,
		"/dev/shm/f": allowed, "/dev/null": allowed, "/dev/zero": allowed, "/dev/pts/ptmx": allowed,
		"/proc/self/comm": denied, "/proc/self/oom_score_adj": denied, "/proc/self/coredump_filter": denied,
		// New entries directly in /: a new file cannot be created there, a
		// new directory's files only from the next exec on.
		"/newfile": denied, "/newtop/f": denied,
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
	next := run(def, "probe write /newtop/f /proclink/self/comm")
	if next["/newtop/f"] != "ok" || next["/proclink/self/comm"] != "EACCES" {
		t.Errorf("next exec: write /newtop/f = %q (want ok), /proclink/self/comm = %q (want EACCES)", next["/newtop/f"], next["/proclink/self/comm"])
	}
}

// TestSecurity_LandlockThreads: each change of the root's top-level
// entries confines a new thread in the init; the old ones end once their
// commands have, so the init does not grow a thread per change.
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
	sh(t, ws, "mkdir /d0", native.Limits{})
	before := threads()
	for i := 1; i <= 20; i++ {
		// A new top-level directory per exec: not writable in the exec that
		// made it, writable in the next.
		script := fmt.Sprintf("mkdir /d%d && (echo x > /d%d/f) 2>/dev/null && echo same-exec; echo %d > /d%d/f && cat /d%d/f", i, i, i, i-1, i-1)
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
		t.Fatalf("init has %d threads after 20 listing changes, %d before", n, before)
	}
	t.Logf("init threads: %d before, %d after 20 listing changes", before, threads())
}
