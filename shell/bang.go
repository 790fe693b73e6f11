package shell

import "strings"

// bash's grammar takes `!` before a pipeline any number of times, each
// one toggling the negation, and `!` with no pipeline after it as a
// negated empty pipeline (status 1). mvdan's parser refuses both (`! !
// true`, a bare `!`), so a script it refuses gets them rewritten, lines
// kept: an even run of bangs goes (`! ! true` is `true` to bash, set -e
// and all), an odd run keeps one, and a run with no command after it
// gets the null command, `! :` or `:`.

// rewriteBangs returns src with those runs rewritten and whether it
// changed anything. Quoted text, comments and (( )) are left alone.
func rewriteBangs(src string) (string, bool) {
	if !strings.Contains(src, "!") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '\\':
			i++
			continue
		case c == '\'' || c == '"' || c == '`':
			quote = c
			continue
		case c == '#' && (i == 0 || isTimeSep(src[i-1]) || src[i-1] == '\n'):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '(' && strings.HasPrefix(src[i:], "(("):
			// arithmetic: ! ! x is not x there
			if k := strings.Index(src[i:], "))"); k >= 0 {
				i += k + 1
			}
			continue
		}
		if c != '!' || !bangBoundary(src, i+1) || !(atCommandStart(src, i) || arithCmdStart(src, i)) {
			continue
		}
		n, j := 0, i // n bangs; j after the last
		for j < len(src) && src[j] == '!' && bangBoundary(src, j+1) {
			n++
			j++
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				j++
			}
		}
		bare := j >= len(src) || src[j] == '\n' || src[j] == '#' ||
			src[j] == ';' && !strings.HasPrefix(src[j:], ";;") ||
			src[j] == '&' && !strings.HasPrefix(src[j:], "&&")
		if n < 2 && !bare {
			i = j - 1
			continue
		}
		// keep the span's blanks (and length), then the null command
		span := []byte(strings.Repeat(" ", j-i))
		if n%2 == 1 {
			span[0] = '!'
		}
		out := string(span)
		if bare {
			if n%2 == 1 {
				out = "! :" + out[min(len(out), 3):]
			} else {
				out = ":" + out[1:]
			}
			if j < len(src) && src[j] != '\n' && !strings.HasSuffix(out, " ") {
				out += " "
			}
		}
		b.WriteString(src[last:i] + out)
		last = j
		changed = true
		i = j - 1
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// bangBoundary reports whether a `!` ending before src[i] is a word of
// its own.
func bangBoundary(src string, i int) bool {
	return i >= len(src) || strings.IndexByte(" \t\n;&", src[i]) >= 0
}
