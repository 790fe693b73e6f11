package bc

// The bc language, read one token at a time from the input as it arrives,
// so that each top-level line runs as soon as it is complete (as GNU bc
// runs it, and as a pipeline feeding bc line by line expects).

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tNewline
	tNum
	tName
	tStr
	tOp
)

type token struct {
	kind tokKind
	text string
	line int // the line the token starts on
}

// lexer reads tokens from r. line counts newlines read so far (1-based).
type lexer struct {
	r    *bufio.Reader
	line int
	err  error // a read error other than EOF
}

func (lx *lexer) getc() (byte, bool) {
	c, err := lx.r.ReadByte()
	if err != nil {
		if err != io.EOF {
			lx.err = err
		}
		return 0, false
	}
	return c, true
}

func (lx *lexer) peekc() (byte, bool) {
	b, err := lx.r.Peek(1)
	if err != nil {
		return 0, false
	}
	return b[0], true
}

// maxToken bounds one token's text (a number literal, a string, a name):
// the size limits of numbers are checked again where they are made.
const maxToken = 4 << 20

var errTokenTooLong = errors.New("token too long")

var twoChar = map[string]bool{
	"+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "^=": true,
	"==": true, "!=": true, "<=": true, ">=": true, "&&": true, "||": true,
	"++": true, "--": true,
}

func (lx *lexer) next() (token, error) {
	for {
		c, ok := lx.getc()
		if !ok {
			return token{kind: tEOF, line: lx.line}, lx.err
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			continue
		case c == '\\':
			if n, ok := lx.peekc(); ok && n == '\n' {
				lx.getc()
				lx.line++
				continue
			}
			return token{kind: tOp, text: "\\", line: lx.line}, nil
		case c == '\n':
			t := token{kind: tNewline, line: lx.line}
			lx.line++
			return t, nil
		case c == '#':
			for {
				n, ok := lx.peekc()
				if !ok || n == '\n' {
					break
				}
				lx.getc()
			}
			continue
		case c == '/':
			if n, ok := lx.peekc(); ok && n == '*' {
				lx.getc()
				start := lx.line
				var prev byte
				for {
					c, ok := lx.getc()
					if !ok {
						return token{}, &syntaxError{line: start, msg: "end of file in comment"}
					}
					if c == '\n' {
						lx.line++
					}
					if prev == '*' && c == '/' {
						break
					}
					prev = c
				}
				continue
			}
			return lx.op(c)
		case c == '"':
			start := lx.line
			var sb strings.Builder
			for {
				c, ok := lx.getc()
				if !ok {
					return token{}, &syntaxError{line: start, msg: "end of file in string"}
				}
				if c == '"' {
					break
				}
				if c == '\n' {
					lx.line++
				}
				if sb.Len() >= maxToken {
					return token{}, errTokenTooLong
				}
				sb.WriteByte(c)
			}
			return token{kind: tStr, text: sb.String(), line: start}, nil
		case c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c == '.':
			var sb strings.Builder
			sb.WriteByte(c)
			dot := c == '.'
			for {
				n, ok := lx.peekc()
				if n == '\\' {
					// a backslash-newline inside a number continues it
					if b, _ := lx.r.Peek(2); len(b) == 2 && b[1] == '\n' {
						lx.getc()
						lx.getc()
						lx.line++
						continue
					}
				}
				if !ok || !(n >= '0' && n <= '9' || n >= 'A' && n <= 'Z' || n == '.' && !dot) {
					break
				}
				if n == '.' {
					dot = true
				}
				lx.getc()
				if sb.Len() >= maxToken {
					return token{}, errTokenTooLong
				}
				sb.WriteByte(n)
			}
			if sb.String() == "." {
				return token{kind: tName, text: "last", line: lx.line}, nil
			}
			return token{kind: tNum, text: sb.String(), line: lx.line}, nil
		case c >= 'a' && c <= 'z' || c == '_':
			var sb strings.Builder
			sb.WriteByte(c)
			for {
				n, ok := lx.peekc()
				if !ok || !(n >= 'a' && n <= 'z' || n >= '0' && n <= '9' || n == '_') {
					break
				}
				lx.getc()
				if sb.Len() >= maxToken {
					return token{}, errTokenTooLong
				}
				sb.WriteByte(n)
			}
			return token{kind: tName, text: sb.String(), line: lx.line}, nil
		default:
			return lx.op(c)
		}
	}
}

