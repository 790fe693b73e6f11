package bashfmt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bash quotes a string in several ways depending on where it prints it;
// each function below is one of them, named for its use. All assume a
// UTF-8 locale (a character is printable as glibc's C.UTF-8 says).
//
// mvdan.cc/sh/v3/syntax.Quote matches none of them byte for byte: it
// quotes reserved words (if), '=' and '#' anywhere, leaves '!' and '^'
// bare, and writes \xHH and \uHHHH where bash writes \NNN, so it is not
// used here.

// QuoteQ is printf %q in bash: backslashes before the characters the shell
// would treat specially, $'...' (QuoteANSI) when s holds a character that
// is not printable, and ” for the empty string.
//
//	printf '%q' 'a b'   → a\ b
//	printf '%q' '~x,#y' → \~x\,#y
//	printf '%q' $'a\tb' → $'a\tb'
func QuoteQ(s string) string {
	if s == "" {
		return "''"
	}
	if needsANSI(s) {
		return QuoteANSI(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < utf8.RuneSelf && strings.IndexByte(" \t\n!\"$&'()*,;<>?[\\]^`{|}", c) >= 0,
			c == '#' && i == 0,
			c == '~' && (i == 0 || s[i-1] == ':' || s[i-1] == '='):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// QuoteSingle is ${x@Q}: always in single quotes, or $'...' (QuoteANSI)
// when s holds a character that is not printable.
//
//	x="it's"; echo "${x@Q}" → 'it'\''s'
//	x=$'a\nb'; echo "${x@Q}" → $'a\nb'
func QuoteSingle(s string) string {
	if needsANSI(s) {
		return QuoteANSI(s)
	}
	return singleQuote(s)
}

// QuoteAlias is how alias and trap -p print a value: always in single
// quotes, bytes as they are (a tab stays a tab), and a lone ' as \'.
//
//	alias a=$'x\ty'; alias a → alias a='x	y'
//	alias q="'"; alias q     → alias q=\'
func QuoteAlias(s string) string { return singleQuote(s) }

// QuoteDouble is how declare -p prints a value: in double quotes with \
// before " $ ` and \, or $'...' (QuoteANSI) when s holds a character that
// is not printable.
//
//	x='a"$b'; declare -p x → declare -- x="a\"\$b"
//	x=$'\e[0m'; declare -p x → declare -- x=$'\E[0m'
func QuoteDouble(s string) string {
	if needsANSI(s) {
		return QuoteANSI(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '$', '`', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// QuoteSet is how set (no arguments) prints a variable's value: $'...'
// (QuoteANSI) for a character that is not printable, single quotes when a
// character is special to the shell, otherwise bare (an empty value too).
//
//	x='a b'; set | grep ^x= → x='a b'
//	x=a=b,c; set | grep ^x= → x=a=b,c
func QuoteSet(s string) string {
	switch {
	case needsANSI(s):
		return QuoteANSI(s)
	case hasShellMetas(s):
		return singleQuote(s)
	}
	return s
}

// QuoteXtrace is how set -x prints one word of a command: ” for the empty
// word, single quotes (bytes as they are) when a character is special to
// the shell, else $'...' for characters that are not printable, else bare.
// For an assignment (x=VALUE) bash prints an empty VALUE bare.
//
//	set -x; : 'a b' if $'\r' → + : 'a b' if $'\r'
//	set -x; : $'a\tb'        → + : 'a	b'
func QuoteXtrace(s string) string {
	switch {
	case s == "":
		return "''"
	case hasShellMetas(s):
		return singleQuote(s)
	case needsANSI(s):
		return QuoteANSI(s)
	}
	return s
}

// QuoteANSI renders s as $'...': \a \b \E \f \n \r \t \v \\ \' by name,
// other bytes that are not (part of) a printable character as \NNN.
//
//	printf '%q' $'\e[0m\x01' → $'\E[0m\001'
func QuoteANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 3)
	b.WriteString("$'")
	for i := 0; i < len(s); {
		c := s[i]
		if esc := ansiName(c); esc != 0 {
			b.WriteByte('\\')
			b.WriteByte(esc)
			i++
			continue
		}
		if c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
			i++
			continue
		}
		if r, w := utf8.DecodeRuneInString(s[i:]); c >= utf8.RuneSelf && printable(r, w) {
			b.WriteString(s[i : i+w])
			i += w
			continue
		}
		b.WriteByte('\\')
		b.WriteByte('0' + c>>6)
		b.WriteByte('0' + c>>3&7)
		b.WriteByte('0' + c&7)
		i++
	}
	b.WriteByte('\'')
	return b.String()
}

// ansiName is the letter QuoteANSI writes after \ for c, or 0.
func ansiName(c byte) byte {
	switch c {
	case 7:
		return 'a'
	case 8:
		return 'b'
	case 27:
		return 'E'
	case 12:
		return 'f'
	case '\n':
		return 'n'
	case '\r':
		return 'r'
	case '\t':
		return 't'
	case 11:
		return 'v'
	case '\\', '\'':
		return c
	}
	return 0
}

// needsANSI is bash's ansic_shouldquote: some byte is not (part of) a
// printable character.
func needsANSI(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if !printable(r, w) {
			return true
		}
		i += w
	}
	return false
}

// printable reports whether the decoded character r (w bytes) is
// printable as glibc's iswprint says in C.UTF-8: assigned, and neither a
// control, a surrogate nor a line or paragraph separator.
func printable(r rune, w int) bool {
	if r == utf8.RuneError && w <= 1 {
		return false
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs, unicode.Cf, unicode.Co)
}

// hasShellMetas is bash's sh_contains_shell_metas.
func hasShellMetas(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\'', '"', '\\', '|', '&', ';', '(', ')', '<', '>',
			'!', '{', '}', '*', '[', '?', ']', '^', '$', '`':
			return true
		case '~':
			if i == 0 || s[i-1] == '=' || s[i-1] == ':' {
				return true
			}
		case '#':
			if i == 0 {
				return true
			}
		}
	}
	return false
}

