// Package terminal is warren's pseudo-terminal for the resident tier: a
// line discipline (echo, canonical input with erase and kill, ^C and ^D),
// output post-processing (\n to \r\n), a window size and stty modes, and
// an interactive loop (Serve) that drives a shell session through its
// public API with a readline-like editor: prompt, line editing, history,
// continuation lines. Nothing here touches the host: the "device" is a
// pair of byte streams, keyboard bytes in (Input) and display bytes out.
package terminal

import (
	"context"
	"errors"
	"io"
	"sync"
	"unicode/utf8"
)

// Bounds: typed-ahead input and one edited line. A client that types
// faster than the session reads gets an error, not unbounded memory.
const (
	MaxInput   = 1 << 20
	MaxLine    = 64 << 10
	maxHistory = 500
)

// ErrInputFull is returned by Input when the unread input is over MaxInput.
var ErrInputFull = errors.New("terminal input buffer full")

// ErrClosed is returned by Input after Close.
var ErrClosed = errors.New("terminal closed")

// mode is the termios subset that means something here.
type mode struct {
	echo, icanon, isig, icrnl, opost, onlcr bool
}

var sane = mode{echo: true, icanon: true, isig: true, icrnl: true, opost: true, onlcr: true}

// Term is one pseudo-terminal. Input and Resize may be called from any
// goroutine; Serve runs the interactive loop on it.
type Term struct {
	out   io.Writer
	outMu sync.Mutex

	mu     sync.Mutex
	cols   int
	rows   int
	mode   mode
	closed bool
	notify chan struct{}
	// keys is raw input for the line editor (nothing is running).
	keys []byte
	// While a command runs, input goes through the line discipline:
	// line is the line being typed, cooked what the command may read,
	// eof a pending ^D.
	running bool
	line    []byte
	cooked  []byte
	eof     bool
	intr    func() // interrupts the running command (^C)
	// sink and onResize are set while a native program runs on a real
	// pty (raw.go).
	sink     func([]byte) bool
	onResize func(cols, rows int)
}

// New returns a terminal of cols×rows writing its display to out (which
// must not block for long: echo is written from Input).
func New(out io.Writer, cols, rows int) *Term {
	cols, rows = clampSize(cols, rows)
	return &Term{out: out, cols: cols, rows: rows, mode: sane, notify: make(chan struct{})}
}

func clampSize(cols, rows int) (int, int) {
	if cols <= 0 {
		cols = 80
	}
	if rows <= 0 {
		rows = 24
	}
	return min(cols, 10000), min(rows, 10000)
}

// CheckSize refuses a window size that is not 1..10000 in both directions.
func CheckSize(cols, rows int) error {
	if cols < 1 || rows < 1 || cols > 10000 || rows > 10000 {
		return errors.New("terminal size must be 1..10000 columns and rows")
	}
	return nil
}

// wake tells every waiter that the state changed. Caller holds mu.
func (t *Term) wake() {
	close(t.notify)
	t.notify = make(chan struct{})
}

// Size returns the window size.
func (t *Term) Size() (cols, rows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cols, t.rows
}

// Resize changes the window size (what stty size and COLUMNS/LINES show).
func (t *Term) Resize(cols, rows int) {
	cols, rows = clampSize(cols, rows)
	t.mu.Lock()
	t.cols, t.rows = cols, rows
	t.wake()
	hook := t.onResize
	t.mu.Unlock()
	if hook != nil {
		hook(cols, rows)
	}
}

// Close hangs the terminal up: readers see EOF and Serve returns.
func (t *Term) Close() {
	t.mu.Lock()
	intr := t.intr
	if !t.closed {
		t.closed = true
		t.wake()
	}
	t.mu.Unlock()
	if intr != nil {
		intr() // SIGHUP for the running command
	}
}

// Closed reports whether Close was called.
func (t *Term) Closed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Interrupt is ^C from outside (a SIGINT sent to the process): the
// running command is interrupted, or the line being edited dropped.
func (t *Term) Interrupt() {
	t.Input([]byte{0x03})
}

// Input is keyboard input. While a command runs it goes through the line
// discipline; at the prompt, to the line editor.
func (t *Term) Input(p []byte) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	if len(t.keys)+len(t.cooked)+len(t.line)+len(p) > MaxInput {
		t.mu.Unlock()
		return ErrInputFull
	}
	if sink := t.sink; sink != nil && t.running {
		intr := t.intr
		t.mu.Unlock()
		if sink(p) && intr != nil {
			intr()
		}
		return nil
	}
	var echo []byte
	var intr func()
	if !t.running {
		t.keys = append(t.keys, p...)
	} else {
		echo, intr = t.discipline(p)
	}
	t.wake()
	t.mu.Unlock()
	if len(echo) > 0 {
		t.writeRaw(echo)
	}
	if intr != nil {
		intr()
	}
	return nil
}

