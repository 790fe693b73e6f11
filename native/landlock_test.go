package native_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
