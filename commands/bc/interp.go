package bc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/warren-sandbox/warren/commands"
)

// runtimeError ends the current top-level line (GNU bc's "Runtime
// error"); bc goes on with the next one.
type runtimeError struct{ msg string }

func (e *runtimeError) Error() string { return e.msg }

// maxCalls bounds function-call depth: bc's autos are a Go recursion here
// and a Go stack overflow would end the process, so a runaway recursion
// stops with a depth error instead.
const maxCalls = 2000

// maxDim is GNU bc's BC_DIM_MAX: array subscripts are 0 .. maxDim-1.
const maxDim = 16777215

type ctl int

const (
	ctlNone ctl = iota
	ctlBreak
	ctlContinue
	ctlReturn
	ctlHalt
)

type array struct{ m map[int64]num }

type interp struct {
	ctx                 context.Context
	out                 *colWriter
	errw                io.Writer
	flushOut            func()
	scale, ibase, obase int
	last                num
	vars                map[string][]num
	arrs                map[string][]*array
	funcs               map[string]*funcDef
	calls               int
	fname               string // the function running, for messages
	ret                 num
	res                 *commands.Reservation
	stdin               *bufio.Reader
}

func newInterp(ctx context.Context, out *colWriter, errw io.Writer, res *commands.Reservation) *interp {
	return &interp{
		ctx: ctx, out: out, errw: errw, ibase: 10, obase: 10, last: zeroNum,
		vars: map[string][]num{}, arrs: map[string][]*array{}, funcs: map[string]*funcDef{},
		fname: "(main)", res: res,
	}
}

func (in *interp) warn(msg string) {
	in.flushOut()
	fmt.Fprintf(in.errw, "Runtime warning (func=%s): %s\n", in.fname, msg)
}

// charge accounts replacing old by v in a variable or array element.
func (in *interp) charge(old, v num, had bool) error {
	if err := in.res.Grow(v.bytes()); err != nil {
		return err
	}
	if had {
		in.res.Shrink(old.bytes())
	}
	return nil
}

// runLine executes one top-level line of statements.
func (in *interp) runLine(stmts []stmt) (halt bool, err error) {
	in.fname = "(main)"
	for _, s := range stmts {
		c, err := in.exec(s)
		if err != nil {
			return false, err
		}
		if c == ctlHalt {
			return true, nil
		}
	}
	return false, nil
}

func (in *interp) exec(s stmt) (ctl, error) {
	if err := in.ctx.Err(); err != nil {
		return ctlNone, err
	}
	switch s := s.(type) {
	case nil:
		return ctlNone, nil
	case *exprStmt:
		if c, ok := s.x.(*callExpr); ok {
			if fn := in.funcs[c.name]; fn != nil && fn.void {
				_, err := in.call(c)
				return ctlNone, err
			}
		}
		v, err := in.eval(s.x)
		if err != nil {
			return ctlNone, err
		}
		if a, ok := s.x.(*assign); !ok || a.shown {
			in.out.number(format(v, in.obase))
			in.out.WriteString("\n")
			in.last = v
		}
	case *strStmt:
		in.out.WriteString(s.s)
	case *printStmt:
		for _, it := range s.items {
			if it.x == nil {
				in.out.WriteString(unescape(it.s))
				continue
			}
			v, err := in.eval(it.x)
			if err != nil {
				return ctlNone, err
			}
			in.out.number(format(v, in.obase))
			in.last = v
		}
	case *block:
		for _, b := range s.body {
			c, err := in.exec(b)
			if c != ctlNone || err != nil {
				return c, err
			}
		}
	case *ifStmt:
		v, err := in.eval(s.cond)
		if err != nil {
			return ctlNone, err
		}
		if !v.isZero() {
			return in.exec(s.then)
		}
		return in.exec(s.els)
	case *whileStmt:
		for {
			v, err := in.eval(s.cond)
			if err != nil {
				return ctlNone, err
			}
			if v.isZero() {
				return ctlNone, nil
			}
			c, err := in.exec(s.body)
			if err != nil {
				return ctlNone, err
			}
			switch c {
			case ctlBreak:
				return ctlNone, nil
			case ctlReturn, ctlHalt:
				return c, nil
			}
		}
	case *forStmt:
		if s.init != nil {
			if _, err := in.eval(s.init); err != nil {
				return ctlNone, err
			}
		}
		for {
			if s.cond != nil {
				v, err := in.eval(s.cond)
				if err != nil {
					return ctlNone, err
				}
				if v.isZero() {
					return ctlNone, nil
				}
			} else if err := in.ctx.Err(); err != nil {
				return ctlNone, err
			}
			c, err := in.exec(s.body)
			if err != nil {
				return ctlNone, err
			}
			switch c {
			case ctlBreak:
				return ctlNone, nil
			case ctlReturn, ctlHalt:
				return c, nil
			}
			if s.post != nil {
				if _, err := in.eval(s.post); err != nil {
					return ctlNone, err
				}
			}
		}
	case *ctlStmt:
		switch s.kind {
		case "break":
			return ctlBreak, nil
		case "continue":
			return ctlContinue, nil
		default:
			return ctlHalt, nil
		}
	case *returnStmt:
		in.ret = zeroNum
		if s.x != nil {
			v, err := in.eval(s.x)
			if err != nil {
				return ctlNone, err
			}
			in.ret = v
		}
		return ctlReturn, nil
	}
	return ctlNone, nil
}

