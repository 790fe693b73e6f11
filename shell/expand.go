package shell

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// env adapts a runner to expand.Environ.
type env struct{ r *runner }

func (e env) Get(name string) expand.Variable {
	r := e.r
	if s, ok := r.dynValue(name); ok {
		return strVar(s)
	}
	if r.dirstackSpecial(name) {
		return expand.Variable{Set: true, Kind: expand.Indexed, List: r.dirstackList()}
	}
	switch name {
	case "#":
		return strVar(strconv.Itoa(len(r.params)))
	case "@", "*":
		return expand.Variable{Set: true, Kind: expand.Indexed, List: r.params}
	case "?":
		return strVar(strconv.Itoa(r.status))
	case "$":
		return strVar(strconv.Itoa(r.pid))
	case "!":
		if r.lastBg == 0 {
			return expand.Variable{}
		}
		return strVar(strconv.Itoa(r.lastBg))
	case "-":
		return strVar(r.dashFlags())
	case "0":
		return strVar(r.arg0)
	case "_":
		return strVar(r.lastArg)
	case "BASHPID":
		return strVar(strconv.Itoa(r.bashpid))
	case "PPID":
		return strVar(strconv.Itoa(r.ppid))
	case "LINENO":
		return strVar(strconv.Itoa(r.lineno))
	case "BASH_SUBSHELL":
		return strVar(strconv.Itoa(r.subshell))
	case "BASH_COMMAND":
		return strVar(r.bashCommand()) // assignments do not stick, as in bash
	case "FUNCNAME", "BASH_SOURCE", "BASH_LINENO":
		l := r.stackVar(name)
		if l == nil {
			return expand.Variable{}
		}
		return expand.Variable{Set: true, Kind: expand.Indexed, List: l}
	}
	if len(name) == 1 && name[0] >= '1' && name[0] <= '9' {
		i := int(name[0] - '1')
		if i < len(r.params) {
			return strVar(r.params[i])
		}
		return expand.Variable{}
	}
	if strings.HasPrefix(name, "HOME ") {
		u := name[5:]
		switch u {
		case r.sh.cfg.User:
			return strVar(r.sh.cfg.Home)
		case "root":
			return strVar("/root")
		}
		// Unknown user: keep the tilde word literal (never os/user).
		return strVar("~" + u)
	}
	if len(name) > 1 && name[0] >= '0' && name[0] <= '9' {
		if i, err := strconv.Atoi(name); err == nil {
			if i-1 < len(r.params) {
				return strVar(r.params[i-1])
			}
			return expand.Variable{}
		}
	}
	v := r.lookup(name)
	if v == nil {
		return expand.Variable{}
	}
	return v.toExpand()
}

func strVar(s string) expand.Variable {
	return expand.Variable{Set: true, Kind: expand.String, Str: s}
}

func (e env) Each(fn func(name string, vr expand.Variable) bool) {
	seen := map[string]bool{}
	for s := e.r.vars; s != nil; s = s.parent {
		for k, v := range s.vars {
			if seen[k] {
				continue
			}
			seen[k] = true
			if !fn(k, v.toExpand()) {
				return
			}
		}
	}
}

func (e env) Set(name string, vr expand.Variable) error {
	r := e.r
	if !vr.IsSet() {
		r.unsetVar(name)
		return nil
	}
	switch vr.Kind {
	case expand.String:
		if !r.setVar(name, vr.Str) {
			return errSilent
		}
	case expand.Indexed:
		v := r.varForWrite(name)
		if v == nil {
			return errSilent
		}
		v.Kind, v.List, v.Idx, v.Set = expand.Indexed, vr.List, vr.Indexes, true
	case expand.Associative:
		v := r.varForWrite(name)
		if v == nil {
			return errSilent
		}
		v.Kind, v.Map, v.Set, v.ord = expand.Associative, vr.Map, true, nil
	}
	return nil
}

// errSilent: the message was already printed.
var errSilent = errors.New("")

// exitError makes the shell exit (bad substitution, unbound variable).
type exitError struct{ msg string }

func (e *exitError) Error() string { return e.msg }

