package shell

import (
	"errors"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// bash reads the words of a compound assignment as it parses the command,
// and an operator among them (x=(a & b), x=(a; b), x=(a > b)) is a syntax
// error that does not end the script: bash reports it and the line it was
// on, throws away the command list it was reading up to the end of that
// line, sets $? to 1 and reads on from the next line. mvdan's parser
// refuses the whole script ("array element values must be words"), so a
// script it refuses gets those lines replaced by a private command that
// reports bash's two lines when it runs (badArrayStmt); the lines it
// replaces become empty lines, so line numbers stay true.

// badArrayCmd names the private command; no script means U+E001 in a
// command name.
const badArrayCmd = "\uE001syntax"

// maxBadArrays bounds the reparses of one text.
const maxBadArrays = 64

// rewriteBadArrays returns src with each command list holding a bad
// compound assignment replaced as described above, and whether it changed
// anything.
func rewriteBadArrays(src string) (string, bool) {
	if !strings.Contains(src, "(") {
		return src, false
	}
	changed := false
	for range maxBadArrays {
		stmts, err := parseStmtsOnce(src)
		var pe syntax.ParseError
		if err == nil || !errors.As(err, &pe) || pe.Text != "array element values must be words" {
			break
		}
		enc, _ := encodeBytes(src)
		off := int(pe.Pos.Offset())
		if off >= len(enc) {
			break
		}
		tok := operatorAt(enc[off:])
		if j := len(strings.TrimRight(enc[:off], "0123456789")); j < off && strings.ContainsAny(tok[:1], "<>") && (j == 0 || strings.IndexByte(" \t\n(", enc[j-1]) >= 0) {
			tok = enc[j:off] // the parser points past the fd of 2>b; bash names it
		}
		errLine := int(pe.Pos.Line())
		first := badListLine(enc, stmts)
		if first < 1 || first > errLine {
			break
		}
		start := lineOffset(src, first)
		end := lineOffset(src, errLine+1) // after the bad line's newline
		if start < 0 {
			break
		}
		if end < 0 {
			end = len(src)
		}
		text := srcLine(src, errLine)
		repl := strings.Repeat("\n", errLine-first) + badArrayCmd + " " + shellQuote(tok) + " " + shellQuote(text)
		if strings.HasSuffix(src[start:end], "\n") {
			repl += "\n"
		}
		src = src[:start] + repl + src[end:]
		changed = true
	}
	return src, changed
}

// operatorAt is the token bash would name at the start of s: an operator,
// a redirection's file descriptor, or one character.
func operatorAt(s string) string {
	for _, op := range []string{";;&", "&>>", ";;", ";&", "&&", "&>", "||", "|&", ">>", ">&", ">|", "<<<", "<<-", "<<", "<&", "<>"} {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	if n := len(s) - len(strings.TrimLeft(s, "0123456789")); n > 0 {
		return s[:n]
	}
	if s == "" {
		return ""
	}
	return s[:1]
}

// badListLine is the line on which the command list that failed to parse
// begins: where the text after the last complete statement resumes, or,
// when the list goes on on that statement's line (echo x; y=(a & b)), the
// first line of the statements sharing lines with it.
func badListLine(enc string, stmts []*syntax.Stmt) int {
	if len(stmts) == 0 {
		return nextTokenLine(enc, 0)
	}
	last := stmts[len(stmts)-1]
	end, hdoc := stmtEnd(last)
	if hdoc {
		// the delimiter's line ends the statement
		if i := strings.IndexByte(enc[min(end, len(enc)):], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(enc)
		}
		return nextTokenLine(enc, end)
	}
	for i := min(end, len(enc)); i < len(enc); i++ {
		switch enc[i] {
		case ' ', '\t', ';', '&':
			continue
		case '\n', '#':
			return nextTokenLine(enc, i)
		}
		break
	}
	// the failing list shares a line with last: go back over the
	// statements joined by lines
	k := len(stmts) - 1
	for k > 0 {
		e, _ := stmtEnd(stmts[k-1])
		if lineAt(enc, e) < int(stmts[k].Pos().Line()) {
			break
		}
		k--
	}
	return int(stmts[k].Pos().Line())
}

// stmtEnd is the offset after st, here-document bodies included, and
// whether it ends in one.
func stmtEnd(st *syntax.Stmt) (int, bool) {
	end, hdoc := int(st.End().Offset()), false
	syntax.Walk(st, func(n syntax.Node) bool {
		if rd, ok := n.(*syntax.Redirect); ok && rd.Hdoc != nil {
			if e := int(rd.Hdoc.End().Offset()); e >= end {
				end, hdoc = e, true
			}
		}
		return true
	})
	return end, hdoc
}

// nextTokenLine is the line of the first character from i on that is not
// blank, a separator or in a comment.
func nextTokenLine(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', ';', '&':
			i++
			continue
		case '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		}
		break
	}
	return lineAt(s, i)
}

// lineAt is the line (from 1) of offset i of s.
func lineAt(s string, i int) int { return strings.Count(s[:min(i, len(s))], "\n") + 1 }

// lineOffset is the offset where line n (from 1) of s begins, -1 past the
// end.
func lineOffset(s string, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off
}

// shellQuote single-quotes s for the parser.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// badArrayStmt runs the command rewriteBadArrays left, if st is one, and
// reports whether it was: bash's two lines, status 1 without ERR trap or
// errexit (under set -e bash prints the first line and exits with 2).
func (r *runner) badArrayStmt(st *syntax.Stmt) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) != 3 || len(c.Assigns) > 0 || c.Args[0].Lit() != badArrayCmd {
		return false
	}
	var args [2]string
	for i, w := range c.Args[1:] {
		for _, p := range w.Parts { // shellQuote's 'a'\''b'
			switch p := p.(type) {
			case *syntax.SglQuoted:
				args[i] += p.Value
			case *syntax.Lit:
				args[i] += strings.ReplaceAll(p.Value, `\'`, "'")
			default:
				return false
			}
		}
	}
	if r.evalText {
		r.errLabel = "eval" // as syntaxErrorIn
		defer func() { r.errLabel = "" }()
	}
	r.errf("syntax error near unexpected token `%s'", args[0])
	if r.opts[optErrexit] {
		r.status = 2
		r.exiting = true
		return true
	}
	r.errf("`%s'", args[1])
	r.status = 1
	return true
}
