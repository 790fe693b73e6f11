package shell

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Aliases are expanded when a command is read, as bash does, not when it
// runs: bash reads a script one complete command (the lines up to the
// newline that ends it) at a time, expands the aliases in it, then runs it.
// So an alias defined on one line applies from the next line on, a line
// that says `ll; unalias ll; ll` runs ll twice, a function body keeps the
// aliases of the moment it was defined, and `alias hi='echo '` (a value
// ending in a blank) makes the next word an alias position too.
//
// mvdan's parser has no alias expansion, so the lines of such a command are
// parsed (from the cache, as before), the words to replace are found in the
// tree, the source text is spliced and parsed again. The cost is paid only
// by a command that uses an alias while expand_aliases is on.

// maxAliasGrowth bounds how much longer alias expansion may make one
// command's text (aliases may expand to aliases and appear many times).
const maxAliasGrowth = 4 << 20

// aliasing reports whether commands read now get alias expansion.
func (r *runner) aliasing() bool {
	return len(r.aliases) > 0 && r.shopts["expand_aliases"]
}

// aliasEdit replaces src[start:end] with text.
type aliasEdit struct {
	start, end int
	text       string
}

// aliasEdits finds the alias words of stmts (command words, and the words
// after an alias whose value ends in a blank).
func (r *runner) aliasEdits(stmts []*syntax.Stmt) []aliasEdit {
	var edits []aliasEdit
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst:
				// bash expands these bodies when they run (substAliases)
				return false
			}
			c, ok := n.(*syntax.CallExpr)
			if !ok {
				return true
			}
			for i := 0; i < len(c.Args); i++ {
				name := aliasWord(c.Args[i])
				if _, ok := r.aliases[name]; !ok || name == "" {
					break
				}
				text := r.aliasText(name, map[string]bool{})
				edits = append(edits, aliasEdit{int(c.Args[i].Pos().Offset()), int(c.Args[i].End().Offset()), text})
				if !strings.HasSuffix(text, " ") && !strings.HasSuffix(text, "\t") {
					break
				}
			}
			return true
		})
	}
	return edits
}

