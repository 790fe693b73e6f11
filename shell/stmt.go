package shell

import (
	"errors"
	"io"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// Statements and commands: what runs each node of the tree.

// inFunc reports whether a function is running (a sourced file is in
// FUNCNAME as "source" but is not one: local fails there, the ERR and
// DEBUG traps run without set -E/-T).
func (r *runner) inFunc() bool { return len(r.funcNames) > r.srcDepth }

func (r *runner) stmts(list []*syntax.Stmt) {
	for _, st := range list {
		if r.exiting || r.returning || r.breakN > 0 || r.contN > 0 {
			return
		}
		r.stmt(st)
	}
}

func (r *runner) stmt(st *syntax.Stmt) {
	if r.cancelled() {
		r.exiting = true
		return
	}
	if r.opts[optNoexec] {
		return
	}
	r.takeTopSignal()
	if r.exiting {
		return
	}
	if st.Background {
		r.background(st)
		return
	}
	if !r.inTrap {
		r.lineno = int(st.Position.Line()) + r.lineBase
		if commandText(st.Cmd) {
			r.curStmt = st
		}
	}
	if r.badArrayStmt(st) {
		return
	}
	if st.Negated {
		r.noErrExit++
	}
	r.andOrFail = false
	redirFailed := false // a compound command's redirection failed: it did not run
	nproc := len(r.procFds)
	if len(st.Redirs) > 0 && assignOnly(st.Cmd) {
		// bash expands the assignments first, then performs the
		// redirections (creating files) for a command without a name.
		r.cmd(st.Cmd)
		st0 := r.status
		saved, ok := r.redirects(st.Redirs)
		r.restoreFds(saved)
		if ok {
			r.status = st0
		}
	} else if sc, ok := simpleCmd(st); ok {
		// words first, then redirections (see callRedir)
		var saved []*fdesc
		var applied bool
		if c, ok := sc.(*syntax.CallExpr); ok {
			saved, applied = r.callRedir(c, st.Redirs)
		} else {
			saved, applied = r.declClauseRedir(sc.(*syntax.DeclClause), st.Redirs)
		}
		if applied {
			if r.permRedir {
				r.keepFds(saved)
			} else {
				r.restoreFds(saved)
			}
		}
		r.permRedir = false
	} else if len(st.Redirs) > 0 {
		saved, ok := r.redirects(st.Redirs)
		if ok {
			r.cmd(st.Cmd)
		} else {
			redirFailed = true
		}
		if r.permRedir {
			r.permRedir = false
			r.keepFds(saved)
		} else {
			r.restoreFds(saved)
		}
	} else {
		r.cmd(st.Cmd)
		r.permRedir = false
	}
	if len(r.procFds) > nproc {
		r.closeProcFds(nproc)
	}
	if st.Negated {
		r.noErrExit--
		if r.status == 0 {
			r.status = 1
		} else {
			r.status = 0
		}
		return
	}
	r.checkErr(st, redirFailed)
}

// checkErr implements set -e and the ERR trap after a statement;
// redirFailed: its redirection failed, so its command did not run.
func (r *runner) checkErr(st *syntax.Stmt, redirFailed bool) {
	if r.status == 0 || r.noErrExit > 0 || r.exiting || r.returning || r.breakN > 0 || r.contN > 0 || r.andOrFail || st == r.stageTop {
		return
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
			// Only the last command of an && || list counts; it was checked.
			return
		}
	case *syntax.Block, *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause:
		// A compound command's status is its last inner command's, which
		// was checked (or exempt) already: bash neither runs ERR nor exits
		// for it again. Unless its redirection failed and nothing ran.
		if !redirFailed {
			return
		}
	}
	if t, ok := r.traps["ERR"]; ok && t != "" && !r.inTrap && !r.errInherited && (!r.inFunc() || r.opts[optErrtrace]) {
		st := r.status
		r.inTrap = true
		bad := r.runTrap(t)
		r.inTrap = false
		if !r.exiting && (!bad || !r.opts[optErrexit]) {
			// (a trap that exits keeps its status; bash's set -e
			// exits with the broken trap's 2)
			r.status = st
		}
	}
	if r.opts[optErrexit] {
		r.exiting = true
	}
}