// unescape applies print's escapes: \a \b \f \n \q \r \t \\.
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'q':
			sb.WriteByte('"')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case '\\':
			sb.WriteByte('\\')
		default:
			sb.WriteByte('\\')
			sb.WriteByte(s[i])
		}
	}
	return sb.String()
}

func boolNum(b bool) num {
	if b {
		return oneNum
	}
	return zeroNum
}

func (in *interp) eval(x expr) (num, error) {
	switch x := x.(type) {
	case *numLit:
		return parseNum(x.lit, in.ibase)
	case *varRef:
		return in.get(x.name), nil
	case *arrRef:
		a, i, err := in.element(x)
		if err != nil {
			return num{}, err
		}
		if v, ok := a.m[i]; ok {
			return v, nil
		}
		return zeroNum, nil
	case *unary:
		v, err := in.eval(x.x)
		if err != nil {
			return num{}, err
		}
		if x.op == "!" {
			return boolNum(v.isZero()), nil
		}
		return num{v: new(big.Int).Neg(v.v), s: v.s}, nil
	case *binary:
		switch x.op {
		case "&&", "||":
			l, err := in.eval(x.l)
			if err != nil {
				return num{}, err
			}
			if x.op == "&&" && l.isZero() {
				return zeroNum, nil
			}
			if x.op == "||" && !l.isZero() {
				return oneNum, nil
			}
			r, err := in.eval(x.r)
			if err != nil {
				return num{}, err
			}
			return boolNum(!r.isZero()), nil
		}
		l, err := in.eval(x.l)
		if err != nil {
			return num{}, err
		}
		r, err := in.eval(x.r)
		if err != nil {
			return num{}, err
		}
		return in.arith(x.op, l, r)
	case *assign:
		var v num
		var err error
		if x.op == "=" {
			v, err = in.eval(x.rhs)
		} else {
			var old, r num
			if old, err = in.eval(x.lhs); err != nil {
				return num{}, err
			}
			if r, err = in.eval(x.rhs); err != nil {
				return num{}, err
			}
			v, err = in.arith(strings.TrimSuffix(x.op, "="), old, r)
		}
		if err != nil {
			return num{}, err
		}
		return v, in.set(x.lhs, v)
	case *incdec:
		old, err := in.eval(x.lhs)
		if err != nil {
			return num{}, err
		}
		v := add(old, intNum(x.delta))
		if err := in.set(x.lhs, v); err != nil {
			return num{}, err
		}
		if x.pre {
			return in.eval(x.lhs) // a special variable may have clamped it
		}
		return old, nil
	case *callExpr:
		return in.call(x)
	case *builtin:
		if x.name == "read" {
			return in.read()
		}
		v, err := in.eval(x.x)
		if err != nil {
			return num{}, err
		}
		switch x.name {
		case "length":
			return intNum(int64(v.length())), nil
		case "scale":
			return intNum(int64(v.s)), nil
		default:
			return sqrtNum(v, in.scale)
		}
	}
	return num{}, fmt.Errorf("bc: internal error: expression %T", x)
}

