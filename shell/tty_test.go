package shell

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeTTY is a stream that says it is a terminal.
type fakeTTY struct {
	in   io.Reader
	out  bytes.Buffer
	args [][]string
}

func (f *fakeTTY) Read(p []byte) (int, error)  { return f.in.Read(p) }
func (f *fakeTTY) Write(p []byte) (int, error) { return f.out.Write(p) }

func (f *fakeTTY) Stty(args []string, stdout, stderr io.Writer) int {
	f.args = append(f.args, args)
	io.WriteString(stdout, "24 80\n")
	return 0
}

func TestTTYHooks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		script     string
		wantOut    string
		wantStatus int
		wantExit   bool
	}{
		{"[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo tty", "tty\n", 0, false},
		{"[ -t 1 ] > /tmp/x || echo redirected", "redirected\n", 0, false},
		{"( [ -t 1 ] && echo yes || echo no ) | cat", "no\n", 0, false},
		{"[ -t 7 ] || echo closed; [ -t x ] || echo bad", "closed\nbad\n", 0, false},
		{"stty size", "24 80\n", 0, false},
		{"exit 4", "", 4, true},
		{"false", "", 1, false},
		{"set -e; false", "", 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			tty := &fakeTTY{in: strings.NewReader("")}
			st, exited, err := sh.RunLine(ctx, tc.script, tty, tty, tty)
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.wantStatus || exited != tc.wantExit || tty.out.String() != tc.wantOut {
				t.Fatalf("RunLine = %d, exited %v, out %q; want %d, %v, %q", st, exited, tty.out.String(), tc.wantStatus, tc.wantExit, tc.wantOut)
			}
		})
	}
	// Not a terminal: stty says so.
	sh := newTestShell(t, Limits{})
	var out, errb bytes.Buffer
	if st, _ := sh.Run(ctx, "stty size", nil, &out, &errb); st != 1 || !strings.Contains(errb.String(), "Inappropriate ioctl") {
		t.Fatalf("stty off a terminal: %d %q", st, errb.String())
	}
}

func TestTTYInterruptIsNotExit(t *testing.T) {
	sh := newTestShell(t, Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	tty := &fakeTTY{in: strings.NewReader("")}
	_, exited, err := sh.RunLine(ctx, "while :; do :; done", tty, tty, tty)
	if err != nil || exited {
		t.Fatalf("a cancelled line: exited %v, %v; want the shell to go on", exited, err)
	}
	sh.SetStatus(130)
	sh.SetVars(map[string]string{"COLUMNS": "132", "LINES": "50"})
	var out bytes.Buffer
	sh.Run(context.Background(), "echo $? $COLUMNS $LINES", nil, &out, nil)
	if out.String() != "130 132 50\n" {
		t.Fatalf("after SetStatus and SetVars: %q", out.String())
	}
}
