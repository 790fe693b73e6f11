package git

import (
	"bytes"
	"fmt"
	"strings"
)

type imgLine struct {
	text    string
	patched bool // written by an earlier hunk: not matched again
}

func splitImage(b []byte) []imgLine {
	var out []imgLine
	s := string(b)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, imgLine{text: s})
			break
		}
		out = append(out, imgLine{text: s[:i+1]})
		s = s[i+1:]
	}
	return out
}

// applyHunks is git's apply_fragments for text: each hunk's preimage is
// searched for from the line its header names, alternately forwards and
// backwards.
func (a *applier) applyHunks(p *gpatch, data []byte) ([]byte, bool) {
	img := splitImage(data)
	name := firstNonEmpty(p.oldName, p.newName)
	for n, h := range p.hunks {
		var pre, post []string
		for _, l := range h.lines {
			kind := l.kind
			if a.o.reverse {
				if kind == '-' {
					kind = '+'
				} else if kind == '+' {
					kind = '-'
				}
			}
			text := l.text
			if kind != '+' {
				pre = append(pre, text)
			}
			if kind != '-' {
				if kind == '+' && (a.o.ws == "fix" || a.o.ws == "strip") {
					if fixed := fixWhitespace(text); fixed != text {
						text = fixed
						a.wsFixed++
					}
				}
				post = append(post, text)
			}
		}
		oldPos, newPos := h.oldPos, h.newPos
		if a.o.reverse {
			oldPos, newPos = newPos, oldPos
		}
		leading, trailing := h.leading, h.trailing
		matchBeginning := oldPos == 0 || (oldPos == 1 && !a.o.unidiffZero)
		matchEnd := !a.o.unidiffZero && trailing == 0
		pos := 0
		if newPos > 0 {
			pos = newPos - 1
		}
		applied := -1
		for {
			applied = findPos(img, pre, pos, matchBeginning, matchEnd)
			if applied >= 0 {
				break
			}
			if a.o.context < 0 || (leading <= a.o.context && trailing <= a.o.context) {
				break
			}
			if matchBeginning || matchEnd {
				matchBeginning, matchEnd = false, false
				continue
			}
			if leading >= trailing {
				pre, post = pre[1:], post[1:]
				pos--
				leading--
			}
			if trailing > leading {
				pre, post = pre[:len(pre)-1], post[:len(post)-1]
				trailing--
			}
		}
		if applied < 0 {
			if a.o.verbose {
				fmt.Fprintf(a.s.inv.Stderr, "error: while searching for:\n%s\n", strings.Join(pre, ""))
			}
			a.errf("patch failed: %s:%d", name, oldPos)
			return nil, false
		}
		if a.o.verbose && applied != pos {
			off := applied - pos
			if a.o.reverse {
				off = -off
			}
			unit := "lines"
			if off == 1 || off == -1 {
				unit = "line"
			}
			fmt.Fprintf(a.s.inv.Stderr, "Hunk #%d succeeded at %d (offset %d %s).\n", n+1, applied+1, off, unit)
		}
		if leading != h.leading || trailing != h.trailing {
			if !a.o.quiet {
				fmt.Fprintf(a.s.inv.Stderr, "Context reduced to (%d/%d) to apply fragment at %d\n", leading, trailing, applied+1)
			}
		}
		repl := make([]imgLine, 0, len(img)-len(pre)+len(post))
		repl = append(repl, img[:applied]...)
		for _, t := range post {
			repl = append(repl, imgLine{text: t, patched: true})
		}
		repl = append(repl, img[applied+len(pre):]...)
		img = repl
	}
	var b bytes.Buffer
	for _, l := range img {
		b.WriteString(l.text)
	}
	return b.Bytes(), true
}

// findPos is git's find_pos: the first line at or around line where pre
// matches img exactly, or -1.
func findPos(img []imgLine, pre []string, line int, matchBeginning, matchEnd bool) int {
	if matchBeginning {
		line = 0
	} else if matchEnd {
		line = len(img) - len(pre)
	}
	if line > len(img) || line < 0 {
		line = len(img)
		if line < 0 {
			line = 0
		}
	}
	match := func(at int) bool {
		if at+len(pre) > len(img) {
			return false
		}
		if matchEnd && at+len(pre) != len(img) {
			return false
		}
		if matchBeginning && at != 0 {
			return false
		}
		for i, t := range pre {
			if img[at+i].patched || img[at+i].text != t {
				return false
			}
		}
		return true
	}
	back, fwd, cur := line, line, line
	for i := 0; ; i++ {
		if match(cur) {
			return cur
		}
	again:
		if back == 0 && fwd == len(img) {
			return -1
		}
		if i&1 == 1 {
			if back == 0 {
				i++
				goto again
			}
			back--
			cur = back
		} else {
			if fwd == len(img) {
				i++
				goto again
			}
			fwd++
			cur = fwd
		}
	}
}

// fixWhitespace is git's ws_fix_copy for the default rule: an added
// line loses its trailing blanks and the spaces before a tab in its indent
// (eight of them become a tab).
func fixWhitespace(t string) string {
	body := strings.TrimRight(strings.TrimSuffix(t, "\n"), " \t\r\v\f")
	lastTab, lastSpace := -1, -1
	for i := 0; i < len(body); i++ {
		if body[i] == '\t' {
			lastTab = i
		} else if body[i] == ' ' {
			lastSpace = i
		} else {
			break
		}
	}
	var b strings.Builder
	if lastTab >= 0 && lastSpace >= 0 && lastSpace < lastTab {
		spaces := 0
		for _, c := range []byte(body[:lastTab+1]) {
			if c != ' ' {
				spaces = 0
				b.WriteByte(c)
				continue
			}
			if spaces++; spaces == 8 {
				b.WriteByte('\t')
				spaces = 0
			}
		}
		b.WriteString(strings.Repeat(" ", spaces))
		body = body[lastTab+1:]
	}
	b.WriteString(body)
	if strings.HasSuffix(t, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}
