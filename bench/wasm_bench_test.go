package bench

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	bin := compileWASI(b, wasmEchoC)
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

// wasmCatC says it is ready, then copies stdin to stdout: an instance
// that stays alive, holding its memory, until its stdin closes.
const wasmCatC = `#include <stdio.h>
int main(void) {
	char buf[4096]; size_t n;
	fputs("ready\n", stdout); fflush(stdout);
	while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) fwrite(buf, 1, n, stdout);
	return 0;
}
`

// readyWriter closes ready on the first write (the module's "ready").
type readyWriter struct {
	once  bool
	ready chan struct{}
}

func (w *readyWriter) Write(p []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.ready)
	}
	return len(p), nil
}

// BenchmarkWASMInstanceRSS: the resident memory each live instance of a
// small C WASI program costs the node (64 at once, blocked on stdin),
// reported as rss-bytes/instance (VmRSS after minus before, over 64).
func BenchmarkWASMInstanceRSS(b *testing.B) {
	bin := compileWASI(b, wasmCatC)
	ctx := context.Background()
	rt := wasm.New(wasm.Config{})
	defer rt.Close(ctx)
	fsys := vfs.New(vfs.Options{Base: fstest.MapFS{"bin/cat": {Data: bin, Mode: 0o755}}})
	mem := commands.NewMemory(4 << 30)
	run := func(stdin io.Reader, stdout io.Writer) int {
		inv := &commands.Invocation{Args: []string{"cat"}, Stdin: stdin, Stdout: stdout, Stderr: io.Discard,
			Dir: "/", FS: fsys, Sys: &commands.System{Memory: mem}}
		return rt.Exec(ctx, inv, "/bin/cat")
	}
	run(bytes.NewReader(nil), io.Discard) // compile once, outside the figure
	const n = 64
	var perInstance []float64
	for b.Loop() {
		runtime.GC()
		before := vmRSS(b)
		var wg sync.WaitGroup
		pipes := make([]*io.PipeWriter, n)
		for i := range n {
			pr, pw := io.Pipe()
			pipes[i] = pw
			w := &readyWriter{ready: make(chan struct{})}
			wg.Add(1)
			go func() { defer wg.Done(); run(pr, w) }()
			<-w.ready
		}
		after := vmRSS(b)
		for _, pw := range pipes {
			pw.Close()
		}
		wg.Wait()
		perInstance = append(perInstance, float64(after-before)/n)
	}
	slices.Sort(perInstance)
	b.ReportMetric(perInstance[len(perInstance)/2], "rss-bytes/instance")
}

// vmRSS is the process's resident set, in bytes.
func vmRSS(tb testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// compileWASI builds a C WASI program with Debian's clang-14.
func compileWASI(b *testing.B, csrc string) []byte {
	b.Helper()
	cc, err := exec.LookPath("clang-14")
	if err != nil {
		b.Skip("clang-14 with wasm32-wasi is not installed (scripts/test.sh installs it)")
	}
	d := b.TempDir()
	src, mod := filepath.Join(d, "prog.c"), filepath.Join(d, "prog.wasm")
	if err := os.WriteFile(src, []byte(csrc), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command(cc, "--target=wasm32-wasi", "-O2", "-o", mod, src).CombinedOutput(); err != nil {
		b.Fatalf("clang: %v %s", err, out)
	}
	bin, err := os.ReadFile(mod)
	if err != nil {
		b.Fatal(err)
	}
	return bin
}
