package awk

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/benhoyt/goawk/lexer"
)

// Builtins whose GoAWK versions answer differently from gawk, rewritten
// (token by token, as rewriteGawk does) into calls of functions with
// gawk's semantics:
//
//	substr(s, m[, n])  -> __warren_substr: gawk truncates m and n toward
//	                      zero, takes m < 1 (and NaN) as 1 without
//	                      shortening n, and gives "" for n NaN or < 1;
//	                      GoAWK rounds and takes NaN for the whole string.
//	split(s, a[, fs])  -> __warren_split (awk, added to the program): the
//	                      default separator splits a string with a \r on
//	                      blanks and newlines only (GoAWK: every Unicode
//	                      space, so a CRLF line loses its \r); a regex literal separator is a
//	                      regex even when it is one character (GoAWK took
//	                      / / for the default " " and /./ for a literal
//	                      dot).
//	match(s, r, arr)   -> __warren_match (awk, added): gawk's third
//	                      argument, arr[0] and arr[i] the match and its
//	                      groups, arr[i, "start"] and arr[i, "length"]
//	                      (a group that took no part is "" without them).
//	for (k in a)       -> a loop over a snapshot of the keys that
//	                      __warren_keys (awk, added) takes: gawk visits the
//	                      keys of an array of small or dense non-negative
//	                      integers in ascending order, as numbers, and
//	                      scripts rely on it (split's 1..n, NR-indexed
//	                      lines); GoAWK walks a Go map, in an order that
//	                      changes from run to run. Other arrays of up to
//	                      32 keys go in string order, the same in every
//	                      run; bigger ones keep GoAWK's order (gawk's hash
//	                      order is not reproducible from outside). The snapshot is what
//	                      gawk iterates too: a key deleted in the loop is
//	                      still visited. Inside a function the loop's
//	                      variables are added to its parameters (locals),
//	                      so recursion keeps one snapshot per call.
//	/\y/ /\</ /\>/      -> /\b/ (and \` \' -> \A \z): gawk's word and buffer
//	                      operators in Go's syntax, in regex literals and in
//	                      string literals used as regexes (after ~ or !~, the
//	                      first argument of sub, gsub, match, gensub, split's
//	                      third); Go's regexp took \< for a literal < and
//	                      refused \y. \< and \> become \b, which is the same
//	                      where a word character follows \< and precedes \>,
//	                      the way they are written.
const (
	substrFunc   = "__warren_substr"
	splitAwkFunc = "__warren_split"
	btrimFunc    = "__warren_btrim"
	matchAwkFunc = "__warren_match"
	groupsFunc   = "__warren_groups"
	keysAwkFunc  = "__warren_keys"
	bucketFunc   = "__warren_bucket"
)

// keysSource is __warren_keys in awk: it fills ks[1..n] with a's keys
// and returns n; the keys are in ascending order, as numbers, when all
// are canonical non-negative integers below 2^31 that are dense (max-min
// < 2n) or all below 1024 (where gawk's integer arrays list in order),
// with at most one negative integer, which gawk keeps apart and lists
// first (for more than one, the order among them is its hash's); else,
// when there are at most 32, in the order of gawk's string arrays: by
// bucket of its hash table (13 buckets up to 39 keys), in reverse string
// order within a bucket (gawk's is the reverse of insertion, which a Go
// map does not keep: this is it for keys inserted in ascending order).
const keysSource = `
function __warren_keys(a, ks,    k, n, v, mn, mx, i, neg, nn, hk) {
	delete ks
	n = nn = 0
	for (k in a) {
		# a canonical integer reads back as itself
		if (k "" != (v = k + 0) "" || v >= 2147483648 || v <= -2147483648) { n = -1; break }
		if (v < 0) {
			if (nn++) { n = -1; break }
			neg = v
			continue
		}
		if (++n == 1) mn = mx = v
		else if (v < mn) mn = v
		else if (v > mx) mx = v
	}
	if (n >= 1 && n + nn > 1 && (mx - mn < 2 * n || mx < 1024)) {
		n = 0
		if (nn) ks[++n] = neg
		for (i = mn; i <= mx; i++) if (i in a) ks[++n] = i
		return n
	}
	n = 0
	for (k in a) ks[++n] = k
	# a small array of other keys in gawk's hash order (reverse string
	# order within a bucket), the same from run to run
	if (n <= 32) {
		for (i = 1; i <= n; i++) hk[i] = __warren_bucket(ks[i])
		for (i = 2; i <= n; i++) {
			k = ks[i]; mx = hk[i]
			for (v = i - 1; v >= 1 && (hk[v] > mx || hk[v] == mx && ks[v] "" < k ""); v--) { ks[v + 1] = ks[v]; hk[v + 1] = hk[v] }
			ks[v + 1] = k; hk[v + 1] = mx
		}
	}
	return n
}
`

