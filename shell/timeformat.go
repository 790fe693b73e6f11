package shell

import (
	"fmt"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// timeOperands reads what mvdan's parser leaves in a time clause's
// command: bash 5.2 takes `--` after `time` or `time -p` as the end of its
// options and then prints the POSIX format (as -p), and `time -p -- ! cmd`
// times a negated pipeline, which the parser sees as words of a call. The
// clause itself is shared (parse trees are cached), so the call is copied.
func timeOperands(c *syntax.TimeClause) (inner *syntax.Stmt, posix, negate bool) {
	inner, posix = c.Stmt, c.PosixFormat
	if inner == nil {
		return
	}
	st, negate, ok := dropDashDash(inner)
	if !ok {
		return inner, posix, false
	}
	return st, true, negate
}

// dropDashDash takes a leading `--` (and a `!` after it) off the first
// command of st's pipeline, copying what it changes.
func dropDashDash(st *syntax.Stmt) (out *syntax.Stmt, negate, ok bool) {
	if bc, isPipe := st.Cmd.(*syntax.BinaryCmd); isPipe && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
		x, neg, ok := dropDashDash(bc.X)
		if !ok || x == nil {
			return st, false, false
		}
		b2 := *bc
		b2.X = x
		s2 := *st
		s2.Cmd = &b2
		return &s2, neg, true
	}
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Assigns) > 0 || len(call.Args) == 0 || call.Args[0].Lit() != "--" {
		return st, false, false
	}
	args := call.Args[1:]
	if len(args) > 0 && args[0].Lit() == "!" {
		args, negate = args[1:], true
	}
	if len(args) == 0 && len(st.Redirs) == 0 {
		return nil, negate, true
	}
	s2 := *st
	cc := *call
	cc.Args = args
	s2.Cmd = &cc
	return &s2, negate, true
}

// rewriteTimeBang turns `time ! cmd` (and `time -p ! cmd`), which mvdan's
// parser refuses, into `! time cmd`, which it takes and which runs the same:
// the pipeline is timed and its status negated. The swap keeps every byte
// offset, so line numbers stay true. Quoted text is left alone.
func rewriteTimeBang(src string) (string, bool) {
	if !strings.Contains(src, "time") || !strings.Contains(src, "!") {
		return src, false
	}
	b := []byte(src)
	changed := false
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '\\':
			i++
			continue
		case c == '\'' || c == '"' || c == '`':
			quote = c
			continue
		case c == '#' && (i == 0 || isTimeSep(b[i-1])):
			for i < len(b) && b[i] != '\n' {
				i++
			}
			continue
		}
		if c != 't' || !strings.HasPrefix(string(b[i:]), "time") || (i > 0 && !isTimeSep(b[i-1])) {
			continue
		}
		j := i + 4
		if j >= len(b) || (b[j] != ' ' && b[j] != '\t') {
			continue
		}
		for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
			j++
		}
		if strings.HasPrefix(string(b[j:]), "-p") && j+2 < len(b) && (b[j+2] == ' ' || b[j+2] == '\t') {
			j += 2
			for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
				j++
			}
		}
		if j+1 >= len(b) || b[j] != '!' || (b[j+1] != ' ' && b[j+1] != '\t') {
			continue
		}
		// "time<ws>!<c>" becomes "!<c>time<ws>": the bang and the blank
		// after it move to the front.
		head := string(b[i:j])
		b[i], b[i+1] = '!', b[j+1]
		copy(b[i+2:j+2], head)
		changed = true
		i = j + 1
	}
	return string(b), changed
}

func isTimeSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', '{':
		return true
	}
	return false
}

// timeFormat expands bash's TIMEFORMAT for a command that took real: %R
// %U %S with an optional precision digit (default 3) and l for the
// MmS.FFFs form, %P, %%. User and system time are not measured for the
// resident tier (in-process work), so they are 0. bad is a format
// character bash refuses.
func timeFormat(f string, real time.Duration) (out string, bad byte) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			b.WriteByte('%')
			break
		}
		prec, long := 3, false
		if f[i] >= '0' && f[i] <= '9' {
			prec = min(int(f[i]-'0'), 3)
			i++
		}
		if i < len(f) && f[i] == 'l' {
			long = true
			i++
		}
		if i >= len(f) {
			break
		}
		var d time.Duration
		switch f[i] {
		case '%':
			b.WriteByte('%')
			continue
		case 'P':
			b.WriteString("0.00")
			continue
		case 'R':
			d = real
		case 'U', 'S':
		default:
			return "", f[i]
		}
		secs := d.Seconds()
		if long {
			m := int(secs / 60)
			fmt.Fprintf(&b, "%dm%.*fs", m, prec, secs-60*float64(m))
		} else {
			fmt.Fprintf(&b, "%.*f", prec, secs)
		}
	}
	return b.String(), 0
}
