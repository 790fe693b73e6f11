package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/native"
)

// native_exec: an ELF binary (busybox echo) run by the native tier in a
// warm workspace (overlay over a kernel-mounted EROFS image, namespaces,
// cgroup), when the host allows it; else the key is absent and a note says why.
func init() {
	register(Scenario{Name: "native_exec", Keys: []string{"native_exec", "native_workspace_create"}, Run: runNativeExec})
}

// nativeArgv is what native_exec runs (tests replace it to break the output).
var nativeArgv = []string{"/bin/echo", "hi"}

func runNativeExec(ctx context.Context, e *Env, r *Result) error {
	absent := func(why string) error {
		r.Notes.Set("native_exec", "not measured: "+why)
		return nil
	}
	if os.Geteuid() != 0 {
		return absent("the native tier needs root (mounts, cgroups, namespaces)")
	}
	for _, tool := range []string{"mkfs.erofs", "busybox"} {
		if _, err := exec.LookPath(tool); err != nil {
			return absent(tool + " is not installed (apt-get install erofs-utils busybox-static)")
		}
	}
	d, err := os.MkdirTemp("", "warren-bench-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	os.Chmod(d, 0o711)
	img, err := busyboxImage(filepath.Join(d, "img"))
	if err != nil {
		return absent(fmt.Sprintf("cannot build the busybox EROFS image: %v", err))
	}
	rt, err := native.NewRuntime(ctx, native.Config{
		RunDir: filepath.Join(d, "run"),
		// per process: a runtime clears its cgroup parent at start, and two
		// bench processes (or test binaries) may run at once
		CgroupName: fmt.Sprintf("warren-bench-%d", os.Getpid()),
	})
	if err != nil {
		return absent(fmt.Sprintf("native runtime: %v", err))
	}
	defer rt.Close()
	if err := rt.Available(); err != nil {
		return absent(fmt.Sprintf("native tier unavailable on this host: %v", err))
	}
	warm, n := e.Opts.iters(20), e.Opts.iters(200)
	t0 := time.Now()
	ws, err := rt.Workspace(ctx, "bench", img, nil, native.Limits{})
	create := Micros(time.Since(t0))
	if err != nil {
		return fmt.Errorf("native workspace: %w", err)
	}
	defer ws.Close()
	var b buffers
	samples := make([]float64, 0, n)
	for i := range warm + n {
		b.reset()
		t0 := time.Now()
		res, err := ws.Exec(ctx, native.Cmd{Path: nativeArgv[0], Args: nativeArgv, Dir: "/", Stdout: &b.out, Stderr: &b.err})
		us := Micros(time.Since(t0))
		if err == nil && res.Message != "" {
			err = errors.New(res.Message)
		}
		if err := verify(fmt.Sprint(nativeArgv), res.Status, err, b.out.Bytes(), b.err.Bytes(), isHi); err != nil {
			return err
		}
		if i >= warm {
			samples = append(samples, us)
		}
	}
	r.Metrics.Set("native_exec", Summarize(samples, warm))
	r.Metrics.Set("native_workspace_create", Summarize([]float64{create}, 0))
	r.Notes.Set("native_exec", "native tier: `/bin/echo hi` (busybox-static, an ELF binary) in a warm workspace: sync of the sandbox files into the overlay, fork+exec as a child of the workspace's namespace init in its own cgroup, output through pipes, harvest of changes. The image is busybox packed with mkfs.erofs, mounted by the kernel. native_workspace_create (informational, n=1) = the workspace's creation (overlay, tmpfs, namespaces, init).")
	return nil
}

// busyboxImage packs busybox-static and a few applet links into an EROFS
// image with mkfs.erofs.
func busyboxImage(dir string) (string, error) {
	root := filepath.Join(dir, "root")
	for _, sub := range []string{"bin", "etc", "proc", "dev", "tmp", "home/user", "sys"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o755); err != nil {
			return "", err
		}
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755); err != nil {
		return "", err
	}
	for _, applet := range []string{"sh", "echo", "true", "cat"} {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644); err != nil {
		return "", err
	}
	img := filepath.Join(dir, "busybox.erofs")
	if out, err := exec.Command("mkfs.erofs", "--quiet", img, root).CombinedOutput(); err != nil {
		return "", fmt.Errorf("mkfs.erofs: %v: %s", err, out)
	}
	return img, nil
}
