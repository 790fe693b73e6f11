package terminal

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell is the session Serve drives: package shell's *Shell (adapted by
// the caller, which may add its own per-command work around Run).
type Shell interface {
	// RunLine runs one command line and reports whether it ended the
	// shell (exit).
	RunLine(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (status int, exited bool, err error)
	Getenv(name string) string
	Dir() string
	// SetStatus sets $? (130 after ^C).
	SetStatus(status int)
	// SetVars sets shell variables without running a script.
	SetVars(vars map[string]string)
}

// StatusInterrupted is the status of a command stopped by ^C (128+SIGINT).
const StatusInterrupted = 130

// errInterrupt is the cause of a command's cancellation by ^C.
var errInterrupt = errors.New("interrupted")

// Serve runs the interactive loop until exit, ^D at an empty prompt,
// Close or ctx's end, and returns the shell's exit status.
func (t *Term) Serve(ctx context.Context, sh Shell) (int, error) {
	ed := &editor{t: t}
	last := 0
	cols, rows := -1, -1
	for {
		if c, r := t.Size(); c != cols || r != rows {
			// bash's checkwinsize: COLUMNS and LINES follow the window
			// before each prompt.
			cols, rows = c, r
			sh.SetVars(map[string]string{"COLUMNS": strconv.Itoa(c), "LINES": strconv.Itoa(r)})
		}
		src, err := t.readCommand(ctx, ed, sh)
		if errors.Is(err, errEOF) {
			t.writeRaw([]byte("exit\r\n"))
			return last, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return last, nil // hung up
			}
			return last, err
		}
		if strings.TrimSpace(src) == "" {
			continue
		}
		if c, r := t.Size(); c != cols || r != rows {
			cols, rows = c, r
			sh.SetVars(map[string]string{"COLUMNS": strconv.Itoa(c), "LINES": strconv.Itoa(r)})
		}
		var exited bool
		last, exited = t.runCommand(ctx, sh, src)
		if exited || t.Closed() {
			return last, nil
		}
		if ctx.Err() != nil {
			return last, context.Cause(ctx)
		}
	}
}

var (
	errEOF           = errors.New("end of input")
	errInterruptLine = errors.New("line interrupted")
)

// readCommand reads lines until they form a complete command: PS1 for
// the first, PS2 for continuations (an open quote, block or here-doc, or
// a trailing backslash).
func (t *Term) readCommand(ctx context.Context, ed *editor, sh Shell) (string, error) {
	var src strings.Builder
	prompt := expandPrompt(sh, "PS1", `\u@\h:\w\$ `)
	for {
		line, err := ed.readLine(ctx, prompt)
		if errors.Is(err, errInterruptLine) {
			sh.SetStatus(StatusInterrupted)
			src.Reset()
			prompt = expandPrompt(sh, "PS1", `\u@\h:\w\$ `)
			continue
		}
		if errors.Is(err, errEOF) && src.Len() > 0 {
			t.writeRaw([]byte("\r\n"))
			return "", errEOF
		}
		if err != nil {
			return "", err
		}
		ed.remember(line)
		if n := trailingBackslashes(line); n%2 == 1 {
			src.WriteString(line[:len(line)-1])
			prompt = expandPrompt(sh, "PS2", "> ")
			continue
		}
		src.WriteString(line)
		if incomplete(src.String()) {
			src.WriteByte('\n')
			prompt = expandPrompt(sh, "PS2", "> ")
			continue
		}
		return src.String(), nil
	}
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// incomplete reports whether src needs more lines to parse.
func incomplete(src string) bool {
	_, err := syntax.NewParser().Parse(strings.NewReader(src+"\n"), "")
	return err != nil && syntax.IsIncomplete(err)
}

// runCommand runs one command line with the terminal as its streams;
// ^C cancels it with status 130.
func (t *Term) runCommand(ctx context.Context, sh Shell, src string) (int, bool) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	t.startCommand(func() { cancel(errInterrupt) })
	s := stream{t: t, done: done}
	st, exited, err := sh.RunLine(cctx, src, s, s, s)
	close(done)
	t.endCommand()
	if errors.Is(context.Cause(cctx), errInterrupt) {
		sh.SetStatus(StatusInterrupted)
		return StatusInterrupted, false
	}
	if err != nil {
		s.Write([]byte("warren: " + err.Error() + "\n"))
	}
	return st, exited
}

// expandPrompt expands a prompt variable's backslash escapes (\u \h \H
// \w \W \$ \n \r \e \a \\ \[ \]); parameter expansion in prompts is not
// done.
func expandPrompt(sh Shell, name, def string) string {
	ps := sh.Getenv(name)
	if ps == "" && name == "PS1" {
		// An unset PS1 gets bash's look; an empty one stays empty.
		ps = def
	}
	if ps == "" && name == "PS2" {
		ps = def
	}
	var b strings.Builder
	for i := 0; i < len(ps); i++ {
		c := ps[i]
		if c != '\\' || i+1 == len(ps) {
			b.WriteByte(c)
			continue
		}
		i++
		switch ps[i] {
		case 'u':
			u := sh.Getenv("USER")
			if u == "" {
				u = "user"
			}
			b.WriteString(u)
		case 'h', 'H':
			h := sh.Getenv("HOSTNAME")
			if h == "" {
				h = "sandbox"
			}
			if ps[i] == 'h' {
				h, _, _ = strings.Cut(h, ".")
			}
			b.WriteString(h)
		case 'w', 'W':
			d := sh.Dir()
			home := sh.Getenv("HOME")
			if ps[i] == 'W' {
				if d != "/" && d != home {
					d = d[strings.LastIndexByte(d, '/')+1:]
				}
			}
			if home != "" && home != "/" && (d == home || strings.HasPrefix(d, home+"/")) {
				d = "~" + d[len(home):]
			}
			b.WriteString(d)
		case '$':
			if sh.Getenv("EUID") == "0" || sh.Getenv("UID") == "0" {
				b.WriteByte('#')
			} else {
				b.WriteByte('$')
			}
		case 'n':
			b.WriteString("\r\n")
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case 'a':
			b.WriteByte(0x07)
		case '\\':
			b.WriteByte('\\')
		case '[', ']':
		default:
			b.WriteByte('\\')
			b.WriteByte(ps[i])
		}
	}
	return b.String()
}

// RunScript runs src once with the terminal as its streams (a process
// started on a PTY with a script: vi FILE, top) and returns its status.
func (t *Term) RunScript(ctx context.Context, sh Shell, src string) int {
	c, r := t.Size()
	sh.SetVars(map[string]string{"COLUMNS": strconv.Itoa(c), "LINES": strconv.Itoa(r)})
	st, _ := t.runCommand(ctx, sh, src)
	return st
}
