package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// TestOutLog_ReplayBound: attach replays at most the bound, newest bytes
// first kept, and says output was dropped.
func TestOutLog_ReplayBound(t *testing.T) {
	l := newOutLog(10)
	w := l.writer(0)
	for _, s := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		w.Write([]byte(s))
	}
	l.writer(1).Write([]byte("EE"))
	l.close()
	var out, errb bytes.Buffer
	truncated, err := l.attach(context.Background(), [2]io.Writer{&out, &errb})
	if err != nil || !truncated || out.String() != "ccccdddd" || errb.String() != "EE" {
		t.Fatalf("attach: %q %q truncated=%v err=%v", out.String(), errb.String(), truncated, err)
	}
	// A single write larger than the bound keeps its tail.
	l = newOutLog(4)
	l.writer(0).Write([]byte("0123456789"))
	l.close()
	out.Reset()
	l.attach(context.Background(), [2]io.Writer{&out, nil})
	if out.String() != "6789" {
		t.Fatalf("oversized write kept %q", out.String())
	}
}

// TestOutLog_LiveAttach: an attach in progress sees writes as they come
// and ends when the log closes.
func TestOutLog_LiveAttach(t *testing.T) {
	l := newOutLog(1 << 10)
	var out bytes.Buffer
	done := make(chan error, 1)
	pr, pw := io.Pipe()
	go func() {
		_, err := l.attach(context.Background(), [2]io.Writer{pw, nil})
		pw.Close()
		done <- err
	}()
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, pr)
		close(copied)
	}()
	l.writer(0).Write([]byte("one "))
	time.Sleep(10 * time.Millisecond)
	l.writer(0).Write([]byte("two"))
	l.close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-copied
	if out.String() != "one two" {
		t.Fatalf("live attach got %q", out.String())
	}
}

func TestStdinPipe(t *testing.T) {
	p := newStdinPipe(8)
	if _, err := p.Write([]byte("abcdefghi")); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("write over the buffer: %v", err)
	}
	p.Write([]byte("abc"))
	p.Close()
	data, err := io.ReadAll(p)
	if err != nil || string(data) != "abc" {
		t.Fatalf("read %q %v", data, err)
	}
	if _, err := p.Write([]byte("x")); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("write after close: %v", err)
	}
}

func TestParseSignal(t *testing.T) {
	cases := []struct {
		in   string
		num  int
		fail bool
	}{
		{"TERM", 15, false}, {"SIGTERM", 15, false}, {"sigkill", 9, false}, {"2", 2, false},
		{"HUP", 1, false}, {"SIGFOO", 0, true}, {"", 0, true}, {"99", 0, true},
	}
	for _, c := range cases {
		sig, err := parseSignal(c.in)
		if (err != nil) != c.fail || sig.num != c.num {
			t.Fatalf("%q: %+v %v", c.in, sig, err)
		}
		if c.fail && !errors.Is(err, api.ErrUnprocessable) {
			t.Fatalf("%q: error class %v", c.in, err)
		}
	}
}

func TestScript(t *testing.T) {
	cases := []struct {
		req  api.ExecRequest
		want string
	}{
		{api.ExecRequest{Script: "echo hi"}, "echo hi"},
		{api.ExecRequest{Argv: []string{"printf", "%s\n", "it's"}}, `'printf' '%s` + "\n" + `' 'it'\''s'`},
		{api.ExecRequest{Script: "pwd", Cwd: "/tmp", Env: map[string]string{"B": "2", "A": "x'y"}},
			"(\ncd -- '/tmp' || exit 1\nexport A='x'\\''y'\nexport B='2'\npwd\n)"},
	}
	for _, c := range cases {
		if got := script(c.req); got != c.want {
			t.Fatalf("script(%+v) = %q, want %q", c.req, got, c.want)
		}
	}
	if err := checkExec(&api.ExecRequest{Script: "x", Session: strings.Repeat("s", 65)}); !errors.Is(err, api.ErrUnprocessable) {
		t.Fatalf("long session name: %v", err)
	}
}

// TestPruneProcs: only the newest maxFinishedProcs finished processes are
// kept; running ones never go.
func TestPruneProcs(t *testing.T) {
	b := &box{procs: map[int]*process{}}
	for pid := 1; pid <= maxFinishedProcs+10; pid++ {
		p := &process{pid: pid, done: make(chan struct{})}
		if pid != 1 {
			close(p.done)
		}
		b.procs[pid] = p
	}
	b.pruneProcsLocked()
	if len(b.procs) != maxFinishedProcs+1 || b.procs[1] == nil || b.procs[2] != nil || b.procs[maxFinishedProcs+10] == nil {
		t.Fatalf("kept %d processes", len(b.procs))
	}
}
