package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/coder/websocket"
	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// This file serves terminals: POST .../processes/{pid}/resize and the
// PTY WebSocket GET .../processes/{pid}/pty (api/pty.go has the protocol).

// Unwrap lets http.ResponseController (and coder/websocket) reach the
// connection under the recorder to hijack it.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// wsKey is the API key a browser offers as a WebSocket subprotocol
// ("bearer.KEY"), for WebSocket upgrades only.
func wsKey(r *http.Request) (string, bool) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return "", false
	}
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if k, ok := strings.CutPrefix(strings.TrimSpace(p), api.PTYKeyProtocol); ok && k != "" {
				return k, true
			}
		}
	}
	return "", false
}

func terminals(svc api.Service) (api.Terminals, error) {
	t, ok := svc.(api.Terminals)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this server's backend has no terminals")
	}
	return t, nil
}

func (s *Server) resizeProcess(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	n, err := pid(r)
	if err != nil {
		return err
	}
	var req api.PTYSize
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	t, err := terminals(svc)
	if err != nil {
		return err
	}
	if err := t.ResizeProcess(r.Context(), r.PathValue("id"), n, req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ptySocket bridges a WebSocket to a process on a terminal. Errors found
// before the upgrade (no key, no such sandbox or process, no terminal)
// are ordinary HTTP errors. Closing the socket hangs the terminal up.
func (s *Server) ptySocket(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	n, err := pid(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	t, err := terminals(svc)
	if err != nil {
		return err
	}
	ps, err := svc.ListProcesses(r.Context(), id)
	if err != nil {
		return err
	}
	var proc *api.Process
	for i := range ps {
		if ps[i].PID == n {
			proc = &ps[i]
		}
	}
	if proc == nil {
		return api.Errorf(errdefs.ErrNotFound, "process %d not found in sandbox %s", n, id)
	}
	if proc.PTY == nil {
		return api.Errorf(errdefs.ErrFailedPrecondition, "process %d has no terminal (start it with \"pty\")", n)
	}
	if r.Header.Get("Upgrade") == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "GET .../pty is a WebSocket: send Upgrade: websocket")
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{api.PTYSubprotocol}})
	if err != nil {
		// Accept wrote the HTTP error (bad handshake, cross-origin).
		s.log.Info("pty websocket refused", "sandbox", id, "pid", n, "error", err.Error())
		return nil
	}
	if rec, ok := w.(*recorder); ok && rec.status == 0 {
		rec.status = http.StatusSwitchingProtocols
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	send := func(m api.PTYControl) error {
		b, _ := json.Marshal(m)
		return c.Write(ctx, websocket.MessageText, b)
	}
	if err := send(api.PTYControl{Type: "hello", PID: n, Cols: proc.PTY.Cols, Rows: proc.PTY.Rows}); err != nil {
		return nil
	}
	// Keyboard and control frames, until the client goes away.
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageBinary {
				if err := svc.WriteStdin(ctx, id, n, data, false); err != nil {
					var e api.ErrorDetail
					_, e.Code = api.ToHTTP(err)
					e.Message = err.Error()
					send(api.PTYControl{Type: "error", Error: &e})
				}
				continue
			}
			var m api.PTYControl
			if err := json.Unmarshal(data, &m); err != nil || m.Type != "resize" {
				send(api.PTYControl{Type: "error", Error: &api.ErrorDetail{Code: "invalid_argument", Message: `a text frame must be {"type":"resize","cols":N,"rows":N}`}})
				continue
			}
			if err := t.ResizeProcess(ctx, id, n, api.PTYSize{Cols: m.Cols, Rows: m.Rows}); err != nil {
				var e api.ErrorDetail
				_, e.Code = api.ToHTTP(err)
				e.Message = err.Error()
				send(api.PTYControl{Type: "error", Error: &e})
			}
		}
	}()
	go func() {
		<-gone
		// The client left: hang up, as a dropped ssh connection does.
		svc.SignalProcess(context.Background(), id, n, "HUP")
		cancel()
	}()
	res, err := svc.AttachProcess(ctx, id, n, wsWriter{ctx, c}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil // the client left first
		}
		var e api.ErrorDetail
		_, e.Code = api.ToHTTP(err)
		e.Message = err.Error()
		send(api.PTYControl{Type: "error", Error: &e})
		c.Close(websocket.StatusInternalError, truncReason(err.Error()))
		return nil
	}
	exit := res.Exit & 255
	send(api.PTYControl{Type: "exit", Exit: &exit})
	c.Close(websocket.StatusCode(api.PTYCloseBase+exit), strconv.Itoa(exit))
	return nil
}

// truncReason fits a close reason into the 123 bytes a close frame has.
func truncReason(s string) string {
	if len(s) > 120 {
		return s[:120]
	}
	return s
}

type wsWriter struct {
	ctx context.Context
	c   *websocket.Conn
}

func (w wsWriter) Write(p []byte) (int, error) {
	if err := w.c.Write(w.ctx, websocket.MessageBinary, p); err != nil {
		return 0, errors.Join(errors.New("terminal client gone"), err)
	}
	return len(p), nil
}
