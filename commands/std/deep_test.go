package std_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// deepTree builds /deep as a chain of levels directories, deeper than
// any path the vfs resolves (4096 bytes): it is made in two halves,
// each under the limit, and the second moved into the first.
func deepTree(t *testing.T, levels int) *vfs.FS {
	t.Helper()
	fsys := vfs.New(vfs.Options{})
	half := strings.Repeat("/d", levels/2)
	for _, root := range []string{"/deep", "/other"} {
		if err := fsys.MkdirAll(root+half, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(root+"/d/f", []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.Rename("/other", "/deep"+half+"/o"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.MkdirAll("/work", 0o755); err != nil {
		t.Fatal(err)
	}
	return fsys
}

// Commands that walk trees recurse once per level. A Go stack overflow
// would be fatal to every tenant; what bounds the recursion is the vfs's
// path limit (every walker names what it visits by its full path, which
// stops resolving at 4096 bytes, so at ~2048 levels), and each walker
// must turn that into an error and go on, not loop or crash.
func TestDeepTrees(t *testing.T) {
	tab := std.Table()
	cases := [][]string{
		{"find", "/deep"},
		{"find", "-L", "/deep", "-name", "nothing"},
		{"du", "-s", "/deep"},
		{"ls", "-R", "/deep"},
		{"grep", "-r", "x", "/deep"},
		{"diff", "-r", "/deep", "/deep"},
		{"chmod", "-R", "755", "/deep"},
		{"cp", "-r", "/deep", "/copy"},
		{"tar", "-cf", "/t.tar", "/deep"},
		{"rm", "-rf", "/deep"},
	}
	if raceEnabled {
		t.Log("under -race: find only (each walk of 2200 levels takes ~15 s there; the full set runs without -race)")
		cases = cases[:1]
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			fsys := deepTree(t, 2200)
			var out, errb bytes.Buffer
			inv := &commands.Invocation{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/work", FS: fsys,
				Sys: &commands.System{Memory: commands.NewMemory(256 << 20)}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			code := tab[args[0]](ctx, inv)
			took := time.Since(start)
			t.Logf("status %d in %v; stderr %.200q", code, took.Round(time.Millisecond), errb.String())
			if ctx.Err() != nil {
				t.Fatalf("did not finish in 20 s")
			}
			// Some walkers skip what they cannot stat silently (find -L,
			// du), as they do for vanished entries; the property here is
			// that the walk ends, and that what it reports is the path
			// limit, not a crash.
			if code != 0 && !strings.Contains(errb.String(), "too long") && !strings.Contains(errb.String(), "nesting too deep") {
				t.Fatalf("status %d without naming the problem: %.300q", code, errb.String())
			}
		})
	}
}

// A symlink loop under -L ends with a loop diagnostic, not endless descent.
func TestSymlinkLoops(t *testing.T) {
	tab := std.Table()
	for _, args := range [][]string{
		{"find", "-L", "/l"},
		{"du", "-L", "/l"},
		{"grep", "-R", "x", "/l"},
		{"cp", "-rL", "/l", "/copy"},
		{"ls", "-RL", "/l"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			files := cmdtest.NewFiles(nil)
			fsys := files.FS
			if err := fsys.MkdirAll("/l/a", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := fsys.Symlink("/l", "/l/a/up"); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			inv := files.Invocation(args, strings.NewReader(""), &out, &errb)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			code := tab[args[0]](ctx, inv)
			t.Logf("status %d; stderr %.200q; stdout %d bytes", code, errb.String(), out.Len())
			if ctx.Err() != nil {
				t.Fatalf("did not finish in 20 s")
			}
			if out.Len() > 1<<20 {
				t.Fatalf("wrote %d bytes: descended the loop", out.Len())
			}
		})
	}
}
