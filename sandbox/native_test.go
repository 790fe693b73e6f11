package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/native/imagemount"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// The native tier through the sandbox service: real kernel, real overlay,
// real cgroups, a busybox image built through the image catalog so the
// sandbox's base IS the image the kernel mounts.

const nativeCgroupName = "warren-sandbox-test"

var (
	nativeOnce   sync.Once
	nativeRT     *native.Runtime
	nativeRunDir string
	nativeTmp    string
	nativeErr    error
)

// requireNative returns the package's native runtime, or skips the test
// with the reason it cannot run here.
func requireNative(t testing.TB) *native.Runtime {
	t.Helper()
	nativeOnce.Do(func() {
		if os.Geteuid() != 0 {
			nativeErr = fmt.Errorf("needs root (mounts, cgroups, namespaces)")
			return
		}
		if _, err := exec.LookPath("busybox"); err != nil {
			nativeErr = fmt.Errorf("busybox not installed (apt-get install busybox-static)")
			return
		}
		// A fixed run dir: a test binary killed midway leaves mounts there,
		// and the next run's runtime cleans them up at start.
		nativeTmp = filepath.Join(os.TempDir(), "warren-sandbox-test-native")
		if nativeErr = os.MkdirAll(nativeTmp, 0o711); nativeErr != nil {
			return
		}
		// The workspace init runs as the mapped uid and must reach its run dir.
		os.Chmod(nativeTmp, 0o711)
		nativeRunDir = filepath.Join(nativeTmp, "run")
		nativeRT, nativeErr = native.NewRuntime(context.Background(), native.Config{RunDir: nativeRunDir, CgroupName: nativeCgroupName})
		if nativeErr == nil {
			nativeErr = nativeRT.Available()
		}
	})
	if nativeErr != nil {
		t.Skipf("native tier unavailable: %v", nativeErr)
	}
	return nativeRT
}

func closeNativeRuntime() {
	if nativeRT != nil {
		nativeRT.Close()
	}
}