// singleQuote is bash's sh_single_quote.
func singleQuote(s string) string {
	if s == "'" {
		return `\'`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteGNU is GNU coreutils' printf %q (quotearg's shell-escape style):
// bare when nothing needs quoting, else single quotes, double quotes when
// a ' is the only problem, and $'...' runs for characters that are not
// printable.
//
//	/usr/bin/printf '%q' 'a b'   → 'a b'
//	/usr/bin/printf '%q' "it's"  → "it's"
//	/usr/bin/printf '%q' $'a\nb' → 'a'$'\n''b'
func QuoteGNU(s string) string {
	if s == "" {
		return "''"
	}
	needs, compat, quote := false, true, false
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !printable(r, w) {
				return gnuEscapeQuote(s)
			}
			compat = false
			i += w
			continue
		}
		switch {
		case c < 0x20 || c == 0x7f:
			return gnuEscapeQuote(s)
		case c == '#' || c == '~':
			if i == 0 {
				needs = true
			}
		case c == ' ':
			needs = true
		case c == '?':
			needs, compat = true, false
		case c == '\'':
			needs, quote = true, true
		case strings.IndexByte("!\"$&()*;<=>[^`|\\", c) >= 0:
			needs, compat = true, false
		case isAlnum(c) || strings.IndexByte("%+,-./:]_{}", c) >= 0:
		default:
			compat = false // @ is printed bare, but not in "..."
		}
		i++
	}
	switch {
	case !needs:
		return s
	case quote && compat:
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// gnuEscapeQuote quotes s, which holds characters that are not printable:
// printable runs in '...' (the first one even when empty), the others as
// $'...' with C escapes.
func gnuEscapeQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	inEsc := false
	for i := 0; i < len(s); {
		c := s[i]
		w := 1
		ok := c >= 0x20 && c < 0x7f
		if c >= utf8.RuneSelf {
			var r rune
			r, w = utf8.DecodeRuneInString(s[i:])
			ok = printable(r, w)
			if !ok {
				w = 1
			}
		}
		switch {
		case ok && inEsc:
			b.WriteString("''")
			inEsc = false
		case !ok && !inEsc:
			b.WriteString("'$'")
			inEsc = true
		}
		switch {
		case ok && c == '\'':
			b.WriteString(`'\''`)
		case ok:
			b.WriteString(s[i : i+w])
		default:
			switch c {
			case 7:
				b.WriteString(`\a`)
			case 8:
				b.WriteString(`\b`)
			case 12:
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case 11:
				b.WriteString(`\v`)
			default:
				b.WriteByte('\\')
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + c>>3&7)
				b.WriteByte('0' + c&7)
			}
		}
		i += w
	}
	b.WriteByte('\'')
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// QuoteGNUDiag is gnulib's quote(), which GNU programs use for operands in
// diagnostics: ‘...’ in a UTF-8 locale, '...' in C, with C escapes for
// backslashes, control characters and bytes that are not printable there
// (in C every byte past ASCII), and a backslash before the closing quote.
//
//	/usr/bin/printf %d 'a\b'       → printf: ‘a\\b’: expected a numeric value
//	LC_ALL=C /usr/bin/printf %d é → printf: '\303\251': expected a numeric value
func QuoteGNUDiag(s string, utf8Locale bool) string {
	open, close := "'", "'"
	if utf8Locale {
		open, close = "‘", "’"
	}
	var b strings.Builder
	b.WriteString(open)
	for i := 0; i < len(s); {
		c := s[i]
		if strings.HasPrefix(s[i:], close) {
			b.WriteByte('\\')
			b.WriteString(close)
			i += len(close)
			continue
		}
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		case c == 7 || c == 8 || c == 12 || c == '\n' || c == '\r' || c == '\t' || c == 11:
			b.WriteByte('\\')
			b.WriteByte("abfnrtv"[strings.IndexByte("\a\b\f\n\r\t\v", c)])
		default:
			if r, w := utf8.DecodeRuneInString(s[i:]); utf8Locale && c >= utf8.RuneSelf && printable(r, w) {
				b.WriteString(s[i : i+w])
				i += w
				continue
			}
			b.WriteByte('\\')
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + c>>3&7)
			b.WriteByte('0' + c&7)
		}
		i++
	}
	b.WriteString(close)
	return b.String()
}