func (in *interp) arith(op string, l, r num) (num, error) {
	switch op {
	case "+":
		return add(l, r), nil
	case "-":
		return sub(l, r), nil
	case "*":
		return mul(l, r, in.scale)
	case "/":
		return div(l, r, in.scale)
	case "%":
		if r.isZero() {
			return num{}, &runtimeError{"Modulo by zero"}
		}
		return mod(l, r, in.scale)
	case "^":
		if r.s > 0 && r.v.Cmp(new(big.Int).Mul(r.trunc(), pow10(r.s))) != 0 {
			in.warn("non-zero scale in exponent")
		}
		return power(l, r.trunc(), in.scale)
	case "==":
		return boolNum(cmp(l, r) == 0), nil
	case "!=":
		return boolNum(cmp(l, r) != 0), nil
	case "<":
		return boolNum(cmp(l, r) < 0), nil
	case "<=":
		return boolNum(cmp(l, r) <= 0), nil
	case ">":
		return boolNum(cmp(l, r) > 0), nil
	case ">=":
		return boolNum(cmp(l, r) >= 0), nil
	}
	return num{}, fmt.Errorf("bc: internal error: operator %s", op)
}

func (in *interp) get(name string) num {
	switch name {
	case "scale":
		return intNum(int64(in.scale))
	case "ibase":
		return intNum(int64(in.ibase))
	case "obase":
		return intNum(int64(in.obase))
	case "last":
		return in.last
	}
	if st := in.vars[name]; len(st) > 0 {
		return st[len(st)-1]
	}
	return zeroNum
}

func (in *interp) set(lhs expr, v num) error {
	switch l := lhs.(type) {
	case *varRef:
		switch l.name {
		case "scale":
			n := v.int64Of()
			if n < 0 {
				in.warn("negative scale, set to 0")
				n = 0
			}
			if n > MaxDigits {
				return &limitError{fmt.Sprintf("scale too large: %s", format(v, 10))}
			}
			in.scale = int(n)
			return nil
		case "ibase":
			n := v.int64Of()
			switch {
			case n < 2:
				in.warn("ibase too small, set to 2")
				n = 2
			case n > 36:
				in.warn("ibase too large, set to 36")
				n = 36
			}
			in.ibase = int(n)
			return nil
		case "obase":
			n := v.int64Of()
			switch {
			case n < 2:
				in.warn("obase too small, set to 2")
				n = 2
			case n > 2147483647:
				in.warn("obase too large, set to 2147483647")
				n = 2147483647
			}
			in.obase = int(n)
			return nil
		case "last":
			in.last = v
			return nil
		}
		st := in.vars[l.name]
		if len(st) == 0 {
			if err := in.charge(num{}, v, false); err != nil {
				return err
			}
			in.vars[l.name] = []num{v}
			return nil
		}
		if err := in.charge(st[len(st)-1], v, true); err != nil {
			return err
		}
		st[len(st)-1] = v
		return nil
	case *arrRef:
		a, i, err := in.element(l)
		if err != nil {
			return err
		}
		old, had := a.m[i]
		if err := in.charge(old, v, had); err != nil {
			return err
		}
		if !had {
			if err := in.res.Grow(32); err != nil {
				return err
			}
		}
		a.m[i] = v
		return nil
	}
	return fmt.Errorf("bc: internal error: assignment to %T", lhs)
}

// element resolves name[idx] to its array (made on first use) and index.
func (in *interp) element(r *arrRef) (*array, int64, error) {
	iv, err := in.eval(r.idx)
	if err != nil {
		return nil, 0, err
	}
	i := iv.int64Of()
	if i < 0 || i >= maxDim {
		return nil, 0, &runtimeError{fmt.Sprintf("Array %s subscript out of bounds.", r.name)}
	}
	return in.arrayOf(r.name), i, nil
}

func (in *interp) arrayOf(name string) *array {
	st := in.arrs[name]
	if len(st) == 0 {
		a := &array{m: map[int64]num{}}
		in.arrs[name] = []*array{a}
		return a
	}
	return st[len(st)-1]
}

// copyArray is an array passed by value.
func (in *interp) copyArray(a *array) (*array, error) {
	c := &array{m: make(map[int64]num, len(a.m))}
	for k, v := range a.m {
		if err := in.res.Grow(v.bytes() + 32); err != nil {
			return nil, err
		}
		c.m[k] = v
	}
	return c, nil
}

func (in *interp) releaseArray(a *array) {
	for _, v := range a.m {
		in.res.Shrink(v.bytes() + 32)
	}
}

