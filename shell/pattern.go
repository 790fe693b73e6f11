package shell

import (
	"strings"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Patterns and brace words are data built at run time, so the parse front
// door does not see them; their converters recurse (and slow down
// superlinearly) per nesting level, so nesting is bounded here, before
// they run.
const (
	// maxPatternGroups bounds the extglob groups of one pattern. Counting
	// every unescaped '(' is an upper bound of their nesting that bracket
	// expressions cannot fool (a '(' in brackets is counted too).
	maxPatternGroups = 200
	// maxBraceNesting bounds {a,{b,...}} nesting (expand.Braces is cubic in
	// it: 400 levels take 25 ms).
	maxBraceNesting = 100
)

// patternRegexp is pattern.Regexp behind the nesting bound; past it the
// Run ends with StatusLimit.
func (r *runner) patternRegexp(pat string, mode pattern.Mode) (string, error) {
	if n := patternGroups(pat); n > maxPatternGroups {
		le := limitf("pattern nesting too deep (%d groups, limit %d)", n, maxPatternGroups)
		r.rs.fail(le)
		r.exiting = true
		return "", le
	}
	return pattern.Regexp(pat, mode)
}

func patternGroups(pat string) int {
	if strings.IndexByte(pat, '(') < 0 {
		return 0
	}
	n := 0
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '(':
			n++
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
