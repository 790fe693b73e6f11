package terminal

import (
	"context"
	"unicode/utf8"
)

// editor is the prompt's line editor: emacs keys as readline has them
// (left/right, ^A/^E, ^B/^F, backspace, delete, ^U, ^K, ^W, ^L), history
// on up/down and ^P/^N, ^C drops the line, ^D on an empty line ends input.
// Long lines wrap at the window's width (render.go).
type editor struct {
	t       *Term
	history []string
	// hist is the history position while browsing (len(history) = the
	// line being typed, kept in saved).
	hist  int
	saved []rune
}

func (e *editor) remember(line string) {
	if line == "" || (len(e.history) > 0 && e.history[len(e.history)-1] == line) {
		return
	}
	e.history = append(e.history, line)
	if len(e.history) > maxHistory {
		e.history = e.history[len(e.history)-maxHistory:]
	}
}

// readLine shows prompt and returns the accepted line (without its
// newline), errEOF on ^D at an empty line, errInterruptLine on ^C.
func (e *editor) readLine(ctx context.Context, prompt string) (string, error) {
	t := e.t
	var buf []rune
	pos := 0
	e.hist, e.saved = len(e.history), nil
	v := newView(t, prompt)
	redraw := func() { v.draw(buf, pos) }
	setLine := func(r []rune) {
		buf = append([]rune(nil), r...)
		pos = len(buf)
		redraw()
	}
	var pend []byte // an incomplete UTF-8 sequence
	for {
		c, err := t.readKey(ctx)
		if err != nil {
			return "", err
		}
		switch c {
		case '\r', '\n':
			v.move(len(buf))
			t.writeRaw([]byte("\r\n"))
			return string(buf), nil
		case 0x03: // ^C
			v.move(len(buf))
			t.writeRaw([]byte("^C\r\n"))
			return "", errInterruptLine
		case 0x04: // ^D
			if len(buf) == 0 {
				return "", errEOF
			}
			if pos < len(buf) {
				buf = append(buf[:pos], buf[pos+1:]...)
				redraw()
			}
		case 0x01: // ^A
			pos = 0
			v.move(pos)
		case 0x05: // ^E
			pos = len(buf)
			v.move(pos)
		case 0x02: // ^B
			if pos > 0 {
				pos--
				v.move(pos)
			}
		case 0x06: // ^F
			if pos < len(buf) {
				pos++
				v.move(pos)
			}
		case 0x7f, 0x08: // backspace
			if pos > 0 {
				buf = append(buf[:pos-1], buf[pos:]...)
				pos--
				if pos != len(buf) || !v.erasedLast(buf) {
					redraw()
				}
			}
		case 0x0b: // ^K
			buf = buf[:pos]
			redraw()
		case 0x15: // ^U: kill back to the start
			buf = append([]rune(nil), buf[pos:]...)
			pos = 0
			redraw()
		case 0x17: // ^W: kill the word before the cursor
			i := pos
			for i > 0 && buf[i-1] == ' ' {
				i--
			}
			for i > 0 && buf[i-1] != ' ' {
				i--
			}
			buf = append(buf[:i], buf[pos:]...)
			pos = i
			redraw()
		case 0x0c: // ^L
			t.writeRaw([]byte("\x1b[H\x1b[2J"))
			v.row, v.col = 0, 0
			redraw()
		case 0x10: // ^P
			e.up(&buf, setLine)
		case 0x0e: // ^N
			e.down(&buf, setLine)
		case 0x1b:
			seq, err := e.escape(ctx)
			if err != nil {
				return "", err
			}
			switch seq {
			case "[A", "OA":
				e.up(&buf, setLine)
			case "[B", "OB":
				e.down(&buf, setLine)
			case "[C", "OC":
				if pos < len(buf) {
					pos++
					v.move(pos)
				}
			case "[D", "OD":
				if pos > 0 {
					pos--
					v.move(pos)
				}
			case "[H", "OH", "[1~", "[7~":
				pos = 0
				v.move(pos)
			case "[F", "OF", "[4~", "[8~":
				pos = len(buf)
				v.move(pos)
			case "[3~":
				if pos < len(buf) {
					buf = append(buf[:pos], buf[pos+1:]...)
					redraw()
				}
			}
		case '\t':
			// No completion: a tab is inserted as typed.
			fallthrough
		default:
			if c < 0x20 && c != '\t' {
				continue
			}
			pend = append(pend, c)
			if !utf8.FullRune(pend) && len(pend) < utf8.UTFMax {
				continue
			}
			r, _ := utf8.DecodeRune(pend)
			pend = pend[:0]
			if len(buf) >= MaxLine {
				t.writeRaw([]byte("\a"))
				continue
			}
			buf = append(buf[:pos], append([]rune{r}, buf[pos:]...)...)
			pos++
			if pos == len(buf) {
				v.appended(r, len(buf))
			} else {
				redraw()
			}
		}
	}
}

// escape reads the rest of an escape sequence after ESC: "[" or "O",
// then parameters, then a final byte.
func (e *editor) escape(ctx context.Context) (string, error) {
	c, err := e.t.readKey(ctx)
	if err != nil {
		return "", err
	}
	if c != '[' && c != 'O' {
		return string(c), nil // meta-key: ignored
	}
	seq := []byte{c}
	for len(seq) < 16 {
		c, err := e.t.readKey(ctx)
		if err != nil {
			return "", err
		}
		seq = append(seq, c)
		if c >= 0x40 && c <= 0x7e {
			break
		}
	}
	return string(seq), nil
}

func (e *editor) up(buf *[]rune, set func([]rune)) {
	if e.hist == 0 {
		return
	}
	if e.hist == len(e.history) {
		e.saved = append([]rune(nil), *buf...)
	}
	e.hist--
	set([]rune(e.history[e.hist]))
}

func (e *editor) down(buf *[]rune, set func([]rune)) {
	if e.hist >= len(e.history) {
		return
	}
	e.hist++
	if e.hist == len(e.history) {
		set(e.saved)
		return
	}
	set([]rune(e.history[e.hist]))
}
