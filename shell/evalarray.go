package shell

import "strings"

// bash parses a compound assignment given to eval as it parses one given
// to declare (eval y=( ${x[@]} ), bash's examples/functions/autoload.v2):
// the words inside are expanded and split like eval's other arguments, and
// eval parses the text they join into. mvdan's parser refuses the script.
// A script it refuses gets those parentheses escaped, eval y=\( ... \),
// which passes eval the same words. A newline inside them becomes a
// backslash-newline after a blank (only at the top level: one inside $( )
// or quotes stays), so the words stay apart and the line numbers true.
func rewriteEvalArrays(src string) (string, bool) {
	if !strings.Contains(src, "eval") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	for i := 0; i+4 < len(src); i++ {
		if !strings.HasPrefix(src[i:], "eval") || !arithCmdStart(src, i) {
			continue
		}
		j := i + 4
		if j >= len(src) || (src[j] != ' ' && src[j] != '\t') {
			continue
		}
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if strings.HasPrefix(src[j:], "-- ") {
			j += 3
		}
		k := j
		for k < len(src) && isNameByte(src[k]) {
			k++
		}
		if k == j || src[j] >= '0' && src[j] <= '9' {
			continue
		}
		if k < len(src) && src[k] == '+' {
			k++
		}
		if !strings.HasPrefix(src[k:], "=(") {
			continue
		}
		open := k + 1
		end := closingParen(src, open)
		if end < 0 {
			continue
		}
		b.WriteString(src[last:open])
		b.WriteString(`\(`)
		b.WriteString(joinTopLines(src, open+1, end))
		b.WriteString(`\)`)
		last = end + 1
		i = end
		changed = true
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// joinTopLines returns src[from:to] with each newline outside quotes and
// nested parentheses preceded by " \\".
func joinTopLines(src string, from, to int) string {
	var b strings.Builder
	last := from
	for i := from; i < to; {
		switch c := src[i]; {
		case c == '\n':
			b.WriteString(src[last:i])
			b.WriteString(" \\")
			last = i
			i++
		case c == '(' || c == '\'' || c == '"':
			end := skipQuoted(src, i)
			if end < 0 || end >= to {
				b.WriteString(src[last:to])
				return b.String()
			}
			i = end + 1
		case c == '\\':
			i += 2
		default:
			i++
		}
	}
	b.WriteString(src[last:to])
	return b.String()
}

// skipQuoted returns the index of the byte ending the quoted string or
// parenthesised group that starts at i; -1 when nothing ends it.
func skipQuoted(src string, i int) int {
	switch src[i] {
	case '\'':
		k := strings.IndexByte(src[i+1:], '\'')
		if k < 0 {
			return -1
		}
		return i + 1 + k
	case '"':
		for i++; i < len(src) && src[i] != '"'; i++ {
			if src[i] == '\\' {
				i++
			}
		}
		if i >= len(src) {
			return -1
		}
		return i
	}
	return closingParen(src, i)
}

// closingParen returns the index of the ')' closing the '(' at open, past
// quotes, backslash escapes and nested parentheses; -1 when none does.
func closingParen(src string, open int) int {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '\'', '"':
			if i = skipQuoted(src, i); i < 0 {
				return -1
			}
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}
