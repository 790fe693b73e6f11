package shell

// bash names an arithmetic error by the whole expression's text (blanks
// as written, expansions done, leading blanks dropped) and the text from
// the token where its evaluator stood to the end: `5 / 0 : division by 0
// (error token is "0 ")`. Here the expression is a tree, so an evaluation
// error that depends on where bash stood (division by 0, a negative
// exponent) is pending until it unwinds to the whole expression, whose
// text is then rebuilt from the tree's positions (arithSource) or is the
// string that was parsed, and the error is placed in it.

import (
	"errors"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// where a pending arithError's token starts
const (
	tokPlaced = iota // expr and tok are final
	tokAt            // at node's first token (after a / or % operator)
	tokAfter         // at the first token after node, or node's last token at the end (**, op=)
)

// placeArith places a pending error of an expression whose text is text
// and whose nodes' offsets are off(pos) in it (-1: not in the text).
func placeArith(err error, text string, off func(syntax.Pos) int) error {
	var ae *arithError
	if !errors.As(err, &ae) || ae.place == tokPlaced || ae.node == nil {
		return err
	}
	at := -1
	switch ae.place {
	case tokAt:
		at = off(ae.node.Pos())
	case tokAfter:
		if e := off(ae.node.End()); e >= 0 {
			at = e
			for at < len(text) && isArithSpace(text[at]) {
				at++
			}
			if at >= len(text) {
				at = off(lastTokenPos(ae.node))
			}
		}
	}
	if at < 0 || at > len(text) {
		return err
	}
	placed := *ae
	placed.place, placed.node = tokPlaced, nil
	placed.expr = strings.TrimLeft(text, " \t")
	lead := len(text) - len(placed.expr)
	placed.tok = text[max(at, lead):]
	return &placed
}

// lastTokenPos is where the last token of x starts.
func lastTokenPos(x syntax.ArithmExpr) syntax.Pos {
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		return lastTokenPos(x.Y)
	case *syntax.UnaryArithm:
		if x.Post {
			return x.OpPos
		}
		return lastTokenPos(x.X)
	case *syntax.ParenArithm:
		return x.Rparen
	}
	return x.Pos()
}

// arithSource rebuilds the text of a parsed expression that ends at end
// (the closing )) of $(( )) or (( ))): its tokens where the positions
// put them, blanks between, simple parameter expansions ($x, ${x}) by
// their values, as bash expands the text before evaluating it. ok is
// false for anything else (a command substitution is not run twice).
func (r *runner) arithSource(x syntax.ArithmExpr, end syntax.Pos) (text string, off func(syntax.Pos) int, ok bool) {
	type piece struct {
		from, to uint // source offsets
		at, n    int  // offset and length in text
	}
	var b strings.Builder
	var pieces []piece
	var last syntax.Pos
	put := func(from, to syntax.Pos, s string) {
		if last.IsValid() && from.Offset() > last.Offset() {
			gap := int(from.Offset() - last.Offset())
			if from.Line() > last.Line() {
				b.WriteString("\n")
				gap--
			}
			b.WriteString(strings.Repeat(" ", max(gap, 0)))
		}
		pieces = append(pieces, piece{from.Offset(), to.Offset(), b.Len(), len(s)})
		b.WriteString(s)
		last = to
	}
	after := func(p syntax.Pos, n int) syntax.Pos {
		return syntax.NewPos(p.Offset()+uint(n), p.Line(), p.Col()+uint(n))
	}
	var walk func(x syntax.ArithmExpr) bool
	walk = func(x syntax.ArithmExpr) bool {
		switch x := x.(type) {
		case *syntax.Word:
			if len(x.Parts) == 1 {
				if pe, isPE := x.Parts[0].(*syntax.ParamExp); isPE && pe.Short && !pe.Dollar.IsValid() && pe.Index != nil {
					name := pe.Param.Value
					put(pe.Param.Pos(), after(pe.Param.End(), 1), name+"[")
					if !walk(pe.Index) {
						return false
					}
					put(pe.Index.End(), pe.End(), "]")
					return true
				}
			}
			var s strings.Builder
			for _, p := range x.Parts {
				switch p := p.(type) {
				case *syntax.Lit:
					s.WriteString(p.Value)
				case *syntax.ParamExp:
					if p.Param == nil || !syntax.ValidName(p.Param.Value) || p.Index != nil || p.Exp != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Excl || p.Length || p.Width || p.IsSet {
						return false
					}
					if r.dynamic(p.Param.Value) || r.dirstackSpecial(p.Param.Value) {
						return false // $RANDOM is not read twice
					}
					if v := r.lookupRef(p.Param.Value); v != nil && v.Set {
						s.WriteString(v.str())
					}
				default:
					return false
				}
			}
			put(x.Pos(), x.End(), s.String())
		case *syntax.BinaryArithm:
			if !walk(x.X) {
				return false
			}
			op := x.Op.String()
			put(x.OpPos, after(x.OpPos, len(op)), op)
			return walk(x.Y)
		case *syntax.UnaryArithm:
			op := x.Op.String()
			opEnd := after(x.OpPos, len(op))
			if x.Post {
				if !walk(x.X) {
					return false
				}
				put(x.OpPos, opEnd, op)
				return true
			}
			put(x.OpPos, opEnd, op)
			return walk(x.X)
		case *syntax.ParenArithm:
			put(x.Lparen, after(x.Lparen, 1), "(")
			if !walk(x.X) {
				return false
			}
			put(x.Rparen, after(x.Rparen, 1), ")")
		default:
			return false
		}
		return true
	}
	if x == nil || !walk(x) {
		return "", nil, false
	}
	if end.IsValid() && last.IsValid() && end.Offset() > last.Offset() {
		put(end, end, "")
	}
	text = b.String()
	off = func(p syntax.Pos) int {
		o := p.Offset()
		for _, pc := range pieces {
			if pc.from == o {
				return pc.at
			}
		}
		for _, pc := range pieces {
			if pc.to == o {
				return pc.at + pc.n
			}
		}
		return -1
	}
	return text, off, true
}

// arithWhole evaluates x, the whole expression of a $(( )) or (( )) that
// ends at end, and places a pending error in its text.
func (r *runner) arithWhole(x syntax.ArithmExpr, end syntax.Pos) (int64, error) {
	n, err := r.arithDepth(x, 0)
	if err != nil {
		err = r.placeSource(err, x, end)
	}
	return r.arithFinish(x, n, err)
}

// placeSource places a pending error of the parsed expression x.
func (r *runner) placeSource(err error, x syntax.ArithmExpr, end syntax.Pos) error {
	var ae *arithError
	if !errors.As(err, &ae) || ae.place == tokPlaced {
		return err
	}
	if text, off, ok := r.arithSource(x, end); ok {
		return placeArith(err, text, off)
	}
	return err
}
