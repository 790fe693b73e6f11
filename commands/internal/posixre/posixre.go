// Package posixre translates POSIX/GNU basic and extended regular expressions
// (as grep, sed and expr take them) into Go's RE2 syntax. RE2 has no
// back-references; those are refused with an error that says so rather than
// silently matching something else.
package posixre

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands/internal/recache"
)

// maxStacked bounds repetition operators stacked on one atom (a*?+*...).
const maxStacked = 100

// ErrBackref is returned for \1..\9, which RE2 cannot express.
var ErrBackref = errors.New("back-references are not supported")

// Translate converts a BRE (ere=false) or ERE pattern to Go syntax.
func Translate(pat string, ere bool) (string, error) {
	var b strings.Builder
	b.Grow(len(pat) + 8)
	// atStart: position where '*' is literal and (in BRE) '^' is an anchor.
	atStart := true
	var groups []int // output offsets of open groups
	atomStart := 0   // output offset of the last atom, for repeat wrapping
	prevRepeat := false
	stacked := 0 // repeats stacked on the current atom
	atom := func() { atomStart, prevRepeat, stacked = b.Len(), false, 0 }
	// repeat appends a repetition operator; RE2 refuses stacked ones
	// (a**, a*\{2\}), which POSIX allows, so the previous repeat is grouped.
	// Each grouping nests one level: past maxStacked (RE2 refuses nesting
	// past 1000, and each grouping copies the output) the pattern is refused.
	var tooDeep bool
	repeat := func(op string) {
		if prevRepeat {
			if stacked++; stacked > maxStacked {
				tooDeep = true
				return
			}
			s := b.String()
			b.Reset()
			b.WriteString(s[:atomStart] + "(?:" + s[atomStart:] + ")")
		}
		b.WriteString(op)
		prevRepeat = true
	}
	n := len(pat)
	for i := 0; i < n; i++ {
		c := pat[i]
		start := atStart
		atStart = false
		switch c {
		case '\\':
			if i+1 >= n {
				return "", errors.New("trailing backslash (\\)")
			}
			i++
			d := pat[i]
			switch {
			case d >= '1' && d <= '9':
				return "", ErrBackref
			case !ere && d == '(':
				groups = append(groups, b.Len())
				b.WriteString("(")
				prevRepeat = false
				atStart = true
			case !ere && d == ')':
				if len(groups) == 0 {
					return "", errors.New("unmatched ) or \\)")
				}
				b.WriteString(")")
				atomStart, prevRepeat = groups[len(groups)-1], false
				groups = groups[:len(groups)-1]
			case !ere && d == '|':
				b.WriteString("|")
				prevRepeat = false
				atStart = true
			case !ere && (d == '+' || d == '?'):
				if start {
					atom()
					b.WriteString(`\` + string(d))
				} else {
					repeat(string(d))
				}
			case !ere && d == '{':
				j, rep, err := interval(pat, i+1, `\}`)
				if err != nil {
					return "", err
				}
				if start {
					atom()
					b.WriteString(`\{`)
					continue
				}
				repeat(rep)
				i = j
			case d == '<' || d == '>':
				b.WriteString(`\b`)
			case d == '`':
				b.WriteString(`\A`)
			case d == '\'':
				b.WriteString(`\z`)
			case d == 'w' || d == 'W' || d == 's' || d == 'S':
				atom()
				b.WriteByte('\\')
				b.WriteByte(d)
			case d == 'b' || d == 'B':
				b.WriteByte('\\')
				b.WriteByte(d)
			case d == 'n':
				atom()
				b.WriteString(`\n`)
			case d == 't':
				atom()
				b.WriteString(`\t`)
			default:
				atom()
				if d >= utf8.RuneSelf {
					i += writeChar(&b, pat, i) - 1
					continue
				}
				writeLit(&b, d)
			}
		case '[':
			j, cls, err := bracket(pat, i)
			if err != nil {
				return "", err
			}
			atom()
			b.WriteString(cls)
			i = j
		case '*':
			if start {
				atom()
				b.WriteString(`\*`)
			} else {
				repeat("*")
			}
		case '^':
			if ere || start {
				b.WriteByte('^')
				prevRepeat = false
				atStart = true
			} else {
				atom()
				b.WriteString(`\^`)
			}
		case '$':
			if ere || i+1 == n || strings.HasPrefix(pat[i+1:], `\)`) || strings.HasPrefix(pat[i+1:], `\|`) {
				b.WriteByte('$')
				prevRepeat = false
			} else {
				atom()
				b.WriteString(`\$`)
			}
		case '.':
			atom()
			b.WriteByte('.')
		case '(', ')', '|', '+', '?', '{', '}':
			if !ere {
				atom()
				writeLit(&b, c)
				continue
			}
			switch c {
			case '(':
				groups = append(groups, b.Len())
				b.WriteByte('(')
				prevRepeat = false
				atStart = true
			case ')':
				if len(groups) == 0 {
					atom()
					writeLit(&b, c) // GNU ERE treats a lone ')' literally
					continue
				}
				b.WriteByte(')')
				atomStart, prevRepeat = groups[len(groups)-1], false
				groups = groups[:len(groups)-1]
			case '|':
				b.WriteByte('|')
				prevRepeat = false
				atStart = true
			case '+', '?':
				if start {
					atom()
					writeLit(&b, c)
				} else {
					repeat(string(c))
				}
			case '{':
				j, rep, err := interval(pat, i+1, `}`)
				if err != nil || start {
					atom()
					writeLit(&b, c) // not an interval: literal, as GNU does
					continue
				}
				repeat(rep)
				i = j
			case '}':
				atom()
				writeLit(&b, c)
			}
		default:
			atom()
			if c >= utf8.RuneSelf {
				i += writeChar(&b, pat, i) - 1
				continue
			}
			writeLit(&b, c)
		}
	}
	if tooDeep {
		return "", fmt.Errorf("more than %d repetition operators on one expression", maxStacked)
	}
	if len(groups) > 0 {
		return "", errors.New("unmatched ( or \\(")
	}
	// RE2 has limits POSIX does not (nested repeat counts whose product
	// passes 1000, nesting depth): check the translation against its own
	// parser, so a caller never gets a pattern that cannot compile.
	out := b.String()
	if _, err := syntax.Parse(out, syntax.Perl); err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return "", fmt.Errorf("pattern beyond what the regexp engine takes: %s", se.Code)
		}
		return "", err
	}
	return out, nil
}