func (lx *lexer) op(c byte) (token, error) {
	if n, ok := lx.peekc(); ok && twoChar[string([]byte{c, n})] {
		lx.getc()
		return token{kind: tOp, text: string([]byte{c, n}), line: lx.line}, nil
	}
	return token{kind: tOp, text: string(c), line: lx.line}, nil
}

// syntaxError is a compile-time error: reported with its line, and the rest
// of that line is skipped.
type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return e.msg }

// errQuit is the quit statement, which ends bc when it is read (even in a
// branch never taken), as in GNU bc.
var errQuit = errors.New("quit")

// AST.

type expr interface{}

type (
	numLit struct{ lit string }
	varRef struct{ name string } // also scale, ibase, obase, last
	arrRef struct {
		name string
		idx  expr
	}
	unary struct {
		op string
		x  expr
	}
	binary struct {
		op   string
		l, r expr
	}
	assign struct {
		op  string // "=", "+=", ...
		lhs expr   // *varRef or *arrRef
		rhs expr
		// shown: written in parentheses, "(x = 1)", which GNU prints as
		// a statement (a bare assignment prints nothing)
		shown bool
	}
	incdec struct {
		pre   bool
		delta int64
		lhs   expr
	}
	callExpr struct {
		name string
		args []arg
	}
	builtin struct {
		name string // length, scale, sqrt, read
		x    expr
	}
)

// arg is a call argument: an expression, or a whole array (name[]).
type arg struct {
	x     expr
	array string
}

type stmt interface{}

type (
	exprStmt  struct{ x expr }
	strStmt   struct{ s string }
	printStmt struct{ items []printItem }
	block     struct{ body []stmt }
	ifStmt    struct {
		cond      expr
		then, els stmt
	}
	whileStmt struct {
		cond expr
		body stmt
	}
	forStmt struct {
		init, cond, post expr // each may be nil
		body             stmt
	}
	ctlStmt    struct{ kind string } // break, continue, halt
	returnStmt struct{ x expr }      // x nil: return 0
)

type printItem struct {
	s string
	x expr // nil for a string
}

type param struct {
	name  string
	array bool
	ref   bool // *name[]: the caller's array itself (GNU), not a copy
}

type funcDef struct {
	name   string
	params []param
	autos  []param
	body   []stmt
	void   bool
	native func(in *interp, args []num) (num, error)
}

// parser reads one item at a time: a function definition or a line of
// statements.
type parser struct {
	lx  *lexer
	buf []token // lookahead
	// atNewline: the last error was at a newline already taken, so
	// recovery skips nothing more.
	atNewline bool
	depth     int // nesting of expressions and statements
	loops     int // enclosing while/for
	inFunc    bool
	nodes     int // AST nodes made for the current item
	grow      func(n int64) error
}

// maxNesting bounds the parser's (and so the evaluator's) recursion.
const maxNesting = 1000

func (p *parser) peek() (token, error) { return p.peekN(0) }

// peekN looks n tokens ahead (callArg tells name[] from name[i]).
func (p *parser) peekN(n int) (token, error) {
	for len(p.buf) <= n {
		t, err := p.lx.next()
		if err != nil {
			return t, err
		}
		p.buf = append(p.buf, t)
	}
	return p.buf[n], nil
}

func (p *parser) take() (token, error) {
	t, err := p.peek()
	if err == nil {
		p.buf = p.buf[1:]
	}
	return t, err
}

func (p *parser) fail(t token, msg string) error {
	line := t.line
	if t.kind == tNewline {
		line++ // GNU bc has read the newline when it sees the error
		p.atNewline = true
	}
	return &syntaxError{line: line, msg: msg}
}

func (p *parser) expect(text string) error {
	t, err := p.take()
	if err != nil {
		return err
	}
	if t.kind != tOp || t.text != text {
		if t.kind == tName && t.text == "quit" {
			return errQuit
		}
		return p.fail(t, "syntax error")
	}
	return nil
}

