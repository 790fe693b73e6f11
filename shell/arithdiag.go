package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arithSyntax reads s as bash 5.2's expression evaluator reads it, without
// evaluating anything, and returns the first error bash reports for it
// with bash's wording and error token (the text from the token where it
// stopped to the end), or nil when bash would read s whole. It is used
// only once the expression failed to parse here, so that the message a
// script (or an agent reading it) sees is bash's, not a guess.
func arithSyntax(s string) *arithError {
	d := &arithDiag{s: s}
	d.expr = strings.TrimLeft(s, " \t")
	if strings.Trim(s, " \t\n\r") == "" {
		return nil
	}
	if !d.catch(func() {
		d.next()
		d.comma()
		if d.cur != atEnd {
			d.fail("syntax error in expression")
		}
	}) {
		return d.err
	}
	return nil
}

// token kinds; single-character operators are their own byte
const (
	atEnd = iota + 256
	atNum
	atStr
	atCond // only ever the last token: a ?: just ended
	atAssignOp
	atEqEq
	atNeq
	atLeq
	atGeq
	atLsh
	atRsh
	atLand
	atLor
	atPower
	atPreInc
	atPreDec
	atPostInc
	atPostDec
)

type arithDiag struct {
	s, expr   string
	pos       int // where the next token is read from
	tokAt     int // where the last token read started (bash's lasttp)
	cur, last int
	err       *arithError
}

type arithDiagStop struct{}

// catch runs f and reports whether it ended without an error.
func (d *arithDiag) catch(f func()) (ok bool) {
	defer func() {
		if e := recover(); e != nil {
			if _, mine := e.(arithDiagStop); !mine {
				panic(e)
			}
			ok = false
		}
	}()
	f()
	return true
}

func (d *arithDiag) fail(msg string) {
	d.err = &arithError{expr: d.expr, msg: msg, tok: d.s[min(d.tokAt, len(d.s)):], lexed: true}
	panic(arithDiagStop{})
}

func isArithSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// next reads one token as bash's lexer does.
func (d *arithDiag) next() {
	for d.pos < len(d.s) && isArithSpace(d.s[d.pos]) {
		d.pos++
	}
	if d.pos >= len(d.s) {
		// the end of the text leaves the error token where it was
		d.last, d.cur = d.cur, atEnd
		return
	}
	d.tokAt = d.pos
	c := d.s[d.pos]
	switch {
	case isNameStart(c):
		i := d.pos
		for i < len(d.s) && isNameByte(d.s[i]) {
			i++
		}
		if i < len(d.s) && d.s[i] == '[' {
			end := subscriptEnd(d.s, i)
			if end < 0 {
				d.fail("bad array subscript")
			}
			i = end + 1
		}
		d.pos = i
		d.last, d.cur = d.cur, atStr
		return
	case c >= '0' && c <= '9':
		i := d.pos
		for i < len(d.s) && (isNameByte(d.s[i]) || d.s[i] == '#' || d.s[i] == '@') {
			i++
		}
		if _, msg := bashNumber(d.s[d.pos:i]); msg != "" {
			d.fail(msg)
		}
		d.pos = i
		d.last, d.cur = d.cur, atNum
		return
	}
	var c1 byte
	if d.pos+1 < len(d.s) {
		c1 = d.s[d.pos+1]
	}
	tok, n := int(c), 1
	switch {
	case c == '=' && c1 == '=':
		tok, n = atEqEq, 2
	case c == '!' && c1 == '=':
		tok, n = atNeq, 2
	case c == '>' && c1 == '=':
		tok, n = atGeq, 2
	case c == '<' && c1 == '=':
		tok, n = atLeq, 2
	case (c == '<' || c == '>') && c1 == c:
		tok, n = atLsh, 2
		if c == '>' {
			tok = atRsh
		}
		if d.pos+2 < len(d.s) && d.s[d.pos+2] == '=' {
			tok, n = atAssignOp, 3
		}
	case c == '&' && c1 == '&':
		tok, n = atLand, 2
	case c == '|' && c1 == '|':
		tok, n = atLor, 2
	case c == '*' && c1 == '*':
		tok, n = atPower, 2
	case (c == '-' || c == '+') && c1 == c && d.cur == atStr:
		tok, n = atPostInc, 2
		if c == '-' {
			tok = atPostDec
		}
	case (c == '-' || c == '+') && c1 == c && d.cur == atNum && (d.last == atPreInc || d.last == atPreDec):
		d.fail(string(c) + string(c) + ": assignment requires lvalue")
	case (c == '-' || c == '+') && c1 == c:
		j := d.pos + 2
		for j < len(d.s) && isArithSpace(d.s[j]) {
			j++
		}
		if j < len(d.s) && isNameStart(d.s[j]) {
			tok, n = atPreInc, 2
			if c == '-' {
				tok = atPreDec
			}
		}
		// else a lone + or -: the second is read next
	case c1 == '=' && strings.IndexByte("*/%+-&^|", c) >= 0:
		tok, n = atAssignOp, 2
	case strings.IndexByte("=><+-*/%!()&|^~?:,", c) < 0:
		// what came before decides: after an operand it is a bad
		// operator, anywhere else a missing operand
		if d.cur == atNum || d.cur == atStr {
			d.fail("syntax error: invalid arithmetic operator")
		}
		d.fail("syntax error: operand expected")
	}
	d.pos += n
	d.last, d.cur = d.cur, tok
}

