package shell

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// arithError is a bash arithmetic error.
type arithError struct {
	expr, msg, tok string
	lexed          bool // found by arithSyntax, bash's own reading
	// place and node: expr and tok are a guess until the error is placed
	// in the whole expression's text (arithplace.go)
	place int
	node  syntax.ArithmExpr
}

func (e *arithError) Error() string {
	if e.tok != "" {
		return fmt.Sprintf("%s: %s (error token is \"%s\")", e.expr, e.msg, e.tok)
	}
	return fmt.Sprintf("%s: %s", e.expr, e.msg)
}

func (r *runner) arithErr(err error) {
	if le, ok := isLimit(err); ok {
		r.rs.fail(le)
		r.exiting = true
		return
	}
	if err == errSilent {
		r.status = 1
		return
	}
	var ee *exitError
	if e, ok := err.(*exitError); ok {
		ee = e
		r.errf("%s", ee.msg)
		r.status = 1
		r.exiting = true
		return
	}
	if _, ok := err.(expand.UnsetParameterError); ok {
		r.expandErr(err)
		return
	}
	r.errf("%s", err.Error())
	r.status = 1
	// bash abandons the command line being run (up to the top level,
	// through functions) and reads the next one.
	r.exiting = true
	r.abandonLine = true
}

func hasSglQuoted(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.SglQuoted); ok {
			return true
		}
	}
	return false
}

// arithCmdErr reports an error of (( )) or let: bash prints it and the
// command's status is 1; nothing is abandoned.
func (r *runner) arithCmdErr(err error) { r.arithNamedErr("((", err) }

// arithNamedErr is arithCmdErr for the command name (bash names let too).
func (r *runner) arithNamedErr(name string, err error) {
	if isSyntaxish(err) {
		var ae *arithError
		if errors.As(err, &ae) {
			r.errf("%s: %s", name, err.Error()) // bash names the command
		} else {
			r.errf("%s", err.Error())
		}
		r.status = 1
		return
	}
	r.arithErr(err)
}

// isSyntaxish: an arithmetic error that is neither a limit nor an exit.
func isSyntaxish(err error) bool {
	if _, ok := isLimit(err); ok || err == errSilent {
		return false
	}
	if _, ok := err.(*exitError); ok {
		return false
	}
	if _, ok := err.(expand.UnsetParameterError); ok {
		return false
	}
	return true
}

func (r *runner) arith(x syntax.ArithmExpr) (int64, error) {
	n, err := r.arithDepth(x, 0)
	if err != nil {
		err = r.placeSource(err, x, syntax.Pos{})
	}
	return r.arithFinish(x, n, err)
}

func (r *runner) arithFinish(x syntax.ArithmExpr, n int64, err error) (int64, error) {
	var ae *arithError
	if errors.As(err, &ae) && !ae.lexed && ae.msg == "attempted assignment to non-variable" {
		// the parser here read ++/-- where bash's lexer reads otherwise
		// (--x++); bash's reading of the text names the real error
		if be := arithSyntax(arithSpaced(x)); be != nil {
			return 0, be
		}
	}
	return n, err
}

// arithCache holds parsed arithmetic strings (variable values evaluated
// as expressions). It is shared by all sandboxes, so it is bounded.
var arithCache = newBoundedCache[syntax.ArithmExpr](4096)

func (r *runner) arithString(s string) (int64, error) {
	return r.arithStringDepth(s, 0)
}

