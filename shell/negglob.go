package shell

import (
	"errors"

	"mvdan.cc/sh/v3/pattern"
)

// Go's regexp has no negative lookahead, so pattern.Regexp refuses the
// extglob !(list). A pattern P!(L)S matches s when s splits into a+m+b with
// P matching a, m matching none of L, and S matching b; P and S may hold
// further !( groups. The splits are tried in order, and the work is bounded
// (maxNegSteps regexp matches per subject), since both the pattern and
// the subject may be untrusted and long.
const maxNegSteps = 1 << 16

// matcher is a compiled pattern (mode must include EntireString).
type matcher func(string) bool

// patternMatcher compiles pat for whole-string matching, handling !( ).
func (r *runner) patternMatcher(pat string, mode pattern.Mode) (matcher, error) {
	steps := 0
	m, err := r.negMatcher(pat, mode, &steps)
	if err != nil {
		return nil, err
	}
	return func(s string) bool {
		steps = 0
		return m(s)
	}, nil
}

func (r *runner) negMatcher(pat string, mode pattern.Mode, steps *int) (matcher, error) {
	expr, err := r.patternRegexp(pat, mode)
	if err == nil {
		rx, err := compileRx(expr)
		if err != nil {
			return nil, err
		}
		return func(s string) bool {
			*steps++
			if *steps > maxNegSteps {
				if *steps == maxNegSteps+1 {
					r.rs.fail(limitf("pattern too complex to match (%d steps)", maxNegSteps))
					r.exiting = true
				}
				return false
			}
			return rx.MatchString(s)
		}, nil
	}
	var ne *pattern.NegExtGlobError
	if !errors.As(err, &ne) || len(ne.Groups) == 0 {
		return nil, err
	}
	g := ne.Groups[0]
	if g.Start < 0 || g.End > len(pat) || g.End-g.Start < 3 || extglobGroups(pat[:g.Start]) != closedGroups(pat[:g.Start]) {
		// a !( inside another group: not supported
		return nil, err
	}
	pre, err := r.negMatcher(pat[:g.Start], mode, steps)
	if err != nil {
		return nil, err
	}
	in, err := r.negMatcher("@("+pat[g.Start+2:g.End-1]+")", mode|pattern.ExtendedOperators, steps)
	if err != nil {
		return nil, err
	}
	suf, err := r.negMatcher(pat[g.End:], mode, steps)
	if err != nil {
		return nil, err
	}
	return func(s string) bool {
		for i := 0; i <= len(s); i++ {
			if !pre(s[:i]) {
				continue
			}
			for j := i; j <= len(s); j++ {
				if *steps > maxNegSteps {
					return false
				}
				if suf(s[j:]) && !in(s[i:j]) {
					return true
				}
			}
		}
		return false
	}, nil
}

// closedGroups counts the extglob groups of s that are closed in s (so a
// prefix whose groups are all closed puts what follows at the top level).
func closedGroups(s string) int {
	n, open := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			if i > 0 && isExtOp(s[i-1]) {
				open++
			}
		case ')':
			if open > 0 {
				open--
				n++
			}
		}
	}
	return n
}

func isExtOp(c byte) bool { return c == '!' || c == '?' || c == '*' || c == '+' || c == '@' }