func (r *runner) cmd(c syntax.Command) {
	switch c := c.(type) {
	case nil:
		r.status = 0
	case *syntax.CallExpr:
		r.call(c)
	case *syntax.Block:
		r.stmts(c.Stmts)
	case *syntax.Subshell:
		sub := r.subshellRunner()
		sub.stmts(c.Stmts)
		sub.runExitTrap()
		sub.closeMem()
		r.status = sub.status
		if sub.xfsz {
			r.sizeNotice()
		}
		if sub.killedBy > 0 {
			r.reportKilled(sub.killedBy, sub.bashpid, c)
		}
		r.takeTopSignal()
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt:
			r.noErrExit++
			r.stmt(c.X)
			r.noErrExit--
			if r.exiting || r.returning || r.breakN > 0 || r.contN > 0 {
				return
			}
			if (r.status == 0) != (c.Op == syntax.AndStmt) {
				r.andOrFail = true
			}
			if (r.status == 0) == (c.Op == syntax.AndStmt) {
				r.stmt(c.Y)
				if r.status != 0 && r.noErrExit == 0 && r.opts[optErrexit] && !c.Y.Negated {
					if _, isList := c.Y.Cmd.(*syntax.BinaryCmd); !isList {
						// errexit on the last command of the list: handled by stmt's checkErr
					}
				}
			}
		case syntax.Pipe, syntax.PipeAll:
			r.pipeline(c)
		}
	case *syntax.IfClause:
		r.ifClause(c)
	case *syntax.WhileClause:
		r.loopDepth++
		r.whileClause(c)
		r.loopDepth--
	case *syntax.ForClause:
		r.loopDepth++
		r.forClause(c)
		r.loopDepth--
	case *syntax.CaseClause:
		r.caseClause(c)
	case *syntax.FuncDecl:
		if c.Name == nil {
			r.errf("syntax error near unexpected token `('")
			r.status = 2
			return
		}
		name := c.Name.Value
		if r.funcAttrOf(name)&attrReadonly != 0 {
			r.errf("%s: readonly function", name)
			r.status = 1
			return
		}
		r.own()
		if r.funcs == nil {
			r.funcs = map[string]*syntax.Stmt{}
		}
		r.funcs[name] = c.Body
		r.funcChanged(name, false)
		if r.curSrc != "" || r.funcFile != nil {
			if r.funcFile == nil {
				r.funcFile = map[string]string{}
			}
			r.funcFile[name] = r.curSrc
		}
		r.status = 0
	case *syntax.ArithmCmd:
		r.debugTrap()
		if r.opts[optXtrace] {
			// bash: (( , the text between the parentheses, ))
			t := arithCmdText(c)
			r.xtraceText("(( " + strings.TrimSuffix(strings.TrimPrefix(t, "(("), "))") + " ))")
		}
		n, err := r.arithWhole(c.X, c.Right)
		if err != nil {
			r.arithCmdErr(err)
			return
		}
		r.status = b2i(n == 0)
	case *syntax.TestClause:
		r.debugTrap()
		ok, err := r.testExpr(c.X)
		var ae *arithError
		if err != nil && errors.As(err, &ae) {
			// an operand of -eq &c: bash names [[, status 1
			r.errf("[[: %v", err)
			r.status = 1
			return
		}
		if err != nil {
			r.errf("%v", err)
			r.status = 2
			return
		}
		r.status = b2i(!ok)
	case *syntax.DeclClause:
		r.declClause(c)
	case *syntax.LetClause:
		r.debugTrap()
		st := 1
		for _, e := range c.Exprs {
			var n int64
			var err error
			if w, ok := e.(*syntax.Word); ok && hasSglQuoted(w) {
				// let's arguments are shell words: quotes are removed
				// before they are evaluated
				s, ok := r.literal(w)
				if !ok {
					r.status = 1
					return
				}
				n, err = r.arithString(s)
			} else {
				n, err = r.arith(e)
			}
			if err != nil {
				r.arithNamedErr("let", err)
				return
			}
			st = b2i(n == 0)
		}
		r.status = st
	case *syntax.TimeClause:
		inner, posix, negate := timeOperands(c)
		// time time cmd times once: bash ORs the second time's flags
		// (-p too) into the first
		for inner != nil && !negate && !inner.Negated && !inner.Background && len(inner.Redirs) == 0 {
			tc, ok := inner.Cmd.(*syntax.TimeClause)
			if !ok {
				break
			}
			var p2 bool
			inner, p2, negate = timeOperands(tc)
			posix = posix || p2
		}
		start := time.Now()
		if inner != nil {
			r.stmt(inner)
			if negate {
				r.status = b2i(r.status == 0)
			}
		}
		el := time.Since(start)
		format := "\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS"
		if posix {
			format = "real %2R\nuser %2U\nsys %2S"
		} else if v := r.lookup("TIMEFORMAT"); v != nil && v.Set {
			format = v.str()
		}
		if out, bad := timeFormat(format, el); bad != 0 {
			r.errf("TIMEFORMAT: `%c': invalid format character", bad)
		} else if out != "" || format != "" {
			io.WriteString(r.stderr(), out+"\n")
		}
	case *syntax.CoprocClause:
		r.errf("coproc: not supported")
		r.status = 1
	default:
		r.errf("unsupported command %T", c)
		r.status = 1
	}
}