// busyboxRoot writes a root tree: busybox-static, its applet links and the
// usual top-level directories.
func busyboxRoot(t testing.TB) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "etc", "proc", "dev", "tmp", "root", "home/user", "sys", "var"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(root, "tmp"), 0o1777)
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox not installed (apt-get install busybox-static)")
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin/busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bb, "--list-full").Output()
	if err != nil {
		t.Fatalf("busybox --list-full: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "bin/busybox" {
			continue
		}
		dst := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		rel, _ := filepath.Rel(filepath.Dir(dst), filepath.Join(root, "bin/busybox"))
		if err := os.Symlink(rel, dst); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc/motd"), []byte("from the base image\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// busyboxImage builds the busybox tree through cat and names it "busybox"
// for tenant.
func busyboxImage(t testing.TB, cat *image.Catalog, tenant string) image.Manifest {
	t.Helper()
	m, err := cat.BuildSource(context.Background(), busyboxRoot(t), image.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Tag(context.Background(), "tenants/"+tenant+"/busybox", m); err != nil {
		t.Fatal(err)
	}
	return m
}

func nativeManager(t testing.TB, p parts, rt *native.Runtime) *sandbox.Manager {
	t.Helper()
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs:        p.blobs,
		Deltas:       sandbox.VFSDeltas(p.blobs),
		Images:       sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()),
		Meta:         p.meta,
		TickInterval: 20 * time.Millisecond,
		Native:       rt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type nativeEnv struct {
	svc api.Service
	m   *sandbox.Manager
	p   parts
}

func newNativeEnv(t *testing.T, rt *native.Runtime) nativeEnv {
	t.Helper()
	p := openParts(t, t.TempDir())
	busyboxImage(t, p.cat, "t1")
	m := nativeManager(t, p, rt)
	t.Cleanup(func() {
		m.Close(context.Background())
		p.close()
	})
	return nativeEnv{svc: m.For("t1"), m: m, p: p}
}

func (e nativeEnv) create(t *testing.T, lim api.Limits) string {
	t.Helper()
	sb, err := e.svc.Create(context.Background(), api.CreateRequest{Image: "busybox", Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return sb.ID
}

func run(t *testing.T, svc api.Service, id, script string) (string, string, api.ExecResult) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := svc.Exec(context.Background(), id, api.ExecRequest{Script: script}, &out, &errb)
	if err != nil {
		t.Fatalf("exec %q: %v (stderr %q)", script, err, errb.String())
	}
	return out.String(), errb.String(), res
}

func TestNative_Exec(t *testing.T) {
	rt := requireNative(t)
	e := newNativeEnv(t, rt)
	id := e.create(t, api.Limits{})
	ctx := context.Background()

	t.Run("echo runs natively", func(t *testing.T) {
		// hostname is the sandbox id only inside the native tier.
		out, errs, res := run(t, e.svc, id, "/bin/busybox echo hi; /bin/busybox hostname")
		if out != "hi\n"+id+"\n" || res.Exit != 0 {
			t.Fatalf("out %q stderr %q exit %d", out, errs, res.Exit)
		}
		if res.CPUSeconds <= 0 {
			t.Fatalf("cpu_seconds %v: want > 0 for a native exec", res.CPUSeconds)
		}
	})
	t.Run("native write seen by the files API and resident cat", func(t *testing.T) {
		run(t, e.svc, id, "/bin/busybox sh -c 'echo native > /tmp/n.txt'")
		data, err := e.svc.ReadFile(ctx, id, "/tmp/n.txt", 0, 0)
		if err != nil || string(data) != "native\n" {
			t.Fatalf("ReadFile: %q %v", data, err)
		}
		if out, _, _ := run(t, e.svc, id, "cat /tmp/n.txt"); out != "native\n" {
			t.Fatalf("resident cat: %q", out)
		}
	})
	t.Run("resident and API writes seen natively", func(t *testing.T) {
		if err := e.svc.WriteFile(ctx, id, api.WriteFileRequest{Path: "/tmp/api.txt", Data: strings.NewReader("from api\n")}); err != nil {
			t.Fatal(err)
		}
		out, errs, res := run(t, e.svc, id, "echo resident > /tmp/r.txt; /bin/busybox cat /tmp/r.txt /tmp/api.txt /etc/motd")
		if out != "resident\nfrom api\nfrom the base image\n" || res.Exit != 0 {
			t.Fatalf("out %q stderr %q exit %d", out, errs, res.Exit)
		}
	})
	t.Run("pipeline mixing tiers", func(t *testing.T) {
		out, errs, res := run(t, e.svc, id, "/bin/busybox seq 1 1000 | grep 7 | wc -l")
		if strings.TrimSpace(out) != "271" || res.Exit != 0 {
			t.Fatalf("out %q stderr %q exit %d", out, errs, res.Exit)
		}
		out, _, _ = run(t, e.svc, id, "seq 1 5 | /bin/busybox tac | tr '\\n' ' '")
		if out != "5 4 3 2 1 " {
			t.Fatalf("resident into native: %q", out)
		}
	})
	t.Run("exit status", func(t *testing.T) {
		if _, _, res := run(t, e.svc, id, "/bin/busybox sh -c 'exit 7'"); res.Exit != 7 {
			t.Fatalf("exit %d, want 7", res.Exit)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		var errb bytes.Buffer
		res, err := e.svc.Exec(ctx, id, api.ExecRequest{Script: "/bin/busybox sleep 30", Timeout: api.Duration(time.Second)}, nil, &errb)
		if err != nil {
			t.Fatal(err)
		}
		if res.Exit != sandbox.StatusTimeout || res.Limit != "timeout" || time.Since(start) > 15*time.Second {
			t.Fatalf("exit %d limit %q after %v (stderr %q): want %d, timeout", res.Exit, res.Limit, time.Since(start), errb.String(), sandbox.StatusTimeout)
		}
		// The workspace still works.
		if out, _, _ := run(t, e.svc, id, "/bin/busybox echo after"); out != "after\n" {
			t.Fatalf("after timeout: %q", out)
		}
	})
}

func TestNative_MemoryLimit(t *testing.T) {
	rt := requireNative(t)
	e := newNativeEnv(t, rt)
	// 64 MiB: the workspace's init (this test binary, big under -race)
	// shares the limit, and the hog must be the OOM killer's choice.
	id := e.create(t, api.Limits{MaxMemoryBytes: 64 << 20})
	out, errs, res := run(t, e.svc, id, `/bin/busybox sh -c 'x=$(head -c 300000000 /dev/zero | tr "\0" a); echo survived ${#x}'`)
	if res.Exit != 137 || res.Limit != "memory" || !strings.Contains(errs, "out of memory (limit 64MiB)") || strings.Contains(out, "survived") {
		t.Fatalf("exit %d limit %q out %q stderr %q: want 137, memory, a message naming the limit", res.Exit, res.Limit, out, errs)
	}
	if out, _, res := run(t, e.svc, id, "/bin/busybox echo alive"); out != "alive\n" || res.Exit != 0 {
		t.Fatalf("after the OOM kill: %q %d", out, res.Exit)
	}
}

func TestNative_Off(t *testing.T) {
	p := openParts(t, t.TempDir())
	busyboxImage(t, p.cat, "t1")
	defer p.close()
	tests := []struct {
		name string
		rt   *native.Runtime
		lim  api.Limits
		want string
	}{
		{"node without native", nil, api.Limits{}, "the native tier is disabled on this node"},
		{"sandbox with native off", nil, api.Limits{Native: new(bool)}, "the native tier is off for this sandbox"},
	}
	if os.Geteuid() == 0 {
		// A runtime that could not start names its reason.
		bad, err := native.NewRuntime(context.Background(), native.Config{RunDir: filepath.Join(t.TempDir(), "run")})
		if err != nil {
			t.Fatal(err)
		}
		defer bad.Close()
		if why := bad.Available(); why != nil {
			tests = append(tests, struct {
				name string
				rt   *native.Runtime
				lim  api.Limits
				want string
			}{"runtime unavailable", bad, api.Limits{}, why.Error()})
		} else {
			t.Log("a runtime under t.TempDir() started (its dirs are searchable here): no unavailable case")
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := nativeManager(t, p, tc.rt)
			defer m.Close(context.Background())
			svc := m.For("t1")
			sb, err := svc.Create(context.Background(), api.CreateRequest{Image: "busybox", Limits: tc.lim})
			if err != nil {
				t.Fatal(err)
			}
			out, errs, res := run(t, svc, sb.ID, "/bin/busybox echo hi")
			if res.Exit != 126 || out != "" || !strings.Contains(errs, tc.want) || !strings.Contains(errs, "/bin/busybox") {
				t.Fatalf("exit %d out %q stderr %q: want 126 and a message containing %q", res.Exit, out, errs, tc.want)
			}
			// Resident commands are unaffected.
			if out, _, _ := run(t, svc, sb.ID, "echo resident"); out != "resident\n" {
				t.Fatalf("resident: %q", out)
			}
			// Asking for native explicitly where it cannot be had is refused.
			on := true
			_, err = svc.Create(context.Background(), api.CreateRequest{Image: "busybox", Limits: api.Limits{Native: &on}})
			if tc.rt == nil || tc.rt.Available() != nil {
				if !errdefs.IsNotImplemented(err) {
					t.Fatalf("create with native: true: %v, want not implemented", err)
				}
			}
		})
	}
}

// workspaceCgroups lists the workspace cgroups (w*) under warren's parent
// cgroups of the test runtime, in every hierarchy.
func workspaceCgroups(t *testing.T) []string {
	t.Helper()
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	mounts, _ := filepath.Glob("/sys/fs/cgroup/*")
	mounts = append(mounts, "/sys/fs/cgroup")
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, mnt := range mounts {
			parent := filepath.Join(mnt, parts[2], nativeCgroupName)
			ents, err := os.ReadDir(parent)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if e.IsDir() && strings.HasPrefix(e.Name(), "w") {
					out = append(out, filepath.Join(parent, e.Name()))
				}
			}
		}
	}
	return out
}

// hostState is what the native tier holds on the host: mounts under the
// run dir's workspaces and workspace cgroups.
func hostState(t *testing.T) (mounts, cgroups []string) {
	t.Helper()
	mounts, err := imagemount.MountsUnder(filepath.Join(nativeRunDir, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	return mounts, workspaceCgroups(t)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNative_BackgroundAndDelete(t *testing.T) {
	rt := requireNative(t)
	e := newNativeEnv(t, rt)
	ctx := context.Background()
	id := e.create(t, api.Limits{})
	// Only this test's workspaces may exist while it runs.
	if m, c := hostState(t); len(m) != 0 || len(c) != 0 {
		t.Logf("state left by earlier tests: mounts %v cgroups %v", m, c)
	}
	p, err := e.svc.StartProcess(ctx, id, api.ExecRequest{Script: "/bin/busybox sh -c 'echo early > /tmp/bg.txt; exec sleep 1000'"})
	if err != nil {
		t.Fatal(err)
	}
	// Sync-on-read: the files API sees what the running process wrote.
	waitFor(t, "the background process's write through ReadFile", func() bool {
		data, err := e.svc.ReadFile(ctx, id, "/tmp/bg.txt", 0, 0)
		return err == nil && string(data) == "early\n"
	})
	// ... and so does a resident command of another exec.
	var out bytes.Buffer
	if _, err := e.svc.Exec(ctx, id, api.ExecRequest{Session: "other", Script: "cat /tmp/bg.txt"}, &out, nil); err != nil || out.String() != "early\n" {
		t.Fatalf("resident cat while the native process runs: %q %v", out.String(), err)
	}
	// A running native process keeps the sandbox active.
	if _, err := e.svc.Hibernate(ctx, id); !errdefs.IsFailedPrecondition(err) {
		ps, _ := e.svc.ListProcesses(ctx, id)
		var ob bytes.Buffer
		e.svc.AttachProcess(ctx, id, p.PID, &ob, &ob)
		t.Logf("output: %q", ob.String())
		t.Fatalf("hibernate with a native process running: %v, want busy (processes %+v %+v)", err, ps, ps[0].Result)
	}
	mounts, cgs := hostState(t)
	if len(mounts) == 0 || len(cgs) == 0 {
		t.Fatalf("a running workspace shows no mounts (%v) or cgroups (%v): the leak check below would prove nothing", mounts, cgs)
	}
	if err := e.svc.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Delete tears the workspace down before it returns.
	if m, c := hostState(t); len(m) != 0 || len(c) != 0 {
		t.Fatalf("after delete: mounts %v cgroups %v remain", m, c)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		e.m.For("t1").WaitProcess(wctx, id, p.PID)
		close(done)
	}()
	select {
	case <-done:
	case <-wctx.Done():
		t.Fatal("the background exec did not end after delete")
	}
}

func TestNative_HibernateResume(t *testing.T) {
	rt := requireNative(t)
	e := newNativeEnv(t, rt)
	ctx := context.Background()
	id := e.create(t, api.Limits{})
	run(t, e.svc, id, "/bin/busybox sh -c 'echo kept > /root/k.txt'; X=set")
	if m, _ := hostState(t); len(m) == 0 {
		t.Fatal("no workspace mounts after a native exec")
	}
	if sb, err := e.svc.Hibernate(ctx, id); err != nil || sb.State != api.StateStandby {
		t.Fatalf("hibernate: %+v %v", sb, err)
	}
	// Standby closes the workspace.
	if m, c := hostState(t); len(m) != 0 || len(c) != 0 {
		t.Fatalf("in standby: mounts %v cgroups %v remain", m, c)
	}
	out, errs, res := run(t, e.svc, id, "/bin/busybox cat /root/k.txt; echo $X")
	if out != "kept\nset\n" || res.Exit != 0 {
		t.Fatalf("after resume: out %q stderr %q exit %d", out, errs, res.Exit)
	}
	// A fork has its own workspace: its writes stay its own.
	kids, err := e.svc.Fork(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	run(t, e.svc, kids[0].ID, "/bin/busybox sh -c 'echo child > /root/k.txt'; /bin/busybox hostname > /root/host")
	if out, _, _ := run(t, e.svc, id, "/bin/busybox cat /root/k.txt"); out != "kept\n" {
		t.Fatalf("parent sees %q after the child's native write", out)
	}
	if data, err := e.svc.ReadFile(ctx, kids[0].ID, "/root/host", 0, 0); err != nil || string(data) != kids[0].ID+"\n" {
		t.Fatalf("child's native exec ran as %q (%v), want its own id", data, err)
	}
}

func TestNative_ImageInUse(t *testing.T) {
	p := openParts(t, t.TempDir())
	defer p.close()
	busyboxImage(t, p.cat, "t1")
	m := nativeManager(t, p, nil)
	defer m.Close(context.Background())
	p.cat.InUse = m.ImageInUse
	sb, err := m.For("t1").Create(context.Background(), api.CreateRequest{Image: "busybox"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cat.Remove(context.Background(), "tenants/t1/busybox"); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("remove of an image in use: %v", err)
	}
	if err := m.For("t1").Delete(context.Background(), sb.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.cat.Remove(context.Background(), "tenants/t1/busybox"); err != nil {
		t.Fatalf("remove after the sandbox is gone: %v", err)
	}
}

// TestMemoryLimit_Resident: the same max_memory_bytes bounds what resident
// buffering commands hold (commands.System.MaxMemoryBytes).
func TestMemoryLimit_Resident(t *testing.T) {
	p := openParts(t, t.TempDir())
	defer p.close()
	m := nativeManager(t, p, nil)
	defer m.Close(context.Background())
	svc := m.For("t")
	tests := []struct {
		name    string
		limit   int64
		out     string
		errPart string
	}{
		{"under the default limit", 0, "300000\n", ""},
		{"over a 1 MiB limit", 1 << 20, "", "warren: memory limit exceeded (1 MiB)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := svc.Create(context.Background(), api.CreateRequest{Limits: api.Limits{MaxMemoryBytes: tc.limit}})
			if err != nil {
				t.Fatal(err)
			}
			out, errs, _ := run(t, svc, sb.ID, "seq 1 300000 | sort -n | tail -1")
			if out != tc.out || !strings.Contains(errs, tc.errPart) {
				t.Fatalf("out %q stderr %q: want %q and stderr containing %q", out, errs, tc.out, tc.errPart)
			}
		})
	}
}
