package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wasm"
)

// BenchmarkWASMExec is wasm_exec as a Go benchmark: the C WASI echo in
// the sandbox's image, compile cached, Exec (instantiate + run + exit) per op.
func BenchmarkWASMExec(b *testing.B) {
	cc, err := exec.LookPath("clang-14")
	if err != nil {
		b.Skip("clang-14 with wasm32-wasi is not installed (scripts/test.sh installs it)")
	}
	d := b.TempDir()
	src, mod := filepath.Join(d, "echo.c"), filepath.Join(d, "echo.wasm")
	os.WriteFile(src, []byte(wasmEchoC), 0o644)
	if out, err := exec.Command(cc, "--target=wasm32-wasi", "-O2", "-o", mod, src).CombinedOutput(); err != nil {
		b.Fatalf("clang: %v %s", err, out)
	}
	bin, err := os.ReadFile(mod)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rt := wasm.New(wasm.Config{})
	defer rt.Close(ctx)
	fsys := vfs.New(vfs.Options{Base: fstest.MapFS{"bin/echo": {Data: bin, Mode: 0o755}}})
	mem := commands.NewMemory(256 << 20)
	var buf buffers
	samples := make([]float64, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		buf.reset()
		inv := &commands.Invocation{Args: []string{"echo", "hi"}, Stdin: bytes.NewReader(nil), Stdout: &buf.out, Stderr: &buf.err,
			Dir: "/", FS: fsys, Sys: &commands.System{Memory: mem}}
		t0 := time.Now()
		st := rt.Exec(ctx, inv, "/bin/echo")
		samples = append(samples, Micros(time.Since(t0)))
		if err := verify("echo.wasm hi", st, nil, buf.out.Bytes(), buf.err.Bytes(), isHi); err != nil {
			b.Fatal(err)
		}
	}
	reportPercentiles(b, samples)
}
