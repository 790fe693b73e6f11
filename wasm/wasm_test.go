package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wasm"
)

var (
	buildOnce sync.Once
	built     map[string][]byte
	buildErr  error
)

// clang is Debian's clang-14 with the wasm32-wasi target (wasi-libc,
// lld-14, libclang-rt-14-dev-wasm32); scripts/test.sh installs them.
func clang() (string, error) {
	for _, c := range []string{"clang-14", "clang"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no clang-14 on PATH")
}

// fixtures compiles testdata/c/*.c to WASI modules (once per run): small
// C modules compile in milliseconds under wazero, even under -race.
func fixtures(t *testing.T) map[string][]byte {
	t.Helper()
	buildOnce.Do(func() {
		cc, err := clang()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "warren-wasm-fixtures")
		if err != nil {
			buildErr = err
			return
		}
		built = map[string][]byte{}
		for _, name := range []string{"echo", "files", "loop", "grow"} {
			out := filepath.Join(dir, name+".wasm")
			cmd := exec.Command(cc, "--target=wasm32-wasi", "-O2", "-o", out, "testdata/c/"+name+".c")
			if msg, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("building %s: %v\n%s", name, err, msg)
				return
			}
			if built[name], err = os.ReadFile(out); err != nil {
				buildErr = err
				return
			}
		}
	})
	if buildErr != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("WASI fixtures cannot be built (%v): install clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32", buildErr)
		}
		t.Fatal(buildErr)
	}
	return built
}

