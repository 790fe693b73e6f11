package shell

// $_ after a declaration command (bash sets it as for any simple command).

import "mvdan.cc/sh/v3/syntax"

// declLastArg is $_ after a declaration command: its last word as
// expanded (name=value; an array's or a bare name alone), or the last
// option, or the command's name.
func (r *runner) declLastArg(variant string, flags []string, operands []*syntax.Assign) string {
	if n := len(operands); n > 0 {
		as := operands[n-1]
		name := ""
		if as.Name != nil {
			name = as.Name.Value
		}
		if as.Naked || as.Array != nil || as.Value == nil {
			return name
		}
		if lit, ok := r.pureWordText(as.Value); ok {
			if as.Append {
				return name + "+=" + lit
			}
			return name + "=" + lit
		}
		return name
	}
	if n := len(flags); n > 0 {
		return flags[n-1]
	}
	return variant
}

// pureWordText expands an assigned word again when that has no effect
// (no substitution, no ${x:=y}); ok is false otherwise.
func (r *runner) pureWordText(w *syntax.Word) (string, bool) {
	pure := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			pure = false
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) || r.dynamic(n.Param.Value) {
				pure = false
			}
		}
		return pure
	})
	if !pure {
		return "", false
	}
	return r.assignLiteral(w)
}