// aliasWord is w's text when w is one unquoted literal (quoting any part of
// a word keeps it from being an alias), else "".
func aliasWord(w *syntax.Word) string {
	if len(w.Parts) != 1 {
		return ""
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(l.Value, "\\/=") {
		return ""
	}
	return l.Value
}

// aliasText is alias name's value with its own first word expanded when
// that is another alias not yet expanded on the way (seen ends the
// recursion of `alias ls='ls -F'`).
func (r *runner) aliasText(name string, seen map[string]bool) string {
	v := r.aliases[name]
	seen[name] = true
	i := 0
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	j := i
	for j < len(v) && !strings.ContainsRune(" \t\n;&|<>()'\"\\$`=/", rune(v[j])) {
		j++
	}
	if j > i && (j == len(v) || strings.ContainsRune(" \t\n;&|<>()", rune(v[j]))) {
		if w := v[i:j]; !seen[w] {
			if _, ok := r.aliases[w]; ok {
				v = v[:i] + r.aliasText(w, seen) + v[j:]
			}
		}
	}
	return v
}

// aliasGroup is the end of the command that starts at stmts[0]: the
// statements that begin before the end of the line on which the last of
// them ends (bash reads whole lines), and the offset just past that line.
func aliasGroup(src string, stmts []*syntax.Stmt) (n, end int) {
	end = lineEnd(src, stmts[0])
	n = 1
	for n < len(stmts) && int(stmts[n].Pos().Offset()) < end {
		end = max(end, lineEnd(src, stmts[n]))
		n++
	}
	return n, end
}

// expandAliases returns the statements of src[start:end] (the lines of one
// command group) parsed again after alias expansion, or nil when the group
// uses no alias. The text is preceded by the newlines before start so line
// numbers stay those of the script.
func (r *runner) expandAliases(src string, group []*syntax.Stmt, end int) ([]*syntax.Stmt, error) {
	if !utf8.ValidString(src) {
		// the tree's offsets are those of the parser's re-encoded text
		return nil, nil
	}
	edits := r.aliasEdits(group)
	if len(edits) == 0 {
		return nil, nil
	}
	slices.SortFunc(edits, func(a, b aliasEdit) int { return cmp.Compare(a.start, b.start) })
	start := int(group[0].Pos().Offset())
	start = strings.LastIndexByte(src[:start], '\n') + 1
	var b strings.Builder
	b.WriteString(strings.Repeat("\n", strings.Count(src[:start], "\n")))
	at := start
	grown := 0
	for _, e := range edits {
		if e.start < at || e.end > end {
			continue // cannot happen: edits are disjoint words in order
		}
		b.WriteString(src[at:e.start])
		b.WriteString(e.text)
		grown += len(e.text)
		if grown > maxAliasGrowth {
			return nil, limitf("alias expansion too large (limit %d bytes)", maxAliasGrowth)
		}
		at = e.end
	}
	b.WriteString(src[at:end])
	return parseStmts(b.String())
}

// readGroup reads the command that starts at stmts[i]: its n statements,
// the offset past its last line, and the statements to run (re-parsed after
// alias expansion, or stmts[i:i+n]). Without aliases a command is one
// statement (the end is then not computed: it costs a walk).
func (r *runner) readGroup(src string, stmts []*syntax.Stmt, i int) (n, end int, run []*syntax.Stmt, err error) {
	st := stmts[i]
	if !r.aliasing() || (i > 0 && lineEnd(src, stmts[i-1]) > int(st.Pos().Offset())) {
		// (a statement on a line read before aliases were defined was read
		// with that line)
		return 1, -1, stmts[i : i+1], nil
	}
	n, end = aliasGroup(src, stmts[i:])
	run, err = r.expandAliases(src, stmts[i:i+n], end)
	if run == nil && err == nil {
		run = stmts[i : i+n]
	}
	return n, end, run, err
}

// runRead runs stmts, parsed from src, one command group at a time with
// alias expansion at read time. It returns the first syntax error that
// alias expansion produced; errLine is the line of src's own syntax error
// (nothing on it or after runs).
func (r *runner) runRead(src string, stmts []*syntax.Stmt, errLine uint, docs []eofDoc) ([]eofDoc, error) {
	r.readDepth++
	defer func() { r.readDepth-- }()
	for i := 0; i < len(stmts); {
		if r.exiting || r.cancelled() {
			return docs, nil
		}
		st := stmts[i]
		if errLine > 0 && st.End().Line() >= errLine {
			// bash reads a line at a time: nothing on the bad line runs
			return docs, nil
		}
		n, _, sub, err := r.readGroup(src, stmts, i)
		if err == nil {
			docs = r.warnEOFDocs(docs, stmts[i+n-1].End().Line())
		}
		if err != nil {
			if le, ok := isLimit(err); ok {
				r.rs.fail(le)
				r.exiting = true
				return docs, nil
			}
			return docs, err
		}
		abandoned := false
		for _, st := range sub {
			if r.exiting || r.cancelled() {
				return docs, nil
			}
			r.stmt(st)
			if r.abandonLine && r.readDepth == 1 && !r.cancelled() {
				r.failAbandon()
				abandoned = true
				break
			}
			if r.exiting || r.returning || r.breakN > 0 || r.contN > 0 {
				return docs, nil
			}
		}
		i += n
		if abandoned {
			// the rest of the line was read with it, and is dropped too
			e := lineEnd(src, stmts[i-1])
			for i < len(stmts) && int(stmts[i].Pos().Offset()) < e {
				i++
			}
		}
	}
	return docs, nil
}

// warnEOFDocs reports, as bash does when it reads them, the here-documents
// the end of the text closed whose operator lies on a line up to upto, and
// returns the others.
func (r *runner) warnEOFDocs(docs []eofDoc, upto uint) []eofDoc {
	for len(docs) > 0 && docs[0].line <= upto {
		d := docs[0]
		old := r.lineno
		r.lineno = d.eofLine + r.lineBase
		r.errf("warning: here-document at line %d delimited by end-of-file (wanted `%s')", int(d.line)+r.lineBase, d.word)
		r.lineno = old
		docs = docs[1:]
	}
	return docs
}

// failAbandon ends the unwinding of a failglob error at the top level: the
// rest of the command line is dropped and the script goes on (status 1).
func (r *runner) failAbandon() {
	r.abandonLine, r.assignFail = false, false
	r.exiting = false
	r.returning = false
	r.breakN, r.contN = 0, 0
	r.status = 1
}

// substAliases returns the statements of a command or process
// substitution with the aliases of the moment it runs expanded (bash parses
// these bodies again when it runs them), or body itself when there is none
// to expand. The body is printed back to text, which is bounded by the
// script it came from.
func (r *runner) substAliases(body []*syntax.Stmt) []*syntax.Stmt {
	if !r.aliasing() || len(body) == 0 {
		return body
	}
	var b strings.Builder
	p := syntax.NewPrinter()
	for _, st := range body {
		if err := p.Print(&b, st); err != nil {
			return body
		}
		b.WriteByte('\n')
	}
	src := b.String()
	stmts, err := parseStmts(src)
	if err != nil || len(stmts) == 0 {
		return body
	}
	run, err := r.expandAliases(src, stmts, len(src))
	if err != nil {
		if le, ok := isLimit(err); ok {
			r.rs.fail(le)
			r.exiting = true
			return nil
		}
		return body
	}
	if run == nil {
		return body
	}
	return run
}
