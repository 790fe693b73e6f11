package shell

// Builtins that change what runs next: eval, source, exec, exit, return,
// break, continue, plus shift and let, which scripts use to drive loops,
// and caller, which reports the call stack that functions and source push.

import (
	"strconv"
	"strings"
)

// biLet evaluates each argument as arithmetic; as in bash its status is 0
// when the last value is non-zero.
func biLet(r *runner, args []string) int {
	args = args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:] // bash skips one leading --, nothing else
	}
	if len(args) == 0 {
		r.errf("let: expression expected")
		return 1
	}
	var n int64
	for _, a := range args {
		var err error
		n, err = r.arithString(a)
		if err != nil {
			r.arithNamedErr("let", err)
			return 1
		}
	}
	return b2i(n == 0)
}

// biEval joins its arguments with spaces and runs them as script text in
// the current shell, bounded by MaxCallDepth as a function call is.
func biEval(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = args[1:]
	} else if len(args) > 1 && strings.HasPrefix(args[1], "-") && len(args[1]) > 1 {
		r.errf("eval: %s: invalid option", args[1])
		r.usage("eval: usage: eval [arg ...]")
		return 2
	}
	src := strings.Join(args[1:], " ")
	if strings.TrimSpace(src) == "" {
		return 0
	}
	if r.callDepth >= r.rs.lim.MaxCallDepth {
		r.rs.fail(limitf("eval nesting limit exceeded (%d)", r.rs.lim.MaxCallDepth))
		r.exiting = true
		return 1
	}
	r.callDepth++
	r.traceLevel++
	defer func() { r.traceLevel-- }()
	r.status = 0
	// Like bash, the lines before a syntax error run (not the bad line's
	// other commands: bash parses a line whole), then eval returns 2.
	// $LINENO counts on from the eval's line, as in bash.
	base, line := r.lineBase, r.lineno
	if !r.inTrap {
		r.lineBase = r.lineno - 1
	}
	wasEval, cur := r.evalText, r.curStmt
	r.evalText = true
	r.runText(src, "", false)
	r.evalText = wasEval
	if !r.inTrap {
		r.curStmt = cur // bash's $BASH_COMMAND is the eval again after it
	}
	r.lineBase, r.lineno = base, line
	r.callDepth--
	if r.assignFail {
		r.assignFail, r.abandonLine, r.exiting = false, false, false
		return 1
	}
	return r.status
}

// biSource runs a file's text in the current shell. A name without a slash
// is looked up in PATH first, then taken as given; further arguments are
// the positional parameters while it runs; a return in it ends only it.
func biSource(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = append([]string{args[0]}, args[2:]...)
	}
	if len(args) < 2 {
		r.errf("%s: filename argument required", args[0])
		return 2
	}
	name := args[1]
	p := name
	if !strings.Contains(name, "/") {
		if fp, ok := r.pathLookupAny(name); ok {
			p = fp
		}
	}
	data, err := r.readFileAll(p)
	if err != nil {
		r.errf("%s: %s", name, errText(err))
		return 1
	}
	if r.callDepth >= r.rs.lim.MaxCallDepth {
		r.rs.fail(limitf("source nesting limit exceeded (%d)", r.rs.lim.MaxCallDepth))
		r.exiting = true
		return 1
	}
	savedParams := r.params
	if len(args) > 2 {
		r.params = args[2:]
	}
	r.callDepth++
	r.srcNames = append(r.srcNames, name)
	r.funcNames = append(r.funcNames, "source")
	r.srcDepth++
	r.frames = append(r.frames, frame{name: "source", file: name, line: r.lineno})
	savedSrc, savedLine := r.curSrc, r.lineno
	r.curSrc = name
	r.status = 0
	wasEval, cur := r.evalText, r.curStmt
	r.evalText = false
	r.traceLevel++
	r.runText(string(data), name, false)
	r.traceLevel--
	r.evalText = wasEval
	if !r.inTrap {
		r.curStmt = cur // as after eval
	}
	r.curSrc = savedSrc
	r.lineno = savedLine
	r.frames = r.frames[:len(r.frames)-1]
	r.funcNames = r.funcNames[:len(r.funcNames)-1]
	r.srcDepth--
	r.srcNames = r.srcNames[:len(r.srcNames)-1]
	r.callDepth--
	if r.assignFail {
		r.assignFail, r.abandonLine, r.exiting = false, false, false
		return 1
	}
	if r.returning {
		r.returning = false
	}
	if len(args) > 2 {
		r.params = savedParams
	}
	return r.status
}