// sandbox is a vfs over a tiny base image, with the fixtures installed.
func sandbox(t *testing.T) *vfs.FS {
	t.Helper()
	base := fstest.MapFS{
		"etc/hostname": {Data: []byte("sandbox\n")},
		"in/given.txt": {Data: []byte("from the image\n")},
		"home/user":    {Mode: 0o755 | os.ModeDir},
	}
	fsys := vfs.New(vfs.Options{Base: base})
	if err := fsys.MkdirAll("/bin", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, bin := range fixtures(t) {
		if err := fsys.WriteFile("/bin/"+name, bin, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return fsys
}

type run struct {
	status         int
	stdout, stderr string
	took           time.Duration
}

func exec1(t *testing.T, rt *wasm.Runtime, fsys *vfs.FS, ctx context.Context, stdin string, sys *commands.System, args ...string) run {
	t.Helper()
	bin, err := fsys.ReadFile("/bin/" + args[0])
	if err != nil {
		bin = []byte(args[0]) // a test passes raw module bytes as the "name"
		args[0] = "raw"
	}
	var out, errb bytes.Buffer
	inv := &commands.Invocation{
		Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Dir: "/home/user", Env: []string{"GREETING=hello", "PWD=/home/user"}, FS: fsys, Sys: sys,
	}
	// No module may hang a test: every run has a deadline.
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	t0 := time.Now()
	st := rt.Run(ctx, inv, "/bin/"+args[0], bin)
	return run{st, out.String(), errb.String(), time.Since(t0)}
}

func TestRunEcho(t *testing.T) {
	rt := wasm.New(wasm.Config{})
	defer rt.Close(context.Background())
	fsys := sandbox(t)
	tests := []struct {
		name   string
		args   []string
		stdin  string
		status int
		stdout string
	}{
		{"args env cwd stdin", []string{"echo", "a b", "c"}, "piped\n", 0, "args=[a b][c] greeting=hello pwd=/home/user\npiped\n"},
		{"exit status", []string{"echo", "-exit", "42"}, "", 42, "args= greeting=hello pwd=/home/user\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := exec1(t, rt, fsys, context.Background(), tt.stdin, nil, tt.args...)
			if r.status != tt.status || r.stdout != tt.stdout || r.stderr != "to stderr\n" {
				t.Fatalf("status %d stdout %q stderr %q; want %d %q", r.status, r.stdout, r.stderr, tt.status, tt.stdout)
			}
		})
	}
}

// TestCompileCache: the second run of a module does not compile it again.
func TestCompileCache(t *testing.T) {
	rt := wasm.New(wasm.Config{})
	defer rt.Close(context.Background())
	fsys := sandbox(t)
	exec1(t, rt, fsys, context.Background(), "", nil, "echo")
	if rt.Compiles() != 1 {
		t.Fatalf("first run: %d compiles", rt.Compiles())
	}
	r := exec1(t, rt, fsys, context.Background(), "", nil, "echo", "again")
	if rt.Compiles() != 1 || r.status != 0 {
		t.Fatalf("second run compiled again (%d compiles) or failed (%d)", rt.Compiles(), r.status)
	}
	// Memory limits are per instance: another limit reuses the compile.
	small := &commands.System{MaxMemoryBytes: 64 << 20}
	exec1(t, rt, fsys, context.Background(), "", small, "echo")
	if rt.Compiles() != 1 {
		t.Fatalf("a run at another memory limit compiled again: %d compiles", rt.Compiles())
	}
}

// TestFilesystem: the module's writes land in the vfs, and nothing leads
// out of it.
func TestFilesystem(t *testing.T) {
	rt := wasm.New(wasm.Config{})
	defer rt.Close(context.Background())
	fsys := sandbox(t)
	r := exec1(t, rt, fsys, context.Background(), "", nil, "files")
	if r.status != 0 {
		t.Fatalf("status %d: %s %s", r.status, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"given=from the image\n",
		"out entries=3\n",
		"dotdot=ERR\n",      // ".." past the root is refused (wasi-libc and wazero stop it at the preopen)
		"symlink=sandbox\n", // an absolute link resolves inside the sandbox
		"proc=ERR\n",
		"seek=wasm\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	got, err := fsys.ReadFile("/out/b.txt")
	if err != nil || string(got) != "from wasm\nappended\n" {
		t.Fatalf("/out/b.txt in the vfs: %q %v", got, err)
	}
	if got, err := fsys.ReadFile("/home/user/rel.txt"); err != nil || string(got) != "relative\n" {
		t.Fatalf("relative write did not land in $PWD: %q %v", got, err)
	}
	if tgt, err := fsys.Readlink("/out/etc-link"); err != nil || tgt != "/etc" {
		t.Fatalf("symlink %q %v", tgt, err)
	}
}

func TestLimits(t *testing.T) {
	rt := wasm.New(wasm.Config{})
	defer rt.Close(context.Background())
	fsys := sandbox(t)

	t.Run("timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		r := exec1(t, rt, fsys, ctx, "", nil, "loop")
		if r.status != wasm.StatusTimeout {
			t.Fatalf("infinite loop: status %d (%s), want %d", r.status, r.stderr, wasm.StatusTimeout)
		}
		if r.took > 1500*time.Millisecond {
			t.Fatalf("loop ran %v past a 500ms deadline", r.took)
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel2()
		r = exec1(t, rt, fsys, ctx2, "", nil, "loop")
		if r.status != wasm.StatusTimeout || r.took > 1300*time.Millisecond {
			t.Fatalf("cached loop: status %d after %v, want %d within 1.3s", r.status, r.took, wasm.StatusTimeout)
		}
	})
	t.Run("memory", func(t *testing.T) {
		r := exec1(t, rt, fsys, context.Background(), "", &commands.System{MaxMemoryBytes: 64 << 20}, "grow")
		if r.status != wasm.StatusMemory || !strings.Contains(r.stderr, "warren: wasm: memory limit (64 MiB)") {
			t.Fatalf("growing module: status %d stderr %q", r.status, tail(r.stderr))
		}
		if !strings.Contains(r.stdout, "MiB 8\n") {
			t.Fatalf("it never ran: %q", r.stdout)
		}
	})
	t.Run("sandbox budget", func(t *testing.T) {
		sys := &commands.System{MaxMemoryBytes: 1 << 30, Memory: commands.NewMemory(48 << 20)}
		r := exec1(t, rt, fsys, context.Background(), "", sys, "grow")
		if r.status != 125 || !strings.Contains(r.stderr, "warren: memory limit exceeded (48 MiB)") {
			t.Fatalf("budget: status %d stderr %q", r.status, tail(r.stderr))
		}
		if sys.Memory.Used() != 0 {
			t.Fatalf("the instance left %d bytes charged", sys.Memory.Used())
		}
	})
	t.Run("bad module", func(t *testing.T) {
		r := exec1(t, rt, fsys, context.Background(), "", nil, "\x00asm\x02\x00\x00\x00junk")
		if r.status != wasm.StatusCannotExec || !strings.Contains(r.stderr, "not a valid WebAssembly module") {
			t.Fatalf("junk: %d %q", r.status, r.stderr)
		}
	})
	t.Run("foreign import", func(t *testing.T) {
		r := exec1(t, rt, fsys, context.Background(), "", nil, string(importsEnvFoo()))
		if r.status != wasm.StatusCannotExec || !strings.Contains(r.stderr, "imports env.foo") {
			t.Fatalf("foreign import: %d %q", r.status, r.stderr)
		}
	})
}

func tail(s string) string {
	if len(s) > 300 {
		return "..." + s[len(s)-300:]
	}
	return s
}

// importsEnvFoo is a minimal module: (import "env" "foo" (func)) and an
// exported _start.
func importsEnvFoo() []byte {
	return []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
		0x02, 0x0b, 0x01, 0x03, 'e', 'n', 'v', 0x03, 'f', 'o', 'o', 0x00, 0x00, // import env.foo, func type 0
		0x03, 0x02, 0x01, 0x00, // function section: one func of type 0
		0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x01, // export _start = func 1
		0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // code: empty body
	}
}

// TestConcurrentInstances: one compiled module, many instances at once,
// each with its own stdio and filesystem.
func TestConcurrentInstances(t *testing.T) {
	rt := wasm.New(wasm.Config{})
	defer rt.Close(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fsys := sandbox(t)
			r := exec1(t, rt, fsys, context.Background(), fmt.Sprintf("n%d\n", i), nil, "echo")
			if !strings.HasSuffix(r.stdout, fmt.Sprintf("n%d\n", i)) {
				errs <- fmt.Errorf("instance %d got %q", i, r.stdout)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if rt.Compiles() != 1 {
		t.Errorf("%d compiles for one module", rt.Compiles())
	}
}

// TestExecImageModule: a module in the image is read and hashed once per
// sandbox; a module in the delta every time; a module copied up and
// rewritten runs its new bytes.
func TestExecImageModule(t *testing.T) {
	bins := fixtures(t)
	base := fstest.MapFS{"bin/tool": {Data: bins["echo"], Mode: 0o755}, "home/user": {Mode: 0o755 | os.ModeDir}}
	fsys := vfs.New(vfs.Options{Base: base})
	rt := wasm.New(wasm.Config{})
	defer rt.Close(context.Background())
	exec := func(path string) (int, string) {
		var out, errb bytes.Buffer
		inv := &commands.Invocation{Args: []string{"tool", "x"}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/home/user", FS: fsys}
		return rt.Exec(context.Background(), inv, path), out.String()
	}
	for i := range 3 {
		if st, out := exec("/bin/tool"); st != 0 || !strings.HasPrefix(out, "args=[x]") {
			t.Fatalf("run %d: %d %q", i, st, out)
		}
	}
	if n := rt.ModuleReads(); n != 1 {
		t.Fatalf("an image module was read %d times in 3 runs, want once", n)
	}
	// Rewritten in the delta (copied up): the new bytes run, read each time.
	if err := fsys.WriteFile("/bin/tool", bins["files"], 0o755); err != nil {
		t.Fatal(err)
	}
	if st, out := exec("/bin/tool"); strings.HasPrefix(out, "args=[x]") {
		t.Fatalf("the rewritten module ran the old code: %d %q", st, out)
	}
	exec("/bin/tool")
	if n := rt.ModuleReads(); n != 3 {
		t.Fatalf("a delta module: %d reads after 2 more runs, want 3", n)
	}
	if rt.Compiles() != 2 {
		t.Fatalf("%d compiles, want 2 (one per content)", rt.Compiles())
	}
}