func (r *runner) dashFlags() string {
	var b strings.Builder
	for _, c := range "abefhkmnptuvxBCEHPT" {
		for i, on := range r.opts {
			if on && optLetters[i] == byte(c) {
				b.WriteRune(c)
			}
		}
	}
	switch {
	case r.dashC:
		b.WriteString("c")
	case !r.dashFile:
		b.WriteString("s")
	}
	return b.String()
}

func (r *runner) globReadDir(name string) ([]fs.DirEntry, error) {
	return r.sh.cfg.FS.ReadDir(r.abs(name))
}

func (r *runner) abs(name string) string {
	if strings.HasPrefix(name, "/") {
		return path.Clean(name)
	}
	if name == "" || name == "." {
		return r.cwd
	}
	return path.Join(r.cwd, name)
}

// expandErr reports an expansion error the way bash does and unwinds.
func (r *runner) expandErr(err error) {
	if errors.Is(err, errSilent) || errors.Is(err, errCancelled) {
		if r.cancelled() {
			r.exiting = true
		}
		r.status = 1
		if errors.Is(err, errSilent) && r.opts[optErrexit] {
			r.exiting = true
		}
		return
	}
	var ue expand.UnsetParameterError
	if errors.As(err, &ue) {
		name := ue.Node.Param.Value
		if ue.Node.Exp != nil && (ue.Node.Exp.Op == syntax.ErrorUnset || ue.Node.Exp.Op == syntax.ErrorUnsetOrNull) {
			msg := ue.Message
			if msg == "" {
				if ue.Node.Exp.Op == syntax.ErrorUnset {
					msg = "parameter not set"
				} else {
					msg = "parameter null or not set"
				}
			}
			r.errf("%s: %s", name, msg)
		} else {
			if ue.Node.Index != nil {
				if w, ok := ue.Node.Index.(*syntax.Word); ok {
					name += "[" + w.Lit() + "]"
				}
			}
			r.errf("%s: %s", name, ue.Message)
		}
		r.status = 1
		r.exiting = true
		return
	}
	var ae *arithError
	if errors.As(err, &ae) {
		r.arithErr(ae)
		return
	}
	var lne *lineError
	if errors.As(err, &lne) {
		r.errf("%s", lne.msg)
		r.status = 1
		r.exiting = true
		r.abandonLine = true
		return
	}
	var ce *cmdError
	if errors.As(err, &ce) {
		r.errf("%s", ce.msg)
		r.status = 1
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		r.errf("%s", ee.msg)
		r.status = r.expansionExit()
		r.exiting = true
		return
	}
	var le *limitError
	if errors.As(err, &le) {
		r.rs.fail(le)
		r.exiting = true
		return
	}
	msg := err.Error()
	if strings.Contains(msg, "invalid indirect expansion") || strings.Contains(msg, "unsupported") {
		r.errf("%s", "bad substitution")
		r.status = r.expansionExit()
		r.exiting = true
		return
	}
	r.errf("%s", msg)
	r.status = r.expansionExit()
	r.exiting = true
}

// expansionExit is the status a shell ends with on an expansion error that
// ends it (unbound variable, ${x:?}, bad substitution): 127 in a `bash -c`
// shell itself, 1 in a script, a subshell or the session's own shell (bash
// 5.2 does this).
func (r *runner) expansionExit() int {
	if r.dashC && r.bashpid == r.pid {
		return 127
	}
	return 1
}

// matchPattern matches a shell pattern against s.
func (r *runner) matchPattern(pat, s string, forceCase bool) bool {
	mode := pattern.Mode(0)
	if r.shopts["extglob"] || true {
		mode |= pattern.ExtendedOperators
	}
	if r.shopts["nocasematch"] && !forceCase {
		mode |= pattern.NoGlobCase
	}
	match, err := r.patternMatcher(pat, mode|pattern.EntireString)
	if err != nil {
		return pat == s
	}
	return match(s)
}

