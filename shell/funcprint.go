package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// bashLayout prints commands the way bash's declare -f, type and set
// print a function body: one command a line indented four spaces a level,
// ";" between commands and after the bodies of if, while and for, "do" of
// for and select on its own line, case items over several lines,
// subshells inline, redirections after the words with the default
// descriptor of a duplication spelled out, and here-document bodies after
// the line that needs them, unindented so the text reads back the same.
// Words and expressions are the parser's printer's.
type bashLayout struct {
	b     strings.Builder
	pr    *syntax.Printer
	docs  []*syntax.Redirect // here-documents waiting for the end of the line
	step  int                // spaces a level: 4, 1 in an exported function
	ndocs int                // here-documents queued so far
	// outsideFunc prints brace groups on one line, as bash does outside
	// a function definition
	outsideFunc bool
}

func newBashLayout() *bashLayout {
	return &bashLayout{pr: syntax.NewPrinter(), step: 4}
}

func (p *bashLayout) node(n syntax.Node) {
	switch x := n.(type) {
	case *syntax.Word:
		if hasCmdSubst(x) {
			p.parts(x.Parts)
			return
		}
	case *syntax.Assign:
		if x.Array == nil && x.Index == nil && x.Value != nil && hasCmdSubst(x.Value) {
			if x.Naked {
				p.node(x.Value)
				return
			}
			op := "="
			if x.Append {
				op = "+="
			}
			p.str(x.Name.Value + op)
			p.node(x.Value)
			return
		}
	case *syntax.DeclClause:
		p.str(x.Variant.Value)
		for _, a := range x.Args {
			p.str(" ")
			if a.Naked && a.Name != nil && a.Value == nil {
				p.str(a.Name.Value)
			} else {
				p.node(a)
			}
		}
		return
	}
	p.printed(n)
}

// printed writes n as the parser's printer prints it, without its line
// continuations.
func (p *bashLayout) printed(n syntax.Node) {
	var b strings.Builder
	p.pr.Print(&b, n)
	p.b.WriteString(strings.ReplaceAll(b.String(), "\\\n", ""))
}

// hasCmdSubst reports a command substitution in w: bash prints its
// commands in its own layout, and backquotes as written, where the
// printer would not.
func hasCmdSubst(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.CmdSubst); ok {
			found = true
		}
		return !found
	})
	return found
}

// parts prints word parts one by one, keeping backquotes.
func (p *bashLayout) parts(ps []syntax.WordPart) {
	for _, part := range ps {
		switch x := part.(type) {
		case *syntax.Lit:
			p.str(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				p.str("$")
			}
			p.str(`"`)
			p.parts(x.Parts)
			p.str(`"`)
		case *syntax.CmdSubst:
			in := newBashLayout()
			in.inline(x.Stmts)
			if in.ndocs > 0 {
				// here-documents inside: the printer's form, printed
				// directly (node would come back here)
				p.printed(&syntax.Word{Parts: []syntax.WordPart{x}})
				continue
			}
			text := in.b.String()
			if x.Backquotes {
				p.str("`" + strings.NewReplacer("\\", "\\\\", "`", "\\`").Replace(text) + "`")
				continue
			}
			if strings.HasPrefix(text, "(") {
				text = " " + text // $( ( a )) is not arithmetic
			}
			p.str("$(" + text + ")")
		default:
			// ${x[$(cmd)]} and the like: the printer's form (node would
			// come back here)
			p.printed(&syntax.Word{Parts: []syntax.WordPart{part}})
		}
	}
}

func (p *bashLayout) str(s string) { p.b.WriteString(s) }

func (p *bashLayout) nl(ind int) {
	p.b.WriteByte('\n')
	p.b.WriteString(strings.Repeat(" ", ind))
}

// function prints "name () " and the body as a brace group, as bash
// does for any function.
func (p *bashLayout) function(name string, body *syntax.Stmt, ind int, keyword bool) {
	if keyword {
		p.str("function ")
	}
	p.str(name + " () ")
	p.nl(ind)
	blk, ok := body.Cmd.(*syntax.Block)
	var stmts []*syntax.Stmt
	if ok {
		stmts = blk.Stmts
	} else {
		// ( list ) and other bodies: bash shows them inside braces
		stmts = []*syntax.Stmt{body}
	}
	p.str("{ ")
	p.nl(ind + p.step)
	p.list(stmts, ind+p.step)
	p.flushDocs()
	p.nl(ind)
	p.str("}")
	if ok {
		p.redirs(body.Redirs, true)
	}
}

