package differential

import (
	"bytes"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Minimize shrinks src by deleting statements (at any depth) while still
// reports true, one deletion at a time until none can go (delta debugging
// with single-statement granularity, which is enough for generated scripts
// of a few dozen statements). It gives up after maxTries evaluations and
// returns the smallest script found. A script the parser refuses (often
// the very divergence being minimized), or one whose printed form no longer
// diverges, is shrunk line by line instead.
func Minimize(src string, still func(string) bool, maxTries int) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return minimizeLines(src, still, maxTries)
	}
	// Printing can move statements onto lines of their own, which changes
	// what bash does where lines matter (aliases apply from the next line
	// read); then only line deletion keeps the divergence.
	if !still(print(f)) {
		return minimizeLines(src, still, maxTries-1)
	}
	best := src
	tries := 1
	for changed := true; changed && tries < maxTries; {
		changed = false
		for _, list := range stmtLists(f) {
			for i := 0; i < len(*list) && tries < maxTries; i++ {
				saved := *list
				cut := append(append([]*syntax.Stmt{}, saved[:i]...), saved[i+1:]...)
				*list = cut
				cand := print(f)
				tries++
				if cand != best && still(cand) {
					best, changed = cand, true
					i--
					continue
				}
				*list = saved
			}
		}
	}
	return best
}

func minimizeLines(src string, still func(string) bool, maxTries int) string {
	lines := strings.SplitAfter(src, "\n")
	tries := 0
	for changed := true; changed && tries < maxTries; {
		changed = false
		for i := 0; i < len(lines) && tries < maxTries; i++ {
			cand := strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "")
			tries++
			if still(cand) {
				lines = append(lines[:i], lines[i+1:]...)
				changed = true
				i--
			}
		}
	}
	return strings.Join(lines, "")
}

// stmtLists returns every statement list in f, outermost first.
func stmtLists(f *syntax.File) []*[]*syntax.Stmt {
	lists := []*[]*syntax.Stmt{&f.Stmts}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Block:
			lists = append(lists, &n.Stmts)
		case *syntax.Subshell:
			lists = append(lists, &n.Stmts)
		case *syntax.IfClause:
			lists = append(lists, &n.Then)
		case *syntax.WhileClause:
			lists = append(lists, &n.Do)
		case *syntax.ForClause:
			lists = append(lists, &n.Do)
		case *syntax.CaseItem:
			lists = append(lists, &n.Stmts)
		case *syntax.CmdSubst:
			lists = append(lists, &n.Stmts)
		}
		return true
	})
	return lists
}

func print(f *syntax.File) string {
	var b bytes.Buffer
	syntax.NewPrinter().Print(&b, f)
	return b.String()
}