func (r *runner) arithStringDepth(s string, depth int) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil && !strings.HasPrefix(strings.TrimLeft(t, "+-"), "0") || t == "0" {
		return n, nil
	}
	// depth counts this expression's own recursion; arithNest counts every
	// string evaluated as arithmetic under this one on the runner, since
	// subscripts (a[X] with X='a[X]') and substitutions start new
	// expressions at depth 0 (found by FuzzArith).
	if depth > 64 || r.arithNest > 64 {
		return 0, &arithError{expr: t, msg: "expression recursion level exceeded", tok: t}
	}
	r.arithNest++
	defer func() { r.arithNest-- }()
	if strings.ContainsAny(t, "\"'") {
		// a value evaluated as arithmetic is expanded text already: a
		// quote in it is no operand to bash (the parser here would take
		// "5" for a quoted word)
		if ae := arithSyntax(s); ae != nil {
			return 0, ae
		}
	}
	var x syntax.ArithmExpr
	if c, ok := arithCache.get(t); ok {
		x = c
	} else {
		var err error
		x, err = parseArith(t)
		if isNesting(err) {
			return 0, r.nestingFail()
		}
		if err != nil || x == nil {
			if ae := arithSyntax(s); ae != nil {
				return 0, ae
			}
			if tok, ok := trailingOperator(s); ok {
				return 0, &arithError{expr: strings.TrimLeft(s, " \t\n"), msg: "syntax error: operand expected", tok: tok}
			}
			return 0, &arithError{expr: t, msg: "syntax error: invalid arithmetic operator", tok: t}
		}
		if end := int(x.End().Offset()); utf8.ValidString(t) && end < len(t) && strings.TrimSpace(t[end:]) != "" {
			// the parser stops at what it cannot read (a:b:c); bash
			// refuses the rest
			if ae := arithSyntax(s); ae != nil {
				return 0, ae
			}
			return 0, &arithError{expr: t, msg: "syntax error in expression", tok: strings.TrimSpace(t[end:])}
		}
		if i := expansionIn(t, x); i >= 0 {
			// text evaluated as arithmetic has been expanded already
			// (let's arguments, a variable's value): a $ left in it is
			// not an operand to bash
			if ae := arithSyntax(s); ae != nil {
				return 0, ae
			}
			return 0, &arithError{expr: t, msg: "syntax error: operand expected", tok: t[i:]}
		}
		arithCache.put(t, x)
	}
	n, err := r.arithDepth(x, depth+1)
	if err != nil {
		// the nodes' offsets are in t, which starts where s's text does
		lead := len(s) - len(strings.TrimLeft(s, " \t\n"))
		err = placeArith(err, s[lead:], func(p syntax.Pos) int { return int(p.Offset()) })
	}
	return n, err
}

// expansionIn returns the offset in t of the first parameter expansion,
// command or arithmetic substitution in x, or -1.
func expansionIn(t string, x syntax.ArithmExpr) int {
	if !strings.ContainsAny(t, "$`") {
		return -1
	}
	at := -1
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			if o := int(n.Pos().Offset()); at < 0 || o < at {
				at = min(o, len(t))
			}
			return false
		}
		return true
	})
	return at
}

// parseNum reads an integer constant (isNumWord's characters only).
func parseNum(s string) (int64, error) {
	n, msg := bashNumber(s)
	if msg != "" {
		return 0, &arithError{expr: s, msg: msg, tok: s}
	}
	return n, nil
}

func isNumStart(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// lvalue describes an assignable arithmetic operand.
type lvalue struct {
	name string
	idx  syntax.ArithmExpr // nil for a scalar
}

func (r *runner) arithLvalue(x syntax.ArithmExpr) (lvalue, error) {
	if p, ok := x.(*syntax.ParenArithm); ok {
		return r.arithLvalue(p.X)
	}
	w, ok := x.(*syntax.Word)
	if ok && len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if syntax.ValidName(p.Value) {
				return lvalue{name: p.Value}, nil
			}
		case *syntax.ParamExp:
			if p.Param != nil && p.Exp == nil && p.Slice == nil && p.Repl == nil && !p.Length && !p.Excl {
				return lvalue{name: p.Param.Value, idx: p.Index}, nil
			}
		}
	}
	if ok && len(w.Parts) > 1 {
		// x$foo = 1: the name is built by expansion
		if s, ok := r.literal(w); ok {
			name, idx, ok := splitRef(s)
			if ok && syntax.ValidName(name) {
				if idx != nil {
					if iw, isW := idx.(*syntax.Word); isW {
						if e, err := parseArith(iw.Lit()); err == nil {
							idx = e
						}
					}
				}
				return lvalue{name: name, idx: idx}, nil
			}
		}
	}
	txt := arithText(x)
	return lvalue{}, &arithError{expr: txt, msg: "attempted assignment to non-variable", tok: txt}
}

