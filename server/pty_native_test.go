package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// TestPTYNative: a native command run from a terminal gets a real pty:
// isatty, the window size (and a resize while it runs), the kernel's
// echo; ^C is its SIGINT (130 for sleep, a trap for a shell); a
// redirected stream stays redirected.
func TestPTYNative(t *testing.T) {
	_, c := nativeNode(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{Image: "busybox", Env: map[string]string{"PS1": "> "}})
	if err != nil {
		t.Fatal(err)
	}
	proc, err := c.StartPTY(ctx, sb.ID, api.ExecRequest{}, api.PTYSize{Cols: 90, Rows: 20})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.ConnectPTY(ctx, sb.ID, proc.PID)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	scr := readPTY(p)
	scr.expect(t, "> ")
	send := func(s string) {
		t.Helper()
		if _, err := p.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	send("/bin/busybox stty size; /bin/busybox sh -c '[ -t 0 ] && [ -t 1 ] && echo native-tty'\r")
	scr.expect(t, "20 90\r\nnative-tty\r\n> ")
	send("/bin/busybox sh -c '[ -t 1 ] || echo redirected' | /bin/busybox cat\r")
	scr.expect(t, "redirected\r\n> ")
	// A program reading the keyboard through the kernel's line discipline,
	// and a resize while it runs.
	send("/bin/busybox sh -c 'read x; echo got=$x; stty size'\r")
	time.Sleep(300 * time.Millisecond)
	if err := c.ResizeProcess(ctx, sb.ID, proc.PID, api.PTYSize{Cols: 70, Rows: 10}); err != nil {
		t.Fatal(err)
	}
	send("typed\r")
	scr.expect(t, "typed\r\ngot=typed\r\n10 70\r\n> ")
	send("/bin/busybox sleep 100\r")
	time.Sleep(300 * time.Millisecond)
	send("\x03")
	scr.expect(t, "^C")
	scr.expect(t, "> ")
	send("echo status=$?\r")
	scr.expect(t, "status=130\r\n")
	// The pty is the program's controlling terminal: ^C is its SIGINT
	// (a trap runs), not a kill from outside.
	send("/bin/busybox sh -c 'trap \"echo caught; exit 5\" INT; while :; do /bin/busybox sleep 1; done'\r")
	time.Sleep(500 * time.Millisecond)
	send("\x03")
	scr.expect(t, "caught\r\n")
	scr.expect(t, "> ")
	send("echo status=$?\r")
	scr.expect(t, "status=5\r\n")
	send("exit\r")
	<-scr.done
}

// TestWatchNative: a long-running native process's writes reach a watch
// while it runs.
func TestWatchNative(t *testing.T) {
	_, c := nativeNode(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{Image: "busybox"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "mkdir /w"}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs, _ := watchEvents(t, wctx, c, sb.ID, api.WatchRequest{Path: "/w"})
	p, err := c.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "/bin/busybox sh -c 'echo x > /w/late; sleep 30'"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.SignalProcess(ctx, sb.ID, p.PID, "KILL")
	if got, want := nextEvent(t, evs), (api.WatchEvent{Type: "create", Name: "late", FileType: "file"}); got != want {
		t.Fatalf("native write: %+v, want %+v", got, want)
	}
	if ps, err := c.ListProcesses(ctx, sb.ID); err != nil || !ps[len(ps)-1].Running {
		t.Fatalf("the process should still run: %+v %v", ps, err)
	}
}
