package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// $BASH_COMMAND is the simple command running, or about to run for a
// DEBUG trap; while a trap runs it stays the command that set the trap
// off. stmt keeps a pointer to the statement (cheap: most Runs never read
// it) and the text is made only when the variable is expanded.

// commandText reports whether cmd is a command bash names in
// $BASH_COMMAND (a simple command, [[ ]], (( )), let, a declaration, a
// subshell).
func commandText(cmd syntax.Command) bool {
	switch cmd.(type) {
	case *syntax.CallExpr, *syntax.DeclClause, *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause, *syntax.Subshell:
		return true
	}
	return false
}

// bashCommand prints the current command as bash does: words as written,
// one blank between them, redirections with a blank after the operator
// (`2> /dev/null`, but `2>&1`), here-documents after the line.
func (r *runner) bashCommand() string {
	st := r.curStmt
	if st == nil {
		return ""
	}
	var b strings.Builder
	pr := syntax.NewPrinter()
	word := func(w *syntax.Word) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		pr.Print(&b, w)
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			pr.Print(&b, as)
		}
		for _, w := range c.Args {
			word(w)
		}
	case *syntax.DeclClause:
		b.WriteString(c.Variant.Value)
		for _, as := range c.Args {
			b.WriteByte(' ')
			pr.Print(&b, as)
		}
	case *syntax.Subshell:
		// bash writes ( list ) with blanks inside
		b.WriteString("( ")
		for i, s := range c.Stmts {
			if i > 0 {
				b.WriteString("; ")
			}
			pr.Print(&b, s)
		}
		b.WriteString(" )")
	case *syntax.ArithmCmd:
		b.WriteString(arithCmdText(c))
	default:
		pr.Print(&b, st.Cmd)
	}
	var docs []*syntax.Redirect
	for _, rd := range st.Redirs {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if rd.N != nil {
			b.WriteString(rd.N.Value)
		}
		b.WriteString(rd.Op.String())
		switch rd.Op {
		case syntax.DplIn, syntax.DplOut, syntax.Hdoc, syntax.DashHdoc:
		default:
			b.WriteByte(' ')
		}
		pr.Print(&b, rd.Word)
		if (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc) && rd.Hdoc != nil {
			docs = append(docs, rd)
		}
	}
	for _, rd := range docs {
		b.WriteByte('\n')
		pr.Print(&b, rd.Hdoc)
		b.WriteString(strings.Trim(wordText(rd.Word), `'"\`) + "\n")
	}
	return b.String()
}
