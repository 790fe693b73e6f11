package terminal_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/terminal"
	"github.com/warren-sandbox/warren/vfs"
)

// screen collects what the terminal displays.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

type session struct {
	t    *testing.T
	term *terminal.Term
	scr  *screen
	mark int // screen offset already matched
	done chan struct{}
	exit int
	err  error
}

func start(t *testing.T, cols, rows int) *session {
	t.Helper()
	sh, err := shell.New(shell.Config{FS: vfs.New(vfs.Options{}), Commands: std.Table(), Env: []string{"PS1=$ "}, Hostname: "box"})
	if err != nil {
		t.Fatal(err)
	}
	scr := &screen{}
	s := &session{t: t, term: terminal.New(scr, cols, rows), scr: scr, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		s.term.Close()
		<-s.done
	})
	go func() {
		defer close(s.done)
		s.exit, s.err = s.term.Serve(ctx, sh)
	}()
	s.expect("$ ")
	return s
}

func (s *session) send(keys string) {
	s.t.Helper()
	if err := s.term.Input([]byte(keys)); err != nil {
		s.t.Fatal(err)
	}
}

// expect waits until want appears on the screen after what earlier
// expects matched, and moves past it.
func (s *session) expect(want string) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out := s.scr.String()
		if i := strings.Index(out[s.mark:], want); i >= 0 {
			s.mark += i + len(want)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.t.Fatalf("screen never showed %q; after offset %d it has:\n%q", want, s.mark, s.scr.String()[s.mark:])
}

func (s *session) wait() int {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Fatal("the session did not end")
	}
	if s.err != nil {
		s.t.Fatal(s.err)
	}
	return s.exit
}

func TestTerminal(t *testing.T) {
	tests := []struct {
		name  string
		steps []string // alternating: keys to send, text to expect
	}{
		{"echo and crlf", []string{"echo hi\r", "echo hi\r\nhi\r\n$ "}},
		{"is a terminal", []string{"[ -t 0 ] && [ -t 1 ] && echo tty; ( [ -t 1 ] && echo yes || echo no ) | cat; [ -t 1 ] > /dev/null || echo redirected\r", "tty\r\nno\r\nredirected\r\n$ "}},
		{"stty size and COLUMNS", []string{"stty size; echo $COLUMNS $LINES\r", "30 100\r\n100 30\r\n$ "}},
		{"stty -a", []string{"stty -a\r", "rows 30; columns 100;", "", "icanon echo"}},
		{"backspace", []string{"echo abx\x7fc\r", "abc\r\n"}},
		{"ctrl-a and ctrl-e", []string{"cho x\x01e\x05y\r", "xy\r\n"}},
		{"left and right arrows", []string{"echo ac\x1b[Db\x1b[C!\r", "abc!\r\n"}},
		{"ctrl-u", []string{"garbage\x15echo clean\r", "clean\r\n"}},
		{"ctrl-w", []string{"echo one two\x17three\r", "one three\r\n"}},
		{"history", []string{"echo first\r", "first\r\n$ ", "echo second\r", "second\r\n$ ", "\x1b[A\x1b[A\r", "first\r\n$ ", "\x1b[A\x1b[A\x1b[A\x1b[B\r", "second\r\n$ "}},
		{"continuation", []string{"for i in 1 2; do\r", "> ", "echo n$i\r", "> ", "done\r", "n1\r\nn2\r\n$ "}},
		{"backslash continuation", []string{"echo a\\\r", "> ", "b\r", "ab\r\n$ "}},
		{"quote continuation", []string{"echo 'x\r", "> ", "y'\r", "x\r\ny\r\n$ "}},
		{"ctrl-c at the prompt", []string{"echo never\x03", "^C\r\n$ ", "echo $?\r", "130\r\n"}},
		{"ctrl-c interrupts", []string{"sleep 100\r", "sleep 100\r\n", "\x03", "^C\r\n$ ", "echo status=$?\r", "status=130\r\n$ "}},
		{"read a line", []string{"read v; echo got=$v\r", "\r\n", "hello\r", "got=hello\r\n$ "}},
		{"cat until ctrl-d", []string{"cat; echo end\r", "\r\n", "one\r", "one\r\n", "\x04", "one\r\nend\r\n$ "}},
		{"stty -echo", []string{"stty -echo; read s; stty echo; echo [$s]\r", "\r\n", "secret\r", "[secret]\r\n$ "}},
		{"stty raw", []string{"stty raw; echo ready; head -c 3 | od -c | head -1; stty sane\r", "ready\n", "a\rb", "a  \\r   b"}},
		{"stty -g round trip", []string{"s=$(stty -g); stty -echo -icanon; stty; stty \"$s\"; stty\r", "-icanon -echo\r\nspeed 38400 baud; line = 0;\r\n\r\n$ "}},
		{"stty rejects", []string{"stty bogus; echo $?\r", "invalid argument 'bogus'\r\n1\r\n"}},
		{"not a tty in a pipe", []string{"echo | stty size; echo $?\r", "Inappropriate ioctl for device\r\n1\r\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, 100, 30)
			for i := 0; i+1 < len(tc.steps); i += 2 {
				if tc.steps[i] != "" {
					s.send(tc.steps[i])
				}
				s.expect(tc.steps[i+1])
			}
		})
	}
}

func TestTerminalResize(t *testing.T) {
	s := start(t, 80, 24)
	s.send("stty size\r")
	s.expect("24 80\r\n$ ")
	s.term.Resize(132, 50)
	s.send("stty size; echo $COLUMNS\r")
	s.expect("50 132\r\n")
	s.expect("132\r\n$ ")
	// A resize while a command runs shows in the next stty.
	s.send("read x; stty size\r")
	s.expect("\r\n")
	s.term.Resize(90, 40)
	s.send("\r")
	s.expect("40 90\r\n$ ")
}

func TestTerminalExit(t *testing.T) {
	tests := []struct {
		keys string
		want int
	}{
		{"exit 3\r", 3},
		{"false\r\x04", 1},
		{"\x04", 0},
		{"echo x; exit 300\r", 44},
	}
	for _, tc := range tests {
		t.Run(strings.TrimSpace(tc.keys), func(t *testing.T) {
			s := start(t, 80, 24)
			s.send(tc.keys)
			if got := s.wait(); got != tc.want {
				t.Fatalf("exit status %d, want %d; screen %q", got, tc.want, s.scr.String())
			}
		})
	}
}

func TestTerminalHangup(t *testing.T) {
	s := start(t, 80, 24)
	s.send("sleep 100\r")
	s.expect("sleep 100\r\n")
	s.term.Close()
	s.wait()
	if err := s.term.Input([]byte("x")); err == nil {
		t.Fatal("Input after Close succeeded")
	}
}

func TestTerminalInputBound(t *testing.T) {
	s := start(t, 80, 24)
	s.send("sleep 100\r")
	s.expect("sleep 100\r\n")
	big := bytes.Repeat([]byte("y"), terminal.MaxInput+1)
	if err := s.term.Input(big); err != terminal.ErrInputFull {
		t.Fatalf("Input over the bound: %v, want ErrInputFull", err)
	}
}
