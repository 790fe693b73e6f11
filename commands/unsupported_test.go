package commands_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/optparse"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

func TestBadUsage(t *testing.T) {
	set := optparse.New("ab:", "long")
	cases := []struct {
		name     string
		args     []string
		fallBack bool
		refused  string // What of the refusal, "" none
		stderr   string
		status   int
	}{
		{"unknown short, shell can fall back", []string{"-Z"}, true, "-Z", "", 1},
		{"unknown long, shell can fall back", []string{"--nope"}, true, "--nope", "", 1},
		{"unknown, nobody to fall back to", []string{"-Z"}, false, "", "cmd: invalid option -- 'Z'\n", 1},
		{"missing argument is no refusal", []string{"-b"}, true, "", "cmd: option requires an argument -- 'b'\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			inv := &commands.Invocation{Args: []string{"cmd"}, Stderr: &stderr}
			if c.fallBack {
				inv.FallBack = &commands.Refusals{}
			}
			_, _, err := set.Parse(c.args)
			if err == nil {
				t.Fatal("no parse error")
			}
			st := inv.BadUsage(err, "cmd: "+err.Error()+"\n", 1)
			if st != c.status || stderr.String() != c.stderr {
				t.Fatalf("status %d stderr %q, want %d %q", st, stderr.String(), c.status, c.stderr)
			}
			got := ""
			if r := inv.Refusal(); r != nil {
				got = r.What
				var ue *commands.UnsupportedError
				if !errors.As(error(r), &ue) || ue.Cmd != "cmd" {
					t.Fatalf("refusal %#v is not an UnsupportedError of cmd", r)
				}
			}
			if got != c.refused {
				t.Fatalf("refused %q, want %q", got, c.refused)
			}
		})
	}
}

// TestRefusals runs real resident commands with FallBack set: what they
// cannot do is a refusal that wrote nothing; a real failure is not one.
func TestRefusals(t *testing.T) {
	table := std.Table()
	cases := []struct {
		argv    []string
		refused string
	}{
		{[]string{"git", "apply", "--3way", "x.patch"}, "apply --3way"},
		{[]string{"git", "am", "-3"}, "am -3"},
		{[]string{"git", "rebase", "main"}, "rebase"},
		{[]string{"git", "log", "--merges", "--all"}, "log --all"},
		{[]string{"git", "log", "--all", "--oneline"}, "log --all"},
		{[]string{"git", "--git-dir=/r/.git", "status"}, "--git-dir=/r/.git"},
		{[]string{"git", "stash", "branch", "b"}, "stash branch"},
		{[]string{"sed", "--debug-nope", "p"}, "--debug-nope"},
		{[]string{"grep", "-Y", "x"}, "-Y"},
		{[]string{"find", ".", "-fprint", "out"}, "-fprint"},
		{[]string{"find", ".", "-nosuchpredicate"}, "-nosuchpredicate"},
		{[]string{"ls", "--nosuch"}, "--nosuch"},
		{[]string{"cat", "-Z"}, "-Z"},
		// these parse their options on a copy of the Invocation
		{[]string{"head", "--bogus"}, "--bogus"},
		{[]string{"seq", "--bogus", "3"}, "--bogus"},
		{[]string{"fold", "--bogus"}, "--bogus"},
		{[]string{"cat", "missing.txt"}, ""},
		{[]string{"git", "status"}, ""},
	}
	for _, c := range cases {
		fsys := vfs.New(vfs.Options{})
		var out, errb bytes.Buffer
		init := &commands.Invocation{Args: []string{"git", "init", "-q"}, Stdout: &out, Stderr: &errb, Dir: "/", FS: fsys}
		if st := table["git"](context.Background(), init); st != 0 {
			t.Fatalf("git init: %d %s", st, errb.String())
		}
		stdin := &countingReader{}
		inv := &commands.Invocation{Args: c.argv, Stdin: stdin, Stdout: &out, Stderr: &errb, Dir: "/", FS: fsys, FallBack: &commands.Refusals{}}
		table[c.argv[0]](context.Background(), inv)
		got := ""
		if r := inv.Refusal(); r != nil {
			got = r.What
			if out.Len()+errb.Len() != 0 || stdin.n != 0 {
				t.Errorf("%q refused after an effect: stdout %q stderr %q, %d stdin reads", c.argv, out.String(), errb.String(), stdin.n)
			}
		}
		if got != c.refused {
			t.Errorf("%q: refused %q, want %q (stderr %q)", c.argv, got, c.refused, errb.String())
		}
	}
}

type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) { c.n++; return 0, nil }
