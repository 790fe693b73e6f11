package shell

// Builtins that write their arguments: echo (with its -e escapes) and
// printf's option handling; the format itself is r.printf's.

import (
	"io"
	"strings"

	"github.com/warren-sandbox/warren/commands/bashfmt"
)

// biEcho is bash's echo: leading words made only of -n, -e and -E letters
// are options, the first other word starts the text; -e (or shopt
// xpg_echo) interprets backslash escapes.
func biEcho(r *runner, args []string) int {
	args = args[1:]
	nl, esc := true, r.shopts["xpg_echo"]
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'n':
				nl = false
			case 'e':
				esc = true
			case 'E':
				esc = false
			}
		}
		args = args[1:]
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if esc {
			s, stop := bashfmt.Unescape(a, bashfmt.EchoEscapes)
			b.WriteString(s)
			if stop {
				nl = false
				break
			}
		} else {
			b.WriteString(a)
		}
	}
	if nl {
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(r.stdout(), b.String()); err != nil {
		return r.writeErr("echo", err)
	}
	return 0
}

// echoEscapes interprets echo -e escapes; stop is true after \c.
func echoEscapes(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
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
		case '0':
			n, j := 0, i+1
			for ; j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x':
			n, j := 0, i+1
			for ; j < len(s) && j < i+3 && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteString("\\x")
			} else {
				b.WriteByte(byte(n))
			}
			i = j - 1
		case 'u', 'U':
			max := 4
			if s[i] == 'U' {
				max = 8
			}
			n, j := 0, i+1
			for ; j < len(s) && j < i+1+max && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(s[i])
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String(), false
}

// isHex reports whether c is an ASCII hexadecimal digit.
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// hexVal is the value of the hexadecimal digit c (one isHex accepts).
func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// biPrintf takes printf's own options (-v NAME, --) and leaves the format
// to r.printf; with -v the result is assigned to NAME instead of written.
func biPrintf(r *runner, args []string) int {
	args = args[1:]
	varName := ""
	for len(args) > 0 {
		if args[0] == "-v" && len(args) > 1 {
			varName = args[1]
			args = args[2:]
			continue
		}
		if args[0] == "--" {
			args = args[1:]
		}
		break
	}
	if len(args) == 0 {
		r.errf("printf: usage: printf [-v var] format [arguments]")
		return 2
	}
	out, st := r.printf(args[0], args[1:])
	if varName != "" {
		if !r.setVar(varName, out) {
			return 1
		}
		return st
	}
	if _, err := io.WriteString(r.stdout(), out); err != nil {
		return r.writeErr("printf", err)
	}
	return st
}
