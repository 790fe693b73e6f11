package shell

// Parse errors reported in bash's words and on bash's lines.

import (
	"errors"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// syntaxError reports a parse error as bash does and returns the status:
// 2, or 1 for what bash only detects when expanding (bad substitution).
func (r *runner) syntaxError(err error, src string) int { return r.syntaxErrorIn(err, src, false) }

// eofAtToken reports the end-of-input errors that bash reports on the line
// of what was left open (quotes, [[, arithmetic), not after the script.
func eofAtToken(msg string) bool {
	for _, k := range []string{"closing quote", "`[[`", "expression", "unclosed"} {
		if strings.Contains(msg, k) {
			return true
		}
	}
	return false
}

// eofMatching maps the parser's end-of-input errors inside quotes and
// expansions to the closer bash says it was looking for: a quote, `)` for
// $(, $(( and array assignments, `}` for ${. atToken: bash reports it on
// the line where the construct opened. Subshells and groups are not here:
// bash reports those as an unexpected end of file.
func eofMatching(msg, src string, pe syntax.ParseError) (closer string, atToken, ok bool) {
	if q, found := strings.CutPrefix(msg, "reached EOF without closing quote "); found && len(q) == 3 {
		return q[1:2], true, true
	}
	open, rest, found := strings.Cut(strings.TrimPrefix(msg, "reached EOF without matching `"), "` with `")
	if !found || !strings.HasPrefix(msg, "reached EOF without matching `") || rest == "" {
		if strings.Contains(msg, "must be followed by an expression") && opAtEOF(src, pe) && (strings.Contains(src, "$((") || strings.Contains(src, "$[")) {
			return ")", true, true
		}
		return "", false, false
	}
	switch open {
	case "$(":
		return ")", false, true
	case "$((":
		return ")", true, true
	case "${":
		return "}", true, true
	case "(":
		// an array assignment's list, not a subshell
		if off := int(pe.Pos.Offset()); pe.Pos.IsValid() && off > 0 && off <= len(src) && src[off-1] == '=' {
			return ")", true, true
		}
	}
	return "", false, false
}

// opAtEOF reports whether the parse error is at an operator that ends src
// ("$((1+", "$((": nothing but the operator follows its position).
func opAtEOF(src string, pe syntax.ParseError) bool {
	t := strings.TrimRight(src, " \t\n")
	return pe.Pos.IsValid() && int(pe.Pos.Offset()) <= len(t) && len(t)-int(pe.Pos.Offset()) <= 3
}

// atEOF reports whether the parse error lies at the end of src (only
// blanks after it).
func atEOF(src string, pe syntax.ParseError) bool {
	return pe.Pos.IsValid() && int(pe.Pos.Offset()) >= len(strings.TrimRight(src, " \t\n"))
}

// syntaxErrorIn is syntaxError for a script or sourced file when script is
// true: bash reports an unexpected end of file on the line after the
// script's last (its text ends in a newline, or is given one).
func (r *runner) syntaxErrorIn(err error, src string, script bool) int {
	if isNesting(err) {
		r.nestingFail()
		return 2
	}
	var pe syntax.ParseError
	line := 0
	msg := err.Error()
	if errors.As(err, &pe) {
		line = int(pe.Pos.Line())
		msg = pe.Text
	}
	old := r.lineno
	if line > 0 {
		r.lineno = line + r.lineBase
	}
	defer func() { r.lineno = old }()
	if r.evalText {
		// bash names eval in its syntax errors (bash: eval: line N:)
		r.errLabel = "eval"
		defer func() { r.errLabel = "" }()
	}
	if strings.Contains(msg, "invalid parameter name") && atEOF(src, pe) {
		// "x=${" at the end of the text: bash is still looking for the }
		r.errf("unexpected EOF while looking for matching `}'")
		return 2
	}
	if strings.Contains(msg, "invalid parameter name") || strings.Contains(msg, "cannot combine multiple parameter expansion operators") || strings.Contains(msg, "parameter expansion requires a literal") {
		bad := ""
		if pe.Pos.IsValid() && int(pe.Pos.Offset()) < len(src) {
			rest := src[pe.Pos.Offset():]
			if i := strings.IndexByte(rest, '}'); i >= 0 {
				bad = rest[:i+1]
			}
			if j := strings.LastIndex(src[:pe.Pos.Offset()], "${"); j >= 0 && bad != "" {
				bad = src[j:pe.Pos.Offset()] + bad
			}
		}
		if bad == "" {
			bad = "${}"
		}
		r.errf("%s: bad substitution", bad)
		return 1
	}
	tok := ""
	if i := strings.Index(msg, "`"); i >= 0 {
		tok = msg[i:]
		if j := strings.Index(tok[1:], "'"); j >= 0 {
			tok = tok[:j+2]
		} else if j := strings.Index(tok[1:], "`"); j >= 0 {
			tok = "`" + tok[1:j+1] + "'"
		}
	}
	if closer, atToken, ok := eofMatching(msg, src, pe); ok {
		// bash names what it was looking for when the input ends inside a
		// quote or an expansion; on the opening line for quotes and ${,
		// after the last line for $( (it reads a further line for it).
		if script && !atToken {
			n := strings.Count(src, "\n")
			if !strings.HasSuffix(src, "\n") {
				n++
			}
			r.lineno = n + 1 + r.lineBase
		}
		r.errf("unexpected EOF while looking for matching `%s'", closer)
		return 2
	}
	switch {
	case strings.Contains(msg, "reached EOF") || strings.Contains(msg, "must be followed") || strings.Contains(msg, "unclosed") || strings.Contains(msg, "must end with"):
		if (script || r.evalText) && !eofAtToken(msg) {
			n := strings.Count(src, "\n")
			if !strings.HasSuffix(src, "\n") {
				n++
			}
			r.lineno = n + 1 + r.lineBase
		}
		r.errf("syntax error: unexpected end of file")
	case tok != "":
		r.errf("syntax error near unexpected token %s", tok)
		if line > 0 {
			// and, as bash does, the line it could not read
			r.errf("`%s'", srcLine(src, line))
		}
	default:
		r.errf("syntax error: %s", msg)
	}
	return 2
}

// srcLine is line n (from 1) of src, without its newline.
func srcLine(src string, n int) string {
	for ; n > 1; n-- {
		i := strings.IndexByte(src, '\n')
		if i < 0 {
			return ""
		}
		src = src[i+1:]
	}
	if i := strings.IndexByte(src, '\n'); i >= 0 {
		src = src[:i]
	}
	return src
}