// discipline is the tty driver's input processing for a running
// command. It returns what to echo and, on ^C, the interrupt to call.
// Caller holds mu.
func (t *Term) discipline(p []byte) (echo []byte, intr func()) {
	m := t.mode
	for _, c := range p {
		if m.icrnl && c == '\r' {
			c = '\n'
		}
		if m.isig && c == 0x03 {
			if m.echo {
				echo = append(echo, "^C\r\n"...)
			}
			t.line, t.cooked, t.eof = t.line[:0], t.cooked[:0], false
			intr = t.intr
			continue
		}
		if !m.icanon {
			t.cooked = append(t.cooked, c)
			if m.echo {
				echo = appendEcho(echo, c)
			}
			continue
		}
		switch c {
		case 0x7f, 0x08: // erase
			if n := lastRuneLen(t.line); n > 0 {
				t.line = t.line[:len(t.line)-n]
				if m.echo {
					echo = append(echo, "\b \b"...)
				}
			}
		case 0x15: // ^U: kill the line
			if m.echo {
				for range utf8.RuneCount(t.line) {
					echo = append(echo, "\b \b"...)
				}
			}
			t.line = t.line[:0]
		case 0x17: // ^W: erase a word
			n := wordStart(t.line)
			if m.echo {
				for range utf8.RuneCount(t.line[n:]) {
					echo = append(echo, "\b \b"...)
				}
			}
			t.line = t.line[:n]
		case 0x04: // ^D: end of file, or push the partial line
			if len(t.line) == 0 {
				t.eof = true
			}
			t.cooked = append(t.cooked, t.line...)
			t.line = t.line[:0]
		case '\n':
			t.cooked = append(append(t.cooked, t.line...), '\n')
			t.line = t.line[:0]
			if m.echo {
				echo = append(echo, "\r\n"...)
			}
		default:
			if len(t.line) < MaxLine {
				t.line = append(t.line, c)
				if m.echo {
					echo = appendEcho(echo, c)
				}
			}
		}
	}
	return echo, intr
}

// appendEcho echoes c, control characters as ^X (echoctl).
func appendEcho(b []byte, c byte) []byte {
	if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1b {
		return append(b, '^', c+'@')
	}
	if c == '\n' {
		return append(b, "\r\n"...)
	}
	return append(b, c)
}

func lastRuneLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	_, n := utf8.DecodeLastRune(b)
	return n
}

// wordStart is where ^W erases back to: trailing blanks, then a word.
func wordStart(b []byte) int {
	i := len(b)
	for i > 0 && (b[i-1] == ' ' || b[i-1] == '\t') {
		i--
	}
	for i > 0 && b[i-1] != ' ' && b[i-1] != '\t' {
		i--
	}
	return i
}

// readKey returns the next byte for the line editor.
func (t *Term) readKey(ctx context.Context) (byte, error) {
	for {
		t.mu.Lock()
		if len(t.keys) > 0 {
			c := t.keys[0]
			t.keys = t.keys[1:]
			t.mu.Unlock()
			return c, nil
		}
		if t.closed {
			t.mu.Unlock()
			return 0, io.EOF
		}
		ch := t.notify
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
}

// startCommand switches input to the line discipline.
func (t *Term) startCommand(intr func()) {
	t.mu.Lock()
	t.running, t.intr = true, intr
	// Type-ahead typed at the prompt after the accepted line is the
	// command's input, as on a real tty.
	ahead := t.keys
	t.keys = nil
	var echo []byte
	var hit func()
	if len(ahead) > 0 {
		echo, hit = t.discipline(ahead)
	}
	closed := t.closed
	t.mu.Unlock()
	if len(echo) > 0 {
		t.writeRaw(echo)
	}
	if hit != nil {
		hit()
	}
	if closed {
		intr()
	}
}

// endCommand gives unread input back to the editor (a pending ^D too).
func (t *Term) endCommand() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running, t.intr = false, nil
	t.keys = append(append(t.keys, t.cooked...), t.line...)
	if t.eof {
		t.keys = append(t.keys, 0x04)
	}
	t.cooked, t.line, t.eof = nil, nil, false
	t.wake()
}

// writeRaw writes display bytes as they are (the editor's own output).
func (t *Term) writeRaw(p []byte) {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	t.out.Write(p)
}

// stream is a command's view of the terminal: reads through the line
// discipline, writes through output processing. It implements
// shell.Terminal, so [ -t 0 ], [ -t 1 ] and stty see a terminal.
type stream struct {
	t    *Term
	done <-chan struct{} // closed when the command ends
}

func (s stream) Read(p []byte) (int, error) {
	t := s.t
	for {
		t.mu.Lock()
		if len(t.cooked) > 0 {
			n := copy(p, t.cooked)
			t.cooked = t.cooked[n:]
			t.mu.Unlock()
			return n, nil
		}
		if t.eof || t.closed {
			t.eof = false
			t.mu.Unlock()
			return 0, io.EOF
		}
		ch := t.notify
		t.mu.Unlock()
		select {
		case <-ch:
		case <-s.done:
			return 0, io.EOF
		}
	}
}

func (s stream) Write(p []byte) (int, error) {
	t := s.t
	t.mu.Lock()
	m := t.mode
	t.mu.Unlock()
	if !m.opost || !m.onlcr {
		t.writeRaw(p)
		return len(p), nil
	}
	out := make([]byte, 0, len(p)+16)
	for _, c := range p {
		if c == '\n' {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	t.writeRaw(out)
	return len(p), nil
}

func (s stream) Stty(args []string, stdout, stderr io.Writer) int {
	return s.t.stty(args, stdout, stderr)
}