// list prints statements separated as bash separates them; ind is the
// indentation of each new line.
//
// A command with a here-document in it (its own, or in a body it holds)
// ends its line without the ";", as bash prints it.
func (p *bashLayout) list(stmts []*syntax.Stmt, ind int) (lastHadDoc bool) {
	for i, st := range stmts {
		before := p.ndocs
		p.stmt(st, ind)
		hadDoc := p.ndocs != before
		last := i == len(stmts)-1
		switch {
		case st.Background && last:
			p.str(" &")
		case st.Background:
			p.str(" & ")
		case last:
			lastHadDoc = hadDoc
		case hadDoc:
			p.flushDocs()
			p.nl(ind)
		default:
			p.str(";")
			p.nl(ind)
		}
	}
	return lastHadDoc
}

// flushDocs ends the line with the waiting here-document bodies.
func (p *bashLayout) flushDocs() {
	if len(p.docs) == 0 {
		return
	}
	p.b.WriteByte('\n')
	for _, r := range p.docs {
		if r.Hdoc != nil {
			var b strings.Builder
			for _, part := range r.Hdoc.Parts {
				if l, ok := part.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				} else {
					p.pr.Print(&b, &syntax.Word{Parts: []syntax.WordPart{part}})
				}
			}
			body := b.String()
			if r.Op == syntax.DashHdoc {
				// bash keeps the body with its leading tabs removed
				lines := strings.SplitAfter(body, "\n")
				for i, l := range lines {
					lines[i] = strings.TrimLeft(l, "\t")
				}
				body = strings.Join(lines, "")
			}
			p.str(body)
		}
		p.str(hdocDelim(r.Word) + "\n")
	}
	p.docs = nil
}

// hdocDelim is a here-document's delimiter without its quotes.
func hdocDelim(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(x.Value, "\\", ""))
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		}
	}
	return b.String()
}

func (p *bashLayout) stmt(st *syntax.Stmt, ind int) {
	if st.Negated {
		p.str("! ")
	}
	if st.Cmd != nil {
		p.command(st.Cmd, ind)
	}
	// a redirection alone ($(< file)) has nothing before it to space from
	p.redirs(st.Redirs, st.Cmd != nil)
}

func (p *bashLayout) redirs(rs []*syntax.Redirect, lead bool) {
	for i, r := range rs {
		if i > 0 || lead {
			p.str(" ")
		}
		n := ""
		if r.N != nil {
			n = r.N.Value
		} else {
			switch r.Op {
			case syntax.DplOut:
				n = "1"
			case syntax.DplIn, syntax.RdrInOut:
				n = "0"
			}
		}
		p.str(n + r.Op.String())
		switch r.Op {
		case syntax.DplIn, syntax.DplOut, syntax.Hdoc, syntax.DashHdoc:
		default:
			p.str(" ")
		}
		p.node(r.Word)
		if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
			p.docs = append(p.docs, r)
			p.ndocs++
		}
	}
}

func (p *bashLayout) words(ws []*syntax.Word) {
	for i, w := range ws {
		if i > 0 {
			p.str(" ")
		}
		p.node(w)
	}
}

func (p *bashLayout) inline(stmts []*syntax.Stmt) {
	for i, st := range stmts {
		if i > 0 {
			p.str("; ")
		}
		p.stmt(st, 0)
		if st.Background {
			p.str(" &")
		}
	}
}

// body prints a loop's or branch's commands one level in, and the ";"
// bash ends them with.
func (p *bashLayout) body(stmts []*syntax.Stmt, ind int) {
	p.nl(ind + p.step)
	hadDoc := p.list(stmts, ind+p.step)
	p.flushDocs()
	if !hadDoc {
		p.str(";")
	}
	p.nl(ind)
}