func (r *runner) lvGet(lv lvalue, depth int) (int64, error) {
	s, err := r.lvString(lv)
	if err != nil {
		return 0, err
	}
	return r.arithStringDepth(s, depth+1)
}

func (r *runner) lvString(lv lvalue) (string, error) {
	if s, ok := r.dynValue(lv.name); ok {
		return s, nil
	}
	v := r.lookupRef(lv.name)
	if v == nil {
		switch lv.name {
		case "BASH_LINENO", "LINENO", "BASHPID", "PPID", "UID", "EUID", "PIPESTATUS", "DIRSTACK", "FUNCNAME", "BASH_SOURCE":
			pv, err := r.lookupParam(lv.name, lv.idx, nil)
			if err != nil {
				return "", err
			}
			if len(pv.vals) > 0 {
				return pv.vals[0], nil
			}
			return "", nil
		}
	}
	if lv.idx == nil {
		if v == nil || !v.Set {
			if r.opts[optNounset] {
				return "", &exitError{msg: lv.name + ": unbound variable"}
			}
			return "", nil
		}
		return v.str(), nil
	}
	if v == nil {
		if r.opts[optNounset] {
			return "", &exitError{msg: lv.name + ": unbound variable"}
		}
		return "", nil
	}
	if v.Kind == expand.Associative {
		k, ok := r.indexLiteral(lv.idx)
		if !ok {
			return "", errSilent
		}
		return v.Map[k], nil
	}
	i, err := r.arith(lv.idx)
	if err != nil {
		return "", err
	}
	if i < 0 {
		i += int64(v.maxIndex() + 1)
	}
	s, _ := v.index(int(i))
	return s, nil
}

func (r *runner) lvSet(lv lvalue, n int64) error {
	s := strconv.FormatInt(n, 10)
	if lv.idx == nil {
		if !r.setVar(lv.name, s) {
			return errSilent
		}
		return nil
	}
	if r.isAssoc(lv.name) {
		k, ok := r.indexLiteral(lv.idx)
		if !ok {
			return errSilent
		}
		if !r.setElemKey(lv.name, k, s, false, false) {
			return errSilent
		}
		return nil
	}
	i, err := r.arith(lv.idx)
	if err != nil {
		return err
	}
	if !r.setElem(lv.name, strconv.FormatInt(i, 10), s, false) {
		return errSilent
	}
	return nil
}

