package shell

// Compound commands: if, while/until, for, select and case.

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

func (r *runner) loopTick() bool {
	if n := r.rs.loops.Add(1); n > r.rs.lim.MaxLoopIters {
		r.rs.fail(limitf("loop iteration limit exceeded (%d)", r.rs.lim.MaxLoopIters))
		r.exiting = true
		return false
	}
	if r.cancelled() {
		r.exiting = true
		return false
	}
	return true
}

// loopCtl handles break/continue after a loop body; it reports whether the
// loop must stop.
func (r *runner) loopCtl() bool {
	if r.breakN > 0 {
		r.breakN--
		return true
	}
	if r.contN > 0 {
		r.contN--
		if r.contN > 0 {
			return true
		}
	}
	return r.exiting || r.returning
}

func (r *runner) ifClause(c *syntax.IfClause) {
	r.noErrExit++
	r.stmts(c.Cond)
	r.noErrExit--
	if r.exiting || r.returning || r.breakN > 0 || r.contN > 0 {
		return
	}
	if r.status == 0 {
		r.stmts(c.Then)
		return
	}
	if c.Else != nil {
		if len(c.Else.Cond) == 0 && c.Else.ThenPos == (syntax.Pos{}) {
			r.stmts(c.Else.Then)
			return
		}
		r.ifClause(c.Else)
		return
	}
	r.status = 0
}

func (r *runner) whileClause(c *syntax.WhileClause) {
	st := 0
	for r.loopTick() {
		r.noErrExit++
		r.stmts(c.Cond)
		r.noErrExit--
		if r.exiting || r.returning {
			break
		}
		if r.breakN > 0 || r.contN > 0 {
			if r.loopCtl() {
				break
			}
			continue
		}
		if (r.status == 0) == c.Until {
			break
		}
		r.stmts(c.Do)
		st = r.status
		if r.loopCtl() {
			break
		}
	}
	r.status = st
}

// setLoopVar sets a for loop's variable. A nameref is retargeted to each
// item, as bash does, rather than assigned through.
func (r *runner) setLoopVar(name, item string) bool {
	if v := r.lookup(name); v == nil || v.Attr&attrNameref == 0 {
		return r.setVar(name, item)
	}
	r.own()
	v := r.lookup(name)
	switch {
	case v.Attr&attrReadonly != 0:
		r.errf("%s: readonly variable", name)
	case !validRef(item):
		r.errf("`%s': not a valid identifier", item)
	default:
		v.Str, v.Set = item, true
		return true
	}
	r.status = 1
	return false
}

func (r *runner) forClause(c *syntax.ForClause) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		var items []string
		if l.InPos.IsValid() {
			var ok bool
			items, ok = r.fields(l.Items...)
			if !ok {
				return
			}
		} else {
			items = append([]string(nil), r.params...)
		}
		name := l.Name.Value
		if c.Select {
			r.selectLoop(name, items, c.Do)
			return
		}
		r.status = 0
		forLine := r.lineno
		for _, it := range items {
			if !r.loopTick() {
				return
			}
			r.lineno = forLine
			r.debugTrap()
			if r.opts[optXtrace] && l.InPos.IsValid() {
				r.xtraceText("for " + name + " in " + wordsText(l.Items)) // as written
			}
			if !r.setLoopVar(name, it) {
				if r.opts[optPosix] {
					r.status, r.exiting = r.posixAssignStatus(), true
				}
				return
			}
			r.stmts(c.Do)
			if r.loopCtl() {
				break
			}
		}
	case *syntax.CStyleLoop:
		forLine := r.lineno
		r.debugTrap()
		if l.Init != nil {
			if _, err := r.arith(l.Init); err != nil {
				r.arithErr(err)
				return
			}
		}
		r.status = 0
		for r.loopTick() {
			r.lineno = forLine
			r.debugTrap()
			if l.Cond != nil {
				n, err := r.arith(l.Cond)
				if err != nil {
					r.arithErr(err)
					return
				}
				if n == 0 {
					break
				}
			}
			r.stmts(c.Do)
			if r.loopCtl() {
				break
			}
			if l.Post != nil {
				r.lineno = forLine
				r.debugTrap()
				if _, err := r.arith(l.Post); err != nil {
					r.arithErr(err)
					return
				}
			}
		}
	}
}

func (r *runner) selectLoop(name string, items []string, body []*syntax.Stmt) {
	for r.loopTick() {
		for i, it := range items {
			fmt.Fprintf(r.stderr(), "%d) %s\n", i+1, it)
		}
		ps3 := "#? "
		if v := r.lookup("PS3"); v != nil {
			ps3 = v.str()
		}
		io.WriteString(r.stderr(), ps3)
		line, err := readLine(r.stdin())
		if err != nil && line == "" {
			r.status = 1
			return
		}
		r.setVar("REPLY", line)
		n, _ := strconv.Atoi(strings.TrimSpace(line))
		val := ""
		if n >= 1 && n <= len(items) {
			val = items[n-1]
		}
		r.setVar(name, val)
		r.stmts(body)
		if r.loopCtl() {
			break
		}
	}
}

func readLine(rd io.Reader) (string, error) {
	var b []byte
	var one [1]byte
	for {
		n, err := rd.Read(one[:])
		if n > 0 {
			if one[0] == '\n' {
				return string(b), nil
			}
			b = append(b, one[0])
		}
		if err != nil {
			return string(b), err
		}
	}
}

func (r *runner) caseClause(c *syntax.CaseClause) {
	r.debugTrap()
	if r.opts[optXtrace] {
		r.xtraceText("case " + wordsText([]*syntax.Word{c.Word}) + " in") // as written
	}
	word, ok := r.literal(c.Word)
	if !ok {
		return
	}
	r.status = 0
	fall := false
	for i := 0; i < len(c.Items); i++ {
		ci := c.Items[i]
		match := fall
		if !match {
			for _, pw := range ci.Patterns {
				pat, ok := r.pattern(pw)
				if !ok {
					return
				}
				if r.matchPattern(pat, word, false) {
					match = true
					break
				}
			}
		}
		if !match {
			continue
		}
		r.stmts(ci.Stmts)
		switch ci.Op {
		case syntax.Fallthrough:
			fall = true
			continue
		case syntax.Resume, syntax.ResumeKorn:
			fall = false
			continue
		}
		return
	}
}

// ---- pipelines and background jobs ----

// wordsText prints words as written, a blank between them (set -x shows
// a for list and a case word so).
func wordsText(ws []*syntax.Word) string {
	var b strings.Builder
	pr := syntax.NewPrinter()
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		pr.Print(&b, w)
	}
	return b.String()
}
