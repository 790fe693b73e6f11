package awk

import (
	"fmt"
	"math"
	"regexp"
	"sort"
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
//	                      default separator splits on blanks and newlines
//	                      only (GoAWK: every Unicode space, so a CRLF line
//	                      loses its \r); a regex literal separator is a
//	                      regex even when it is one character (GoAWK took
//	                      / / for the default " " and /./ for a literal
//	                      dot).
//	match(s, r, arr)   -> __warren_match (awk, added): gawk's third
//	                      argument, arr[0] and arr[i] the match and its
//	                      groups, arr[i, "start"] and arr[i, "length"]
//	                      (a group that took no part is "" without them).
const (
	substrFunc   = "__warren_substr"
	splitAwkFunc = "__warren_split"
	ospaceFunc   = "__warren_ospace"
	btrimFunc    = "__warren_btrim"
	matchAwkFunc = "__warren_match"
	groupsFunc   = "__warren_groups"
)

// splitSource is __warren_split in awk (split needs an array argument,
// which native functions cannot take).
const splitSource = `
function __warren_split(s, a, fs) {
	if (fs == " " && __warren_ospace(s)) return split(__warren_btrim(s), a, "[ \t\n]+")
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
		substrFunc: func(s string, args ...float64) string { return gawkSubstr(s, chars, args...) },
		ospaceFunc: func(s string) int {
			if otherSpace(s) {
				return 1
			}
			return 0
		},
		btrimFunc: func(s string) string { return strings.Trim(s, " \t\n") },
		groupsFunc: func(s, re string) (string, error) {
			rx, err := cachedRegex(re)
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

var compatRegexes sync.Map // regex source -> *regexp.Regexp

func cachedRegex(re string) (*regexp.Regexp, error) {
	if rx, ok := compatRegexes.Load(re); ok {
		return rx.(*regexp.Regexp), nil
	}
	rx, err := regexp.Compile("(?s)" + re)
	if err != nil {
		return nil, fmt.Errorf("invalid regex %q: %w", re, err)
	}
	compatRegexes.Store(re, rx)
	return rx, nil
}

// rewriteCompat rewrites the calls listed above and returns the awk
// functions to add after the program (splitSource, matchSource); a program that does not lex, or defines a
// function of one of the names, is returned as it is.
func rewriteCompat(src string) (string, string) {
	if !strings.Contains(src, "substr") && !strings.Contains(src, "split") && !strings.Contains(src, "match") {
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
	needSplit, needMatch := false, false
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if t.tok != lexer.F_SUBSTR && t.tok != lexer.F_SPLIT && t.tok != lexer.F_MATCH || toks[i+1].tok != lexer.LPAREN {
			continue
		}
		close := matching(toks, i+1)
		if close < 0 {
			return src, ""
		}
		commas := topCommas(toks, i+2, close)
		switch {
		case t.tok == lexer.F_SUBSTR && (len(commas) == 1 || len(commas) == 2):
			reps = append(reps, replacement{t.off, t.off + len("substr"), substrFunc})
		case t.tok == lexer.F_MATCH && len(commas) == 2:
			if toks[commas[1]+1].tok != lexer.NAME || commas[1]+2 != close {
				continue
			}
			needMatch = true
			reps = append(reps, replacement{t.off, t.off + len("match"), matchAwkFunc})
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
			reps = append(reps, replacement{t.off, t.off + len("split"), splitAwkFunc})
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
	return applyReplacements(src, reps), add
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