func (r *runner) arithDepth(x syntax.ArithmExpr, depth int) (int64, error) {
	switch x := x.(type) {
	case *syntax.Word:
		for _, p := range x.Parts {
			if q, ok := p.(*syntax.SglQuoted); ok {
				// bash refuses single quotes in arithmetic ('a' is not 97)
				tok := "'" + q.Value + "'"
				return 0, &arithError{expr: wordText(x), msg: "syntax error: operand expected", tok: tok}
			}
		}
		if len(x.Parts) == 1 {
			switch p := x.Parts[0].(type) {
			case *syntax.Lit:
				if syntax.ValidName(p.Value) {
					return r.lvGet(lvalue{name: p.Value}, depth)
				}
				if isNumStart(p.Value) && isNumWord(p.Value) {
					return parseNum(p.Value)
				}
			case *syntax.ParamExp:
				if p.Short && !p.Dollar.IsValid() && p.Index != nil {
					return r.lvGet(lvalue{name: p.Param.Value, idx: p.Index}, depth)
				}
			}
		}
		s, ok := r.literal(x)
		if !ok {
			if r.cancelled() {
				return 0, errCancelled
			}
			return 0, errSilent
		}
		return r.arithStringDepth(s, depth+1)
	case *syntax.ParenArithm:
		return r.arithDepth(x.X, depth)
	case *syntax.UnaryArithm:
		switch x.Op {
		case syntax.Inc, syntax.Dec:
			lv, err := r.arithLvalue(x.X)
			if err != nil {
				return 0, err
			}
			old, err := r.lvGet(lv, depth)
			if err != nil {
				return 0, err
			}
			n := old + 1
			if x.Op == syntax.Dec {
				n = old - 1
			}
			if err := r.lvSet(lv, n); err != nil {
				return 0, err
			}
			if x.Post {
				return old, nil
			}
			return n, nil
		}
		n, err := r.arithDepth(x.X, depth)
		if err != nil {
			return 0, err
		}
		switch x.Op {
		case syntax.Not:
			return int64(b2i(n == 0)), nil
		case syntax.BitNegation:
			return ^n, nil
		case syntax.Plus:
			return n, nil
		case syntax.Minus:
			return -n, nil
		}
		return 0, fmt.Errorf("unsupported arithmetic operator %v", x.Op)
	case *syntax.BinaryArithm:
		switch x.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
			syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
			syntax.ShrAssgn, syntax.PowAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn:
			lv, err := r.arithLvalue(x.X)
			if err != nil {
				return 0, err
			}
			rhs, err := r.arithDepth(x.Y, depth)
			if err != nil {
				return 0, err
			}
			n := rhs
			if x.Op != syntax.Assgn {
				old, err := r.lvGet(lv, depth)
				if err != nil {
					return 0, err
				}
				op := map[syntax.BinAritOperator]syntax.BinAritOperator{
					syntax.AddAssgn: syntax.Add, syntax.SubAssgn: syntax.Sub, syntax.MulAssgn: syntax.Mul,
					syntax.QuoAssgn: syntax.Quo, syntax.RemAssgn: syntax.Rem, syntax.AndAssgn: syntax.And,
					syntax.OrAssgn: syntax.Or, syntax.XorAssgn: syntax.Xor, syntax.ShlAssgn: syntax.Shl,
					syntax.ShrAssgn: syntax.Shr, syntax.PowAssgn: syntax.Pow, syntax.AndBoolAssgn: syntax.AndArit,
					syntax.OrBoolAssgn: syntax.OrArit, syntax.XorBoolAssgn: syntax.XorBool,
				}[x.Op]
				n, err = binArith(op, old, rhs, x)
				if err != nil {
					return 0, err
				}
			}
			if err := r.lvSet(lv, n); err != nil {
				return 0, err
			}
			return n, nil
		case syntax.TernQuest:
			c, err := r.arithDepth(x.X, depth)
			if err != nil {
				return 0, err
			}
			col, ok := x.Y.(*syntax.BinaryArithm)
			if !ok || col.Op != syntax.TernColon {
				return 0, &arithError{expr: "?", msg: "`:' expected for conditional expression"}
			}
			if c != 0 {
				return r.arithDepth(col.X, depth)
			}
			return r.arithDepth(col.Y, depth)
		case syntax.AndArit, syntax.OrArit:
			a, err := r.arithDepth(x.X, depth)
			if err != nil {
				return 0, err
			}
			if (x.Op == syntax.AndArit) == (a == 0) {
				return int64(b2i(a != 0)), nil
			}
			b, err := r.arithDepth(x.Y, depth)
			if err != nil {
				return 0, err
			}
			return int64(b2i(b != 0)), nil
		case syntax.Comma:
			if _, err := r.arithDepth(x.X, depth); err != nil {
				return 0, err
			}
			return r.arithDepth(x.Y, depth)
		}
		a, err := r.arithDepth(x.X, depth)
		if err != nil {
			return 0, err
		}
		b, err := r.arithDepth(x.Y, depth)
		if err != nil {
			return 0, err
		}
		return binArith(x.Op, a, b, x)
	}
	return 0, fmt.Errorf("unsupported arithmetic expression %T", x)
}