func (p *parser) isOp(text string) bool {
	t, err := p.peek()
	return err == nil && t.kind == tOp && t.text == text
}

// node accounts one AST node to the memory budget.
func (p *parser) node() error {
	p.nodes++
	if p.grow != nil && p.nodes%64 == 0 {
		return p.grow(64 * 96)
	}
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return &depthError{}
	}
	return nil
}

type depthError struct{}

func (e *depthError) Error() string { return "nesting too deep" }

// skipLine discards tokens up to and including the next newline (error
// recovery).
func (p *parser) skipLine() error {
	if p.atNewline {
		p.atNewline = false
		return nil
	}
	for len(p.buf) > 0 {
		t := p.buf[0]
		if t.kind == tEOF {
			return nil
		}
		p.buf = p.buf[1:]
		if t.kind == tNewline {
			return nil
		}
	}
	for {
		t, err := p.lx.next()
		if err != nil {
			if _, ok := err.(*syntaxError); ok {
				continue
			}
			return err
		}
		if t.kind == tNewline {
			return nil
		}
		if t.kind == tEOF {
			p.buf = append(p.buf, t)
			return nil
		}
	}
}

// item is what the parser hands the interpreter.
type item struct {
	fn    *funcDef
	stmts []stmt
	eof   bool
}

// nextItem parses the next function definition or line of statements.
func (p *parser) nextItem() (item, error) {
	p.depth, p.loops, p.inFunc, p.nodes, p.atNewline = 0, 0, false, 0, false
	for {
		t, err := p.peek()
		if err != nil {
			return item{}, err
		}
		switch {
		case t.kind == tEOF:
			return item{eof: true}, nil
		case t.kind == tNewline:
			p.take()
			continue
		case t.kind == tName && t.text == "define":
			p.take()
			fn, err := p.funcDef()
			if err != nil {
				return item{}, err
			}
			// statements may follow on the line after a ;
			return item{fn: fn}, nil
		}
		var stmts []stmt
		for {
			s, err := p.statement()
			if err != nil {
				return item{}, err
			}
			if s != nil {
				stmts = append(stmts, s)
			}
			t, err := p.take()
			if err != nil {
				return item{}, err
			}
			switch {
			case t.kind == tNewline || t.kind == tEOF:
				if t.kind == tEOF {
					p.buf = append([]token{t}, p.buf...)
				}
				return item{stmts: stmts}, nil
			case t.kind == tOp && t.text == ";":
				continue
			default:
				return item{}, p.fail(t, "syntax error")
			}
		}
	}
}

func (p *parser) funcDef() (*funcDef, error) {
	fn := &funcDef{}
	t, err := p.take()
	if err != nil {
		return nil, err
	}
	if t.kind == tName && t.text == "void" {
		fn.void = true
		if t, err = p.take(); err != nil {
			return nil, err
		}
	}
	if t.kind != tName || keywords[t.text] {
		return nil, p.fail(t, "syntax error")
	}
	fn.name = t.text
	if err := p.expect("("); err != nil {
		return nil, err
	}
	if !p.isOp(")") {
		if fn.params, err = p.paramList(); err != nil {
			return nil, err
		}
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	// POSIX puts the brace on the define line; GNU allows a newline.
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != tNewline {
			break
		}
		p.take()
	}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	p.inFunc = true
	p.skipNewlines()
	if t, _ := p.peek(); t.kind == tName && t.text == "auto" {
		p.take()
		if fn.autos, err = p.paramList(); err != nil {
			return nil, err
		}
		t, err := p.take()
		for i := range fn.autos {
			fn.autos[i].ref = false // GNU takes auto *a[] as a local array
		}
		if err != nil {
			return nil, err
		}
		if !(t.kind == tNewline || t.kind == tOp && t.text == ";") {
			return nil, p.fail(t, "syntax error")
		}
	}
	if fn.body, err = p.stmtsUntilBrace(); err != nil {
		return nil, err
	}
	p.inFunc = false
	return fn, nil
}

