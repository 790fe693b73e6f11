package native_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/debiantest"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
)

// debianImage returns the shared Debian bookworm test tree and its image.
func debianImage(t *testing.T) (root, img string) {
	t.Helper()
	return debiantest.Image(t)
}

func lastLines(s string, n int) string { return debiantest.LastLines(s, n) }

func TestDebian_Python(t *testing.T) {
	rt, _ := requireRuntime(t)
	root, img := debianImage(t)
	v := vfs.New(vfs.Options{Base: os.DirFS(root)})
	ws, err := rt.Workspace(context.Background(), "debian", img, v, native.Limits{Memory: 512 << 20, Pids: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	env := append(testEnv, "LANG=C.UTF-8")
	run := func(args ...string) (string, native.Result) {
		t.Helper()
		var out, errb strings.Builder
		res, err := ws.Exec(context.Background(), native.Cmd{Path: args[0], Args: args, Env: env, Dir: "/root", Stdout: &out, Stderr: &errb})
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if res.Status != 0 {
			t.Fatalf("%v: status %d stderr %s", args, res.Status, errb.String())
		}
		t.Logf("%v: wall %v cpu %v", args[:2], res.Wall, res.CPU)
		return out.String(), res
	}
	if out, _ := run("python3", "-c", "import sys; print(sys.version_info[:2])"); out != "(3, 11)\n" {
		t.Fatalf("python3 -c: %q", out)
	}
	// python writes, the vfs (what resident commands read) sees it.
	run("python3", "-c", "open('/root/out.txt','w').write('\\n'.join(str(i*i) for i in range(5)))")
	if b, err := v.ReadFile("/root/out.txt"); err != nil || string(b) != "0\n1\n4\n9\n16" {
		t.Fatalf("harvested out.txt = %q, %v", b, err)
	}
	// A script written through the vfs runs natively and reads a vfs file.
	if err := v.WriteFile("/root/gen.py", []byte("import json\nprint(json.dumps(sorted(open('/root/out.txt').read().split()), separators=(',',':')))\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _ := run("python3", "/root/gen.py"); out != `["0","1","16","4","9"]`+"\n" {
		t.Fatalf("gen.py: %q", out)
	}
	// Streaming: python's stdout feeds a Go reader while it runs.
	pr, pw := io.Pipe()
	done := make(chan string)
	go func() {
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		done <- sb.String()
	}()
	res, err := ws.Exec(context.Background(), native.Cmd{Path: "python3", Args: []string{"python3", "-c", "for i in range(3): print('line', i, flush=True)"}, Env: env, Stdout: pw})
	pw.Close()
	if err != nil || res.Status != 0 {
		t.Fatalf("streaming exec: %v %d", err, res.Status)
	}
	if got := <-done; got != "line 0\nline 1\nline 2\n" {
		t.Fatalf("streamed: %q", got)
	}
	if out, _ := run("pip3", "--version"); !strings.HasPrefix(out, "pip ") {
		t.Fatalf("pip3 --version: %q", out)
	}
}

// TestDebian_Compat: a glibc userland under the default confinement:
// threads (glibc tries clone3 first and falls back on ENOSYS), processes,
// a multiprocessing pool over /dev/shm semaphores, signals.
func TestDebian_Compat(t *testing.T) {
	rt, _ := requireRuntime(t)
	root, img := debianImage(t)
	v := vfs.New(vfs.Options{Base: os.DirFS(root)})
	ws, err := rt.Workspace(context.Background(), "debian-compat", img, v, native.Limits{Memory: 512 << 20, Pids: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	script := `import threading, subprocess, multiprocessing, signal, os
r = []
ts = [threading.Thread(target=lambda i=i: r.append(i*i)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(r)[-1])
print(subprocess.run(["sh", "-c", "echo sub"], capture_output=True, text=True).stdout.strip())
with multiprocessing.Pool(2) as p: print(sum(p.map(abs, range(-10, 0))))
signal.signal(signal.SIGUSR1, lambda *a: print("sig"))
os.kill(os.getpid(), signal.SIGUSR1)
`
	var out, errb strings.Builder
	res, err := ws.Exec(context.Background(), native.Cmd{Path: "python3", Args: []string{"python3", "-c", script},
		Env: append(testEnv, "LANG=C.UTF-8"), Stdout: &out, Stderr: &errb})
	if err != nil || res.Status != 0 || out.String() != "49\nsub\n55\nsig\n" {
		t.Fatalf("status %d err %v out %q stderr %s", res.Status, err, out.String(), errb.String())
	}
}
