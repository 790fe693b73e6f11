package coreutils

// expr: the POSIX expression evaluator, with big integers.

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/posixre"
	"github.com/warren-sandbox/warren/commands/internal/recache"
)

// Expr is expr(1).
func Expr(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	args := inv.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		r.usage(fmt.Errorf("missing operand"), 2)
		return 2
	}
	p := &exprParser{args: args}
	v, err := p.or()
	if err == nil && p.pos < len(p.args) {
		err = &exprErr{2, fmt.Sprintf("syntax error: unexpected argument %s", quoteGNU(p.args[p.pos]))}
	}
	if err != nil {
		e := err.(*exprErr)
		r.errorf("%s", e.msg)
		r.status = e.code
		return r.done()
	}
	r.out.WriteString(v.String())
	r.out.WriteByte('\n')
	if v.null() {
		r.status = 1
	}
	return r.done()
}

type exprErr struct {
	code int
	msg  string
}

func (e *exprErr) Error() string { return e.msg }

type exprVal struct {
	s     string
	n     *big.Int
	isNum bool
}

func (v exprVal) String() string {
	if v.isNum {
		return v.n.String()
	}
	return v.s
}

func (v exprVal) null() bool {
	if v.isNum {
		return v.n.Sign() == 0
	}
	if v.s == "" {
		return true
	}
	// A string that looks like zero counts as null too.
	t := strings.TrimLeft(v.s, "-")
	return strings.Trim(t, "0") == "" && t != "" && len(t) > 0 && !strings.HasPrefix(v.s, "--")
}

func (v exprVal) toInt() (*big.Int, bool) {
	if v.isNum {
		return v.n, true
	}
	s := strings.TrimSpace(v.s)
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || s == "" || strings.HasPrefix(s, "+") {
		return nil, false
	}
	return n, true
}

type exprParser struct {
	args []string
	pos  int
}

func (p *exprParser) peek() string {
	if p.pos < len(p.args) {
		return p.args[p.pos]
	}
	return ""
}

func numVal(n *big.Int) exprVal { return exprVal{n: n, isNum: true} }

func (p *exprParser) binary(ops []string, next func() (exprVal, error), apply func(op string, a, b exprVal) (exprVal, error)) (exprVal, error) {
	a, err := next()
	if err != nil {
		return a, err
	}
	for p.pos < len(p.args) {
		op := p.args[p.pos]
		found := false
		for _, o := range ops {
			if o == op {
				found = true
			}
		}
		if !found {
			break
		}
		p.pos++
		b, err := next()
		if err != nil {
			return b, err
		}
		if a, err = apply(op, a, b); err != nil {
			return a, err
		}
	}
	return a, nil
}

func (p *exprParser) or() (exprVal, error) {
	return p.binary([]string{"|"}, p.and, func(_ string, a, b exprVal) (exprVal, error) {
		if !a.null() {
			return a, nil
		}
		if !b.null() {
			return b, nil
		}
		return numVal(big.NewInt(0)), nil
	})
}

func (p *exprParser) and() (exprVal, error) {
	return p.binary([]string{"&"}, p.cmp, func(_ string, a, b exprVal) (exprVal, error) {
		if a.null() || b.null() {
			return numVal(big.NewInt(0)), nil
		}
		return a, nil
	})
}

func (p *exprParser) cmp() (exprVal, error) {
	return p.binary([]string{"<", "<=", "=", "==", "!=", ">=", ">"}, p.add, func(op string, a, b exprVal) (exprVal, error) {
		var c int
		x, okx := a.toInt()
		y, oky := b.toInt()
		if okx && oky {
			c = x.Cmp(y)
		} else {
			c = strings.Compare(a.String(), b.String())
		}
		res := false
		switch op {
		case "<":
			res = c < 0
		case "<=":
			res = c <= 0
		case "=", "==":
			res = c == 0
		case "!=":
			res = c != 0
		case ">=":
			res = c >= 0
		case ">":
			res = c > 0
		}
		if res {
			return numVal(big.NewInt(1)), nil
		}
		return numVal(big.NewInt(0)), nil
	})
}

func (p *exprParser) arith(op string, a, b exprVal) (exprVal, error) {
	x, okx := a.toInt()
	y, oky := b.toInt()
	if !okx || !oky {
		return exprVal{}, &exprErr{2, "non-integer argument"}
	}
	z := new(big.Int)
	switch op {
	case "+":
		z.Add(x, y)
	case "-":
		z.Sub(x, y)
	case "*":
		z.Mul(x, y)
	case "/", "%":
		if y.Sign() == 0 {
			return exprVal{}, &exprErr{2, "division by zero"}
		}
		if op == "/" {
			z.Quo(x, y)
		} else {
			z.Rem(x, y)
		}
	}
	return numVal(z), nil
}