func (p *parser) paramList() ([]param, error) {
	var ps []param
	for {
		t, err := p.take()
		if err != nil {
			return nil, err
		}
		ref := t.kind == tOp && t.text == "*"
		if ref {
			if t, err = p.take(); err != nil {
				return nil, err
			}
		}
		if t.kind != tName || keywords[t.text] {
			return nil, p.fail(t, "syntax error")
		}
		pr := param{name: t.text, ref: ref}
		if ref && !p.isOp("[") {
			return nil, p.fail(t, "syntax error")
		}
		if p.isOp("[") {
			p.take()
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			pr.array = true
		}
		ps = append(ps, pr)
		if !p.isOp(",") {
			return ps, nil
		}
		p.take()
	}
}

func (p *parser) skipNewlines() {
	for {
		t, err := p.peek()
		if err != nil || t.kind != tNewline {
			return
		}
		p.take()
	}
}

// stmtsUntilBrace parses statements separated by ; or newlines up to the
// closing brace, which it consumes.
func (p *parser) stmtsUntilBrace() ([]stmt, error) {
	var body []stmt
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		switch {
		case t.kind == tNewline || t.kind == tOp && t.text == ";":
			p.take()
			continue
		case t.kind == tOp && t.text == "}":
			p.take()
			return body, nil
		case t.kind == tEOF:
			return nil, p.fail(t, "syntax error")
		}
		s, err := p.statement()
		if err != nil {
			return nil, err
		}
		if s != nil {
			body = append(body, s)
		}
		t, err = p.peek()
		if err != nil {
			return nil, err
		}
		if !(t.kind == tNewline || t.kind == tOp && (t.text == ";" || t.text == "}")) {
			return nil, p.fail(t, "syntax error")
		}
	}
}

var keywords = map[string]bool{
	"define": true, "auto": true, "return": true, "if": true, "else": true,
	"while": true, "for": true, "break": true, "continue": true, "quit": true,
	"halt": true, "print": true, "length": true, "sqrt": true, "read": true,
	"void": true, "limits": true, "warranty": true, "scale": false,
}

// statement parses one statement; nil is the empty statement.
func (p *parser) statement() (stmt, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if err := p.node(); err != nil {
		return nil, err
	}
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tNewline, tEOF:
		return nil, nil
	case tStr:
		p.take()
		return &strStmt{t.text}, nil
	case tOp:
		switch t.text {
		case ";", "}":
			return nil, nil
		case "{":
			p.take()
			body, err := p.stmtsUntilBrace()
			if err != nil {
				return nil, err
			}
			return &block{body}, nil
		}
	case tName:
		switch t.text {
		case "quit":
			return nil, errQuit
		case "halt", "break", "continue":
			p.take()
			if t.text == "break" && p.loops == 0 {
				return nil, &syntaxError{line: t.line, msg: "Break outside a for/while"}
			}
			if t.text == "continue" && p.loops == 0 {
				return nil, &syntaxError{line: t.line, msg: "Continue outside a for/while"}
			}
			return &ctlStmt{t.text}, nil
		case "limits":
			p.take()
			return &strStmt{limitsText}, nil
		case "warranty":
			p.take()
			return &strStmt{"warren bc: no warranty.\n"}, nil
		case "return":
			p.take()
			if !p.inFunc {
				return nil, &syntaxError{line: t.line, msg: "Return outside of a function."}
			}
			n, err := p.peek()
			if err != nil {
				return nil, err
			}
			if n.kind == tNewline || n.kind == tEOF || n.kind == tOp && (n.text == ";" || n.text == "}") {
				return &returnStmt{}, nil
			}
			if p.isOp("(") {
				p.take()
				if p.isOp(")") {
					p.take()
					return &returnStmt{}, nil
				}
				x, err := p.expr()
				if err != nil {
					return nil, err
				}
				if err := p.expect(")"); err != nil {
					return nil, err
				}
				// return (a) + 1 is not bc; return (a) is.
				return &returnStmt{x}, nil
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			return &returnStmt{x}, nil
		case "print":
			p.take()
			var items []printItem
			for {
				t, err := p.peek()
				if err != nil {
					return nil, err
				}
				if t.kind == tStr {
					p.take()
					items = append(items, printItem{s: t.text})
				} else {
					x, err := p.expr()
					if err != nil {
						return nil, err
					}
					items = append(items, printItem{x: x})
				}
				if !p.isOp(",") {
					return &printStmt{items}, nil
				}
				p.take()
			}
		case "if":
			p.take()
			cond, err := p.parenExpr()
			if err != nil {
				return nil, err
			}
			p.skipNewlines()
			then, err := p.statement()
			if err != nil {
				return nil, err
			}
			s := &ifStmt{cond: cond, then: then}
			if t, _ := p.peek(); t.kind == tName && t.text == "else" {
				p.take()
				p.skipNewlines()
				if s.els, err = p.statement(); err != nil {
					return nil, err
				}
			}
			return s, nil
		case "while":
			p.take()
			cond, err := p.parenExpr()
			if err != nil {
				return nil, err
			}
			p.skipNewlines()
			p.loops++
			body, err := p.statement()
			p.loops--
			if err != nil {
				return nil, err
			}
			return &whileStmt{cond, body}, nil
		case "for":
			p.take()
			if err := p.expect("("); err != nil {
				return nil, err
			}
			var parts [3]expr
			for i := range parts {
				end := ";"
				if i == 2 {
					end = ")"
				}
				if !p.isOp(end) {
					if parts[i], err = p.expr(); err != nil {
						return nil, err
					}
				}
				if err := p.expect(end); err != nil {
					return nil, err
				}
			}
			p.skipNewlines()
			p.loops++
			body, err := p.statement()
			p.loops--
			if err != nil {
				return nil, err
			}
			return &forStmt{parts[0], parts[1], parts[2], body}, nil
		case "else", "auto", "define":
			p.take()
			return nil, p.fail(t, "syntax error")
		}
	}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &exprStmt{x}, nil
}

