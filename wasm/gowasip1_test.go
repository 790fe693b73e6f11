//go:build !race

package wasm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/wasm"
)

// TestGoWasip1 runs a Go program built with GOOS=wasip1: the Go runtime
// starts in $PWD. It is left out of -race builds, where wazero's compile of
// a 2 MB module takes minutes; scripts/test.sh runs it without -race.
func TestGoWasip1(t *testing.T) {
	out := filepath.Join(t.TempDir(), "go.wasm")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/gowasip1")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	fsys := sandbox(t)
	if err := fsys.WriteFile("/bin/gohello", bin, 0o755); err != nil {
		t.Fatal(err)
	}
	rt := wasm.New(wasm.Config{})
	defer rt.Close(context.Background())
	r := exec1(t, rt, fsys, context.Background(), "", nil, "gohello")
	if r.status != 0 || !strings.Contains(r.stdout, `go cwd=/home/user given="from the image\n" err=<nil>`) {
		t.Fatalf("status %d stdout %q stderr %q", r.status, r.stdout, tail(r.stderr))
	}
	if data, err := fsys.ReadFile("/home/user/from-go.txt"); err != nil || string(data) != "go\n" {
		t.Fatalf("the Go module's relative write: %q %v", data, err)
	}
}
