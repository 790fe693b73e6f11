package coreutils_test

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

func inv(args []string, stdin io.Reader, stdout, stderr io.Writer, sys *commands.System) *commands.Invocation {
	i := cmdtest.NewFiles(nil).Invocation(args, stdin, stdout, stderr)
	i.Sys = sys
	return i
}

// Buffering commands must fail cleanly at the sandbox memory limit: their
// own (MaxMemoryBytes) and the sandbox's shared budget (Memory), with
// status 125 and the budget's message.
func TestMemoryLimit(t *testing.T) {
	input := strings.Repeat("some line of text\n", 120000) // 2.1 MB
	tab := commands.Table{}
	coreutils.Register(tab)
	const msg = "warren: memory limit exceeded (1 MiB)\n"
	for _, tc := range [][]string{{"sort"}, {"sort", "-n"}, {"tac"}, {"shuf"}, {"tail", "-n", "1000000"}, {"head", "-c", "-1"}} {
		for _, lim := range []struct {
			name string
			sys  func() *commands.System
		}{
			{"own", func() *commands.System { return &commands.System{MaxMemoryBytes: 1 << 20} }},
			{"shared", func() *commands.System { return &commands.System{Memory: commands.NewMemory(1 << 20)} }},
		} {
			t.Run(strings.Join(tc, " ")+"/"+lim.name, func(t *testing.T) {
				var out, errb bytes.Buffer
				sys := lim.sys()
				code := tab[tc[0]](context.Background(), inv(tc, strings.NewReader(input), &out, &errb, sys))
				if code != commands.StatusLimit || errb.String() != msg {
					t.Fatalf("exit %d stderr %q, want %d %q", code, errb.String(), commands.StatusLimit, msg)
				}
				if out.Len() != 0 {
					t.Fatalf("wrote %d bytes of output past the limit", out.Len())
				}
				if used := sys.Memory.Used(); used != 0 {
					t.Fatalf("the command kept %d bytes of the shared budget after it returned", used)
				}
			})
		}
	}
	// Under the limit the same input sorts fine, and gives its charge back.
	var out, errb bytes.Buffer
	mem := commands.NewMemory(64 << 20)
	if code := tab["sort"](context.Background(), inv([]string{"sort", "-u"}, strings.NewReader(input), &out, &errb, &commands.System{Memory: mem})); code != 0 || out.String() != "some line of text\n" {
		t.Fatalf("sort under the limit: exit %d out %q err %q", code, out.String(), errb.String())
	}
	if mem.Used() != 0 {
		t.Fatalf("sort kept %d bytes charged", mem.Used())
	}
}

// One long line is charged as it is assembled (grep, cut, and every
// line-at-a-time command share this reader).
func TestLongLineCharged(t *testing.T) {
	tab := commands.Table{}
	coreutils.Register(tab)
	var out, errb bytes.Buffer
	mem := commands.NewMemory(1 << 20)
	line := strings.Repeat("x", 3<<20) + "\n"
	code := tab["rev"](context.Background(), inv([]string{"rev"}, strings.NewReader(line), &out, &errb, &commands.System{Memory: mem}))
	if code != commands.StatusLimit || !strings.Contains(errb.String(), "warren: memory limit exceeded (1 MiB)") {
		t.Fatalf("rev of a 3 MiB line at a 1 MiB budget: exit %d stderr %q", code, errb.String())
	}
}

// endless is an input that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
		if i%64 == 63 {
			p[i] = '\n'
		}
	}
	return len(p), nil
}

// cancelAfter cancels its context once n bytes were written to it.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.n -= len(p)
	if c.n <= 0 {
		c.cancel()
	}
	return len(p), nil
}