func (p *parser) parenExpr() (expr, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	return x, p.expect(")")
}

// Expressions, by GNU bc's precedence (lowest first): || && ! relational
// assignment + - * / % ^ unary-minus ++/--. Assignment binds tighter than
// the relational operators: a = 3 < 5 assigns 3, then compares.

func (p *parser) expr() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	return p.orExpr()
}

func (p *parser) binLoop(next func() (expr, error), ops ...string) (expr, error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for chain := 0; ; chain++ {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != tOp || !contains(ops, t.text) {
			return l, nil
		}
		// A left-leaning chain is as deep for the evaluator as nesting.
		if chain > maxNesting {
			return nil, &depthError{}
		}
		p.take()
		r, err := next()
		if err != nil {
			return nil, err
		}
		if err := p.node(); err != nil {
			return nil, err
		}
		l = &binary{t.text, l, r}
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) orExpr() (expr, error)  { return p.binLoop(p.andExpr, "||") }
func (p *parser) andExpr() (expr, error) { return p.binLoop(p.notExpr, "&&") }

func (p *parser) notExpr() (expr, error) {
	if p.isOp("!") {
		p.take()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return &unary{"!", x}, nil
	}
	return p.relExpr()
}

func (p *parser) relExpr() (expr, error) {
	return p.binLoop(p.assignExpr, "==", "!=", "<", "<=", ">", ">=")
}

var assignOps = []string{"=", "+=", "-=", "*=", "/=", "%=", "^="}

func (p *parser) assignExpr() (expr, error) {
	l, err := p.addExpr()
	if err != nil {
		return nil, err
	}
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	if t.kind != tOp || !contains(assignOps, t.text) {
		return l, nil
	}
	if !lvalue(l) {
		return nil, p.fail(t, "syntax error")
	}
	p.take()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	r, err := p.assignExpr()
	if err != nil {
		return nil, err
	}
	return &assign{op: t.text, lhs: l, rhs: r}, nil
}

func lvalue(x expr) bool {
	switch x.(type) {
	case *varRef, *arrRef:
		return true
	}
	return false
}

func (p *parser) addExpr() (expr, error) { return p.binLoop(p.mulExpr, "+", "-") }
func (p *parser) mulExpr() (expr, error) { return p.binLoop(p.powExpr, "*", "/", "%") }

func (p *parser) powExpr() (expr, error) {
	l, err := p.unaryExpr()
	if err != nil {
		return nil, err
	}
	if !p.isOp("^") {
		return l, nil
	}
	p.take()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	r, err := p.powExpr()
	if err != nil {
		return nil, err
	}
	return &binary{"^", l, r}, nil
}

func (p *parser) unaryExpr() (expr, error) {
	if p.isOp("-") {
		p.take()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.unaryExpr()
		if err != nil {
			return nil, err
		}
		return &unary{"-", x}, nil
	}
	return p.postfix()
}

func (p *parser) postfix() (expr, error) {
	if p.isOp("++") || p.isOp("--") {
		t, _ := p.take()
		x, err := p.primary()
		if err != nil {
			return nil, err
		}
		if !lvalue(x) {
			return nil, p.fail(t, "syntax error")
		}
		return &incdec{pre: true, delta: delta(t.text), lhs: x}, nil
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if lvalue(x) && (p.isOp("++") || p.isOp("--")) {
		t, _ := p.take()
		return &incdec{delta: delta(t.text), lhs: x}, nil
	}
	return x, nil
}

func delta(op string) int64 {
	if op == "++" {
		return 1
	}
	return -1
}

func (p *parser) primary() (expr, error) {
	if err := p.node(); err != nil {
		return nil, err
	}
	t, err := p.take()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tNum:
		return &numLit{t.text}, nil
	case tOp:
		if t.text == "(" {
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if a, ok := x.(*assign); ok {
				x = &assign{op: a.op, lhs: a.lhs, rhs: a.rhs, shown: true}
			}
			return x, p.expect(")")
		}
	case tName:
		switch t.text {
		case "length", "sqrt":
			x, err := p.parenExpr()
			if err != nil {
				return nil, err
			}
			return &builtin{t.text, x}, nil
		case "read":
			if err := p.expect("("); err != nil {
				return nil, err
			}
			return &builtin{name: "read"}, p.expect(")")
		case "scale":
			if p.isOp("(") {
				x, err := p.parenExpr()
				if err != nil {
					return nil, err
				}
				return &builtin{"scale", x}, nil
			}
			return &varRef{"scale"}, nil
		case "quit":
			return nil, errQuit
		}
		if keywords[t.text] {
			return nil, p.fail(t, "syntax error")
		}
		if p.isOp("(") {
			p.take()
			c := &callExpr{name: t.text}
			if !p.isOp(")") {
				for {
					a, err := p.callArg()
					if err != nil {
						return nil, err
					}
					c.args = append(c.args, a)
					if !p.isOp(",") {
						break
					}
					p.take()
				}
			}
			return c, p.expect(")")
		}
		if p.isOp("[") {
			p.take()
			idx, err := p.expr()
			if err != nil {
				return nil, err
			}
			return &arrRef{t.text, idx}, p.expect("]")
		}
		return &varRef{t.text}, nil
	}
	return nil, p.fail(t, "syntax error")
}

// callArg is an expression or name[] (an array passed by value).
func (p *parser) callArg() (arg, error) {
	t0, err := p.peekN(0)
	if err != nil {
		return arg{}, err
	}
	if t0.kind == tName && !keywords[t0.text] {
		t1, err := p.peekN(1)
		if err != nil {
			return arg{}, err
		}
		if t1.kind == tOp && t1.text == "[" {
			t2, err := p.peekN(2)
			if err != nil {
				return arg{}, err
			}
			if t2.kind == tOp && t2.text == "]" {
				p.buf = p.buf[3:]
				return arg{array: t0.text}, nil
			}
		}
	}
	x, err := p.expr()
	return arg{x: x}, err
}

const limitsText = "BC_BASE_MAX     = 2147483647\nBC_DIM_MAX      = 16777215\nBC_SCALE_MAX    = 100000\nBC_STRING_MAX   = 4194304\nMAX Exponent    = 400000\nNumber of vars  = 32767\n"
