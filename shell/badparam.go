package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// bash finds a bad ${...} (${H*}, ${x!}) only when it expands it: it
// reports "${H*}: bad substitution" then and abandons that command line,
// and a ${...} it never expands ([[ -n x || ${H*} ]]) is no error at all.
// mvdan's parser refuses the whole script, so a script it refused gets
// each ${...} that does not parse alone written as a replacement whose
// pattern is the sentinel below and whose replacement is the text as
// written; expanding it reports bash's error.
const badParamPat = "\uE003"

// maxParamText bounds the ${...} texts tried alone.
const maxParamText = 256

// rewriteBadParams returns src with such ${...} rewritten and whether it
// changed anything.
func rewriteBadParams(src string) (string, bool) {
	if !strings.Contains(src, "${") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	inSingle := false
	dq := -1 // where the double-quoted text holding i starts
	for i := 0; i+2 < len(src); i++ {
		c := src[i]
		if inSingle {
			inSingle = c != '\''
			continue
		}
		switch {
		case c == '\\':
			i++
			continue
		case c == '"':
			if dq < 0 {
				dq = i + 1
			} else {
				dq = -1
			}
			continue
		case c == '\'' && dq < 0 && (i == 0 || strings.IndexByte(" \t\n;&|(=", src[i-1]) >= 0):
			inSingle = true
			continue
		}
		if c != '$' || src[i+1] != '{' || !isNameStart(src[i+2]) {
			continue
		}
		end := paramTextEnd(src, i+2)
		if end < 0 {
			continue
		}
		text := src[i:end]
		if _, err := parseStmtsOnce("x=" + text); err == nil {
			continue
		}
		j := i + 2
		for isNameByte(src[j]) {
			j++
		}
		b.WriteString(src[last:i] + "${" + src[i+2:j] + "/" + badParamPat + "/" + shellQuote(badParamWord(src, i, end, dq)) + "}")
		last = end
		changed = true
		i = end - 1
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// paramTextEnd is the offset after the } closing a ${ whose text starts at
// i, or -1 when it holds quotes, command substitutions or a newline, or is
// longer than maxParamText.
func paramTextEnd(src string, i int) int {
	depth := 0
	for k := i; k < len(src) && k-i < maxParamText; k++ {
		switch src[k] {
		case '\'', '"', '`', '\\', '\n', '(':
			return -1
		case '{':
			if src[k-1] == '$' {
				depth++
			}
		case '}':
			if depth == 0 {
				return k + 1
			}
			depth--
		}
	}
	return -1
}

// badParamExp reports the error for a ${...} rewriteBadParams wrote, if pe
// is one.
func badParamExp(pe *syntax.ParamExp) error {
	if pe.Repl == nil || pe.Repl.Orig == nil || pe.Repl.Orig.Lit() != badParamPat || pe.Repl.With == nil || len(pe.Repl.With.Parts) == 0 {
		return nil
	}
	text := ""
	for _, p := range pe.Repl.With.Parts { // shellQuote's 'a'\''b'
		switch p := p.(type) {
		case *syntax.SglQuoted:
			text += p.Value
		case *syntax.Lit:
			text += strings.ReplaceAll(p.Value, `\'`, "'")
		default:
			return nil
		}
	}
	return &lineError{msg: text + ": bad substitution"}
}

// badParamWord is the text bash names for the bad ${...} at src[i:end]: the
// double-quoted text holding it (dq its start, -1 if none), or else the
// word, an assignment's value.
func badParamWord(src string, i, end, dq int) string {
	if dq >= 0 {
		k := strings.IndexAny(src[end:], "\"\n")
		if k < 0 || src[end+k] != '"' || strings.Contains(src[dq:end+k], "\\") {
			return src[i:end]
		}
		return src[dq : end+k]
	}
	const stops = " \t\n;&|()<>"
	start := i
	for start > 0 && strings.IndexByte(stops, src[start-1]) < 0 {
		start--
	}
	if k := strings.IndexByte(src[start:i], '='); k > 0 && isNameStart(src[start]) {
		if n := strings.TrimSuffix(src[start:start+k], "+"); strings.TrimLeft(n, "_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == "" {
			start += k + 1 // x=${x!}: the value
		}
	}
	stop := end
	for stop < len(src) && strings.IndexByte(stops, src[stop]) < 0 {
		if q := src[stop]; q == '"' || q == '\'' {
			k := strings.IndexByte(src[stop+1:], q)
			if k < 0 {
				return src[i:end]
			}
			stop += k + 2
			continue
		}
		if src[stop] == '\\' {
			stop++
		}
		stop++
	}
	return src[start:min(stop, len(src))]
}
