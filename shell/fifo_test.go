package shell

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// Fifos behave as on Linux inside one Run: a reader waits for a writer
// (bounded by the deadline), data flows between them, EOF after the last
// writer.
func TestFifo(t *testing.T) {
	tests := []struct {
		name    string
		lim     Limits
		script  string
		out     string
		status  int
		stderr  string
		maxTime time.Duration
	}{
		{"reader without writer waits for the deadline", Limits{Timeout: 500 * time.Millisecond}, `cat /tmp/f; echo unreachable`, "", StatusTimeout, "time limit exceeded", 1500 * time.Millisecond},
		{"read builtin without writer", Limits{Timeout: 500 * time.Millisecond}, `read -r x < /tmp/f; echo unreachable`, "", StatusTimeout, "time limit exceeded", 1500 * time.Millisecond},
		{"writer without reader", Limits{Timeout: 500 * time.Millisecond}, `echo hi > /tmp/f; echo unreachable`, "", StatusTimeout, "time limit exceeded", 1500 * time.Millisecond},
		{"background writer", Limits{}, `echo hi > /tmp/f & cat /tmp/f`, "hi\n", 0, "", 5 * time.Second},
		{"background reader", Limits{}, `cat /tmp/f > /tmp/out & printf 'a\nb\n' > /tmp/f; wait; cat /tmp/out`, "a\nb\n", 0, "", 5 * time.Second},
		{"read loop", Limits{}, `{ echo a; echo b; } > /tmp/f & while read -r l; do echo "got $l"; done < /tmp/f`, "got a\ngot b\n", 0, "", 5 * time.Second},
		{"twice", Limits{}, `for i in 1 2; do echo $i > /tmp/f & cat /tmp/f; wait; done`, "1\n2\n", 0, "", 5 * time.Second},
		{"read-write does not wait", Limits{}, `exec 3<>/tmp/f; echo x >&3; read -r y <&3; echo $y`, "x\n", 0, "", 5 * time.Second},
		{"test -p", Limits{}, `[[ -p /tmp/f ]] && echo fifo`, "fifo\n", 0, "", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, tt.lim)
			if err := sh.FS().Mknod("/tmp/f", fs.ModeNamedPipe|0o644, 0); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, errs, st := runScript(t, sh, tt.script)
			if d := time.Since(start); d > tt.maxTime {
				t.Errorf("took %v, bound %v", d, tt.maxTime)
			}
			if out != tt.out || st != tt.status || !strings.Contains(errs, tt.stderr) {
				t.Errorf("got %q %q %d, want %q %q %d", out, errs, st, tt.out, tt.stderr, tt.status)
			}
		})
	}
}

// Read-only opens look at what they opened instead of a Stat first: a fifo
// reached through a symlink still opens as a fifo (it waits for a writer,
// where an empty file would give EOF at once), a missing file still fails
// with the open's error, and a regular file still reads (commands and <).
// (Fifos meet by the path opened, so a writer of /tmp/f and a reader of a
// link to it do not meet: as before, unlike Linux.)
func TestFifoReadOpen(t *testing.T) {
	tests := []struct {
		name, script, out, stderr string
		status                    int
	}{
		{"symlink to a fifo, command", `cat /tmp/l; echo unreachable`, "", "time limit exceeded", StatusTimeout},
		{"symlink to a fifo, redirection", `read -r x < /tmp/l; echo unreachable`, "", "time limit exceeded", StatusTimeout},
		{"missing file, command", `cat /tmp/nope; echo $?`, "1\n", "cat: /tmp/nope: No such file or directory", 0},
		{"missing file, redirection", `read -r x < /tmp/nope; echo $?`, "1\n", "/tmp/nope: No such file or directory", 0},
		{"regular file", `echo data > /tmp/r; cat /tmp/r; read -r x < /tmp/r; echo "$x"`, "data\ndata\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{Timeout: 300 * time.Millisecond})
			if err := sh.FS().Mknod("/tmp/f", fs.ModeNamedPipe|0o644, 0); err != nil {
				t.Fatal(err)
			}
			if err := sh.FS().Symlink("/tmp/f", "/tmp/l"); err != nil {
				t.Fatal(err)
			}
			out, errs, st := runScript(t, sh, tt.script)
			if out != tt.out || st != tt.status || !strings.Contains(errs, tt.stderr) {
				t.Errorf("got %q %q %d, want %q %q %d", out, errs, st, tt.out, tt.stderr, tt.status)
			}
		})
	}
}

// TestFifoWriteOpen: writing opens (redirections, a command's open) find
// a fifo in the one open they make (vfs.O_NOFIFO) and open it as a fifo,
// under a write gate that refuses everything: the vfs publishes no tree
// and asks no gate for them. A regular file is still gated.
func TestFifoWriteOpen(t *testing.T) {
	tests := []struct {
		name, script, out, stderr string
		status                    int
		fifoOnly                  bool // no tree published, the gate never asked
	}{
		{"redirection", `cat /tmp/f & echo hi > /tmp/f; wait`, "hi\n", "", 0, true},
		{"append", `cat /tmp/f & echo hi >> /tmp/f; wait`, "hi\n", "", 0, true},
		{"both", `cat /tmp/f & echo hi &> /tmp/f; wait`, "hi\n", "", 0, true},
		{"read-write", `exec 3<> /tmp/f; echo hi >&3; read -r x <&3; echo "$x"`, "hi\n", "", 0, true},
		{"noclobber", `set -C; cat /tmp/f & echo hi > /tmp/f; wait`, "hi\n", "", 0, true},
		{"symlink to a fifo", `cat /tmp/l & echo hi > /tmp/l; wait`, "hi\n", "", 0, true},
		{"command", `cat /tmp/f & echo hi | tee /tmp/f > /dev/null; wait`, "hi\n", "", 0, true},
		{"no reader", `echo hi > /tmp/f; echo unreachable`, "", "time limit exceeded", StatusTimeout, true},
		{"regular file gated", `echo hi >> /tmp/r; echo $?`, "1\n", "/tmp/r: Over budget", 0, false},
		{"command on a regular file gated", `echo hi | tee /tmp/r`, "hi\n", "tee: /tmp/r: over budget", 1, false}, // GNU tee: 1 when a file cannot be opened
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{Timeout: 300 * time.Millisecond})
			fsys := sh.FS()
			if err := fsys.Mknod("/tmp/f", fs.ModeNamedPipe|0o644, 0); err != nil {
				t.Fatal(err)
			}
			if err := fsys.Symlink("/tmp/f", "/tmp/l"); err != nil {
				t.Fatal(err)
			}
			calls := 0
			fsys.SetWriteGate(func() error { calls++; return errors.New("over budget") })
			mark := fsys.Mark()
			out, errs, st := runScript(t, sh, tt.script)
			if out != tt.out || st != tt.status || !strings.Contains(errs, tt.stderr) {
				t.Errorf("got %q %q %d, want %q %q %d", out, errs, st, tt.out, tt.stderr, tt.status)
			}
			if tt.fifoOnly && (fsys.Mark() != mark || calls != 0) {
				t.Errorf("opening the fifo published a tree (%v) or asked the gate (%d calls)", fsys.Mark() != mark, calls)
			}
			if !tt.fifoOnly && calls == 0 {
				t.Errorf("the regular file's open did not ask the gate")
			}
		})
	}
}
