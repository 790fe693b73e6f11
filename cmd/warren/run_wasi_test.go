package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wasiModule compiles C source to a WASI module with Debian's clang-14.
func wasiModule(t *testing.T, dir, name, src string) string {
	t.Helper()
	cc, err := exec.LookPath("clang-14")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("clang-14 (wasm32-wasi) is missing; scripts/test.sh installs it")
		}
		t.Skip("clang-14 with wasm32-wasi is not installed (scripts/test.sh installs it)")
	}
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if msg, err := exec.Command(cc, "--target=wasm32-wasi", "-O2", "-o", out, c).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, msg)
	}
	os.Chmod(out, 0o755)
	return out
}

// TestRunWASM: a WASI module in the sandbox runs by path, from PATH and in
// a pipeline with resident commands; its writes land in the sandbox; a
// loop ends at the timeout.
func TestRunWASM(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	wasiModule(t, bin, "upper", `#include <stdio.h>
#include <ctype.h>
int main(int argc, char **argv) {
	int c;
	while ((c = getchar()) != EOF) putchar(toupper(c));
	FILE *f = fopen("/tmp/seen", "w");
	fprintf(f, "%d args, first %s\n", argc, argc > 1 ? argv[1] : "-");
	fclose(f);
	return argc > 2 ? 3 : 0;
}`)
	wasiModule(t, bin, "spin", `int main(void) { volatile long n = 0; for (;;) n++; }`)
	tests := []struct {
		name, script, want string
		err                bool
	}{
		{"by path in a pipeline", "echo hello | /opt/bin/upper x | tr H J; cat /tmp/seen", "JELLO\n2 args, first x\n", false},
		{"on PATH with status", "PATH=/opt/bin:$PATH; echo a | upper 1 2; echo status=$?", "A\nstatus=3\n", false},
		{"to a file", "echo abc | /opt/bin/upper > /tmp/o; wc -c < /tmp/o; cat /tmp/o", "4\nABC\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runVerb(t, "", "run", "--copy-in", bin+":/opt/bin", "-c", tt.script)
			if err != nil || out != tt.want {
				t.Fatalf("out %q, want %q (stderr %q, err %v)", out, tt.want, errOut, err)
			}
		})
	}
	t0 := time.Now()
	_, errOut, err := runVerb(t, "", "run", "--timeout", "1s", "--copy-in", bin+":/opt/bin", "-c", "/opt/bin/spin")
	if err == nil || time.Since(t0) > 10*time.Second {
		t.Fatalf("spin: err %v after %v (stderr %q)", err, time.Since(t0), errOut)
	}
	if !strings.Contains(err.Error(), "124") {
		t.Fatalf("spin ended with %v, want exit status 124 (stderr %q)", err, errOut)
	}
}
