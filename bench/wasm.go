package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing/fstest"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wasm"
)

// The WASM tier: a small C WASI program (clang-14 --target=wasm32-wasi)
// and a Go wasip1 one, each printing its arguments, run by wasm.Runtime's
// Exec (the shell's hook) from the sandbox's image: instantiate + run +
// exit, with the compile cached
// (the first run of the runtime compiles). wasm_compile_cold is a fresh
// runtime each sample (compile + instantiate + run), and wasm_exec_native
// the same C program built for the host, fork+exec'd (informational).
func init() {
	register(
		Scenario{Name: "wasm_exec", Keys: []string{"wasm_exec", "wasm_compile_cold", "wasm_exec_native"}, Run: runWASMExec},
		Scenario{Name: "wasm_exec_go", Keys: []string{"wasm_exec_go", "wasm_compile_cold_go"}, Run: runWASMExecGo},
	)
}

// wasmArgs are what the programs are given, and print back (tests replace
// them to break the output).
var wasmArgs = []string{"hi"}

const wasmEchoC = `#include <stdio.h>
int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
	return 0;
}
`

const wasmEchoGo = `package main

import (
	"fmt"
	"os"
	"strings"
)

func main() { fmt.Println(strings.Join(os.Args[1:], " ")) }
`

func runWASMExec(ctx context.Context, e *Env, r *Result) error {
	absent := func(why string) error {
		r.Notes.Set("wasm_exec", "not measured: "+why)
		return nil
	}
	cc, err := exec.LookPath("clang-14")
	if err != nil {
		return absent("clang-14 is not installed (apt-get install clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32)")
	}
	d, err := os.MkdirTemp("", "warren-bench-wasm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	src := filepath.Join(d, "echo.c")
	if err := os.WriteFile(src, []byte(wasmEchoC), 0o644); err != nil {
		return err
	}
	mod := filepath.Join(d, "echo.wasm")
	if out, err := exec.CommandContext(ctx, cc, "--target=wasm32-wasi", "-O2", "-o", mod, src).CombinedOutput(); err != nil {
		return absent(fmt.Sprintf("clang-14 --target=wasm32-wasi failed: %v %s", err, out))
	}
	bin, err := os.ReadFile(mod)
	if err != nil {
		return err
	}
	warm, n := e.Opts.iters(200), e.Opts.iters(2000)
	cached, err := wasmSamples(ctx, bin, warm, n, false)
	if err != nil {
		return err
	}
	cold, err := wasmSamples(ctx, bin, 0, e.Opts.iters(50), true)
	if err != nil {
		return err
	}
	r.Metrics.Set("wasm_exec", Summarize(cached, warm))
	r.Metrics.Set("wasm_compile_cold", Summarize(cold, 0))
	note := fmt.Sprintf("WASM tier: a %d-byte C WASI module (clang-14 -O2 --target=wasm32-wasi, printf of argv) run by wasm.Runtime.Exec from the sandbox's image (the shell's hook; the module's hash is remembered for image files): instantiate (memory from the sandbox's budget, vfs mounted at /) + _start + exit, compile cached in memory. wasm_compile_cold: a new runtime per sample (wazero compile + instantiate + run, no cache).", len(bin))
	// The same program built for the host, fork+exec'd: the native tier's
	// floor (no namespaces, overlay or cgroup; those are in native_exec).
	host := filepath.Join(d, "echo-native")
	if out, err := exec.CommandContext(ctx, cc, "-O2", "-o", host, src).CombinedOutput(); err != nil {
		note += fmt.Sprintf(" wasm_exec_native not measured: host build failed: %v %s", err, bytes.TrimSpace(out))
	} else {
		warmN, nN := e.Opts.iters(20), e.Opts.iters(500)
		native := make([]float64, 0, nN)
		var b buffers
		for i := range warmN + nN {
			b.reset()
			cmd := exec.CommandContext(ctx, host, wasmArgs...)
			cmd.Stdout, cmd.Stderr = &b.out, &b.err
			t0 := time.Now()
			err := cmd.Run()
			us := Micros(time.Since(t0))
			if err := verify("echo-native "+strings.Join(wasmArgs, " "), 0, err, b.out.Bytes(), b.err.Bytes(), isHi); err != nil {
				return err
			}
			if i >= warmN {
				native = append(native, us)
			}
		}
		r.Metrics.Set("wasm_exec_native", Summarize(native, warmN))
		note += " wasm_exec_native (informational): the same C source built by clang-14 for the host and run with os/exec (fork+exec+wait, pipes), no sandboxing."
	}
	r.Notes.Set("wasm_exec", note)
	return nil
}

func runWASMExecGo(ctx context.Context, e *Env, r *Result) error {
	absent := func(why string) error {
		r.Notes.Set("wasm_exec_go", "not measured: "+why)
		return nil
	}
	if raceEnabled {
		return absent("under -race wazero's compile of a 2 MB Go module takes minutes")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return absent("the go tool is not on PATH (it builds the GOOS=wasip1 program)")
	}
	d, err := os.MkdirTemp("", "warren-bench-wasm-go-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	if err := os.WriteFile(filepath.Join(d, "main.go"), []byte(wasmEchoGo), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
		return err
	}
	mod := filepath.Join(d, "hello.wasm")
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", mod, ".")
	cmd.Dir = d
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return absent(fmt.Sprintf("go build (wasip1) failed: %v %s", err, bytes.TrimSpace(out)))
	}
	bin, err := os.ReadFile(mod)
	if err != nil {
		return err
	}
	warm, n := e.Opts.iters(20), e.Opts.iters(300)
	cached, err := wasmSamples(ctx, bin, warm, n, false)
	if err != nil {
		return err
	}
	coldN := 10 // each compiles the whole Go runtime: seconds
	if e.Opts.Quick {
		coldN = 2
	}
	cold, err := wasmSamples(ctx, bin, 0, coldN, true)
	if err != nil {
		return err
	}
	r.Metrics.Set("wasm_exec_go", Summarize(cached, warm))
	r.Metrics.Set("wasm_compile_cold_go", Summarize(cold, 0))
	r.Notes.Set("wasm_exec_go", fmt.Sprintf("WASM tier: a %d-byte Go program (GOOS=wasip1, fmt.Println of os.Args) run by wasm.Runtime.Exec from the sandbox's image, compile cached: instantiate + the Go runtime's start-up + exit. wasm_compile_cold_go: a new runtime per sample (compile of the module included).", len(bin)))
	return nil
}

