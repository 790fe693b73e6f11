package coreutils

// echo: bash's echo builtin as a command, and the backslash escapes printf %b shares.

import (
	"context"
	"strings"

	"github.com/warren-sandbox/warren/commands"
)

// Echo is bash's echo: -n, -e, -E only when the whole word is such flags.
func Echo(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	args := inv.Args[1:]
	newline, escapes := true, false
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	for i, a := range args {
		if i > 0 {
			r.out.WriteByte(' ')
		}
		if escapes {
			s, stop := unescape(a, true)
			r.out.WriteString(s)
			if stop {
				return r.done()
			}
			continue
		}
		r.out.WriteString(a)
	}
	if newline {
		r.out.WriteByte('\n')
	}
	return r.done()
}

// unescape interprets echo -e / printf %b escapes; stop reports \c.
// echoStyle selects \0NNN (echo, %b) over \NNN (printf formats).
func unescape(s string, echoStyle bool) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := s[i]; d {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'c':
			return b.String(), true
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\':
			b.WriteByte('\\')
		case 'x':
			v, j := 0, i+1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				v = v*16 + hexVal(s[j])
				j++
			}
			if j == i+1 {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(v))
			i = j - 1
		case 'u', 'U':
			n := 4
			if d == 'U' {
				n = 8
			}
			v, j := 0, i+1
			for j < len(s) && j < i+1+n && isHex(s[j]) {
				v = v*16 + hexVal(s[j])
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(d)
				continue
			}
			b.WriteRune(rune(v))
			i = j - 1
		default:
			if d >= '0' && d <= '7' {
				start := i
				limit := 3
				if echoStyle && d == '0' {
					start, limit = i+1, 3
				}
				v, j := 0, start
				for j < len(s) && j < start+limit && s[j] >= '0' && s[j] <= '7' {
					v = v*8 + int(s[j]-'0')
					j++
				}
				b.WriteByte(byte(v))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(d)
		}
	}
	return b.String(), false
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func hexVal(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}