// biExec with a command runs it and ends the shell with its status (there
// is no process to replace); with none it makes the statement's
// redirections permanent. Leading option words are skipped unread.
// biExec replaces the shell with a command: -a NAME gives it NAME as
// argv[0], -l prefixes argv[0] with "-" (a login shell), -c runs it with
// an empty environment. Without a command its redirections stay.
func biExec(r *runner, args []string) int {
	args = args[1:]
	argv0, login, clear := "", false, false
	usage := func() int {
		r.usage("exec: usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]")
		return 2
	}
opts:
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		o := args[0]
		args = args[1:]
		for i := 1; i < len(o); i++ {
			switch o[i] {
			case 'c':
				clear = true
			case 'l':
				login = true
			case 'a':
				switch {
				case i+1 < len(o):
					argv0 = o[i+1:]
				case len(args) > 0:
					argv0, args = args[0], args[1:]
				default:
					r.errf("exec: -a: option requires an argument")
					return usage()
				}
				continue opts
			default:
				r.errf("exec: -%c: invalid option", o[i])
				return usage()
			}
		}
	}
	if len(args) == 0 {
		// redirections made permanent: the caller handles this by not
		// restoring (see stmt); nothing to do here.
		r.permRedir = true
		return 0
	}
	if login {
		if argv0 == "" {
			argv0 = args[0]
		}
		argv0 = "-" + argv0
	}
	r.execArgv0 = argv0
	if clear {
		// the shell ends here: an empty environment for the command,
		// and its cache rebuilt should anything run after
		r.envCache = []string{}
		defer func() { r.envCache = nil }()
	}
	r.execProgram(args, nil)
	r.execArgv0 = ""
	r.exiting = true
	return r.status
}

// biExit ends the shell with its argument mod 256, or the last status; a
// non-numeric argument is reported and the shell exits with 2.
func biExit(r *runner, args []string) int {
	st, _ := exitArg(r, "exit", args) // bash exits even on a bad operand
	r.exiting = true
	r.exitCalled = true
	return st
}

// exitArg reads exit's and return's status operand as bash does: optional
// "--", blanks around the number allowed, the status modulo 256; a bad one
// is status 2, more than one operand status 1 (ok false either way).
func exitArg(r *runner, name string, args []string) (int, bool) {
	args = args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	switch {
	case len(args) == 0 && r.inTrap:
		return r.trapStatus, true // bash: the status before the trap ran
	case len(args) == 0:
		return r.status, true
	case len(args) > 1:
		if _, err := strconv.ParseInt(strings.TrimSpace(args[0]), 10, 64); err != nil {
			r.errf("%s: %s: numeric argument required", name, args[0])
			return 2, false
		}
		r.errf("%s: too many arguments", name)
		return 1, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(args[0]), 10, 64)
	if err != nil {
		r.errf("%s: %s: numeric argument required", name, args[0])
		return 2, false
	}
	return int(n & 255), true
}

// biReturn leaves the current function or sourced file with its argument
// mod 256, or the last status; anywhere else it is an error.
func biReturn(r *runner, args []string) int {
	st, _ := exitArg(r, "return", args)
	if len(r.funcNames) == 0 {
		r.errf("return: can only `return' from a function or sourced script")
		return 2 // bash's EX_USAGE
	}
	r.returning = true
	return st
}