// cmdSubst runs $(...) in a subshell, writing its stdout to w.
func (r *runner) cmdSubst(w io.Writer, cs *syntax.CmdSubst) error {
	sub := r.subshellRunner()
	defer sub.closeMem()
	mw := &memWriter{m: r.sh.memory()}
	defer mw.release()
	cw := &capWriter{w: w, max: r.rs.lim.MaxStringBytes, rs: r.rs, mem: mw}
	sub.fds[1] = &fdesc{w: cw, path: "pipe:[0]"}
	if !r.shopts["inherit_errexit"] {
		sub.opts[optErrexit] = false
	}
	// $(< file) reads the file.
	if len(cs.Stmts) == 1 {
		if c, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr); ok && c == nil || cs.Stmts[0].Cmd == nil {
			st := cs.Stmts[0]
			if len(st.Redirs) == 1 && st.Redirs[0].Op == syntax.RdrIn {
				name, ok := sub.literal(st.Redirs[0].Word)
				if !ok {
					return errSilent
				}
				f, err := sub.openFile(name, 0, 0)
				if err != nil {
					sub.errf("%s: %s", name, errText(err))
					r.substStat = 1
					return nil
				}
				if rd, ok := f.(io.Reader); ok {
					io.Copy(w, rd)
				}
				if c, ok := f.(io.Closer); ok {
					c.Close()
				}
				r.substStat = 0
				return nil
			}
		}
	}
	sub.traceLevel++
	sub.stmts(sub.substAliases(cs.Stmts))
	sub.runExitTrap()
	// Jobs holding the capture are waited for, as bash reads the pipe
	// until they close it.
	r.sh.jobs.waitHolding(r.context(), cw)
	r.substStat = sub.status
	if r.cancelled() {
		return errCancelled
	}
	if sub.exiting && sub.status != 0 && false {
		return errSilent
	}
	return nil
}

// capWriter bounds command substitution output to the string size limit.
type capWriter struct {
	w   io.Writer
	n   int
	max int
	rs  *runState
	mem *memWriter
}

func (c *capWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	if c.n > c.max {
		c.rs.fail(limitf("string size limit exceeded (command substitution over %d bytes)", c.max))
		return 0, errCancelled
	}
	if err := c.mem.grow(len(p)); err != nil {
		c.rs.fail(&limitError{what: strings.TrimPrefix(err.Error(), "warren: "), status: StatusLimit})
		return 0, errCancelled
	}
	return c.w.Write(p)
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var errno interface{ Error() string }
	errno = err
	s := errno.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var _ = fmt.Sprint

func litWord(s string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}}
}

func (r *runner) isAssoc(name string) bool {
	v := r.lookupRef(name)
	return v != nil && (v.Kind == expand.Associative || v.Attr&attrAssoc != 0)
}

// frame is one function call or source on the call stack.
type frame struct {
	name, file string
	line       int // line of the call
}

// shellArrayVar is one of the arrays the shell computes (the call stack's,
// PIPESTATUS, DIRSTACK) as a Var for declare -p, or nil. FUNCNAME outside
// any function is declared but unset; the others are then empty.
func (r *runner) shellArrayVar(name string) *Var {
	switch name {
	case "FUNCNAME", "BASH_SOURCE", "BASH_LINENO":
		l := r.stackVar(name)
		if l == nil && name == "FUNCNAME" {
			return &Var{Kind: expand.Indexed}
		}
		return &Var{Set: true, Kind: expand.Indexed, List: append([]string{}, l...)}
	case "PIPESTATUS", "DIRSTACK":
		pv, err := r.lookupParam(name, litWord("@"), nil)
		if err != nil || pv.v == nil {
			return nil
		}
		return pv.v
	}
	return nil
}

// stackVar renders FUNCNAME, BASH_SOURCE or BASH_LINENO from the stack.
func (r *runner) stackVar(name string) []string {
	n := len(r.frames)
	if n == 0 && r.topSrc == "" {
		return nil
	}
	out := make([]string, 0, n+1)
	for i := n - 1; i >= 0; i-- {
		f := r.frames[i]
		switch name {
		case "FUNCNAME":
			out = append(out, f.name)
		case "BASH_SOURCE":
			out = append(out, r.frameFile(f))
		default:
			out = append(out, strconv.Itoa(f.line))
		}
	}
	if r.topSrc != "" {
		switch name {
		case "FUNCNAME":
			if n == 0 {
				return nil
			}
			out = append(out, "main")
		case "BASH_SOURCE":
			out = append(out, r.topSrc)
		default:
			out = append(out, "0") // a script file's top level has BASH_LINENO=(0)
		}
	}
	return out
}
