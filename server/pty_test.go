package server_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// ptyScreen reads a PTY's display in the background.
type ptyScreen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark int
	err  error
	done chan struct{}
}

func readPTY(p *client.PTY) *ptyScreen {
	s := &ptyScreen{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		for {
			n, err := p.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			if err != nil {
				s.err = err
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *ptyScreen) expect(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		out := s.buf.String()
		s.mu.Unlock()
		if i := strings.Index(out[s.mark:], want); i >= 0 {
			s.mark += i + len(want)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("terminal never showed %q; it has after offset %d:\n%q", want, s.mark, s.buf.String()[s.mark:])
}

// logBuffer is a server log written from its handlers' goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestPTY(t *testing.T) {
	var logs logBuffer
	tn := startNode(t, node.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	ctx := context.Background()
	c, key := tn.tenant(t)
	sb, err := c.Create(ctx, api.CreateRequest{Env: map[string]string{"PS1": `\$ `}})
	if err != nil {
		t.Fatal(err)
	}
	proc, err := c.StartPTY(ctx, sb.ID, api.ExecRequest{}, api.PTYSize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	if proc.PTY == nil || proc.PTY.Cols != 80 || proc.PTY.Rows != 24 {
		t.Fatalf("process pty = %+v, want 80x24", proc.PTY)
	}
	p, err := c.ConnectPTY(ctx, sb.ID, proc.PID)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Hello.PID != proc.PID || p.Hello.Cols != 80 {
		t.Fatalf("hello = %+v", p.Hello)
	}
	scr := readPTY(p)
	scr.expect(t, "$ ")
	send := func(s string) {
		t.Helper()
		if _, err := p.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	send("stty size; [ -t 1 ] && echo tty\r")
	scr.expect(t, "24 80\r\ntty\r\n")
	if err := c.ResizeProcess(ctx, sb.ID, proc.PID, api.PTYSize{Cols: 100, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	send("stty size; echo $COLUMNS\r")
	scr.expect(t, "40 100\r\n100\r\n")
	if err := p.Resize(api.PTYSize{Cols: 120, Rows: 50}); err != nil {
		t.Fatal(err)
	}
	// The resize frame and the next keys travel in order on one socket.
	send("stty size\r")
	scr.expect(t, "50 120\r\n")
	// Keyboard input through the REST stdin endpoint reaches the same terminal.
	if err := c.WriteStdin(ctx, sb.ID, proc.PID, []byte("echo via-rest\r"), false); err != nil {
		t.Fatal(err)
	}
	scr.expect(t, "via-rest\r\n")
	send("sleep 100\r")
	scr.expect(t, "sleep 100\r\n")
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	send("\x03")
	scr.expect(t, "^C")
	send("echo status=$?\r")
	scr.expect(t, "status=130\r\n")
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("^C took %s", d)
	}
	bad := []struct {
		size api.PTYSize
	}{{api.PTYSize{Cols: 0, Rows: 10}}, {api.PTYSize{Cols: 10, Rows: 20000}}}
	for _, b := range bad {
		if err := c.ResizeProcess(ctx, sb.ID, proc.PID, b.size); !errors.Is(err, api.ErrUnprocessable) {
			t.Errorf("resize %+v: %v, want unprocessable", b.size, err)
		}
	}
	send("exit 3\r")
	<-scr.done
	if !errors.Is(scr.err, client.ErrPTYExit) {
		t.Fatalf("read ended with %v, want ErrPTYExit", scr.err)
	}
	if code, ok := p.ExitCode(); !ok || code != 3 {
		t.Fatalf("exit code %d (%v), want 3", code, ok)
	}
	res, err := c.WaitProcess(ctx, sb.ID, proc.PID)
	if err != nil || res.Exit != 3 {
		t.Fatalf("wait: %+v %v, want exit 3", res, err)
	}

	// Auth: the same as every route, with the key also accepted as a
	// subprotocol (browsers), never echoed back.
	proc2, err := c.StartPTY(ctx, sb.ID, api.ExecRequest{}, api.PTYSize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	wsURL := "ws" + strings.TrimPrefix(tn.srv.URL, "http") + "/v1/sandboxes/" + sb.ID + "/processes/" + itoa(proc2.PID) + "/pty"
	_, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{api.PTYSubprotocol}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: %v %v, want 401", err, resp)
	}
	_, resp, err = websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{api.PTYSubprotocol, api.PTYKeyProtocol + "wk_wrong"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v %v, want 401", err, resp)
	}
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{api.PTYSubprotocol, api.PTYKeyProtocol + key}})
	if err != nil {
		t.Fatalf("key as subprotocol: %v", err)
	}
	if ws.Subprotocol() != api.PTYSubprotocol {
		t.Fatalf("server selected subprotocol %q", ws.Subprotocol())
	}
	if typ, data, err := ws.Read(ctx); err != nil || typ != websocket.MessageText || !strings.Contains(string(data), `"hello"`) {
		t.Fatalf("first frame %v %q %v", typ, data, err)
	}
	ws.Write(ctx, websocket.MessageBinary, []byte("exit 7\r"))
	for {
		_, _, err := ws.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != api.PTYCloseBase+7 {
				t.Fatalf("close code %d (%v), want %d", code, err, api.PTYCloseBase+7)
			}
			break
		}
	}

	// The key offered as a subprotocol is in no log line; the upgrades are.
	if l := logs.String(); strings.Contains(l, key) || !strings.Contains(l, `"status":101`) {
		t.Fatalf("server log has the key or no 101 upgrade:\n%s", l)
	}

	// Another tenant cannot see the sandbox; a process without a
	// terminal has no pty socket.
	other, _ := tn.tenant(t)
	if _, err := other.ConnectPTY(ctx, sb.ID, proc2.PID); !errdefs.IsNotFound(err) {
		t.Fatalf("other tenant: %v, want not found", err)
	}
	if err := other.ResizeProcess(ctx, sb.ID, proc2.PID, api.PTYSize{Cols: 10, Rows: 10}); !errdefs.IsNotFound(err) {
		t.Fatalf("other tenant resize: %v, want not found", err)
	}
	plain, err := c.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ConnectPTY(ctx, sb.ID, plain.PID); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("pty of a plain process: %v, want failed precondition", err)
	}
	c.SignalProcess(ctx, sb.ID, plain.PID, "KILL")
}

// TestPTYHangup: closing the socket hangs the terminal up, and a script
// run on a terminal sees one.
func TestPTYHangup(t *testing.T) {
	tn := startNode(t, node.Options{})
	ctx := context.Background()
	c, _ := tn.tenant(t)
	sb, err := c.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	proc, err := c.StartPTY(ctx, sb.ID, api.ExecRequest{}, api.PTYSize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.ConnectPTY(ctx, sb.ID, proc.PID)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := c.WaitProcess(wctx, sb.ID, proc.PID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Limit != "signal:HUP" || res.Exit != 129 {
		t.Fatalf("after hangup: %+v, want 129 signal:HUP", res)
	}
	// A terminal's command lines have their own time limit.
	tp, err := c.StartPTY(ctx, sb.ID, api.ExecRequest{Script: "sleep 5", Timeout: api.Duration(300 * time.Millisecond)}, api.PTYSize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.WaitProcess(wctx, sb.ID, tp.PID); err != nil || res.Exit != 124 {
		t.Fatalf("a line over the pty's timeout: %+v %v, want 124", res, err)
	}
	sp, err := c.StartPTY(ctx, sb.ID, api.ExecRequest{Script: "[ -t 0 ] && stty size"}, api.PTYSize{Cols: 33, Rows: 11})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err = c.AttachProcess(ctx, sb.ID, sp.PID, &out, nil)
	if err != nil || res.Exit != 0 || out.String() != "11 33\r\n" {
		t.Fatalf("script on a pty: %+v %v %q", res, err, out.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