// loopCount reads break's and continue's operand as bash 5.2 does: with
// no loop around (in this function) it only warns, status 0; one count,
// after an optional --, capped at the loops there are. A count below 1
// leaves every loop, status 1; a second operand abandons the line, status
// 1; a count that is no number ends the shell, status 128, as bash's
// throw to the top level.
// ok is false when the builtin is to return st without doing more.
func loopCount(r *runner, args []string, name string) (n int, st int, ok bool) {
	if r.loopDepth == 0 {
		r.errf("%s: only meaningful in a `for', `while', or `until' loop", name)
		return 0, 0, false
	}
	a := args[1:]
	if len(a) > 0 && a[0] == "--" {
		a = a[1:]
	}
	if len(a) == 0 {
		return 1, 0, true
	}
	v, isNum := legalNumber(a[0])
	switch {
	case !isNum:
		r.errf("%s: %s: numeric argument required", name, a[0])
		r.exiting, r.exitCalled = true, true
		return 0, 128, false
	case len(a) > 1:
		r.errf("%s: too many arguments", name)
		r.exiting, r.abandonLine = true, true // bash drops the rest of the line
		return 0, 1, false
	case v < 1:
		r.errf("%s: %s: loop count out of range", name, a[0])
		r.breakN = r.loopDepth
		return 0, 1, false
	}
	return int(min(v, int64(r.loopDepth))), 0, true
}

// biBreak asks the enclosing loops to stop, n levels out; the loops read
// breakN.
func biBreak(r *runner, args []string) int {
	n, st, ok := loopCount(r, args, "break")
	if ok {
		r.breakN = n
	}
	return st
}

// biContinue asks the n-th enclosing loop to start its next iteration; the
// loops read contN.
func biContinue(r *runner, args []string) int {
	n, st, ok := loopCount(r, args, "continue")
	if ok {
		r.contN = n
	}
	return st
}

// biShift drops the first n (default 1) positional parameters; shifting
// more than there are fails and changes nothing.
func biShift(r *runner, args []string) int {
	if len(args) > 2 {
		// bash abandons the command line (jump_to_top_level DISCARD):
		// a script goes on with its next line
		r.errf("shift: too many arguments")
		r.exiting, r.abandonLine = true, true
		return 1
	}
	n := 1
	if len(args) > 1 {
		v, err := strconv.Atoi(args[1])
		if err != nil {
			r.errf("shift: %s: numeric argument required", args[1])
			return 1
		}
		if v < 0 {
			r.errf("shift: %s: shift count out of range", args[1])
			return 1
		}
		n = v
	}
	if n > len(r.params) {
		// said only under shift_verbose (on in POSIX mode)
		if r.shopts["shift_verbose"] {
			if len(args) > 1 {
				r.errf("shift: %s: shift count out of range", args[1])
			} else {
				r.errf("shift: shift count out of range")
			}
		}
		return 1
	}
	r.params = r.params[n:]
	return 0
}

// biCaller is bash's caller: with no operand the line of the current call
// and the file it was made from (NULL when there is none); with N, the
// line, function and file of frame N, status 1 past the stack; read from
// BASH_LINENO, FUNCNAME and BASH_SOURCE as bash reads them.
func biCaller(r *runner, args []string) int {
	lines := r.stackVar("BASH_LINENO")
	if len(lines) == 0 {
		return 1
	}
	at := func(l []string, i int64) (string, bool) {
		if i < 0 || i >= int64(len(l)) {
			return "", false
		}
		return l[i], true
	}
	sources := r.stackVar("BASH_SOURCE")
	a := args[1:]
	if len(a) > 0 && a[0] == "--" {
		a = a[1:]
	}
	if len(a) == 0 {
		src, ok := at(sources, 1)
		if !ok {
			src = "NULL"
		}
		r.outf("%s %s\n", lines[0], src)
		return 0
	}
	n, ok := legalNumber(a[0])
	if !ok {
		r.errf("caller: %s: invalid number", a[0])
		r.usage("caller: usage: caller [expr]")
		return 2
	}
	fn, ok1 := at(r.stackVar("FUNCNAME"), n+1)
	src, ok2 := at(sources, n+1)
	line, ok3 := at(lines, n)
	if !ok1 || !ok2 || !ok3 {
		return 1
	}
	r.outf("%s %s %s\n", line, fn, src)
	return 0
}
