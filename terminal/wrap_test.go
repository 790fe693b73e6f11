package terminal_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// vt is a small VT100 model of what the editor's output draws: text with
// xterm's deferred wrap, CR, LF, BS, and CSI A B C D K J H.
type vt struct {
	cols, rows int
	grid       [][]rune
	r, c       int
	wrap       bool
}

func newVT(cols, rows int) *vt {
	v := &vt{cols: cols, rows: rows, grid: make([][]rune, rows)}
	for i := range v.grid {
		v.grid[i] = []rune(strings.Repeat(" ", cols))
	}
	return v
}

func (v *vt) lf() {
	if v.r == v.rows-1 {
		copy(v.grid, v.grid[1:])
		v.grid[v.rows-1] = []rune(strings.Repeat(" ", v.cols))
	} else {
		v.r++
	}
}

func (v *vt) feed(s string) {
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		ch := rs[i]
		switch {
		case ch == '\r':
			v.c, v.wrap = 0, false
		case ch == '\n':
			v.lf()
			v.wrap = false
		case ch == '\b':
			if v.c > 0 {
				v.c--
			}
			v.wrap = false
		case ch == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ';') {
				j++
			}
			n, err := strconv.Atoi(string(rs[i+2 : j]))
			if err != nil {
				n = 1
			}
			switch rs[j] {
			case 'A':
				v.r = max(v.r-n, 0)
			case 'B':
				v.r = min(v.r+n, v.rows-1)
			case 'C':
				v.c = min(v.c+n, v.cols-1)
			case 'D':
				v.c = max(v.c-n, 0)
			case 'K':
				for k := v.c; k < v.cols; k++ {
					v.grid[v.r][k] = ' '
				}
			case 'J':
				for k := v.c; k < v.cols; k++ {
					v.grid[v.r][k] = ' '
				}
				for r := v.r + 1; r < v.rows; r++ {
					v.grid[r] = []rune(strings.Repeat(" ", v.cols))
				}
			case 'H':
				v.r, v.c = 0, 0
			}
			v.wrap = false
			i = j
		case ch >= ' ':
			if v.wrap {
				v.c, v.wrap = 0, false
				v.lf()
			}
			v.grid[v.r][v.c] = ch
			if v.c == v.cols-1 {
				v.wrap = true
			} else {
				v.c++
			}
		}
	}
}

func (v *vt) lines() []string {
	out := make([]string, v.rows)
	for i, l := range v.grid {
		out[i] = strings.TrimRight(string(l), " ")
	}
	return out
}

// TestEditorWraps: a line longer than the window edits in place: moving
// across rows, inserting in the middle, erasing at a row's start.
func TestEditorWraps(t *testing.T) {
	const cols = 20
	s := start(t, cols, 10)
	line := "echo 0123456789abcdefghijklmnopqrstuvwxyz" // 2 + 41 columns: three rows
	s.send(line)
	s.send(strings.Repeat("\x1b[D", 30) + "-" + "\x05" + "\x7f\x7f\x7f\x7f\x7f\x7f")
	s.send("\x01\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C" + "+")
	want := "$ echo +012345-6789abcdefghijklmnopqrst"
	deadline := time.Now().Add(5 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		v := newVT(cols, 10)
		v.feed(s.scr.String())
		got = v.lines()
		joined := ""
		for _, l := range got {
			if l != "" {
				joined += l
			}
		}
		// Rows of exactly cols columns join up into the logical line.
		if joined == want && v.r == 0 && v.c == len("$ echo +") {
			s.send("\r")
			s.expect("+012345-6789abcdefghijklmnopqrst\r\n$ ")
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("screen:\n%s\nwant the line %q with the cursor after the +", strings.Join(got, "\n"), want)
}