// wasmSamples runs bin warm+n times and times each run after the warm-up;
// cold makes a new runtime (so a new compile) for every run.
func wasmSamples(ctx context.Context, bin []byte, warm, n int, cold bool) ([]float64, error) {
	// The module is in the sandbox's image, as tools installed in an
	// image are (a module in the delta is also read and hashed per exec).
	fsys := vfs.New(vfs.Options{Base: fstest.MapFS{"bin/echo": {Data: bin, Mode: 0o755}}})
	if err := fsys.MkdirAll(SandboxCwd, 0o755); err != nil {
		return nil, err
	}
	mem := commands.NewMemory(256 << 20)
	var rt *wasm.Runtime
	newRT := func() {
		if rt != nil {
			rt.Close(ctx)
		}
		rt = wasm.New(wasm.Config{})
	}
	newRT()
	defer func() { rt.Close(ctx) }()
	var b buffers
	samples := make([]float64, 0, n)
	for i := range warm + n {
		if cold && i > 0 {
			newRT()
		}
		b.reset()
		inv := &commands.Invocation{Args: append([]string{"echo"}, wasmArgs...), Stdin: bytes.NewReader(nil),
			Stdout: &b.out, Stderr: &b.err, Dir: SandboxCwd, Env: SandboxEnv, FS: fsys, Sys: &commands.System{Memory: mem}}
		t0 := time.Now()
		st := rt.Exec(ctx, inv, "/bin/echo")
		us := Micros(time.Since(t0))
		if err := verify("echo.wasm "+strings.Join(wasmArgs, " "), st, nil, b.out.Bytes(), b.err.Bytes(), isHi); err != nil {
			return nil, err
		}
		if i >= warm {
			samples = append(samples, us)
		}
	}
	if mem.Used() != 0 {
		return nil, fmt.Errorf("wasm: %d bytes of instance memory still charged after the runs", mem.Used())
	}
	return samples, nil
}
