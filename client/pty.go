package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

var _ api.Terminals = (*Client)(nil)

// StartPTY starts a process on a terminal of size: an interactive shell
// when req has no script or argv.
func (c *Client) StartPTY(ctx context.Context, id string, req api.ExecRequest, size api.PTYSize) (api.Process, error) {
	req.PTY = &size
	return c.StartProcess(ctx, id, req)
}

// ResizeProcess changes the window size of a process's terminal.
func (c *Client) ResizeProcess(ctx context.Context, id string, pid int, size api.PTYSize) error {
	return c.call(ctx, "POST", procPath(id, pid, "/resize"), nil, size, nil)
}

// PTY is a live connection to a process's terminal (the WebSocket at
// .../processes/{pid}/pty): Read is the display, Write the keyboard.
// Closing it hangs the terminal up.
type PTY struct {
	conn  *websocket.Conn
	ctx   context.Context
	stop  context.CancelFunc
	Hello api.PTYControl // the server's first frame (pid, size)

	mu   sync.Mutex
	pend []byte
	exit *int
	err  error
}

// ConnectPTY opens the terminal of process pid.
func (c *Client) ConnectPTY(ctx context.Context, id string, pid int) (*PTY, error) {
	u := strings.Replace(c.base, "http", "ws", 1) + procPath(id, pid, "/pty")
	h := http.Header{}
	if c.key != "" {
		h.Set("Authorization", "Bearer "+c.key)
	}
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{
		HTTPClient: c.hc, HTTPHeader: h, Subprotocols: []string{api.PTYSubprotocol},
	})
	if err != nil {
		if resp != nil && resp.StatusCode >= 400 {
			defer resp.Body.Close()
			return nil, decodeError(resp)
		}
		return nil, fmt.Errorf("%w: connect to the terminal of process %d: %w", errdefs.ErrUnavailable, pid, err)
	}
	conn.SetReadLimit(16 << 20)
	pctx, stop := context.WithCancel(context.Background())
	p := &PTY{conn: conn, ctx: pctx, stop: stop}
	typ, data, err := conn.Read(ctx)
	if err != nil || typ != websocket.MessageText || json.Unmarshal(data, &p.Hello) != nil || p.Hello.Type != "hello" {
		p.Close()
		return nil, fmt.Errorf("terminal of process %d: no hello frame (%v)", pid, err)
	}
	return p, nil
}

// Read returns display output; io.EOF-like errors end it: ErrPTYExit
// (with ExitCode set) when the process exited.
func (p *PTY) Read(b []byte) (int, error) {
	p.mu.Lock()
	if len(p.pend) > 0 {
		n := copy(b, p.pend)
		p.pend = p.pend[n:]
		p.mu.Unlock()
		return n, nil
	}
	if p.err != nil {
		err := p.err
		p.mu.Unlock()
		return 0, err
	}
	p.mu.Unlock()
	for {
		typ, data, err := p.conn.Read(p.ctx)
		if err != nil {
			return 0, p.fail(err)
		}
		if typ == websocket.MessageBinary {
			n := copy(b, data)
			if n < len(data) {
				p.mu.Lock()
				p.pend = append(p.pend, data[n:]...)
				p.mu.Unlock()
			}
			return n, nil
		}
		var m api.PTYControl
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch m.Type {
		case "exit":
			p.mu.Lock()
			p.exit = m.Exit
			p.mu.Unlock()
		case "error":
			if m.Error != nil {
				return 0, p.fail(api.ToNative(0, m.Error.Code, m.Error.Message))
			}
		}
	}
}

// ErrPTYExit ends Read when the process on the terminal exited.
var ErrPTYExit = errors.New("the process on the terminal exited")

func (p *PTY) fail(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	code := websocket.CloseStatus(err)
	if code >= api.PTYCloseBase && code < api.PTYCloseBase+256 {
		n := int(code) - api.PTYCloseBase
		p.exit = &n
		p.err = ErrPTYExit
	} else {
		p.err = fmt.Errorf("terminal: %w", err)
	}
	return p.err
}

// ExitCode is the process's exit status once Read returned ErrPTYExit.
func (p *PTY) ExitCode() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exit == nil {
		return 0, false
	}
	return *p.exit, true
}

// Write sends keyboard input.
func (p *PTY) Write(b []byte) (int, error) {
	if err := p.conn.Write(p.ctx, websocket.MessageBinary, b); err != nil {
		return 0, fmt.Errorf("terminal input: %w", err)
	}
	return len(b), nil
}

// Resize changes the window size.
func (p *PTY) Resize(size api.PTYSize) error {
	data, _ := json.Marshal(api.PTYControl{Type: "resize", Cols: size.Cols, Rows: size.Rows})
	return p.conn.Write(p.ctx, websocket.MessageText, data)
}

// Close hangs up.
func (p *PTY) Close() error {
	p.stop()
	return p.conn.Close(websocket.StatusNormalClosure, "")
}