func (p *exprParser) add() (exprVal, error) {
	return p.binary([]string{"+", "-"}, p.mul, p.arith)
}

func (p *exprParser) mul() (exprVal, error) {
	return p.binary([]string{"*", "/", "%"}, p.match, p.arith)
}

func (p *exprParser) match() (exprVal, error) {
	return p.binary([]string{":"}, p.primary, func(_ string, a, b exprVal) (exprVal, error) {
		return exprMatch(a.String(), b.String())
	})
}

func exprMatch(s, pat string) (exprVal, error) {
	g, err := posixre.Translate(pat, false)
	if err != nil {
		return exprVal{}, &exprErr{2, err.Error()}
	}
	cre, err := regexpCompile("^(?:" + g + ")")
	if err != nil {
		return exprVal{}, &exprErr{2, err.Error()}
	}
	m := cre.FindStringSubmatchIndex(s)
	if cre.NumSubexp() > 0 {
		if m == nil || m[2] < 0 {
			return exprVal{s: ""}, nil
		}
		return exprVal{s: s[m[2]:m[3]]}, nil
	}
	if m == nil {
		return numVal(big.NewInt(0)), nil
	}
	return numVal(big.NewInt(int64(utf8.RuneCountInString(s[:m[1]])))), nil
}

func (p *exprParser) primary() (exprVal, error) {
	if p.pos >= len(p.args) {
		if p.pos > 0 {
			return exprVal{}, &exprErr{2, fmt.Sprintf("syntax error: missing argument after %s", quoteGNU(p.args[p.pos-1]))}
		}
		return exprVal{}, &exprErr{2, "syntax error"}
	}
	tok := p.args[p.pos]
	p.pos++
	need := func(n int) ([]exprVal, error) {
		var out []exprVal
		for i := 0; i < n; i++ {
			v, err := p.primary()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	switch tok {
	case "(":
		v, err := p.or()
		if err != nil {
			return v, err
		}
		if p.peek() != ")" {
			if p.pos >= len(p.args) {
				return v, &exprErr{2, fmt.Sprintf("syntax error: expecting ')' after %s", quoteGNU(p.args[p.pos-1]))}
			}
			return v, &exprErr{2, fmt.Sprintf("syntax error: expecting ')' instead of %s", quoteGNU(p.peek()))}
		}
		p.pos++
		return v, nil
	case "+":
		if p.pos < len(p.args) {
			p.pos++
			return exprVal{s: p.args[p.pos-1]}, nil
		}
	case "length":
		a, err := need(1)
		if err != nil {
			return exprVal{}, err
		}
		return numVal(big.NewInt(int64(utf8.RuneCountInString(a[0].String())))), nil
	case "match":
		a, err := need(2)
		if err != nil {
			return exprVal{}, err
		}
		return exprMatch(a[0].String(), a[1].String())
	case "substr":
		a, err := need(3)
		if err != nil {
			return exprVal{}, err
		}
		s := []rune(a[0].String())
		pos, ok1 := a[1].toInt()
		n, ok2 := a[2].toInt()
		if !ok1 || !ok2 || pos.Sign() <= 0 || n.Sign() <= 0 || pos.Int64() > int64(len(s)) {
			return exprVal{s: ""}, nil
		}
		st := pos.Int64() - 1
		end := min(st+n.Int64(), int64(len(s)))
		return exprVal{s: string(s[st:end])}, nil
	case "index":
		a, err := need(2)
		if err != nil {
			return exprVal{}, err
		}
		s := []rune(a[0].String())
		for i, c := range s {
			if strings.ContainsRune(a[1].String(), c) {
				return numVal(big.NewInt(int64(i + 1))), nil
			}
		}
		return numVal(big.NewInt(0)), nil
	}
	if n, ok := new(big.Int).SetString(tok, 10); ok && !strings.HasPrefix(tok, "+") {
		return numVal(n), nil
	}
	return exprVal{s: tok}, nil
}

// regexpCompile compiles s for POSIX leftmost-longest matching, through the
// shared bounded cache (the result must not be modified).
func regexpCompile(s string) (*regexp.Regexp, error) {
	return recache.CompileLongest(s)
}