func (in *interp) call(c *callExpr) (num, error) {
	fn := in.funcs[c.name]
	if fn == nil {
		return num{}, &runtimeError{fmt.Sprintf("Function %s not defined.", c.name)}
	}
	if len(c.args) != len(fn.params) {
		return num{}, &runtimeError{"Parameter number mismatch"}
	}
	vals := make([]num, len(c.args))
	arrs := make([]*array, len(c.args))
	for i, a := range c.args {
		p := fn.params[i]
		if p.array != (a.array != "") {
			return num{}, &runtimeError{fmt.Sprintf("Parameter type mismatch parameter %s.", p.name)}
		}
		if p.ref {
			arrs[i] = in.arrayOf(a.array)
			continue
		}
		if p.array {
			cp, err := in.copyArray(in.arrayOf(a.array))
			if err != nil {
				return num{}, err
			}
			arrs[i] = cp
			continue
		}
		v, err := in.eval(a.x)
		if err != nil {
			return num{}, err
		}
		vals[i] = v
	}
	if fn.native != nil {
		return fn.native(in, vals)
	}
	if in.calls >= maxCalls {
		return num{}, &commands.DepthError{Limit: maxCalls}
	}
	if err := in.ctx.Err(); err != nil {
		return num{}, err
	}
	in.calls++
	saved := in.fname
	in.fname = c.name
	// bc's scope is dynamic: a function's parameters and autos hide the
	// caller's variables of the same names from everything it calls.
	locals := append(append([]param{}, fn.params...), fn.autos...)
	for i, p := range locals {
		switch {
		case p.array && i < len(fn.params):
			in.arrs[p.name] = append(in.arrs[p.name], arrs[i])
		case p.array:
			in.arrs[p.name] = append(in.arrs[p.name], &array{m: map[int64]num{}})
		case i < len(fn.params):
			in.res.Grow(vals[i].bytes())
			in.vars[p.name] = append(in.vars[p.name], vals[i])
		default:
			in.vars[p.name] = append(in.vars[p.name], zeroNum)
		}
	}
	defer func() {
		for _, p := range locals {
			if p.array {
				st := in.arrs[p.name]
				if !p.ref { // a reference's elements stay the caller's
					in.releaseArray(st[len(st)-1])
				}
				in.arrs[p.name] = st[:len(st)-1]
				continue
			}
			st := in.vars[p.name]
			in.res.Shrink(st[len(st)-1].bytes())
			in.vars[p.name] = st[:len(st)-1]
		}
		in.calls--
		in.fname = saved
	}()
	in.ret = zeroNum
	for _, s := range fn.body {
		ct, err := in.exec(s)
		if err != nil {
			return num{}, err
		}
		if ct == ctlReturn {
			return in.ret, nil
		}
		if ct == ctlHalt {
			return num{}, errHalt
		}
	}
	return zeroNum, nil
}

// errHalt is halt inside a function: it ends bc like halt at top level.
var errHalt = errors.New("halt")

// read is read(): a number from standard input.
func (in *interp) read() (num, error) {
	if in.stdin == nil {
		return num{}, &runtimeError{"read() is not available here"}
	}
	line, err := in.stdin.ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "" && err != nil {
		return num{}, &runtimeError{"Read error"}
	}
	neg := strings.HasPrefix(line, "-")
	v, perr := parseNum(strings.TrimPrefix(line, "-"), in.ibase)
	if perr != nil || !validLiteral(strings.TrimPrefix(line, "-")) {
		return num{}, &runtimeError{"Read error"}
	}
	if neg {
		v = num{v: new(big.Int).Neg(v.v), s: v.s}
	}
	return v, nil
}

func validLiteral(s string) bool {
	if s == "" || strings.Count(s, ".") > 1 || s == "." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c == '.') {
			return false
		}
	}
	return true
}

// colWriter writes bc's output, breaking numbers longer than the line
// (BC_LINE_LENGTH, default 70) with a backslash-newline as GNU bc does.
type colWriter struct {
	w       *bufio.Writer
	col     int
	lineLen int  // 0: never break
	wide    bool // dc's lines hold one character more than bc's
}

func (c *colWriter) WriteString(s string) {
	c.w.WriteString(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		c.col = len(s) - i - 1
	} else {
		c.col += len(s)
	}
}

func (c *colWriter) number(s string) {
	if c.lineLen == 0 {
		c.WriteString(s)
		return
	}
	for i := 0; i < len(s); i++ {
		limit := c.lineLen - 2
		if c.wide {
			limit++
		}
		if c.col >= limit {
			c.w.WriteString("\\\n")
			c.col = 0
		}
		c.w.WriteByte(s[i])
		c.col++
	}
}
