package shell

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"
)

// This file is the interpreter's side of a terminal (package terminal
// drives a session on a PTY): which descriptors are a terminal, the stty
// builtin, and the few state changes an interactive loop makes between
// Runs (the status of an interrupted command, COLUMNS and LINES).

// Terminal is implemented by a stream passed to Run that is a terminal.
// [ -t FD ] is true for a descriptor that still holds it (not redirected,
// not a pipe), and the stty builtin hands its arguments to the one on
// standard input, as stty works on its stdin.
type Terminal interface {
	Stty(args []string, stdout, stderr io.Writer) int
}

func init() {
	builtins["stty"] = biStty
}

// terminalOn returns the Terminal that descriptor fd holds, or nil.
func (r *runner) terminalOn(fd int) Terminal {
	if fd < 0 || fd >= len(r.fds) || r.fds[fd] == nil {
		return nil
	}
	f := r.fds[fd]
	for _, x := range []any{f.r, f.w} {
		if lw, ok := x.(*limitWriter); ok {
			x = lw.w
		}
		if t, ok := x.(Terminal); ok {
			return t
		}
	}
	return nil
}

// isTerminal is test's -t.
func (r *runner) isTerminal(s string) bool {
	fd, err := strconv.Atoi(s)
	return err == nil && r.terminalOn(fd) != nil
}

func biStty(r *runner, args []string) int {
	t := r.terminalOn(0)
	if t == nil {
		r.errf("stty: 'standard input': Inappropriate ioctl for device")
		return 1
	}
	return t.Stty(args[1:], r.stdout(), r.stderr())
}

// SetStatus sets $? (an interactive loop gives an interrupted command
// 130 after Run returned its cancellation status).
func (s *Shell) SetStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.status = status
}

// RunLine is Run for an interactive loop: it also reports whether the
// line ended the shell (exit, exec, errexit), which a command stopped by
// a limit or by ctx (^C) does not.
func (s *Shell) RunLine(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (status int, exited bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.st
	st, err := r.runTopWith(ctx, stdin, stdout, stderr, func() {
		r.runScript(script, "")
		exited = r.exiting && r.rs.fatal.Load() == nil && r.rs.ctx.Err() == nil
	})
	return st, exited, err
}

// SetVars assigns shell variables (not exported) between Runs without
// running a script, so $? and traps are untouched: an interactive loop
// keeps COLUMNS and LINES up to date this way. A readonly variable keeps
// its value.
func (s *Shell) SetVars(vars map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.st
	if r.rs != nil {
		return // inside a Run (cannot happen: Run holds mu)
	}
	lim := s.lim
	r.rs = &runState{ctx: context.Background(), lim: &lim}
	defer func() { r.rs = nil }()
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	exiting := r.exiting
	for _, k := range names {
		r.setVar(k, vars[k])
	}
	r.exiting = exiting
}

// TerminalOf returns the Terminal behind a stream the shell handed a
// command (Invocation.Stdin, Stdout, Stderr; its own wrappers removed),
// or nil: the native tier gives such a command a real pty.
func TerminalOf(x any) Terminal {
	if lw, ok := x.(*limitWriter); ok {
		x = lw.w
	}
	t, _ := x.(Terminal)
	return t
}

// SetRunTimeout changes the time limit of later Runs: a terminal's
// command lines (an editor, a REPL) may be allowed longer than an exec.
// d <= 0 keeps the limit.
func (s *Shell) SetRunTimeout(d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim.Timeout = d
	s.timeoutErr = &limitError{what: fmt.Sprintf("time limit exceeded (%s)", d), status: StatusTimeout}
}
