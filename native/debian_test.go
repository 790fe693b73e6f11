package native_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestDebian_Tools: what agents run most, in the Debian image under the
// full default profile (seccomp, Docker's capabilities, masked /proc,
// Landlock): python, pip, git, gcc, tar, a multi-MB sort with temporary
// files, a multi-threaded C program, timeout, signals between processes.
// (Debian minbase has no procps, so there is no ps binary: the "ps" case
// reads /proc the way ps does.)
func TestDebian_Tools(t *testing.T) {
	rt, _ := requireRuntime(t)
	root, img := debianImage(t)
	v := vfs.New(vfs.Options{Base: os.DirFS(root)})
	ws, err := rt.Workspace(context.Background(), "debian-tools", img, v, native.Limits{Memory: 1 << 30, Pids: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if ws.Security() != native.SecurityDefault {
		t.Fatalf("security %v, want default", ws.Security())
	}
	const helloC = `#include <stdio.h>
int main(void) { printf("hello from gcc\n"); return 0; }
`
	const threadsC = `#include <pthread.h>
#include <stdio.h>
static long sums[8];
static void *work(void *a) { long i = (long)a, s = 0; for (long k = 0; k <= 1000000; k++) s += k % (i + 2); sums[i] = s; return 0; }
int main(void) {
	pthread_t t[8];
	for (long i = 0; i < 8; i++) if (pthread_create(&t[i], 0, work, (void *)i)) return 1;
	for (int i = 0; i < 8; i++) pthread_join(t[i], 0);
	long all = 0; for (int i = 0; i < 8; i++) all += sums[i];
	printf("8 threads %ld\n", all);
	return 0;
}
`
	for name, src := range map[string]string{"/root/hello.c": helloC, "/root/threads.c": threadsC} {
		if err := v.WriteFile(name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The sum the threads must agree on, computed here.
	var want int64
	for i := int64(0); i < 8; i++ {
		for k := int64(0); k <= 1000000; k++ {
			want += k % (i + 2)
		}
	}
	tests := []struct{ name, script, want string }{
		{"profile is on", "grep -E '^(Seccomp|NoNewPrivs|CapEff):' /proc/self/status | tr -s '\\t' ' '",
			"CapEff: 00000000a80425fb\nNoNewPrivs: 1\nSeccomp: 2\n"},
		{"python3 -c", `python3 -c 'import sys, hashlib; print(sys.version_info[0], hashlib.sha256(b"x").hexdigest()[:8])'`, "3 2d711642\n"},
		{"pip --version", "pip --version | cut -c1-4", "pip \n"},
		{"git init, add, commit", `git init -q /root/repo && cd /root/repo && git config user.name Agent && git config user.email agent@example.com &&
			echo one > a.txt && mkdir -p sub && echo two > sub/b.txt && git add -A && git commit -qm first &&
			echo three >> a.txt && git commit -qam second && git log --format=%s | tr '\n' ' ' && git status --porcelain | wc -l`,
			"second first 0\n"},
		{"gcc hello.c", "gcc hello.c -o hello && ./hello", "hello from gcc\n"},
		{"multi-threaded C program", "gcc -O2 -pthread threads.c -o threads && ./threads", "8 threads " + strconv.FormatInt(want, 10) + "\n"},
		{"tar create and extract", `mkdir -p t/a/b && head -c 300000 /dev/urandom > t/a/b/blob && echo hi > t/a/note &&
			tar -czf t.tgz -C t a && mkdir x && tar -xzf t.tgz -C x && cmp t/a/b/blob x/a/b/blob && tar -tzf t.tgz | sort | tr '\n' ' '`,
			"a/ a/b/ a/b/blob a/note "},
		// ~2.7 MB of shuffled lines, sorted with a 1 MB buffer so sort
		// spills to temporary files in /tmp and merges them.
		{"sort a multi-MB file", `seq 400000 | shuf > /tmp/r && test $(wc -c < /tmp/r) -gt 2500000 &&
			sort -n -S 1M -T /tmp --parallel=2 /tmp/r > /tmp/s && seq 400000 | cmp - /tmp/s && tail -1 /tmp/s`, "400000\n"},
		{"timeout", "timeout 1 sleep 5; echo status=$?", "status=124\n"},
		{"kill -TERM a child", "sleep 30 & p=$!; kill -TERM $p; wait $p; echo status=$?", "status=143\n"},
		{"trap a signal", `trap 'echo got USR1' USR1; kill -USR1 $$; echo after`, "got USR1\nafter\n"},
		{"ps (from /proc)", `sleep 30 & p=$!; for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = sleep ] && echo "${d#/proc/}"; done | grep -cx $p; kill $p`, "1\n"},
	}
	env := append(testEnv, "LANG=C.UTF-8", "HOME=/root")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			res, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/bash", Args: []string{"bash", "-c", tc.script},
				Env: env, Dir: "/root", Stdout: &out, Stderr: &errb, Limits: native.Limits{Timeout: 60 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("wall %v cpu %v", res.Wall.Round(time.Millisecond), res.CPU.Round(time.Millisecond))
			if res.Status != 0 || out.String() != tc.want {
				t.Fatalf("status %d, out %q, want %q; stderr:\n%s", res.Status, out.String(), tc.want, lastLines(errb.String(), 15))
			}
		})
	}
	// The Docker-like write rule (landlock.go): a native command may make
	// a top-level directory and write into it in the same exec.
	var errb strings.Builder
	res, _ := ws.Exec(context.Background(), native.Cmd{Path: "/bin/bash", Args: []string{"bash", "-c", "cd / && python3 -m venv --without-pip /venv && /venv/bin/python -c 'print(1)'"}, Env: env, Stderr: &errb})
	if res.Status != 0 {
		t.Errorf("python3 -m venv /venv: status %d stderr %q", res.Status, errb.String())
	}
}