// writeChar copies the non-ASCII character at pat[i] and returns its size.
// A whole character is one atom; Go matches text as UTF-8, so a stray byte
// can only match as U+FFFD (which is how an invalid input byte decodes).
func writeChar(b *strings.Builder, pat string, i int) int {
	r, size := utf8.DecodeRuneInString(pat[i:])
	if r == utf8.RuneError && size <= 1 {
		b.WriteString(`\x{FFFD}`)
		return 1
	}
	b.WriteString(pat[i : i+size])
	return size
}

func writeLit(b *strings.Builder, c byte) {
	if strings.IndexByte(`\.+*?()|[]{}^$`, c) >= 0 {
		b.WriteByte('\\')
	}
	b.WriteByte(c)
}

// interval parses "m,n" up to close (`\}` or `}`) starting at i and returns
// the index of close's last byte and the Go repetition.
func interval(pat string, i int, close string) (int, string, error) {
	end := strings.Index(pat[i:], close)
	if end < 0 {
		return 0, "", errors.New("unmatched \\{")
	}
	body := pat[i : i+end]
	lo, hi, comma := strings.Cut(body, ",")
	if !digits(lo) || !digits(hi) || (lo == "" && !comma) {
		return 0, "", errors.New("invalid content of \\{\\}")
	}
	if lo == "" {
		lo = "0"
	}
	if len(lo) > 4 || len(hi) > 4 || atoi(lo) > 1000 || atoi(hi) > 1000 {
		return 0, "", errors.New("regular expression too big")
	}
	if hi != "" && atoi(hi) < atoi(lo) {
		return 0, "", errors.New("invalid content of \\{\\}")
	}
	rep := "{" + lo
	if comma {
		rep += "," + hi
	}
	return i + end + len(close) - 1, rep + "}", nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

var classes = map[string]bool{"alpha": true, "digit": true, "alnum": true, "upper": true, "lower": true,
	"space": true, "blank": true, "punct": true, "print": true, "graph": true, "cntrl": true, "xdigit": true}

// bracket translates the bracket expression starting at pat[i] == '['.
func bracket(pat string, i int) (int, string, error) {
	var b strings.Builder
	b.WriteByte('[')
	j := i + 1
	if j < len(pat) && pat[j] == '^' {
		b.WriteByte('^')
		j++
	}
	first := true
	for ; j < len(pat); j++ {
		c := pat[j]
		if c == ']' && !first {
			b.WriteByte(']')
			// Reversed ranges ([z-a]) are an error in GNU too; let RE2 judge.
			if _, err := regexp.Compile(b.String()); err != nil {
				if strings.Contains(err.Error(), "range") {
					return 0, "", errors.New("Invalid range end")
				}
				return 0, "", errors.New("invalid character class")
			}
			return j, b.String(), nil
		}
		first = false
		if c == '[' && j+1 < len(pat) && (pat[j+1] == ':' || pat[j+1] == '=' || pat[j+1] == '.') {
			kind := pat[j+1]
			end := strings.Index(pat[j+2:], string(kind)+"]")
			if end < 0 {
				return 0, "", errors.New("unmatched [, [^, [:, [., or [=")
			}
			name := pat[j+2 : j+2+end]
			j = j + 2 + end + 1
			switch kind {
			case ':':
				if !classes[name] {
					return 0, "", errors.New("invalid character class")
				}
				b.WriteString("[:" + name + ":]")
			default:
				for k := 0; k < len(name); k++ {
					classLit(&b, name[k])
				}
			}
			continue
		}
		if c == '-' && !first && j+1 < len(pat) && pat[j+1] != ']' && b.Len() > 1 {
			b.WriteByte('-')
			continue
		}
		if c >= utf8.RuneSelf {
			j += writeChar(&b, pat, j) - 1
			continue
		}
		classLit(&b, c)
	}
	return 0, "", errors.New("unmatched [, [^, [:, [., or [=")
}

func classLit(b *strings.Builder, c byte) {
	if c < 0x80 && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ') {
		if c < 0x20 || c == 0x7f {
			fmt.Fprintf(b, `\x%02x`, c)
			return
		}
		b.WriteByte('\\')
	}
	b.WriteByte(c)
}

// Compile translates and compiles pat with POSIX leftmost-longest matching.
// flags is a Go flag group body such as "i" or "s" (may be empty). The
// compiled expression comes from a bounded cache and is shared: callers
// must not modify it (Longest is already set).
func Compile(pat string, ere bool, flags string) (*regexp.Regexp, error) {
	g, err := Translate(pat, ere)
	if err != nil {
		return nil, err
	}
	if flags != "" {
		g = "(?" + flags + ")" + g
	}
	re, err := recache.CompileLongest(g)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %w", err)
	}
	return re, nil
}
