package diff

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// writeEd is diff -e: an ed script that turns the first file into the
// second, hunks last to first so earlier line numbers stay valid.
func writeEd(w io.Writer, la, lb []line, script []edit) {
	hs := hunks(script)
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		switch {
		case h.a0 == h.a1:
			fmt.Fprintf(w, "%da\n", h.a0)
		case h.b0 == h.b1:
			fmt.Fprintf(w, "%sd\n", rangeStr(h.a0+1, h.a1))
			continue
		default:
			fmt.Fprintf(w, "%sc\n", rangeStr(h.a0+1, h.a1))
		}
		for _, l := range lb[h.b0:h.b1] {
			io.WriteString(w, l.text)
			io.WriteString(w, "\n")
		}
		io.WriteString(w, ".\n")
	}
}

// contextRange is GNU's range in context headers: an empty range names
// the line before it.
func contextRange(lo, hi int) string { // lo 0-based start, hi end (exclusive)
	if hi-lo <= 1 {
		return strconv.Itoa(max(hi, lo))
	}
	return strconv.Itoa(lo+1) + "," + strconv.Itoa(hi)
}

// writeContext is diff -c / -C N: groups of hunks with ctxN lines of
// context, the old side marked "- " (deleted) and "! " (changed), the new
// side "+ " and "! "; a side with no change is left out.
func writeContext(w io.Writer, la, lb []line, script []edit, ctxN int) {
	hs := hunks(script)
	for i := 0; i < len(hs); {
		j := i
		for j+1 < len(hs) && hs[j+1].a0-hs[j].a1 <= 2*ctxN {
			j++
		}
		a0, b0 := max(hs[i].a0-ctxN, 0), max(hs[i].b0-ctxN, 0)
		a1, b1 := min(hs[j].a1+ctxN, len(la)), min(hs[j].b1+ctxN, len(lb))
		io.WriteString(w, "***************\n")
		fmt.Fprintf(w, "*** %s ****\n", contextRange(a0, a1))
		group := hs[i : j+1]
		side := func(lines []line, lo, hi int, ends func(h hunk) (int, int), other func(h hunk) bool, only string) {
			changed := false
			for _, h := range group {
				if s, e := ends(h); e > s {
					changed = true
				}
			}
			if !changed {
				return
			}
			k := 0
			for n := lo; n < hi; n++ {
				for k < len(group) {
					if _, e := ends(group[k]); e <= n {
						k++
						continue
					}
					break
				}
				prefix := "  "
				if k < len(group) {
					if s, e := ends(group[k]); n >= s && n < e {
						prefix = only
						if other(group[k]) {
							prefix = "! "
						}
					}
				}
				writeLine(w, prefix, lines[n])
			}
		}
		side(la, a0, a1, func(h hunk) (int, int) { return h.a0, h.a1 }, func(h hunk) bool { return h.b1 > h.b0 }, "- ")
		fmt.Fprintf(w, "--- %s ----\n", contextRange(b0, b1))
		side(lb, b0, b1, func(h hunk) (int, int) { return h.b0, h.b1 }, func(h hunk) bool { return h.a1 > h.a0 }, "+ ")
		i = j + 1
	}
}

// sideBySide is diff -y laid out as GNU does for a total width: the left
// column is half wide, the gutter marks '<', '>', '|' (or nothing for a
// common line), the right column starts at a tab stop.
type sideBySide struct {
	w        io.Writer
	half     int
	offset   int
	suppress bool // --suppress-common-lines
}

func newSideBySide(w io.Writer, width int) *sideBySide {
	const tab, gutter = 8, 3
	off := (width + tab + gutter) / (2 * tab) * tab
	half := max(0, min(off-gutter, width-off))
	if half == 0 {
		off = width
	}
	return &sideBySide{w: w, half: half, offset: off}
}

// tabTo moves from column from to column to with tabs, then spaces.
func (s *sideBySide) tabTo(from, to int) int {
	var b strings.Builder
	for next := (from + 8) / 8 * 8; next <= to; next += 8 {
		b.WriteByte('\t')
		from = next
	}
	for ; from < to; from++ {
		b.WriteByte(' ')
	}
	io.WriteString(s.w, b.String())
	return to
}

// halfLine writes at most s.half columns of text and returns the width written.
func (s *sideBySide) halfLine(text string, col0 int) int {
	col := col0
	var b strings.Builder
	for _, r := range text {
		if r == '\t' {
			next := (col + 8) / 8 * 8
			if next-col0 > s.half {
				break
			}
			b.WriteRune(r)
			col = next
			continue
		}
		if col-col0+1 > s.half {
			break
		}
		b.WriteRune(r)
		col++
	}
	io.WriteString(s.w, b.String())
	return col - col0
}

func (s *sideBySide) line(left, right *line, sep byte) {
	col := 0
	if left != nil {
		col = s.halfLine(left.text, 0)
	}
	if sep != ' ' {
		// The mark sits in the middle of the gutter.
		col = s.tabTo(col, (s.half+s.offset-1)/2)
		io.WriteString(s.w, string(sep))
		col++
	}
	if right != nil {
		if col < s.offset {
			s.tabTo(col, s.offset)
		}
		s.halfLine(right.text, s.offset)
	}
	io.WriteString(s.w, "\n")
}

func (s *sideBySide) write(la, lb []line, script []edit) {
	ai, bi := 0, 0
	for _, h := range hunks(script) {
		for ; ai < h.a0; ai, bi = ai+1, bi+1 {
			if !s.suppress {
				s.line(&la[ai], &lb[bi], ' ')
			}
		}
		n, m := h.a1-h.a0, h.b1-h.b0
		for k := 0; k < max(n, m); k++ {
			switch {
			case k < n && k < m:
				s.line(&la[h.a0+k], &lb[h.b0+k], '|')
			case k < n:
				s.line(&la[h.a0+k], nil, '<')
			default:
				s.line(nil, &lb[h.b0+k], '>')
			}
		}
		ai, bi = h.a1, h.b1
	}
	for ; ai < len(la); ai, bi = ai+1, bi+1 {
		if !s.suppress {
			s.line(&la[ai], &lb[bi], ' ')
		}
	}
}
