package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// An empty subscript, b[]=x, ${b[]} or [ ]=x in an array literal, is a
// syntax error to mvdan's parser for the whole script; bash reports it when
// the command runs ("b[]: bad array subscript", "${b[]}: bad
// substitution") and abandons that command line only. quoteSubscripts
// (on a script the parser refused) writes such a subscript as the quoted
// sentinel below, which no script writes by accident, and the runner
// reports bash's error when it meets it.
const emptySub = "\uE002"

// isEmptySub reports whether idx is the subscript quoteSubscripts wrote for
// an empty one.
func isEmptySub(idx syntax.ArithmExpr) bool {
	w, ok := idx.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	dq, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || len(dq.Parts) != 1 {
		return false
	}
	l, ok := dq.Parts[0].(*syntax.Lit)
	return ok && l.Value == emptySub
}

// unEmptySub is text with the sentinel subscript put back as written.
func unEmptySub(text string) string {
	return strings.ReplaceAll(text, `"`+emptySub+`"`, "")
}

// emptySubAssign reports b[]=x as bash does: the command line is abandoned.
func (r *runner) emptySubAssign(name string) bool {
	return r.emptyKey(name, "")
}

// mvdan's parser refuses d[7]=(a b) for the whole script ("arrays cannot be
// nested") though it takes d[7]+=(a b); bash reports either when it runs
// ("d[7]: cannot assign list to array member") and abandons the line. A
// script the parser refused gets d[7]=( at a command's start written as
// d[7]+=(, which fails alike.
func rewriteElemLists(src string) (string, bool) {
	if !strings.Contains(src, "]=(") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	for i := 0; i < len(src); i++ {
		if !isNameStart(src[i]) || !atCommandStart(src, i) {
			continue
		}
		j := i
		for j < len(src) && isNameByte(src[j]) {
			j++
		}
		if j >= len(src) || src[j] != '[' {
			i = j
			continue
		}
		k, ok := dollarSubscriptEnd(src, j+1)
		if !ok {
			i = j
			continue
		}
		if strings.HasPrefix(src[k+1:], "=(") {
			b.WriteString(src[last:k+1] + "+")
			last = k + 1
			changed = true
		}
		i = k
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}
