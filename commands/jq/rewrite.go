package jq

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"sync"

	"github.com/itchyny/gojq"

	"github.com/warren-sandbox/warren/commands"
)

const (
	// maxFilterNesting bounds bracket nesting in a filter: the compiler
	// and our own AST visitors recurse once per level or more.
	maxFilterNesting = 1000
	// maxFilterTerms bounds the terms and operators of a filter: 1+1+...
	// parses into a tree as deep as it is long.
	maxFilterTerms = 50000
	// mulFunc is what a * b is rewritten to call.
	mulFunc = "_warren_mul"
)

// checkFilter refuses a filter nested deeper than is safe to recurse over,
// before gojq parses it. String literals are skipped.
func checkFilter(src string) error {
	depth, terms := 0, 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '(' || c == '[' || c == '{':
			if depth++; depth > maxFilterNesting {
				return &commands.DepthError{Limit: maxFilterNesting}
			}
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if terms++; terms > maxFilterTerms {
				return &commands.DepthError{Limit: maxFilterTerms}
			}
			for i+1 < len(src) && isWord(src[i]) && isWord(src[i+1]) {
				i++
			}
		}
	}
	return nil
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// rewriteMul turns every a * b of the filter into _warren_mul(a; b), so
// that the one cheap way to make a huge value in a single instruction
// ("x" * 1e9, big-number squaring) is charged before it is made.
func rewriteMul(q *gojq.Query) {
	visitQueries(reflect.ValueOf(q), func(e *gojq.Query) {
		if e.Op != gojq.OpMul || e.Left == nil || e.Right == nil {
			return
		}
		l, r := e.Left, e.Right
		e.Left, e.Right, e.Op = nil, nil, 0
		e.Term = &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: mulFunc, Args: []*gojq.Query{l, r}}}
	})
}

// visitQueries calls fn for every *gojq.Query under v, children first.
func visitQueries(v reflect.Value, fn func(*gojq.Query)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		visitQueries(v.Elem(), fn)
		if q, ok := v.Interface().(*gojq.Query); ok {
			fn(q)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				visitQueries(v.Field(i), fn)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			visitQueries(v.Index(i), fn)
		}
	}
}

var errRepeatTooLarge = errors.New("repeat string result too large")

// mul is a * b with the size of a string or big-number result charged
// (held only until the meter's next walk counts the value itself).
func mul(res *commands.Reservation, l, r any) any {
	switch l := l.(type) {
	case int:
		if r, ok := r.(int); ok && r != 0 && r != -1 {
			if v := l * r; v/r == l {
				return v
			}
		}
		if r, ok := r.(float64); ok {
			return float64(l) * r
		}
	case float64:
		switch r := r.(type) {
		case float64:
			return l * r
		case int:
			return l * float64(r)
		}
	}
	if s, ok := l.(string); ok {
		if n, ok := toFloat(r); ok {
			return repeat(res, s, n)
		}
	}
	if s, ok := r.(string); ok {
		if n, ok := toFloat(l); ok {
			return repeat(res, s, n)
		}
	}
	if bl, br := bits(l), bits(r); bl+br > 1<<16 {
		// The product, and the multiplication's scratch space.
		if err := fits(res, int64(bl+br)/2); err != nil {
			return err
		}
	}
	return delegateMul(l, r)
}

func repeat(res *commands.Reservation, s string, n float64) any {
	if n < 0 || math.IsNaN(n) {
		return nil
	}
	c := int(min(n, math.MaxInt32))
	if uint64(len(s))*uint64(c) >= math.MaxInt32 {
		return errRepeatTooLarge
	}
	if err := fits(res, int64(len(s))*int64(c)); err != nil {
		return err
	}
	return strings.Repeat(s, c)
}

// fits reports whether n more bytes fit the budget now.
func fits(res *commands.Reservation, n int64) error {
	if err := res.Grow(n); err != nil {
		return err
	}
	res.Shrink(n)
	return nil
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f, true
	}
	return 0, false
}

func bits(v any) int {
	if b, ok := v.(*big.Int); ok {
		return b.BitLen()
	}
	return 64
}

var mulCode = sync.OnceValue(func() *gojq.Code {
	q, err := gojq.Parse("$l * $r")
	if err != nil {
		panic(err)
	}
	c, err := gojq.Compile(q, gojq.WithVariables([]string{"$l", "$r"}))
	if err != nil {
		panic(err)
	}
	return c
})

// delegateMul is gojq's own a * b, for the types mul leaves to it.
func delegateMul(l, r any) any {
	v, _ := mulCode().Run(nil, l, r).Next()
	return v
}