// subscriptEnd returns the index of the ] closing the [ at s[i], or -1.
func subscriptEnd(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// bashNumber reads an integer constant (digits, letters, @, _ and #) as
// bash does: 0 starts octal, 0x hex, N# base N up to 64; it returns the
// value, or bash's complaint about the constant. Overflow wraps as in C.
func bashNumber(num string) (int64, string) {
	s := num
	base, val, foundBase := int64(10), int64(0), false
	if s != "" && s[0] == '0' {
		s = s[1:]
		if s == "" {
			return 0, ""
		}
		base, foundBase = 8, true
		if s[0] == 'x' || s[0] == 'X' {
			base, s = 16, s[1:]
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '#' {
			if foundBase {
				return 0, "invalid number"
			}
			if val < 2 || val > 64 {
				return 0, "invalid arithmetic base"
			}
			base, val, foundBase = val, 0, true
			if i+1 >= len(s) || !(isNameByte(s[i+1]) || s[i+1] == '@') {
				return 0, "invalid integer constant"
			}
			continue
		}
		var dg int64
		switch {
		case c >= '0' && c <= '9':
			dg = int64(c - '0')
		case c >= 'a' && c <= 'z':
			dg = int64(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			dg = int64(c-'A') + 10
			if base > 36 {
				dg += 26
			}
		case c == '@':
			dg = 62
		default: // _
			dg = 63
		}
		if dg >= base {
			return 0, "value too great for base"
		}
		val = val*base + dg
	}
	return val, ""
}

// The grammar, lowest precedence first; each level leaves d.last as
// bash's does, which decides whether an assignment has a variable.

func (d *arithDiag) comma() {
	d.assign()
	for d.cur == ',' {
		d.next()
		d.assign()
	}
}

func (d *arithDiag) assign() {
	d.cond()
	if d.cur == '=' || d.cur == atAssignOp {
		if d.last != atStr {
			d.fail("attempted assignment to non-variable")
		}
		d.next()
		d.assign()
	}
}

func (d *arithDiag) cond() {
	d.binary(0)
	if d.cur != '?' {
		return
	}
	d.next()
	if d.cur == atEnd || d.cur == ':' {
		d.fail("expression expected")
	}
	d.comma()
	if d.cur != ':' {
		d.fail("`:' expected for conditional expression")
	}
	d.next()
	if d.cur == atEnd {
		d.fail("expression expected")
	}
	d.cond()
	d.last = atCond
}

// arithLevels are the left-associative binary operators from || down to
// * / %, and what each leaves as the last token.
var arithLevels = []struct {
	ops  []int
	last int
}{
	{[]int{atLor}, atLor},
	{[]int{atLand}, atLand},
	{[]int{'|'}, atNum},
	{[]int{'^'}, atNum},
	{[]int{'&'}, atNum},
	{[]int{atEqEq, atNeq}, atNum},
	{[]int{atLeq, atGeq, '<', '>'}, atNum},
	{[]int{atLsh, atRsh}, atNum},
	{[]int{'+', '-'}, atNum},
	{[]int{'*', '/', '%'}, atNum},
}

func (d *arithDiag) binary(level int) {
	if level == len(arithLevels) {
		d.power()
		return
	}
	l := arithLevels[level]
	d.binary(level + 1)
	for slices.Contains(l.ops, d.cur) {
		d.next()
		d.binary(level + 1)
		d.last = l.last
	}
}

func (d *arithDiag) power() {
	d.unary()
	for d.cur == atPower {
		d.next()
		d.power()
		d.last = atNum
	}
}

func (d *arithDiag) unary() {
	switch d.cur {
	case '!', '~', '-', '+':
		d.next()
		d.unary()
		d.last = atNum
	default:
		d.operand()
	}
}

func (d *arithDiag) operand() {
	switch d.cur {
	case atPreInc, atPreDec:
		d.last = d.cur
		d.next()
		if d.cur != atStr {
			d.fail("identifier expected after pre-increment or pre-decrement")
		}
		d.cur = atNum // so that --x=7 has no variable to assign
		d.next()
	case '(':
		d.next()
		d.comma()
		if d.cur != ')' {
			d.fail("missing `)'")
		}
		d.next()
	case atNum:
		d.next()
	case atStr:
		d.next()
		if d.cur == atPostInc || d.cur == atPostDec {
			d.cur = atNum // x++=7 has no variable either
			d.next()
		}
	default:
		d.fail("syntax error: operand expected")
	}
}

// arithSpaced prints x as text bash's lexer reads alike: operators
// spaced, and none of the printer's line continuations.
func arithSpaced(x syntax.ArithmExpr) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{&syntax.ArithmExp{X: x}}})
	s := strings.ReplaceAll(b.String(), "\\\n", "")
	return strings.TrimSuffix(strings.TrimPrefix(s, "$(("), "))")
}

// arithCmdText prints (( x )) as bash shows it in $BASH_COMMAND and
// declare -f: the blanks inside the parentheses as written (the positions
// say whether there were any), the expression as arithSpaced prints it.
func arithCmdText(c *syntax.ArithmCmd) string {
	open, shut := "((", "))"
	if c.X != nil && c.Left.IsValid() && c.X.Pos().Offset() > c.Left.Offset()+2 {
		open = "(( "
	}
	if c.X != nil && c.Right.IsValid() && c.Right.Offset() > c.X.End().Offset() {
		shut = " ))"
	}
	if c.X == nil {
		return open + shut
	}
	return open + arithSpaced(c.X) + shut
}
