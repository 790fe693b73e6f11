package sqlite_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sqlite"
	"github.com/warren-sandbox/warren/vfs"
)

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

// newFS is an empty sandbox filesystem with a /work directory.
func newFS(t *testing.T) *vfs.FS {
	t.Helper()
	fsys := vfs.New(vfs.Options{})
	if err := fsys.MkdirAll("/work", 0o755); err != nil {
		t.Fatal(err)
	}
	return fsys
}

// run runs sqlite3 with args and stdin in /work of fsys, with a budget.
func run(t *testing.T, fsys *vfs.FS, mem *commands.Memory, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return runCtx(ctx, fsys, mem, stdin, args...)
}

func runCtx(ctx context.Context, fsys *vfs.FS, mem *commands.Memory, stdin string, args ...string) result {
	tab := commands.Table{}
	sqlite.Register(tab)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: append([]string{"sqlite3"}, args...), Stdin: strings.NewReader(stdin),
		Stdout: &out, Stderr: &errb, Dir: "/work", FS: fsys, Sys: &commands.System{Memory: mem}}
	code := tab["sqlite3"](ctx, inv)
	return result{code, out.String(), errb.String()}
}
