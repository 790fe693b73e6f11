package terminal

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// view draws the line being edited: the prompt's last line and the
// text, wrapped at the window's width, with the cursor tracked in rows
// and columns from the prompt's start, so a line longer than the window
// redraws in place. Each rune is taken as one column wide.
type view struct {
	t        *Term
	prompt   string // the prompt's last line
	pw       int    // its width on screen
	row, col int    // the cursor, relative to the prompt's first column
}

func newView(t *Term, prompt string) *view {
	if i := strings.LastIndexByte(prompt, '\n'); i >= 0 {
		t.writeRaw([]byte(prompt[:i+1]))
		prompt = prompt[i+1:]
	}
	v := &view{t: t, prompt: prompt, pw: visibleWidth(prompt)}
	t.writeRaw([]byte(prompt))
	cols := v.cols()
	v.row, v.col = v.pw/cols, v.pw%cols
	if v.pw > 0 && v.col == 0 {
		t.writeRaw([]byte(" \r\x1b[K")) // out of the pending wrap
	}
	return v
}

func (v *view) cols() int {
	c, _ := v.t.Size()
	return max(c, 1)
}

// draw rewrites prompt and text and puts the cursor before buf[pos].
func (v *view) draw(buf []rune, pos int) {
	var b strings.Builder
	if v.row > 0 {
		b.WriteString("\x1b[" + strconv.Itoa(v.row) + "A")
	}
	b.WriteString("\r")
	b.WriteString(v.prompt)
	b.WriteString(string(buf))
	cols := v.cols()
	total := v.pw + len(buf)
	if total > 0 && total%cols == 0 {
		b.WriteString(" \r") // a full last row: to the start of the next
	}
	b.WriteString("\x1b[J")
	v.row, v.col = total/cols, total%cols
	v.moveTo(&b, v.pw+pos)
	v.t.writeRaw([]byte(b.String()))
}

// move puts the cursor before buf[pos].
func (v *view) move(pos int) {
	var b strings.Builder
	v.moveTo(&b, v.pw+pos)
	v.t.writeRaw([]byte(b.String()))
}

func (v *view) moveTo(b *strings.Builder, target int) {
	cols := v.cols()
	r, c := target/cols, target%cols
	switch {
	case r < v.row:
		b.WriteString("\x1b[" + strconv.Itoa(v.row-r) + "A")
	case r > v.row:
		b.WriteString("\x1b[" + strconv.Itoa(r-v.row) + "B")
	}
	if c != v.col {
		b.WriteString("\r")
		if c > 0 {
			b.WriteString("\x1b[" + strconv.Itoa(c) + "C")
		}
	}
	v.row, v.col = r, c
}

// appended shows r typed at the end of a line now n runes long.
func (v *view) appended(r rune, n int) {
	s := string(r)
	cols := v.cols()
	total := v.pw + n
	if total%cols == 0 {
		s += " \r\x1b[K"
	}
	v.row, v.col = total/cols, total%cols
	v.t.writeRaw([]byte(s))
}

// erasedLast shows the last rune of the line erased, the cursor at the end.
func (v *view) erasedLast(buf []rune) bool {
	if v.col == 0 {
		return false // at a row's start: redraw instead
	}
	v.col--
	v.t.writeRaw([]byte("\b \b"))
	return true
}

// visibleWidth counts the runes of s that take a column: escape
// sequences (CSI, OSC) and control characters take none.
func visibleWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			i += 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
			i++
		case c == 0x1b && i+1 < len(s) && s[i+1] == ']':
			i += 2
			for i < len(s) && s[i] != 0x07 && !(s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\') {
				i++
			}
			i++
		case c < 0x20 || c == 0x7f:
			i++
		default:
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			n++
		}
	}
	return n
}