// splitSource is __warren_split in awk (split needs an array argument,
// which native functions cannot take).
const splitSource = `
function __warren_split(s, a, fs) {
	if (fs == " " && index(s, "\r")) return split(__warren_btrim(s), a, "[ \t\n]+")
	return split(s, a, fs)
}
`

// matchSource is __warren_match in awk.
const matchSource = `
function __warren_match(s, r, m,    n, g, k, i, j, p) {
	delete m
	n = match(s, r)
	if (n) {
		k = split(__warren_groups(s, r), p, " ")
		for (i = 1; i < k; i += 2) {
			j = (i - 1) / 2
			if (p[i] > 0) {
				m[j] = substr(s, p[i], p[i + 1]); m[j, "start"] = p[i]; m[j, "length"] = p[i + 1]
			} else {
				m[j] = ""
			}
		}
	}
	return n
}
`

// compatFuncs are the native functions the rewritten calls use.
func compatFuncs(chars bool) map[string]interface{} {
	return map[string]interface{}{
		// fixed arities: GoAWK calls a variadic native function slower
		substrFunc + "2": func(s string, m float64) string { return gawkSubstr(s, chars, m) },
		substrFunc + "3": func(s string, m, n float64) string { return gawkSubstr(s, chars, m, n) },
		btrimFunc:        func(s string) string { return strings.Trim(s, " \t\n") },
		bucketFunc:       hashBucket,
		groupsFunc: func(s, re string) (string, error) {
			rx, err := cachedRegex(re, chars)
			if err != nil {
				return "", err
			}
			m := rx.FindStringSubmatchIndex(s)
			var b strings.Builder
			for i := 0; i+1 < len(m); i += 2 {
				if m[i] < 0 {
					b.WriteString("0 0 ")
					continue
				}
				start, n := m[i]+1, m[i+1]-m[i]
				if chars {
					start, n = utf8.RuneCountInString(s[:m[i]])+1, utf8.RuneCountInString(s[m[i]:m[i+1]])
				}
				fmt.Fprintf(&b, "%d %d ", start, n)
			}
			return b.String(), nil
		},
	}
}

// gawkSubstr is gawk 5's substr (the rules are in the const block's
// comment; recorded against gawk 5.2 over a grid of m, n including NaN
// and infinities).
func gawkSubstr(s string, chars bool, args ...float64) string {
	size := len(s)
	if chars {
		size = utf8.RuneCountInString(s)
	}
	m := 1.0
	if len(args) > 0 {
		m = args[0]
	}
	if math.IsNaN(m) || m < 1 {
		m = 1
	}
	m = math.Trunc(m)
	if m > float64(size) {
		return ""
	}
	start := int(m) - 1
	end := size
	if len(args) > 1 {
		n := args[1]
		if math.IsNaN(n) || n < 1 {
			return ""
		}
		n = math.Trunc(n)
		if n < float64(size-start) {
			end = start + int(n)
		}
	}
	if !chars {
		return s[start:end]
	}
	// character positions to byte offsets
	bi, ci := 0, 0
	var from int
	for ci < end {
		if ci == start {
			from = bi
		}
		_, w := utf8.DecodeRuneInString(s[bi:])
		bi += w
		ci++
	}
	if start == end {
		return ""
	}
	return s[from:bi]
}

var compatRegexes sync.Map // regex source ("u:" first in a UTF-8 locale) -> *regexp.Regexp

