package awk

// The gawk extensions agents use that GoAWK lacks: the bit functions
// (and or xor lshift rshift compl), strtonum, systime, strftime, mktime and
// gensub as GoAWK native functions; asort and asorti, which take arrays
// (native functions cannot), as awk functions added to the program. The
// program is rewritten token by token so that gensub's regex literal
// reaches it as a string and its target defaults to $0, and asort/asorti
// calls go to the added functions.

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/benhoyt/goawk/lexer"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sysinfo"
)

// gawkFuncs are the native functions, for one invocation (the clock and
// time zone are the sandbox's).
// errf reports a warning of the call on the given program line.
func gawkFuncs(inv *commands.Invocation, errf func(line int, msg string)) map[string]interface{} {
	bits := func(name string, op func(a, b uint64) uint64) func(args ...float64) (float64, error) {
		return func(args ...float64) (float64, error) {
			if len(args) < 2 {
				return 0, fmt.Errorf("%s: called with less than two arguments", name)
			}
			var acc uint64
			for i, a := range args {
				if a < 0 {
					return 0, fmt.Errorf("%s: argument %d negative value %g is not allowed", name, i+1, a)
				}
				v := uint64(math.Trunc(a))
				if i == 0 {
					acc = v
				} else {
					acc = op(acc, v)
				}
			}
			return float64(acc), nil
		}
	}
	loc := sysinfo.Location(inv)
	chars := utf8Locale(inv)
	return map[string]interface{}{
		"and": bits("and", func(a, b uint64) uint64 { return a & b }),
		"or":  bits("or", func(a, b uint64) uint64 { return a | b }),
		"xor": bits("xor", func(a, b uint64) uint64 { return a ^ b }),
		"lshift": func(v, n float64) (float64, error) {
			if v < 0 || n < 0 {
				return 0, fmt.Errorf("lshift(%g, %g): negative values are not allowed", v, n)
			}
			return float64(uint64(v) << uint64(n) & (1<<53 - 1)), nil
		},
		"rshift": func(v, n float64) (float64, error) {
			if v < 0 || n < 0 {
				return 0, fmt.Errorf("rshift(%g, %g): negative values are not allowed", v, n)
			}
			return float64(uint64(v) >> uint64(n)), nil
		},
		"compl": func(v float64) (float64, error) {
			if v < 0 {
				return 0, fmt.Errorf("compl(%g): negative value is not allowed", v)
			}
			return float64(^uint64(v) & (1<<53 - 1)), nil
		},
		"strtonum": strtonum,
		"systime":  func() float64 { return float64(inv.Now().Unix()) },
		"strftime": func(args ...string) string {
			format := "%a %b %e %H:%M:%S %Z %Y"
			t := inv.Now().In(loc)
			if len(args) > 0 {
				format = args[0]
			}
			if len(args) > 1 && args[1] != "" {
				if n, err := strconv.ParseFloat(strings.TrimSpace(args[1]), 64); err == nil {
					t = time.Unix(int64(n), 0).In(loc)
				}
			}
			if len(args) > 2 && args[2] != "" && args[2] != "0" {
				t = t.UTC()
			}
			return sysinfo.Strftime(format, t)
		},
		"mktime": func(spec string) float64 {
			f := strings.Fields(spec)
			if len(f) < 6 {
				return -1
			}
			var n [6]int
			for i := range n {
				v, err := strconv.Atoi(f[i])
				if err != nil {
					return -1
				}
				n[i] = v
			}
			return float64(time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], 0, loc).Unix())
		},
		// log, sqrt and exp with gawk's warnings for arguments outside
		// their domain (the value is the same)
		mathFunc + "log": func(line int, x float64) float64 {
			if x < 0 {
				errf(line, fmt.Sprintf("log: received negative argument %g", x))
				return negNaN // glibc's: gawk prints it "-nan"
			}
			return math.Log(x)
		},
		mathFunc + "sqrt": func(line int, x float64) float64 {
			if x < 0 {
				errf(line, fmt.Sprintf("sqrt: received negative argument %g", x))
				return negNaN
			}
			return math.Sqrt(x)
		},
		mathFunc + "exp": func(line int, x float64) float64 {
			v := math.Exp(x)
			if math.IsInf(v, 0) && !math.IsInf(x, 0) {
				errf(line, fmt.Sprintf("exp: argument %g is out of range", x))
			}
			return v
		},
		gensubFunc: func(line int, re, repl, how, target string) (string, error) {
			return gensub(unicodeClasses(re, chars, `\`), repl, how, target, func(msg string) { errf(line, msg) })
		},
	}
}

const (
	mathFunc   = "__warren_math_" // + log, sqrt, exp
	gensubFunc = "__warren_gensub"
	asortFunc  = "__warren_asort"
	asortiFunc = "__warren_asorti"
)

// strtonum reads 0x hex, 0 octal or decimal, as gawk.
func strtonum(s string) float64 {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	if neg || strings.HasPrefix(t, "+") {
		t = t[1:]
	}
	var v float64
	switch {
	case len(t) > 2 && (t[:2] == "0x" || t[:2] == "0X"):
		end := 2
		for end < len(t) && strings.IndexByte("0123456789abcdefABCDEF", t[end]) >= 0 {
			end++
		}
		u, _ := strconv.ParseUint(t[2:end], 16, 64)
		v = float64(u)
	case len(t) > 1 && t[0] == '0' && t[1] >= '0' && t[1] <= '7':
		end := 1
		for end < len(t) && t[end] >= '0' && t[end] <= '7' {
			end++
		}
		u, _ := strconv.ParseUint(t[1:end], 8, 64)
		v = float64(u)
	default:
		end := 0
		for end < len(t) && strings.IndexByte("0123456789.eE+-", t[end]) >= 0 {
			end++
		}
		for end > 0 {
			if f, err := strconv.ParseFloat(t[:end], 64); err == nil {
				v = f
				break
			}
			end--
		}
	}
	if neg {
		v = -v
	}
	return v
}

var gensubCache sync.Map // regex source -> *regexp.Regexp

func gensub(re, repl, how, target string, errf func(string)) (string, error) {
	re = gawkRegex(re)
	rx, ok := gensubCache.Load(re)
	if !ok {
		c, err := regexp.Compile(re)
		if err != nil {
			return "", fmt.Errorf("gensub: invalid regex %q: %w", re, err)
		}
		gensubCache.Store(re, c)
		rx = c
	}
	r := rx.(*regexp.Regexp)
	global := how != "" && (how[0] == 'g' || how[0] == 'G')
	which := 1
	if !global {
		if n, err := strconv.ParseFloat(strings.TrimSpace(how), 64); err == nil && n >= 1 {
			which = int(n)
		} else if errf != nil {
			errf(fmt.Sprintf("gensub: third argument `%s' treated as 1", how))
		}
	}
	var b strings.Builder
	last, count := 0, 0
	// apply substitutes match m if it is the one asked for; false stops
	apply := func(m []int) bool {
		count++
		if !global && count != which {
			return true
		}
		b.WriteString(target[last:m[0]])
		for i := 0; i < len(repl); i++ {
			c := repl[i]
			switch {
			case c == '\\' && i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9':
				g := int(repl[i+1] - '0')
				if 2*g+1 < len(m) && m[2*g] >= 0 {
					b.WriteString(target[m[2*g]:m[2*g+1]])
				}
				i++
			case c == '\\' && i+1 < len(repl) && repl[i+1] == '&':
				b.WriteByte('&')
				i++
			case c == '&':
				b.WriteString(target[m[0]:m[1]])
			default:
				b.WriteByte(c)
			}
		}
		last = m[1]
		return global
	}
	ms := r.FindAllStringSubmatchIndex(target, -1)
	steps := len(ms) > 0 && byteSteps(r, re)
	var empty []int
	if steps {
		empty = make([]int, len(ms[0]))
		for i := range empty {
			empty[i] = -1
		}
	}
	// midEmpties applies gawk's extra empty matches (see byteSteps) at
	// the bytes inside the characters of target[from:to]
	midEmpties := func(from, to int) bool {
		for q := from; q < to; {
			_, w := utf8.DecodeRuneInString(target[q:])
			for mid := q + 1; mid < q+w && mid < to; mid++ {
				empty[0], empty[1] = mid, mid
				if !apply(empty) {
					return false
				}
			}
			q += w
		}
		return true
	}
	prevEnd, more := 0, true
	for _, m := range ms {
		if steps && !midEmpties(prevEnd, m[0]) {
			more = false
			break
		}
		if !apply(m) {
			more = false
			break
		}
		prevEnd = m[1]
	}
	if more && steps {
		midEmpties(prevEnd, len(target))
	}
	b.WriteString(target[last:])
	return b.String(), nil
}

