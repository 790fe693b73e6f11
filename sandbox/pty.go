package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/terminal"
)

// This file runs processes on a pseudo-terminal (package terminal): an
// interactive shell when the request has no script, else the script with
// the terminal as its streams. Keyboard input arrives through WriteStdin,
// the display is the process's stdout (attach), resize is ResizeProcess.

// ttyShell is what package terminal needs of a session beyond Interp
// (package shell's *Shell has it, see shell/tty.go).
type ttyShell interface {
	RunLine(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (int, bool, error)
	Getenv(name string) string
	Dir() string
	SetStatus(status int)
	SetVars(vars map[string]string)
	SetRunTimeout(d time.Duration)
}

// maxLineTimeout bounds what a PTY request may ask for one command line.
const maxLineTimeout = 24 * time.Hour

// ptyShell adds a sandbox's per-exec work to every command line: native
// harvest, CPU accounting, the durability ack, the exec count.
type ptyShell struct {
	ttyShell
	// ctx is the terminal's (a command's own ends with ^C, and its
	// writes must still reach the write log).
	ctx   context.Context
	m     *Manager
	b     *box
	s     *session
	level string
}

func (p *ptyShell) RunLine(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (int, bool, error) {
	if err := p.b.harvestNative(ctx); err != nil {
		return 1, false, err
	}
	ri := &runInfo{b: p.b, session: p.s.name}
	st, exited, err := p.ttyShell.RunLine(withRunInfo(ctx, ri), script, stdin, stdout, stderr)
	p.m.execs.Add(1)
	if err != nil {
		p.m.execErrors.Add(1)
		return st, exited, err
	}
	if _, err := p.m.ack(p.ctx, p.b, p.level, p.s); err != nil {
		p.m.execErrors.Add(1)
		fmt.Fprintf(stderr, "warren: %v\n", err)
	}
	return st, exited, nil
}

func (m *Manager) startPTY(ctx context.Context, b *box, req api.ExecRequest) (api.Process, error) {
	size := *req.PTY
	if err := terminal.CheckSize(size.Cols, size.Rows); err != nil {
		return api.Process{}, api.Errorf(api.ErrUnprocessable, "pty: %v", err)
	}
	interactive := req.Script == "" && len(req.Argv) == 0
	autoSession := req.Session == ""
	if interactive {
		if req.Stdin != "" {
			return api.Process{}, api.Errorf(api.ErrUnprocessable, "pty: stdin is the keyboard; send it with .../stdin")
		}
		req.Script = ":" // only to pass checkExec; never run
	}
	if err := checkExec(&req); err != nil {
		return api.Process{}, err
	}
	if interactive {
		req.Script = ""
	}
	release, err := b.use(ctx)
	if err != nil {
		return api.Process{}, err
	}
	cmd := req.Script
	if len(req.Argv) > 0 {
		cmd = strings.Join(req.Argv, " ")
	}
	if interactive {
		cmd = "bash -i"
	}
	if len(cmd) > 200 {
		cmd = cmd[:200]
	}
	p := &process{
		command: cmd, started: m.now(), stdin: newStdinPipe(1), out: newOutLog(m.cfg.ReplayBytes),
		done: make(chan struct{}),
	}
	p.tty = terminal.New(p.out.writer(0), size.Cols, size.Rows)
	if err := b.addProc(p, func(pid int) {
		if autoSession {
			// A terminal of its own: execs in "main" go on while it is open.
			req.Session = "pty-" + strconv.Itoa(pid)
		}
		p.session = req.Session
	}); err != nil {
		release()
		return api.Process{}, err
	}
	go func() {
		defer close(p.done)
		defer release()
		defer p.out.close()
		defer p.tty.Close()
		pctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		p.mu.Lock()
		p.cancel = func(cause error) {
			var sig signalCause
			if errors.As(cause, &sig) && sig.num == 2 {
				p.tty.Interrupt() // SIGINT is ^C: the command, not the terminal
				return
			}
			cancel(cause)
			p.tty.Close()
		}
		if p.sig != nil {
			p.cancel(*p.sig)
		}
		p.mu.Unlock()
		res, err := m.runPTY(pctx, b, req, p.tty, interactive)
		if autoSession {
			b.mu.Lock()
			delete(b.sessions, req.Session)
			b.mu.Unlock()
		}
		var sig signalCause
		if errors.As(context.Cause(pctx), &sig) {
			// Hung up or killed, even before the shell started: a result.
			res.Exit, res.Limit, err = 128+sig.num, "signal:"+sig.name, nil
		}
		p.mu.Lock()
		p.result, p.err = res, err
		p.mu.Unlock()
	}()
	return p.info(), nil
}

// runPTY holds the session for the terminal's life.
func (m *Manager) runPTY(ctx context.Context, b *box, req api.ExecRequest, term *terminal.Term, interactive bool) (api.ExecResult, error) {
	level, err := m.levelFor(b, req.Durability)
	if err != nil {
		return api.ExecResult{}, err
	}
	s, fsys, err := b.session(req.Session)
	if err != nil {
		return api.ExecResult{}, err
	}
	if err := s.acquire(ctx); err != nil {
		return api.ExecResult{}, err
	}
	defer s.unlock()
	in, err := b.interp(ctx, s, fsys)
	if err != nil {
		return api.ExecResult{}, err
	}
	tsh, ok := in.(ttyShell)
	if !ok {
		return api.ExecResult{}, api.Errorf(errdefs.ErrNotImplemented, "this node's interpreter cannot run on a terminal")
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopGone := context.AfterFunc(b.runCtx, func() { cancel(errGone); term.Close() })
	defer stopGone()
	// Each command line is bounded by the request's timeout (a terminal
	// may allow an editor or a REPL longer than an exec), else by the
	// sandbox's exec timeout.
	if req.Timeout > 0 {
		tsh.SetRunTimeout(min(req.Timeout.Std(), maxLineTimeout))
	}
	sh := &ptyShell{ttyShell: tsh, ctx: rctx, m: m, b: b, s: s, level: level}
	t0 := m.now()
	var status int
	if interactive {
		status, err = term.Serve(rctx, sh)
	} else {
		status = term.RunScript(rctx, sh, script(req))
	}
	res := api.ExecResult{Exit: status, DurationMS: float64(m.now().Sub(t0).Microseconds()) / 1000}
	if errors.Is(context.Cause(rctx), errGone) {
		return res, api.Errorf(errdefs.ErrUnavailable, "sandbox %s was deleted or hibernated; its terminal closed", b.id)
	}
	if err != nil && ctx.Err() == nil {
		return res, fmt.Errorf("terminal: %w", err)
	}
	return res, nil
}

// ttyInput is WriteStdin for a process on a terminal: keyboard input;
// closing stdin hangs the terminal up.
func (p *process) ttyInput(data []byte, closeStdin bool) error {
	select {
	case <-p.done:
		return api.Errorf(errdefs.ErrFailedPrecondition, "process %d has exited", p.pid)
	default:
	}
	if len(data) > 0 {
		if err := p.tty.Input(data); err != nil {
			if errors.Is(err, terminal.ErrInputFull) {
				return api.Errorf(errdefs.ErrResourceExhausted, "process %d: %v (%d bytes unread)", p.pid, err, terminal.MaxInput)
			}
			return api.Errorf(errdefs.ErrFailedPrecondition, "process %d: %v", p.pid, err)
		}
	}
	if closeStdin {
		p.tty.Close()
	}
	return nil
}

func (t *tenantView) ResizeProcess(ctx context.Context, id string, pid int, size api.PTYSize) error {
	p, err := t.proc(id, pid)
	if err != nil {
		return err
	}
	if p.tty == nil {
		return api.Errorf(errdefs.ErrFailedPrecondition, "process %d has no terminal (start it with \"pty\")", pid)
	}
	if err := terminal.CheckSize(size.Cols, size.Rows); err != nil {
		return api.Errorf(api.ErrUnprocessable, "resize: %v", err)
	}
	p.tty.Resize(size.Cols, size.Rows)
	return nil
}

var _ api.Terminals = (*tenantView)(nil)