func cachedRegex(re string, chars bool) (*regexp.Regexp, error) {
	key := re
	if chars {
		key = "u:" + re
	}
	if rx, ok := compatRegexes.Load(key); ok {
		return rx.(*regexp.Regexp), nil
	}
	rx, err := regexp.Compile("(?s)" + unicodeClasses(gawkRegex(re), chars, `\`))
	if err != nil {
		return nil, fmt.Errorf("invalid regex %q: %w", re, err)
	}
	compatRegexes.Store(key, rx)
	return rx, nil
}

// rewriteCompat rewrites the calls listed above and returns the awk
// functions to add after the program (splitSource, matchSource); a program that does not lex, or defines a
// function of one of the names, is returned as it is.
func rewriteCompat(src string, chars bool) (string, string) {
	if !strings.Contains(src, "substr") && !strings.Contains(src, "split") && !strings.Contains(src, "match") && !strings.Contains(src, "in") && !strings.Contains(src, `\`) && !strings.Contains(src, "[:") && !strings.Contains(src, "getline") && !strings.Contains(src, "log") && !strings.Contains(src, "sqrt") && !strings.Contains(src, "exp") {
		return src, ""
	}
	toks, ok := lex(src)
	if !ok {
		return src, ""
	}
	for i, t := range toks {
		if t.tok == lexer.FUNCTION && i+1 < len(toks) && strings.HasPrefix(toks[i+1].val, "__warren_") {
			return src, ""
		}
	}
	var reps []replacement
	needSplit, needMatch, needKeys := false, false, false
	depth := 0
	funcParams, added := -1, 0 // the ')' of the enclosing function's parameters
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		switch t.tok {
		case lexer.F_LOG, lexer.F_SQRT, lexer.F_EXP:
			if toks[i+1].tok == lexer.LPAREN {
				line := strings.Count(src[:t.off], "\n") + 1
				name := map[lexer.Token]string{lexer.F_LOG: "log", lexer.F_SQRT: "sqrt", lexer.F_EXP: "exp"}[t.tok]
				reps = append(reps, replacement{t.off, toks[i+1].off + 1, mathFunc + name + "(" + strconv.Itoa(line) + ", "})
			}
		case lexer.GETLINE:
			// plain getline reads a record GoAWK splits itself: the
			// field hook (fields.go) runs on it too
			if i > 0 && toks[i-1].tok == lexer.PIPE {
				continue
			}
			switch toks[i+1].tok {
			case lexer.NAME, lexer.DOLLAR, lexer.LESS:
				continue
			}
			reps = append(reps, replacement{t.off, t.off + len("getline"),
				`((__warren_g = getline) + (__warren_g > 0 && index($0, "\r") ? ` + splitFunc + `() : 0))`})
		case lexer.REGEX:
			if rx := unicodeClasses(gawkRegex(t.val), chars, `\`); rx != t.val {
				end := regexEnd(src, t.off)
				reps = append(reps, replacement{t.off, end, "/" + strings.ReplaceAll(rx, "/", `\/`) + "/"})
			}
		case lexer.STRING:
			if i > 0 && regexPosition(toks, i) {
				lit := src[t.off:min(toks[i+1].off, len(src))]
				if rx := unicodeClasses(gawkRegexSource(lit), chars, `\\`); rx != lit {
					reps = append(reps, replacement{t.off, t.off + len(lit), rx})
				}
			}
		case lexer.FUNCTION:
			if depth == 0 {
				for k := i + 1; k < len(toks); k++ {
					if toks[k].tok == lexer.RPAREN {
						funcParams, added = k, 0
						break
					}
				}
			}
		case lexer.LBRACE:
			depth++
		case lexer.RBRACE:
			if depth--; depth == 0 {
				funcParams = -1
			}
		case lexer.FOR:
			if i+5 < len(toks) && toks[i+1].tok == lexer.LPAREN && toks[i+2].tok == lexer.NAME && toks[i+3].tok == lexer.IN &&
				toks[i+4].tok == lexer.NAME && toks[i+5].tok == lexer.RPAREN {
				needKeys = true
				n := strconv.Itoa(i)
				iv, nv, kv := "__warren_i"+n, "__warren_n"+n, "__warren_ks"+n
				reps = append(reps, replacement{toks[i+1].off, toks[i+5].off + 1, fmt.Sprintf(
					"(%s = %s = %s(%s, %s); %s > 0 && ((%s = %s[%s - %s + 1]) || 1); %s--)",
					iv, nv, keysAwkFunc, toks[i+4].val, kv, iv, toks[i+2].val, kv, nv, iv, iv)})
				if funcParams >= 0 {
					sep := ", "
					if toks[funcParams-1].tok == lexer.LPAREN && added == 0 {
						sep = ""
					}
					added++
					reps = append(reps, replacement{toks[funcParams].off, toks[funcParams].off, sep + iv + ", " + nv + ", " + kv})
				}
				i += 5
				continue
			}
		}
		if t.tok != lexer.F_SUBSTR && t.tok != lexer.F_SPLIT && t.tok != lexer.F_MATCH || toks[i+1].tok != lexer.LPAREN {
			continue
		}
		close := matching(toks, i+1)
		if close < 0 {
			return src, ""
		}
		// A replacement covers the name up to its '(': awk allows blanks
		// there for builtins (substr (s, 1, n)) but not for the functions
		// they become, where the blank would make a concatenation.
		commas := topCommas(toks, i+2, close)
		switch {
		case t.tok == lexer.F_SUBSTR && (len(commas) == 1 || len(commas) == 2):
			// GoAWK's builtin agrees with gawk for literal integers (start
			// >= 1, length >= 0) and costs a sixth of the native call
			if literalInt(toks, commas[0]+1, close, commas, 1) && (len(commas) == 1 || literalInt(toks, commas[1]+1, close, commas, 0)) {
				continue
			}
			native := substrFunc + strconv.Itoa(len(commas)+1)
			// a plain variable or literal as start and length: the builtin
			// behind a guard (the variable read twice has no side effect)
			var conds []string
			simple := true
			for k, c := range commas {
				a := toks[c+1]
				end := close
				if k+1 < len(commas) {
					end = commas[k+1]
				}
				min := 1
				if k == 1 {
					min = 0
				}
				switch {
				case c+2 != end:
					simple = false
				case a.tok == lexer.NAME && (c+2 >= len(toks) || toks[c+2].tok != lexer.LBRACKET):
					conds = append(conds, fmt.Sprintf("%s == int(%s) && %s >= %d && %s < 9007199254740992", a.val, a.val, a.val, min, a.val))
				case !literalInt(toks, c+1, close, commas, float64(min)):
					simple = false
				}
			}
			// the string argument is copied into both branches, so it may
			// hold nothing another rewrite would change
			for k := i + 2; simple && k < commas[0]; k++ {
				switch a := toks[k]; a.tok {
				case lexer.F_SUBSTR, lexer.F_SPLIT, lexer.F_MATCH, lexer.F_SUB, lexer.F_GSUB, lexer.REGEX, lexer.GETLINE, lexer.PIPE:
					simple = false
				case lexer.NAME:
					simple = !strings.HasPrefix(a.val, "gensub") && !strings.HasPrefix(a.val, "asort")
				case lexer.STRING:
					simple = !strings.ContainsAny(src[a.off:toks[k+1].off], `\[`)
				}
			}
			if simple && len(conds) > 0 {
				call := src[t.off : toks[close].off+1]
				reps = append(reps, replacement{t.off, toks[close].off + 1,
					"(" + strings.Join(conds, " && ") + " ? " + call + " : " + native + src[toks[i+1].off:toks[close].off+1] + ")"})
				i = close
				continue
			}
			reps = append(reps, replacement{t.off, toks[i+1].off, native})
		case t.tok == lexer.F_MATCH && len(commas) == 2:
			if toks[commas[1]+1].tok != lexer.NAME || commas[1]+2 != close {
				continue
			}
			needMatch = true
			reps = append(reps, replacement{t.off, toks[i+1].off, matchAwkFunc})
			if r := toks[commas[0]+1]; r.tok == lexer.REGEX && commas[0]+2 == commas[1] {
				reps = append(reps, replacement{r.off, toks[commas[1]].off, awkString(r.val)})
			}
		case t.tok == lexer.F_SPLIT && (len(commas) == 1 || len(commas) == 2):
			// the array argument must be a bare name to pass through
			if commas[0]+2 >= len(toks) || toks[commas[0]+1].tok != lexer.NAME {
				continue
			}
			after := toks[commas[0]+2].tok
			if after != lexer.COMMA && after != lexer.RPAREN {
				continue
			}
			needSplit = true
			reps = append(reps, replacement{t.off, toks[i+1].off, splitAwkFunc})
			if len(commas) == 1 {
				reps = append(reps, replacement{toks[close].off, toks[close].off, ", FS"})
				continue
			}
			if r := toks[commas[1]+1]; r.tok == lexer.REGEX && commas[1]+2 == close {
				reps = append(reps, replacement{r.off, toks[close].off, awkString("(" + r.val + ")")})
			}
		}
	}
	if len(reps) == 0 {
		return src, ""
	}
	var add string
	if needSplit {
		add += splitSource
	}
	if needMatch {
		add += matchSource
	}
	if needKeys {
		add += keysSource
	}
	return applyReplacements(src, reps), add
}

// literalInt reports whether the argument starting at toks[k] is one
// integer literal of at least min (it ends at a comma in commas or at
// close).
func literalInt(toks []token, k, close int, commas []int, min float64) bool {
	if toks[k].tok != lexer.NUMBER {
		return false
	}
	end := k + 1
	if end != close && !(len(commas) > 0 && (end == commas[0] || len(commas) > 1 && end == commas[1])) {
		return false
	}
	v, err := strconv.ParseFloat(toks[k].val, 64)
	return err == nil && v == math.Trunc(v) && v >= min && v < 1<<53
}

// topCommas returns the indexes of the commas at depth 0 between from and
// to (the arguments of a call whose parentheses enclose them).
func topCommas(toks []token, from, to int) []int {
	var out []int
	depth := 0
	for k := from; k < to; k++ {
		switch toks[k].tok {
		case lexer.LPAREN, lexer.LBRACKET:
			depth++
		case lexer.RPAREN, lexer.RBRACKET:
			depth--
		case lexer.COMMA:
			if depth == 0 {
				out = append(out, k)
			}
		}
	}
	return out
}

// applyReplacements applies reps (not overlapping; an insertion is a
// replacement of nothing).
func applyReplacements(src string, reps []replacement) string {
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	var b strings.Builder
	last := 0
	for _, r := range reps {
		b.WriteString(src[last:r.start])
		b.WriteString(r.text)
		last = r.end
	}
	b.WriteString(src[last:])
	return b.String()
}

// unescapeAssign processes the escapes of a -v assignment's value as gawk
// does: the C escapes, \" \\ \/, octal \ooo, \xHH (two digits at most);
// another escaped character stands for itself, with warn's warning, and a
// backslash at the end is dropped.
func unescapeAssign(v string, warn func(string)) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(v) {
			break
		}
		i++
		switch c = v[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '"':
			b.WriteByte(c)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := 0
			for k := 0; k < 3 && i < len(v) && v[i] >= '0' && v[i] <= '7'; k++ {
				n = n*8 + int(v[i]-'0')
				i++
			}
			i--
			b.WriteByte(byte(n))
		case 'x':
			n, k := 0, 0
			for ; k < 2 && i+1 < len(v) && isHex(v[i+1]); k++ {
				i++
				n = n*16 + hexVal(v[i])
			}
			if k == 0 {
				warn("no hex digits in `\\x' escape sequence")
				b.WriteByte('x')
				continue
			}
			b.WriteByte(byte(n))
		default:
			warn(fmt.Sprintf("escape sequence `\\%c' treated as plain `%c'", c, c))
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

// gawkRegex translates gawk's regex operators Go lacks (\y \< \> \` \')
// in regex text re.
func gawkRegex(re string) string {
	if !strings.Contains(re, `\`) {
		return re
	}
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		if re[i] != '\\' || i+1 == len(re) {
			b.WriteByte(re[i])
			continue
		}
		i++
		switch re[i] {
		case 'y', '<', '>':
			b.WriteString(`\b`)
		case '`':
			b.WriteString(`\A`)
		case '\'':
			b.WriteString(`\z`)
		default:
			b.WriteByte('\\')
			b.WriteByte(re[i])
		}
	}
	return b.String()
}

// unicodeClasses widens the bracket classes that gawk takes from the
// locale ([:upper:] [:lower:] [:alpha:] [:alnum:]) to Unicode's in a UTF-8
// locale (Go's are ASCII); esc is how a backslash is written where re is.
func unicodeClasses(re string, chars bool, esc string) string {
	if !chars || !strings.Contains(re, "[:") {
		return re
	}
	return strings.NewReplacer("[:upper:]", esc+"p{Lu}", "[:lower:]", esc+"p{Ll}", "[:alpha:]", esc+"p{L}",
		"[:alnum:]", esc+"p{L}"+esc+"p{Nd}").Replace(re)
}

// gawkRegexSource is gawkRegex for a string literal's source text (where
// the regex's backslash is written \\).
func gawkRegexSource(lit string) string {
	if !strings.Contains(lit, `\\`) {
		return lit
	}
	var b strings.Builder
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' || i+1 == len(lit) {
			b.WriteByte(lit[i])
			continue
		}
		if lit[i+1] == '\\' && i+2 < len(lit) {
			switch lit[i+2] {
			case 'y', '<', '>':
				b.WriteString(`\\b`)
				i += 2
				continue
			case '`':
				b.WriteString(`\\A`)
				i += 2
				continue
			case '\'':
				b.WriteString(`\\z`)
				i += 2
				continue
			}
		}
		b.WriteByte(lit[i])
		b.WriteByte(lit[i+1])
		i++
	}
	return b.String()
}