// byteSteps reports whether gawk finds empty matches of r that Go does
// not, inside multibyte characters: after an empty match gawk steps one
// byte, Go one character, so gensub(/x*/, "-", "g") on "é" is
// "-\xc3-\xa9-" in gawk. A regex that matches the empty string and has
// no assertion (^ $ \b and gawk's \y \< \> \` \') matches it at every
// position, so gawk's extra matches are at each byte inside a character
// that no match of Go's covers; other regexes are left to Go.
func byteSteps(r *regexp.Regexp, re string) bool {
	return r.MatchString("") && !strings.ContainsAny(re, "^$\\")
}

// asortSource is asort and asorti in awk (heap sort: no recursion, for
// GoAWK's call-depth bound). Values compare as gawk's default does:
// numbers before strings, numbers by value, strings as strings.
const asortSource = `
function __warren_lt(a, b) {
	if ((a == a + 0) && (b == b + 0)) return a + 0 < b + 0
	if (a == a + 0) return 1
	if (b == b + 0) return 0
	return "" a < "" b
}
function __warren_sift(v, start, end, str,    root, child, sw, t) {
	root = start
	while (root * 2 <= end) {
		child = root * 2; sw = root
		if (str ? ("" v[sw] < "" v[child]) : __warren_lt(v[sw], v[child])) sw = child
		if (child + 1 <= end && (str ? ("" v[sw] < "" v[child + 1]) : __warren_lt(v[sw], v[child + 1]))) sw = child + 1
		if (sw == root) return
		t = v[root]; v[root] = v[sw]; v[sw] = t; root = sw
	}
}
function __warren_hsort(v, n, str,    s, t) {
	for (s = int(n / 2); s >= 1; s--) __warren_sift(v, s, n, str)
	while (n > 1) { t = v[1]; v[1] = v[n]; v[n] = t; n--; __warren_sift(v, 1, n, str) }
}
function __warren_asort1(src,    v, n, k) {
	n = 0
	for (k in src) v[++n] = src[k]
	__warren_hsort(v, n, 0)
	delete src
	for (k = 1; k <= n; k++) src[k] = v[k]
	return n
}
function __warren_asort2(src, dest,    n, k) {
	delete dest
	n = 0
	for (k in src) dest[++n] = src[k]
	__warren_hsort(dest, n, 0)
	return n
}
function __warren_asorti1(src,    v, n, k) {
	n = 0
	for (k in src) v[++n] = k
	__warren_hsort(v, n, 1)
	delete src
	for (k = 1; k <= n; k++) src[k] = v[k]
	return n
}
function __warren_asorti2(src, dest,    n, k) {
	delete dest
	n = 0
	for (k in src) dest[++n] = k
	__warren_hsort(dest, n, 1)
	return n
}
`