// Endless producers and consumers return promptly once ctx is done.
func TestCancellation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		fn   commands.Func
	}{
		{[]string{"yes"}, coreutils.Yes},
		{[]string{"seq", "1000000000000"}, coreutils.Seq},
		{[]string{"cat"}, coreutils.Cat},
		{[]string{"cat", "-n"}, coreutils.Cat},
		{[]string{"tr", "x", "y"}, coreutils.Tr},
		{[]string{"grep", "x"}, grep.Grep},
		{[]string{"wc", "-l"}, coreutils.Wc},
		{[]string{"sort"}, coreutils.Sort},
		{[]string{"shuf", "-r", "-i", "1-10"}, coreutils.Shuf},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := &cancelAfter{n: 1 << 20, cancel: cancel}
			if tc.args[0] == "wc" || tc.args[0] == "sort" {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			done := make(chan int, 1)
			go func() {
				done <- tc.fn(ctx, inv(tc.args, endless{}, w, io.Discard, &commands.System{MaxMemoryBytes: 64 << 20}))
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%v did not stop after cancellation", tc.args)
			}
		})
	}
}

func TestTailFollowRefused(t *testing.T) {
	res := cmdtest.Run(coreutils.Tail, []string{"tail", "-f", "x"}, "", cmdtest.NewFiles(map[string]string{"x": "a\n"}))
	if res.Code != 1 || !strings.Contains(res.Stderr, "not supported") {
		t.Fatalf("tail -f: exit %d stderr %q", res.Code, res.Stderr)
	}
}

// lines generates n bytes of text without holding them.
type lines struct{ left int }

func (l *lines) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	n := min(len(p), l.left)
	for i := 0; i < n; i++ {
		p[i] = "abcdefghij needle xyz\n"[i%22]
	}
	l.left -= n
	return n, nil
}

// Streaming commands must not hold their input: 32 MiB through cat and
// grep may allocate only a small, bounded amount.
func TestStreamingAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation budgets are meaningless under -race (sync.Pool drops items)")
	}
	const size = 32 << 20
	for _, tc := range []struct {
		args []string
		fn   commands.Func
	}{
		{[]string{"cat"}, coreutils.Cat},
		{[]string{"grep", "needle"}, grep.Grep},
		{[]string{"grep", "-c", "ne.dle"}, grep.Grep},
		{[]string{"tr", "a-z", "A-Z"}, coreutils.Tr},
		{[]string{"cut", "-c1-5"}, coreutils.Cut},
		{[]string{"wc"}, coreutils.Wc},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// Warm the pools first.
			tc.fn(context.Background(), inv(tc.args, &lines{left: 1 << 16}, io.Discard, io.Discard, nil))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code := tc.fn(context.Background(), inv(tc.args, &lines{left: size}, io.Discard, io.Discard, nil))
			runtime.ReadMemStats(&after)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
				t.Fatalf("%v allocated %d bytes for %d bytes of input", tc.args, alloc, size)
			}
		})
	}
}

// closedPipe is a stdout whose reader went away after the first write.
type closedPipe struct{ writes int }

func (c *closedPipe) Write(p []byte) (int, error) {
	c.writes++
	if c.writes > 1 {
		return 0, io.ErrClosedPipe
	}
	return len(p), nil
}

// `cmd | head -1`: once the reader is gone a command stops reading its
// (here endless) input at once, silently, with SIGPIPE's status 141.
func TestBrokenPipeStops(t *testing.T) {
	tab := table()
	for _, args := range [][]string{
		{"cat"}, {"cat", "-n"}, {"grep", "x"}, {"sed", "p"}, {"tr", "x", "y"}, {"cut", "-c1"},
		{"awk", "{print}"}, {"seq", "inf"}, {"seq", "1000000000000"}, {"yes"}, {"od"}, {"base64"}, {"rev"},
		{"nl"}, {"fold"}, {"expand"}, {"xxd"}, {"hexdump", "-C"}, {"paste", "-"},
		{"shuf", "-r", "-i", "1-5"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var errb strings.Builder
			done := make(chan int, 1)
			go func() {
				done <- tab[args[0]](context.Background(), inv(args, endless{}, &closedPipe{}, &errb, nil))
			}()
			select {
			case code := <-done:
				if code != 141 || errb.Len() != 0 {
					t.Errorf("exit %d stderr %q, want 141 and silence", code, errb.String())
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%v kept reading after its reader went away", args)
			}
		})
	}
}
