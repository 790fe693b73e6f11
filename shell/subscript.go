package shell

import (
	"strings"
	"unicode"
)

// mvdan's parser reads an array subscript as arithmetic or a single word,
// so an associative key with blanks, ${m[sp ace]} or m[sp ace]=1, which
// bash takes as the literal key "sp ace", is a syntax error to it. When a
// script does not parse, quoteSubscripts rewrites such subscripts as
// ${m["sp ace"]} (the same key: quotes are removed from subscripts) and the
// script is parsed once more; scripts that parse are never rewritten.

// quoteSubscripts returns src with the blank-holding subscripts of
// ${name[...]}, of name[...]= at a command's start and of [...]= elements
// in an array literal double-quoted when they hold blanks or do not parse
// as a subscript (a.b, c/d), and whether it changed anything. Subscripts holding quotes, $, ` or brackets
// are left alone.
func quoteSubscripts(src string) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0 // src[:last] is written to b
	inSingle := false
	arrayDepth := 0 // parentheses open in an array literal
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inSingle {
			if c == '\'' {
				inSingle = false
			}
			continue
		}
		switch {
		case c == '\\':
			i++
			continue
		case c == '\'':
			// a single quote inside double quotes is a plain character,
			// but rewriting there is harmless only outside them: stay
			// conservative and treat it as opening a quote only at a word
			// boundary.
			if i == 0 || strings.IndexByte(" \t\n;&|(=", src[i-1]) >= 0 {
				inSingle = true
			}
			continue
		}
		if c == '(' && i > 0 && src[i-1] == '=' {
			arrayDepth = 1 // an array literal: its elements may be [key]=value
			continue
		}
		if arrayDepth > 0 {
			switch c {
			case '(':
				arrayDepth++
			case ')':
				arrayDepth--
			}
		}
		start := -1
		literal := false // a [key]=value element of an array literal
		if c == '$' && i+1 < len(src) && src[i+1] == '{' {
			start = i + 2
			if start < len(src) && (src[start] == '#' || src[start] == '!') {
				start++ // ${#name[...]}, ${!name[...]}
			}
		} else if isNameStart(c) && atCommandStart(src, i) {
			start = i
		} else if c == '[' && arrayDepth == 1 && strings.IndexByte(" \t\n(", src[i-1]) >= 0 {
			start, literal = i, true
		}
		if start < 0 {
			continue
		}
		j := start
		for j < len(src) && isNameByte(src[j]) {
			j++
		}
		if !literal && (j == start || j >= len(src) || src[j] != '[' || !isNameStart(src[start])) {
			continue
		}
		k := j + 1
		for k < len(src) && strings.IndexByte("]'\"$`[\n\\", src[k]) < 0 {
			k++
		}
		if k >= len(src) || src[k] != ']' {
			continue
		}
		key := src[j+1 : k]
		if literal && !(strings.HasPrefix(src[k+1:], "=") || strings.HasPrefix(src[k+1:], "+=")) {
			// x=([ab] [ 1 ]): no index but a word to bash, a pattern;
			// "" before it keeps the parser from reading an index,
			// and its blanks get quoted
			b.WriteString(src[last:j] + `""[` + quoteBlanks(key))
			last = k
			changed = true
			i = k
			continue
		}
		if key == "" {
			key = emptySub // see emptysub.go
		} else if strings.TrimSpace(key) == "" {
			// a blank key: bash's literal key " ", or 0 as arithmetic
		} else if !strings.ContainsAny(key, " \t") {
			// a key the parser cannot read as a subscript (a.b, x.gz,
			// a:b, a!b), which bash takes as text
			if _, err := parseStmtsOnce("x[" + key + "]="); err == nil {
				continue
			}
		}
		if c != '$' && !(strings.HasPrefix(src[k+1:], "=") || strings.HasPrefix(src[k+1:], "+=")) {
			continue
		}
		b.WriteString(src[last : j+1])
		b.WriteByte('"')
		b.WriteString(key)
		b.WriteByte('"')
		last = k
		changed = true
		i = k
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isNameByte(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// atCommandStart reports whether src[i] begins a word in command position
// (after a line start or a control operator, blanks skipped).
func atCommandStart(src string, i int) bool {
	if i > 0 && isNameByte(src[i-1]) {
		return false
	}
	for j := i - 1; j >= 0; j-- {
		switch src[j] {
		case ' ', '\t':
			continue
		case '\n', ';', '&', '|', '(', '{':
			return true
		default:
			return false
		}
	}
	return true
}

// The parser does not know bash's case toggles ${x~~} and ${x~}, either:
// a script it refuses gets them rewritten to a replacement whose pattern is
// a private sentinel (no script can write U+E000 in a pattern by accident
// and mean it), which paramexp turns back into the toggle.
const (
	toggleAll   = "\uE000~~"
	toggleFirst = "\uE000~"
)

// rewriteToggles returns src with ${name~~} and ${name~} (name may be
// followed by [@], [*] or a plain subscript) rewritten, and whether it
// changed anything.
func rewriteToggles(src string) (string, bool) {
	if !strings.Contains(src, "~}") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	for i := 0; i+2 < len(src); i++ {
		if src[i] != '$' || src[i+1] != '{' {
			continue
		}
		j := i + 2
		for j < len(src) && (isNameByte(src[j]) || src[j] == '@' || src[j] == '*' || src[j] == '#' || src[j] == '?') {
			j++
			if j-i > 2 && !isNameByte(src[j-1]) {
				break // a special parameter is one character
			}
		}
		if j == i+2 {
			continue
		}
		if j < len(src) && src[j] == '[' {
			k := strings.IndexByte(src[j:], ']')
			if k < 0 || strings.ContainsAny(src[j:j+k], "}\n") {
				continue
			}
			j += k + 1
		}
		op := ""
		switch {
		case strings.HasPrefix(src[j:], "~~}"):
			op = toggleAll
		case strings.HasPrefix(src[j:], "~}"):
			op = toggleFirst
		default:
			continue
		}
		b.WriteString(src[last:j])
		b.WriteString("//" + op + "/}")
		last = j + len(op) - len("\uE000") + 1
		changed = true
		i = last - 1
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// toggleCase is bash's ~~ (all) and ~ (first character only).
func toggleCase(s string, all bool) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && !all {
			b.WriteString(s[i:])
			break
		}
		switch {
		case unicode.IsUpper(c):
			b.WriteRune(unicode.ToLower(c))
		case unicode.IsLower(c):
			b.WriteRune(unicode.ToUpper(c))
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// parseRewrite applies the rewrites above to a script the parser refused.
func parseRewrite(src string) (string, bool) {
	q, a := quoteSubscripts(src)
	q, b := rewriteToggles(q)
	q, c := quoteBadArith(q)
	q, d := rewriteTimeBang(q)
	q, e := quoteDollarSubscripts(q)
	q, f := rewriteBangs(q)
	q, h := rewriteElemLists(q)
	q, i := rewriteBadParams(q)
	q, j := rewriteEvalArrays(q)
	q, g := rewriteBadArrays(q) // last: it reparses the text
	return q, a || b || c || d || e || f || g || h || i || j
}

// An empty (( )) or $(( )) is the expression 0 (bash's null expression).
// A (( at a command's start that no )) closes is two subshells to bash
// (((echo a); echo b)); it gets a blank, ( (, for the parser.
//
// mvdan's parser refuses a malformed arithmetic expression ((( 1 + )),
// $(( 2 * ))) for the whole script, where bash reports it when the command
// runs and goes on. A script the parser refused gets such expressions
// double-quoted, (("1 + ")): the parser takes the string, and the shell
// evaluates its text at run time and reports bash's error there.
func quoteBadArith(src string) (string, bool) {
	if !strings.Contains(src, "((") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	for i := 0; i+1 < len(src); i++ {
		if src[i] != '(' || src[i+1] != '(' {
			continue
		}
		expansion := i > 0 && src[i-1] == '$'
		if !expansion && !arithCmdStart(src, i) {
			continue
		}
		depth, j := 0, i+2
		for ; j+1 < len(src); j++ {
			c := src[j]
			// (single quotes are plain characters in (( )), which
			// is double-quoted text to bash)
			if c == '\n' || c == '"' || c == '`' || c == '\\' {
				// past quotes and lines only bash's own matching
				// tells: the ')' closing the inner '(' not followed
				// by ')' makes two subshells, as zdiff's
				// ((gzip -cdfq -- "$f" 4>&-\n echo $? >&4) 3>&- ...)
				if k := closingParen(src, i+1); k >= 0 && (k+1 >= len(src) || src[k+1] != ')') && !expansion {
					b.WriteString(src[last:i] + "( (")
					last = i + 2
					changed = true
				}
				j = len(src)
				break
			}
			if c == '(' {
				depth++
			} else if c == ')' {
				if depth == 0 {
					break
				}
				depth--
			}
		}
		if j+1 >= len(src) || src[j+1] != ')' {
			if j+1 < len(src) {
				// no )) closes it: bash reads (( as two subshells,
				// ((echo a); echo b), and $(( as $( (, a command
				// substitution
				b.WriteString(src[last:i] + "( (")
				last = i + 2
				changed = true
				i++
			}
			continue
		}
		inner := src[i+2 : j]
		if strings.TrimSpace(inner) == "" {
			// (( )) and $(( )) are 0 to bash, an empty expression
			b.WriteString(src[last:j] + "0")
			last = j
			changed = true
			i = j + 1
			continue
		}
		// the parser stops at the end of the first expression: text
		// after it ((( x=9 y=41 ))) is bad too
		if x, err := parseArith(inner); err == nil && (x == nil || strings.TrimSpace(inner[min(int(x.End().Offset()), len(inner)):]) == "") {
			continue
		}
		b.WriteString(src[last : i+2])
		b.WriteString(`"` + inner + `"`)
		last = j
		changed = true
		i = j + 1
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// arithCmdStart reports whether (( at i starts an arithmetic command: at a
// command's start or after a keyword that takes a command (not `for ((`).
func arithCmdStart(src string, i int) bool {
	if atCommandStart(src, i) {
		return true
	}
	before := strings.TrimRight(src[:i], " \t")
	for _, kw := range []string{"if", "elif", "while", "until", "then", "else", "do", "!", "&&", "||"} {
		if strings.HasSuffix(before, kw) {
			k := len(before) - len(kw)
			if k == 0 || strings.IndexByte(" \t\n;&|(){", before[k-1]) >= 0 {
				return true
			}
		}
	}
	return false
}

// quoteDollarSubscripts double-quotes the subscript of ${name[...]} when it
// holds an expansion and does not parse as arithmetic, as
// ${a[(_$-=0)+1]}: bash expands the subscript first and evaluates the
// result at run time, which is what a quoted subscript does here too.
func quoteDollarSubscripts(src string) (string, bool) {
	if !strings.Contains(src, "${") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	for i := 0; i+2 < len(src); i++ {
		if src[i] != '$' || src[i+1] != '{' {
			continue
		}
		j := i + 2
		for j < len(src) && isNameByte(src[j]) {
			j++
		}
		if j == i+2 || !isNameStart(src[i+2]) || j >= len(src) || src[j] != '[' {
			continue
		}
		k, ok := dollarSubscriptEnd(src, j+1)
		if !ok || k+1 >= len(src) || src[k+1] != '}' {
			continue
		}
		key := src[j+1 : k]
		if !strings.Contains(key, "$") {
			continue
		}
		if _, err := parseStmtsOnce("x=${x[" + key + "]}"); err == nil {
			continue
		}
		b.WriteString(src[last:j+1] + `"` + key + `"`)
		last = k
		changed = true
		i = k
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// dollarSubscriptEnd is the offset of the ] closing a subscript that starts at
// i, skipping nested brackets, ${...} and $(...); false when the
// subscript holds a quote, a backslash or a newline, or is not closed.
func dollarSubscriptEnd(src string, i int) (int, bool) {
	var stack []byte // closers awaited
	for ; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\'', '"', '`', '\\', '\n':
			return 0, false
		case '[':
			stack = append(stack, ']')
		case '(':
			stack = append(stack, ')')
		case '{':
			if i > 0 && src[i-1] == '$' {
				stack = append(stack, '}')
			}
		case ']', ')', '}':
			if len(stack) == 0 {
				if c == ']' {
					return i, true
				}
				if c == ')' {
					return 0, false
				}
				continue
			}
			if stack[len(stack)-1] != c {
				return 0, false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return 0, false
}

// quoteBlanks double-quotes the runs of blanks in s.
func quoteBlanks(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j > i {
			b.WriteString(`"` + s[i:j] + `"`)
			i = j
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