// joinContinuedStrings drops backslash-newline inside string literals:
// POSIX awks (mawk, gawk) continue the string on the next line, GoAWK kept
// the newline. Comments are skipped; a string is "..." outside them.
func joinContinuedStrings(src string) string {
	if !strings.Contains(src, "\\\n") {
		return src
	}
	var b strings.Builder
	inStr, inComment := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inComment:
			if c == '\n' {
				inComment = false
			}
		case inStr:
			if c == '\\' && i+1 < len(src) {
				if src[i+1] == '\n' {
					i++
					continue
				}
				b.WriteByte(c)
				i++
				c = src[i]
			} else if c == '"' || c == '\n' {
				inStr = false
			}
		case c == '#':
			inComment = true
		case c == '"':
			inStr = true
		}
		b.WriteByte(c)
	}
	return b.String()
}

// awkString is s as an awk string literal.
func awkString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// rewriteGawk rewrites gensub, asort and asorti calls (see the package
// comment) and reports whether the asort functions must be added; a
// program that does not lex is returned as it is.
func rewriteGawk(src string) (string, bool) {
	if !strings.Contains(src, "gensub") && !strings.Contains(src, "asort") {
		return src, false
	}
	toks, ok := lex(src)
	if !ok {
		return src, false
	}
	for i, t := range toks {
		// a program defining its own function of the name keeps it
		if t.tok == lexer.FUNCTION && i+1 < len(toks) && (toks[i+1].val == "gensub" || toks[i+1].val == "asort" || toks[i+1].val == "asorti") {
			return src, false
		}
	}
	var reps []replacement
	needSort := false
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if t.tok != lexer.NAME || toks[i+1].tok != lexer.LPAREN {
			continue
		}
		switch t.val {
		case "gensub", "asort", "asorti":
		default:
			continue
		}
		close := matching(toks, i+1)
		if close < 0 {
			return src, false
		}
		args := 0
		if close > i+2 {
			args = 1
			depth := 0
			for k := i + 2; k < close; k++ {
				switch toks[k].tok {
				case lexer.LPAREN, lexer.LBRACKET:
					depth++
				case lexer.RPAREN, lexer.RBRACKET:
					depth--
				case lexer.COMMA:
					if depth == 0 {
						args++
					}
				}
			}
		}
		if t.val == "gensub" {
			// the call's line goes first, for gawk's warnings
			line := strings.Count(src[:t.off], "\n") + 1
			reps = append(reps, replacement{t.off, toks[i+1].off + 1, gensubFunc + "(" + strconv.Itoa(line) + ", "})
			if r := toks[i+2]; r.tok == lexer.REGEX {
				end := toks[i+3].off
				reps = append(reps, replacement{r.off, end, awkString(r.val)})
			}
			if args == 3 {
				reps = append(reps, replacement{toks[close].off, toks[close].off, ", $0"})
			}
			continue
		}
		if args < 1 || args > 2 {
			continue // GoAWK reports the call
		}
		name := asortFunc
		if t.val == "asorti" {
			name = asortiFunc
		}
		needSort = true
		reps = append(reps, replacement{t.off, t.off + len(t.val), name + strconv.Itoa(args)})
	}
	if len(reps) == 0 {
		return src, false
	}
	var b strings.Builder
	last := 0
	for _, r := range reps {
		b.WriteString(src[last:r.start])
		b.WriteString(r.text)
		last = r.end
	}
	b.WriteString(src[last:])
	return b.String(), needSort
}