func (p *bashLayout) command(cmd syntax.Command, ind int) {
	switch c := cmd.(type) {
	case *syntax.CallExpr:
		for i, a := range c.Assigns {
			if i > 0 {
				p.str(" ")
			}
			p.node(a)
		}
		if len(c.Assigns) > 0 && len(c.Args) > 0 {
			p.str(" ")
		}
		p.words(c.Args)
	case *syntax.Block:
		if p.outsideFunc {
			// bash's print_group_command: on one line outside a
			// function definition (a job's text)
			p.str("{ ")
			p.inline(c.Stmts)
			p.flushDocs()
			if n := len(c.Stmts); n > 0 && c.Stmts[n-1].Background {
				p.str(" }")
			} else {
				p.str("; }")
			}
			return
		}
		p.str("{ ")
		p.nl(ind + p.step)
		p.list(c.Stmts, ind+p.step)
		p.flushDocs()
		p.nl(ind)
		p.str("}")
	case *syntax.Subshell:
		p.str("( ")
		if p.outsideFunc {
			p.inline(c.Stmts)
		} else {
			p.list(c.Stmts, ind)
		}
		p.flushDocs() // the bodies come before the )
		p.str(" )")
	case *syntax.BinaryCmd:
		p.stmt(c.X, ind)
		p.str(" " + c.Op.String() + " ")
		p.stmt(c.Y, ind)
	case *syntax.IfClause:
		p.ifClause(c, ind)
	case *syntax.WhileClause:
		if c.Until {
			p.str("until ")
		} else {
			p.str("while ")
		}
		p.inline(c.Cond)
		p.str("; do")
		p.body(c.Do, ind)
		p.str("done")
	case *syntax.ForClause:
		if c.Select {
			p.str("select ")
		} else {
			p.str("for ")
		}
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			p.str(l.Name.Value + " in ")
			if !l.InPos.IsValid() && len(l.Items) == 0 {
				p.str(`"$@"`)
			} else {
				p.words(l.Items)
			}
			p.str(";")
		case *syntax.CStyleLoop:
			p.str("((")
			for i, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				if i > 0 {
					p.str("; ")
				}
				if x != nil {
					p.str(arithSpaced(x))
				}
			}
			p.str("))")
		}
		p.nl(ind)
		p.str("do")
		p.body(c.Do, ind)
		p.str("done")
	case *syntax.CaseClause:
		p.str("case ")
		p.node(c.Word)
		p.str(" in ")
		for _, it := range c.Items {
			p.nl(ind + p.step)
			for i, w := range it.Patterns {
				if i > 0 {
					p.str(" | ")
				}
				p.node(w)
			}
			p.str(")")
			p.b.WriteByte('\n')
			if len(it.Stmts) > 0 {
				p.str(strings.Repeat(" ", ind+2*p.step))
				p.list(it.Stmts, ind+2*p.step)
				p.flushDocs()
			}
			p.nl(ind + p.step)
			p.str(it.Op.String())
		}
		p.nl(ind)
		p.str("esac")
	case *syntax.ArithmCmd:
		p.str(arithCmdText(c))
	case *syntax.FuncDecl:
		p.function(c.Name.Value, c.Body, ind, true)
	case *syntax.TimeClause:
		p.str("time ")
		if c.PosixFormat {
			p.str("-p ")
		}
		if c.Stmt != nil {
			p.stmt(c.Stmt, ind)
		}
	case *syntax.CoprocClause:
		p.str("coproc ")
		if c.Name != nil {
			p.node(c.Name)
		} else {
			p.str("COPROC")
		}
		p.str(" ")
		p.stmt(c.Stmt, ind)
	default:
		// [[ ]], declarations, let: the printer's one-line form
		p.node(cmd)
	}
}

// ifClause prints if/then/else/fi; an elif is an if inside the else, as
// bash keeps it.
func (p *bashLayout) ifClause(c *syntax.IfClause, ind int) {
	p.str("if ")
	p.inline(c.Cond)
	p.str("; then")
	p.body(c.Then, ind)
	if e := c.Else; e != nil {
		p.str("else")
		if e.ThenPos.IsValid() {
			p.nl(ind + p.step)
			p.ifClause(e, ind+p.step)
			p.str(";")
			p.nl(ind)
		} else {
			p.body(e.Then, ind)
		}
	}
	p.str("fi")
}