// regexEnd returns the offset just past the regex literal at off (its
// opening slash), as GoAWK's lexer ends it: at the first unescaped slash.
func regexEnd(src string, off int) int {
	for i := off + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '/':
			return i + 1
		}
	}
	return len(src)
}

// regexPosition reports whether the string literal toks[i] is used as a
// regex: after ~ or !~, or the regex argument of sub, gsub and gensub
// (the first), match (the second) or split (the third).
func regexPosition(toks []token, i int) bool {
	switch toks[i-1].tok {
	case lexer.MATCH, lexer.NOT_MATCH:
		return true
	case lexer.ASSIGN:
		// r = "\\<a": most likely a regex kept for later
		return i+1 < len(toks) && (toks[i+1].tok == lexer.SEMICOLON || toks[i+1].tok == lexer.NEWLINE || toks[i+1].tok == lexer.RBRACE)
	case lexer.LPAREN, lexer.COMMA:
		if i+1 < len(toks) && toks[i+1].tok != lexer.COMMA && toks[i+1].tok != lexer.RPAREN {
			return false // the literal is part of a longer expression
		}
		// the call the argument belongs to, and its position
		commas := 0
		for k, depth := i-1, 0; k >= 1; k-- {
			switch toks[k].tok {
			case lexer.RPAREN, lexer.RBRACKET:
				depth++
			case lexer.LBRACKET:
				depth--
			case lexer.COMMA:
				if depth == 0 {
					commas++
				}
			case lexer.LPAREN:
				if depth > 0 {
					depth--
					continue
				}
				switch f := toks[k-1]; {
				case f.tok == lexer.F_SUB || f.tok == lexer.F_GSUB || f.tok == lexer.NAME && f.val == "gensub":
					return commas == 0
				case f.tok == lexer.F_MATCH:
					return commas == 1
				case f.tok == lexer.F_SPLIT:
					return commas == 2
				}
				return false
			}
		}
	}
	return false
}