// rewriteNumbers turns gawk's non-decimal constants in program text into
// decimal ones: 0x1F is 31 and 011 is 9 in gawk, where GoAWK reads 0x1F
// as 0 concatenated with the variable x1F and 011 as 11, a silent wrong
// answer. (Input data stays decimal, as in gawk without
// --non-decimal-data.) A program that does not lex is returned as it is.
func rewriteNumbers(src string) string {
	if !hasNonDecimal(src) {
		return src
	}
	toks, ok := lex(src)
	if !ok {
		return src
	}
	var b strings.Builder
	last := 0
	for i, t := range toks {
		if t.tok != lexer.NUMBER || t.off < last || t.off+len(t.val) > len(src) || src[t.off:t.off+len(t.val)] != t.val {
			continue
		}
		end, val := 0, ""
		switch {
		case t.val == "0" && i+1 < len(toks) && toks[i+1].tok == lexer.NAME && toks[i+1].off == t.off+1 && isHexName(toks[i+1].val):
			n := new(big.Int)
			n.SetString(toks[i+1].val[1:], 16)
			end, val = toks[i+1].off+len(toks[i+1].val), n.String()
		case len(t.val) > 1 && t.val[0] == '0' && strings.Trim(t.val, "01234567") == "":
			n, err := strconv.ParseUint(t.val[1:], 8, 64)
			if err != nil {
				continue
			}
			end, val = t.off+len(t.val), strconv.FormatUint(n, 10)
		default:
			continue
		}
		b.WriteString(src[last:t.off])
		b.WriteString(val)
		last = end
	}
	if last == 0 {
		return src
	}
	b.WriteString(src[last:])
	return b.String()
}

// hasNonDecimal is a cheap test for 0x or a 0 before an octal digit.
func hasNonDecimal(src string) bool {
	for i := 0; i+1 < len(src); i++ {
		if src[i] == '0' && (i == 0 || !isWordByte(src[i-1])) {
			if c := src[i+1]; c == 'x' || c == 'X' || c >= '0' && c <= '7' {
				return true
			}
		}
	}
	return false
}

func isHexName(s string) bool {
	if len(s) < 2 || s[0] != 'x' && s[0] != 'X' {
		return false
	}
	for _, c := range s[1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