func binArith(op syntax.BinAritOperator, a, b int64, x syntax.ArithmExpr) (int64, error) {
	switch op {
	case syntax.Add:
		return a + b, nil
	case syntax.Sub:
		return a - b, nil
	case syntax.Mul:
		return a * b, nil
	case syntax.Quo, syntax.Rem:
		if b == 0 {
			txt := arithText(x)
			tok := "0"
			e := &arithError{expr: txt, msg: "division by 0"}
			if bx, ok := x.(*syntax.BinaryArithm); ok {
				tok = arithText(bx.Y)
				// bash stands after the operator (a / b), or past the
				// value assigned (a /= b)
				e.node, e.place = bx.Y, tokAt
				if bx.Op == syntax.QuoAssgn || bx.Op == syntax.RemAssgn {
					e.place = tokAfter
				}
			}
			e.tok = tok
			return 0, e
		}
		if b == -1 {
			if op == syntax.Quo {
				return -a, nil
			}
			return 0, nil
		}
		if op == syntax.Quo {
			return a / b, nil
		}
		return a % b, nil
	case syntax.Pow:
		if b < 0 {
			e := &arithError{expr: arithText(x), msg: "exponent less than 0", tok: strconv.FormatInt(b, 10)}
			if bx, ok := x.(*syntax.BinaryArithm); ok {
				e.node, e.place = bx.Y, tokAfter
			}
			return 0, e
		}
		// square-and-multiply: 2**(1<<62) must not loop 2^62 times
		n, base := int64(1), a
		for e := b; e > 0; e >>= 1 {
			if e&1 == 1 {
				n *= base
			}
			base *= base
		}
		return n, nil
	case syntax.Eql:
		return int64(b2i(a == b)), nil
	case syntax.Neq:
		return int64(b2i(a != b)), nil
	case syntax.Lss:
		return int64(b2i(a < b)), nil
	case syntax.Gtr:
		return int64(b2i(a > b)), nil
	case syntax.Leq:
		return int64(b2i(a <= b)), nil
	case syntax.Geq:
		return int64(b2i(a >= b)), nil
	case syntax.And:
		return a & b, nil
	case syntax.Or:
		return a | b, nil
	case syntax.Xor:
		return a ^ b, nil
	case syntax.Shl:
		return a << uint64(b&63), nil
	case syntax.Shr:
		return a >> uint64(b&63), nil
	case syntax.AndArit:
		return int64(b2i(a != 0 && b != 0)), nil
	case syntax.OrArit:
		return int64(b2i(a != 0 || b != 0)), nil
	case syntax.XorBool:
		return int64(b2i((a != 0) != (b != 0))), nil
	}
	return 0, fmt.Errorf("unsupported arithmetic operator %v", op)
}

func arithText(x syntax.Node) string {
	var b strings.Builder
	if ax, ok := x.(syntax.ArithmExpr); ok {
		if w, ok := ax.(*syntax.Word); ok {
			syntax.NewPrinter().Print(&b, w)
			return b.String()
		}
		syntax.NewPrinter(syntax.Minify(true)).Print(&b, &syntax.Word{Parts: []syntax.WordPart{&syntax.ArithmExp{X: ax}}})
		s := b.String()
		s = strings.TrimPrefix(s, "$((")
		s = strings.TrimSuffix(s, "))")
		return strings.TrimLeft(strings.TrimSpace(s), "\\\n \t")
	}
	syntax.NewPrinter().Print(&b, x)
	return b.String()
}

func isNumWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '@' || c == '_') {
			return false
		}
	}
	return true
}

// boundedCache is a small map that is dropped whole when full: entries are
// cheap to recompute, and untrusted scripts must not grow it without bound.
type boundedCache[V any] struct {
	mu  sync.Mutex
	max int
	m   map[string]V
}

func newBoundedCache[V any](max int) *boundedCache[V] {
	return &boundedCache[V]{max: max}
}

func (c *boundedCache[V]) get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *boundedCache[V]) put(k string, v V) {
	if len(k) > 4096 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]V, 64)
	}
	c.m[k] = v
}

// trailingOperator reports an expression that ends in an operator (1 +),
// and bash's error token: the operator and what follows it.
func trailingOperator(s string) (string, bool) {
	end := len(strings.TrimRight(s, " \t\n"))
	i := end
	for i > 0 && strings.IndexByte("+-*/%<>=&|^!~,?:", s[i-1]) >= 0 {
		i--
	}
	if i == end || strings.TrimSpace(s[:i]) == "" {
		return "", false
	}
	return s[i:], true
}
