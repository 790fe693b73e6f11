package bashfmt

import (
	"fmt"
	"strings"
)

// EscapeStyle selects which backslash escapes Unescape interprets: the
// sets differ in small ways between echo -e and printf %b, and between
// bash's builtins and GNU's programs.
type EscapeStyle int

const (
	// EchoEscapes is bash's echo -e (and xpg_echo): \a \b \e \E \f \n \r
	// \t \v \\, \0NNN (octal after a leading 0 only), \xHH, \uHHHH,
	// \UHHHHHHHH; \c ends the output. `echo -e '\101\0101'` prints \101A.
	EchoEscapes EscapeStyle = iota
	// PercentB is bash's printf %b: EchoEscapes plus \NNN without the
	// leading 0. `printf %b '\101\0101'` prints AA.
	PercentB
	// GNUEchoEscapes is GNU coreutils' echo -e: \NNN and \0NNN, \xHH, \e
	// but neither \E nor \u and \U.
	GNUEchoEscapes
	// GNUPercentB is GNU printf's %b, which also knows \" and exactly
	// four or eight digits after \u and \U.
	GNUPercentB
	// DollarQuote is bash's $'...': EchoEscapes' letters, \' \" \?,
	// octal of one to three digits (\0101 is \010 then 1) and \cX, the
	// control character of X (\c? is DEL, \c\\ takes both backslashes);
	// a \c at the end stays as it is. A \0 is kept: that the word ends
	// at a NUL is the caller's to apply.
	DollarQuote
)

// Unescape interprets the escapes of style in s. stop reports \c, after
// which the caller prints nothing more (not even echo's newline). Escapes
// that a style does not know are kept as they are, backslash included.
//
//	Unescape(`a\tb\cc`, EchoEscapes) == "a\tb", true
func Unescape(s string, style EscapeStyle) (out string, stop bool) {
	k := map[EscapeStyle]escKind{EchoEscapes: escEchoBash, PercentB: escBBash,
		GNUEchoEscapes: escEchoGNU, GNUPercentB: escBGNU, DollarQuote: escDollar}[style]
	b, stop, _ := unescape(nil, s, k, nil)
	return string(b), stop
}

// escKind is where escapes are interpreted: the format of printf, its %b
// arguments, or echo, in each dialect.
type escKind int

const (
	escEchoBash escKind = iota
	escEchoGNU
	escFormatBash
	escFormatGNU
	escBBash
	escBGNU
	escDollar
)

func (k escKind) gnu() bool { return k == escEchoGNU || k == escFormatGNU || k == escBGNU }

// escapeError is a GNU escape error: fatal, printf stops with status 1.
type escapeError struct{ msg string }

func (e *escapeError) Error() string { return e.msg }

// unescape appends s with k's escapes interpreted to dst. warn receives
// bash's non-fatal complaints ("missing hex digit for \x"); a GNU escape
// error ends the scan with what was appended so far and a non-nil error.
func unescape(dst []byte, s string, k escKind, warn func(string)) ([]byte, bool, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			dst = append(dst, c)
			continue
		}
		n, stop, err := escape1(&dst, s[i+1:], k, warn)
		if stop || err != nil {
			return dst, stop, err
		}
		i += n
	}
	return dst, false, nil
}