// intFormat reports whether an OFMT/CONVFMT value converts with an integer
// conversion (%d %i %o %x %X %u %c): gawk applies it to the number
// (OFMT = "%d" prints 17/3 as 5), GoAWK hands it to Go's fmt with a
// float64 and prints %!d(float64=5.666666666666667).
func intFormat(f string) bool {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0123456789.*", f[j]) >= 0 {
			j++
		}
		if j < len(f) && strings.IndexByte("diouxXc", f[j]) >= 0 {
			return true
		}
		i = j
	}
	return false
}

// intFormatAssigned returns the first OFMT or CONVFMT the program assigns
// a string literal with an integer conversion ("" when none).
func intFormatAssigned(src string) string {
	if !strings.Contains(src, "FMT") {
		return ""
	}
	toks, ok := lex(src)
	if !ok {
		return ""
	}
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].tok == lexer.NAME && (toks[i].val == "OFMT" || toks[i].val == "CONVFMT") &&
			toks[i+1].tok == lexer.ASSIGN && toks[i+2].tok == lexer.STRING && intFormat(toks[i+2].val) {
			return toks[i].val + " = " + awkString(toks[i+2].val)
		}
	}
	return ""
}

// hashBucket is k's bucket in a gawk string array of 13 buckets (its
// size up to 39 elements): gawk's awk_hash, the sdbm hash kept to 32
// bits, modulo 13.
func hashBucket(k string) int {
	var h uint32
	for i := 0; i < len(k); i++ {
		// C's char is signed: a byte past 0x7f is sign-extended
		h = uint32(int32(int8(k[i]))) + h<<6 + h<<16 - h
	}
	return int(h % 13)
}
