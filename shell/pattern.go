package shell

import (
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Patterns and brace words are data built at run time, so the parse front
// door does not see them; their converters recurse (and slow down
// superlinearly) per nesting level, so nesting is bounded here, before
// they run.
const (
	// maxExtglobGroups bounds the extglob groups (@( *( +( ?( !( ) of one
	// pattern: pattern.Regexp re-reads an unclosed group as literal text,
	// which doubles its work per unclosed group (measured 2026-12-02: 12
	// groups 0.3-0.8 ms, 16 groups 4-26 ms, 44 groups hang; found by
	// FuzzPattern). Counting every unescaped operator-and-paren is an upper
	// bound that no bracket expression can fool.
	maxExtglobGroups = 12
	// maxBraceNesting bounds {a,{b,...}} nesting (expand.Braces is cubic in
	// it: 400 levels take 25 ms).
	maxBraceNesting = 100
)

// patternCache holds converted patterns (pattern.Regexp is not free and
// loops match the same pattern again and again).
var patternCache = newBoundedCache[string](1024)

// patternRegexp is pattern.Regexp behind the extglob bound; past it the
// Run ends with StatusLimit.
func (r *runner) patternRegexp(pat string, mode pattern.Mode) (string, error) {
	if n := extglobGroups(pat); n > maxExtglobGroups {
		le := limitf("pattern too complex (%d extglob groups, limit %d)", n, maxExtglobGroups)
		r.rs.fail(le)
		r.exiting = true
		return "", le
	}
	key := string(rune('A'+int(mode))) + pat
	if rx, ok := patternCache.get(key); ok {
		return rx, nil
	}
	rx, err := pattern.Regexp(leadingDashLiteral(pat), mode)
	if err == nil {
		rx = bytesRegexp(rx)
		if mode&pattern.NoGlobCase != 0 {
			rx = caseClasses(rx)
		}
		rx = unicodeClasses(rx)
		patternCache.put(key, rx)
	}
	return rx, err
}

// leadingDashLiteral escapes a '-' that opens a bracket expression ([-+],
// [!-x]): bash reads it as a literal, pattern.Regexp as the start of a
// range, refusing [-+] ("invalid range") so that it never matched. Only a
// bracket's first member is looked at; inside one, '[' is a member.
func leadingDashLiteral(pat string) string {
	if !strings.Contains(pat, "[-") && !strings.Contains(pat, "[!-") && !strings.Contains(pat, "[^-") {
		return pat
	}
	var b strings.Builder
	in := false // inside a bracket expression
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			b.WriteByte(c)
			i++
			c = pat[i]
		case !in && c == '[':
			in = true
			b.WriteByte(c)
			j := i + 1
			if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
				b.WriteByte(pat[j])
				j++
			}
			if j < len(pat) && pat[j] == '-' {
				b.WriteString(`\-`)
				j++
			} else if j < len(pat) && pat[j] == ']' {
				b.WriteByte(']') // a leading ']' is a member, not the end
				j++
			}
			i = j - 1
			continue
		case in && c == '[' && i+1 < len(pat) && pat[i+1] == ':':
			if k := strings.Index(pat[i+2:], ":]"); k >= 0 {
				b.WriteString(pat[i : i+2+k+2])
				i += 2 + k + 1
				continue
			}
		case in && c == ']':
			in = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// posixClasses are the classes whose members outside ASCII glibc's UTF-8
// locales list (Go's regexp keeps [:alpha:] and the rest ASCII), as
// measured against bash 5.2 in C.UTF-8: letters are alpha (upper and
// lower by their case, titlecase both), other symbols, punctuation and
// numbers are punct. digit, space, blank, cntrl and xdigit stay ASCII.
var posixClasses = strings.NewReplacer(
	"[:alpha:]", `\p{L}\p{Nl}`,
	"[:alnum:]", `\p{L}\p{Nl}\p{Nd}`,
	"[:upper:]", `\p{Lu}\p{Lt}`,
	"[:lower:]", `\p{Ll}\p{Lt}`,
	"[:punct:]", `\p{P}\p{S}\p{No}`,
	"[:graph:]", `\p{L}\p{M}\p{N}\p{P}\p{S}`,
	"[:print:]", `\p{L}\p{M}\p{N}\p{P}\p{S} `,
)

// unicodeClasses widens the POSIX classes in a converted pattern to their
// UTF-8 locale members (posixClasses).
func unicodeClasses(rx string) string {
	if !strings.Contains(rx, "[:") {
		return rx
	}
	return posixClasses.Replace(rx)
}

// caseClasses keeps [[:upper:]] and [[:lower:]] case-sensitive under
// nocaseglob/nocasematch, as bash does (it tests a class against the
// character unfolded): the bracket is wrapped in (?-i:...). Brackets
// mixing a case class with other members still fold.
func caseClasses(rx string) string {
	for _, c := range []string{"[[:upper:]]", "[^[:upper:]]", "[[:lower:]]", "[^[:lower:]]"} {
		if strings.Contains(rx, c) {
			rx = strings.ReplaceAll(rx, c, "(?-i:"+c+")")
		}
	}
	return rx
}

// bytesRegexp makes a converted pattern compile when it holds invalid
// UTF-8 (regexp refuses it; pattern.Regexp passes a plain pattern through
// untouched): each invalid byte becomes U+FFFD, which is what regexp
// decodes an invalid byte of the subject to. So an invalid byte matches
// any one invalid byte (Go's regexp cannot tell them apart).
func bytesRegexp(rx string) string {
	if utf8.ValidString(rx) {
		return rx
	}
	var b strings.Builder
	for i := 0; i < len(rx); {
		r, w := utf8.DecodeRuneInString(rx[i:])
		if r == utf8.RuneError && w == 1 {
			b.WriteString(`\x{FFFD}`)
		} else {
			b.WriteString(rx[i : i+w])
		}
		i += w
	}
	return b.String()
}

// extglobGroups counts the unescaped extglob operators of pat.
func extglobGroups(pat string) int {
	if strings.IndexByte(pat, '(') < 0 {
		return 0
	}
	n := 0
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '!', '?', '*', '+', '@':
			if i+1 < len(pat) && pat[i+1] == '(' {
				n++
			}
		}
	}
	return n
}

// braceDepth is the deepest nesting of unescaped braces in w's literal
// parts (an upper bound of what expand.Braces recurses over).
func braceDepth(w *syntax.Word) int {
	depth, deepest := 0, 0
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		s := l.Value
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '{':
				depth++
				deepest = max(deepest, depth)
			case '}':
				depth = max(depth-1, 0)
			}
		}
	}
	return deepest
}
