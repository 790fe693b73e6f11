package coreutils

// printf: printf(1) as bash's builtin formats.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands"
)

// Printf is printf(1) as bash's builtin behaves.
func Printf(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	args := inv.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		r.out.Flush()
		fmt.Fprintf(inv.Stderr, "%s: usage: printf [-v var] format [arguments]\n", r.name)
		r.status = 2
		return r.done()
	}
	format, args := args[0], args[1:]
	for {
		used, stop := r.printfOnce(format, args)
		if stop || used == 0 || used >= len(args) {
			break
		}
		args = args[used:]
	}
	return r.done()
}

// printfOnce applies format once; it returns how many args it consumed.
func (r *run) printfOnce(format string, args []string) (int, bool) {
	ai := 0
	next := func() (string, bool) {
		if ai < len(args) {
			ai++
			return args[ai-1], true
		}
		return "", false
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '\\' {
			j := i + 1
			if j < len(format) && format[j] == 'c' {
				return ai, true
			}
			// one escape sequence
			end := j + 1
			if j < len(format) {
				switch {
				case format[j] >= '0' && format[j] <= '7':
					for end < len(format) && end < j+3 && format[end] >= '0' && format[end] <= '7' {
						end++
					}
				case format[j] == 'x':
					for end < len(format) && end < j+3 && isHex(format[end]) {
						end++
					}
				case format[j] == 'u' || format[j] == 'U':
					n := 4
					if format[j] == 'U' {
						n = 8
					}
					for end < len(format) && end < j+1+n && isHex(format[end]) {
						end++
					}
				}
			}
			end = min(end, len(format))
			s, _ := unescape(format[i:end], false)
			r.out.WriteString(s)
			i = end - 1
			continue
		}
		if c != '%' {
			r.out.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			r.out.WriteByte('%')
			i++
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0'", format[j]) >= 0 {
			j++
		}
		flags := format[i+1 : j]
		width := ""
		if j < len(format) && format[j] == '*' {
			a, _ := next()
			n, _ := strconv.Atoi(a)
			width = strconv.Itoa(n)
			j++
		} else {
			for j < len(format) && isDigit(format[j]) {
				width += string(format[j])
				j++
			}
		}
		prec, hasPrec := "", false
		if j < len(format) && format[j] == '.' {
			hasPrec = true
			j++
			if j < len(format) && format[j] == '*' {
				a, _ := next()
				n, _ := strconv.Atoi(a)
				prec = strconv.Itoa(n)
				j++
			} else {
				for j < len(format) && isDigit(format[j]) {
					prec += string(format[j])
					j++
				}
			}
		}
		for j < len(format) && strings.IndexByte("hlLjzt", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			r.errorf("%%%s: invalid conversion specification", format[i+1:])
			return ai, true
		}
		verb := format[j]
		i = j
		spec := "%" + strings.ReplaceAll(flags, "'", "") + width
		if hasPrec {
			spec += "." + prec
		}
		arg, _ := next()
		switch verb {
		case 's':
			fmt.Fprintf(r.out, spec+"s", arg)
		case 'b':
			s, stop := unescape(arg, true)
			fmt.Fprintf(r.out, spec+"s", s)
			if stop {
				return ai, true
			}
		case 'q':
			fmt.Fprintf(r.out, spec+"s", shellQuote(arg))
		case 'c':
			if arg != "" {
				fmt.Fprintf(r.out, spec+"s", arg[:1])
			} else {
				fmt.Fprintf(r.out, spec+"s", "")
			}
		case 'd', 'i':
			fmt.Fprintf(r.out, spec+"d", r.intArg(arg))
		case 'o', 'u', 'x', 'X':
			v := r.intArg(arg)
			gv := verb
			if gv == 'u' {
				gv = 'd'
			}
			if v < 0 {
				fmt.Fprintf(r.out, spec+string(gv), uint64(v))
			} else {
				fmt.Fprintf(r.out, spec+string(gv), v)
			}
		case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
			v := r.floatArg(arg)
			if verb == 'F' {
				verb = 'f'
			}
			if verb == 'a' || verb == 'A' {
				verb = map[byte]byte{'a': 'x', 'A': 'X'}[verb]
			}
			fmt.Fprintf(r.out, spec+string(verb), v)
		default:
			r.errorf("%%%c: invalid conversion specification", verb)
			return ai, true
		}
	}
	return ai, false
}

func (r *run) intArg(s string) int64 {
	if s == "" {
		return 0
	}
	if s[0] == '\'' || s[0] == '"' {
		if len(s) < 2 {
			return 0
		}
		rn, _ := utf8.DecodeRuneInString(s[1:])
		return int64(rn)
	}
	t := strings.TrimLeft(s, " \t")
	v, err := strconv.ParseInt(t, 0, 64)
	if err != nil {
		// Octal with leading 0 and hex handled by base 0; report others.
		if u, err2 := strconv.ParseUint(t, 0, 64); err2 == nil {
			return int64(u)
		}
		// GNU prints the numeric prefix and complains.
		i := 0
		if i < len(t) && (t[i] == '-' || t[i] == '+') {
			i++
		}
		for i < len(t) && isDigit(t[i]) {
			i++
		}
		pv, _ := strconv.ParseInt(t[:i], 10, 64)
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			r.errorf("%s: Numerical result out of range", quoteGNU(s))
		} else if i > 0 && i < len(t) {
			r.errorf("%s: value not completely converted", quoteGNU(s))
		} else {
			r.errorf("%s: expected a numeric value", quoteGNU(s))
		}
		return pv
	}
	return v
}

func (r *run) floatArg(s string) float64 {
	if s == "" {
		return 0
	}
	if s[0] == '\'' || s[0] == '"' {
		if len(s) < 2 {
			return 0
		}
		rn, _ := utf8.DecodeRuneInString(s[1:])
		return float64(rn)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		r.errorf("%s: expected a numeric value", quoteGNU(s))
		return 0
	}
	return v
}

// shellQuote renders s as coreutils printf %q does (quotearg's
// shell-escape style): bare when safe, '...' by preference, "..." when
// only a single quote is in the way, $'...' for control characters.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe, control, quote := true, false, false
	for _, c := range s {
		switch {
		case c < 32 || c == 127:
			control = true
		case c == '\'':
			quote = true
		}
		if c < 128 && !(isAlpha(byte(c)) || isDigit(byte(c)) || strings.ContainsRune("_-./,:@%+=", c)) {
			safe = false
		}
	}
	switch {
	case safe:
		return s
	case control:
		// Printable runs in '...', control runs in $'...', side by side.
		var b strings.Builder
		for i := 0; i < len(s); {
			j := i
			isCtl := func(c byte) bool { return c < 32 || c == 127 }
			for j < len(s) && isCtl(s[j]) == isCtl(s[i]) {
				j++
			}
			run := s[i:j]
			if !isCtl(s[i]) {
				b.WriteString("'" + strings.ReplaceAll(run, "'", `'\''`) + "'")
			} else {
				b.WriteString("$'")
				for k := 0; k < len(run); k++ {
					switch c := run[k]; c {
					case '\n':
						b.WriteString(`\n`)
					case '\t':
						b.WriteString(`\t`)
					case '\r':
						b.WriteString(`\r`)
					default:
						fmt.Fprintf(&b, "\\%03o", c)
					}
				}
				b.WriteString("'")
			}
			i = j
		}
		return b.String()
	case quote && !strings.ContainsAny(s, "\"$`\\!"):
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
