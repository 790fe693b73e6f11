package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// mvdan's parser builds [[ a && b || c ]] as a && (b || c) and
// [[ ! a || b ]] as !(a || b). In bash && binds tighter than ||, both
// group from the left, and ! negates the term after it: (a && b) || c and
// (!a) || b. fixTestPrecedence rebuilds every [[ ]] of a parsed text that
// way, once, so the evaluator, $BASH_COMMAND and declare -f see bash's
// tree (the printer writes the same text for it: no parentheses are added).
func fixTestPrecedence(src string, stmts []*syntax.Stmt) {
	if !strings.Contains(src, "[[") {
		return
	}
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			if tc, ok := n.(*syntax.TestClause); ok {
				tc.X = regroupTest(tc.X)
			}
			return true
		})
	}
}

// regroupTest returns x with its && / || chains grouped as bash groups them.
func regroupTest(x syntax.TestExpr) syntax.TestExpr {
	terms, ops := flattenTest(x)
	if len(ops) == 0 {
		return terms[0]
	}
	// || over && chains, each left to right
	var or, and syntax.TestExpr = nil, terms[0]
	for i, op := range ops {
		if op == syntax.AndTest {
			and = &syntax.BinaryTest{OpPos: and.Pos(), Op: syntax.AndTest, X: and, Y: terms[i+1]}
			continue
		}
		or = joinTest(or, and)
		and = terms[i+1]
	}
	return joinTest(or, and)
}

func joinTest(or, and syntax.TestExpr) syntax.TestExpr {
	if or == nil {
		return and
	}
	return &syntax.BinaryTest{OpPos: or.Pos(), Op: syntax.OrTest, X: or, Y: and}
}

// flattenTest lists the terms of x's && / || chain and the operators
// between them; a ! before the chain belongs to its first term, and a
// parenthesized term is regrouped inside.
func flattenTest(x syntax.TestExpr) ([]syntax.TestExpr, []syntax.BinTestOperator) {
	switch t := x.(type) {
	case *syntax.BinaryTest:
		if t.Op == syntax.AndTest || t.Op == syntax.OrTest {
			lt, lo := flattenTest(t.X)
			rt, ro := flattenTest(t.Y)
			lo = append(lo, t.Op)
			return append(lt, rt...), append(lo, ro...)
		}
	case *syntax.UnaryTest:
		if t.Op == syntax.TsNot {
			terms, ops := flattenTest(t.X)
			terms[0] = &syntax.UnaryTest{OpPos: t.OpPos, Op: syntax.TsNot, X: terms[0]}
			return terms, ops
		}
	case *syntax.ParenTest:
		t.X = regroupTest(t.X)
	}
	return []syntax.TestExpr{x}, nil
}