// escape1 interprets the escape whose text (after the backslash) starts
// e, appending its bytes to *dst; it returns how many bytes of e it used.
// An escape it does not know appends the backslash and uses nothing, so
// that the caller takes the next byte as an ordinary one.
func escape1(dst *[]byte, e string, k escKind, warn func(string)) (int, bool, error) {
	d := *dst
	defer func() { *dst = d }()
	if len(e) == 0 {
		d = append(d, '\\')
		return 0, false, nil
	}
	switch c := e[0]; c {
	case 'a':
		d = append(d, 7)
	case 'b':
		d = append(d, 8)
	case 'e':
		d = append(d, 27)
	case 'E':
		if k.gnu() {
			d = append(d, '\\')
			return 0, false, nil
		}
		d = append(d, 27)
	case 'f':
		d = append(d, 12)
	case 'n':
		d = append(d, '\n')
	case 'r':
		d = append(d, '\r')
	case 't':
		d = append(d, '\t')
	case 'v':
		d = append(d, 11)
	case '\\':
		d = append(d, '\\')
	case 'c':
		if k == escDollar {
			if len(e) < 2 {
				d = append(d, '\\')
				return 0, false, nil
			}
			x, n := e[1], 2
			if x == '\\' && len(e) > 2 && e[2] == '\\' {
				n = 3
			}
			d = append(d, toCtrl(x))
			return n, false, nil
		}
		if k == escFormatBash {
			d = append(d, '\\') // bash's format keeps \c
			return 0, false, nil
		}
		return 1, true, nil
	case '\'', '?':
		if k != escFormatBash && k != escDollar {
			d = append(d, '\\')
			return 0, false, nil
		}
		d = append(d, c)
	case '"':
		if k == escFormatBash || k == escFormatGNU || k == escBGNU || k == escDollar {
			d = append(d, c)
			return 1, false, nil
		}
		d = append(d, '\\')
		return 0, false, nil
	case '0', '1', '2', '3', '4', '5', '6', '7':
		if k == escEchoBash && c != '0' {
			d = append(d, '\\')
			return 0, false, nil
		}
		// How many digits: 3 in all in formats and $'...'; 3 after a
		// leading 0 in echo and %b, and, for \1..\7 there, 3 in all.
		j, digits := 0, 3
		if c == '0' && k != escFormatBash && k != escFormatGNU && k != escDollar {
			j = 1
		}
		v := 0
		for end := j + digits; j < end && j < len(e) && e[j] >= '0' && e[j] <= '7'; j++ {
			v = v*8 + int(e[j]-'0')
		}
		d = append(d, byte(v))
		return j, false, nil
	case 'x':
		v, j := 0, 1
		for ; j < 3 && j < len(e) && isHex(e[j]); j++ {
			v = v*16 + hexVal(e[j])
		}
		if j == 1 {
			switch k {
			case escFormatGNU, escBGNU:
				return 0, false, &escapeError{"missing hexadecimal number in escape"}
			case escFormatBash, escBBash:
				if warn != nil {
					warn(`missing hex digit for \x`)
				}
			}
			d = append(d, '\\')
			return 0, false, nil
		}
		d = append(d, byte(v))
		return j, false, nil
	case 'u', 'U':
		if k == escEchoGNU {
			d = append(d, '\\')
			return 0, false, nil
		}
		digits := 4
		if c == 'U' {
			digits = 8
		}
		v, j := uint32(0), 1
		for ; j <= digits && j < len(e) && isHex(e[j]); j++ {
			v = v*16 + uint32(hexVal(e[j]))
		}
		if k.gnu() {
			if j <= digits {
				return 0, false, &escapeError{"missing hexadecimal number in escape"}
			}
			if v <= 0x9f && v != 0x24 && v != 0x40 && v != 0x60 || v >= 0xd800 && v <= 0xdfff {
				return 0, false, &escapeError{fmt.Sprintf(`invalid universal character name \%c%0*x`, c, digits, v)}
			}
			if v > 0x10ffff {
				// GNU cannot convert it and prints the escape back.
				d = fmt.Appendf(d, `\%c%0*X`, c, digits, v)
				return j, false, nil
			}
			d = appendUTF8(d, v)
			return j, false, nil
		}
		if j == 1 {
			if k != escEchoBash && warn != nil {
				warn(fmt.Sprintf(`missing unicode digit for \%c`, c))
			}
			d = append(d, '\\')
			return 0, false, nil
		}
		d = appendUTF8(d, v)
		return j, false, nil
	default:
		d = append(d, '\\')
		return 0, false, nil
	}
	return 1, false, nil
}

// toCtrl is bash's TOCTRL: the control character of x, DEL for ?.
func toCtrl(x byte) byte {
	if x == '?' {
		return 0x7f
	}
	if x >= 'a' && x <= 'z' {
		x -= 'a' - 'A'
	}
	return x & 0x1f
}

// appendUTF8 encodes v as bash's u32toutf8 does: the UTF-8 pattern for any
// value below 2^31, surrogates and values past U+10FFFF included (which Go's
// utf8 would replace with U+FFFD), and nothing for larger ones.
func appendUTF8(d []byte, v uint32) []byte {
	switch {
	case v < 0x80:
		return append(d, byte(v))
	case v < 0x800:
		return append(d, 0xc0|byte(v>>6), 0x80|byte(v&0x3f))
	case v < 0x10000:
		return append(d, 0xe0|byte(v>>12), 0x80|byte(v>>6&0x3f), 0x80|byte(v&0x3f))
	case v < 0x200000:
		return append(d, 0xf0|byte(v>>18), 0x80|byte(v>>12&0x3f), 0x80|byte(v>>6&0x3f), 0x80|byte(v&0x3f))
	case v < 0x4000000:
		return append(d, 0xf8|byte(v>>24), 0x80|byte(v>>18&0x3f), 0x80|byte(v>>12&0x3f), 0x80|byte(v>>6&0x3f), 0x80|byte(v&0x3f))
	case v < 0x80000000:
		return append(d, 0xfc|byte(v>>30), 0x80|byte(v>>24&0x3f), 0x80|byte(v>>18&0x3f), 0x80|byte(v>>12&0x3f), 0x80|byte(v>>6&0x3f), 0x80|byte(v&0x3f))
	}
	return d
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// EchoOptions reads echo's leading options as bash's builtin and GNU's
// echo both do: words made only of -n, -e and -E letters are options, the
// first other word starts the text. escapes is the starting value (bash's
// xpg_echo); it returns the text words, whether to end with a newline and
// whether to interpret escapes.
func EchoOptions(args []string, escapes bool) (text []string, newline, esc bool) {
	newline, esc = true, escapes
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
				esc = true
			case 'E':
				esc = false
			}
		}
		args = args[1:]
	}
	return args, newline, esc
}
