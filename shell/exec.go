package shell

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

func (r *runner) countCommand() bool {
	if n := r.rs.commands.Add(1); n > r.rs.lim.MaxCommands {
		r.rs.fail(limitf("command limit exceeded (%d commands)", r.rs.lim.MaxCommands))
		r.exiting = true
		return false
	}
	return true
}

func (r *runner) call(c *syntax.CallExpr) {
	r.callRedir(c, nil)
}

// callRedir runs a simple command whose statement carries redirections
// rds. As in bash, the words and the prefix assignments are expanded first,
// then the redirections are performed (truncating files), then the command
// runs: `echo $(cat f) > f` reads f before it is emptied. It returns the
// descriptor table to restore and whether redirections were attempted (when
// not, r.fds is untouched).
// assignFailed: a command of assignments only failed (a readonly
// variable, a bad subscript). bash (not in POSIX mode) abandons the
// command line, through functions, and reads the next one; an eval or a
// sourced file it is in returns 1 instead. In POSIX mode the shell exits.
func (r *runner) assignFailed() {
	if r.exiting {
		return
	}
	r.status = 1
	r.exiting = true
	if r.opts[optPosix] {
		r.status = r.posixAssignStatus()
	} else {
		r.abandonLine, r.assignFail = true, true
	}
}

// posixAssignStatus is the status a POSIX-mode bash exits with after an
// assignment error: 1, but 127 at the top level of a `bash -c` string (a
// file it sources or a function it calls included; not in a subshell), as bash 5.2
// does.
func (r *runner) posixAssignStatus() int {
	if !r.dashC || r.subshell > 0 {
		return 1
	}
	return 127
}

func (r *runner) callRedir(c *syntax.CallExpr, rds []*syntax.Redirect) (saved []*fdesc, applied bool) {
	if !r.countCommand() {
		return nil, false
	}
	if len(r.traps) > 0 {
		r.debugTrap()
		if r.exiting {
			return nil, false
		}
	}
	if len(c.Args) == 0 {
		r.substStat = 0
		pre := ""
		if r.opts[optXtrace] {
			pre = r.xtracePrefix() // PS4=x is traced with the PS4 before it
		}
		for _, as := range c.Assigns {
			if !r.assign(as, false) {
				r.assignFailed()
				return nil, false
			}
		}
		r.lastArg = "" // bash: a command of assignments only empties $_
		if r.opts[optXtrace] {
			r.xtraceAssigns(pre, c.Assigns)
		}
		r.status = r.substStat
		if len(rds) > 0 {
			saved, ok := r.redirects(rds)
			if ok {
				r.status = r.substStat
			}
			return saved, true
		}
		return nil, false
	}
	r.substStat = 0
	args, ok := r.fields(c.Args...)
	if !ok {
		// an expansion error: bash performs no redirection
		return nil, false
	}
	if len(args) == 0 {
		for _, as := range c.Assigns {
			if !r.assign(as, false) {
				r.assignFailed()
				return nil, false
			}
		}
		r.status = r.substStat
		if len(rds) > 0 {
			saved, ok := r.redirects(rds)
			if ok {
				r.status = r.substStat
			}
			return saved, true
		}
		return nil, false
	}
	if r.stageLift {
		r.stageLift = false
		r.subshell++
	}
	saved, applied = r.execWithAssigns(args, c.Assigns, rds)
	r.pipeMulti = nil
	r.pipeOne = r.status
	return saved, applied
}

// execWithAssigns runs a command with prefix assignments (x=1 cmd) and
// the statement's redirections rds, performed after the assignments are
// expanded but outside their scope (bash: `x=a cmd > $x` uses the outer x).
func (r *runner) execWithAssigns(args []string, assigns []*syntax.Assign, rds []*syntax.Redirect) (saved []*fdesc, applied bool) {
	r.argPrev, r.lastArg = r.lastArg, args[len(args)-1]
	if r.opts[optXtrace] && len(assigns) == 0 {
		r.xtrace(args)
	}
	if len(assigns) == 0 {
		if len(rds) > 0 {
			saved, ok := r.redirects(rds)
			if ok {
				r.exec(args, nil)
			}
			return saved, true
		}
		r.exec(args, nil)
		return nil, false
	}
	// A temporary scope holds the bindings, exported to children; each
	// value sees the bindings before it.
	r.own()
	tmp := &scope{vars: map[string]*Var{}, parent: r.vars, temp: true}
	r.vars = tmp
	var kept []string // the names bound, in order
	for _, as := range assigns {
		val := ""
		if as.Value != nil {
			v, ok := r.assignLiteral(as.Value)
			if !ok {
				r.popScope(tmp)
				return nil, false
			}
			val = v
		}
		if as.Array != nil {
			// bash passes the array text through as a string
			val = strings.TrimPrefix(wordText(&syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: arrayText(as.Array)}}}), "")
		} else if as.Index != nil {
			continue
		}
		if old := r.lookup(as.Name.Value); old != nil && old.Attr&attrReadonly != 0 {
			// bash says so and runs the command without this one; in
			// POSIX mode the shell exits (127 before a special builtin)
			r.errf("%s: readonly variable", as.Name.Value)
			if r.opts[optPosix] {
				r.popScope(tmp)
				r.status, r.exiting = 1, true
				if specialBuiltins[args[0]] {
					r.status = r.posixAssignStatus()
				}
				return nil, false
			}
			continue
		}
		if as.Append {
			if old := r.lookup(as.Name.Value); old != nil {
				val = old.str() + val
			}
		}
		tmp.vars[as.Name.Value] = &Var{Set: true, Kind: expand.String, Str: val, Attr: attrExport}
		kept = append(kept, as.Name.Value)
		if r.opts[optXtrace] {
			r.xtraceAssign(as.Name.Value, val)
		}
	}
	if r.opts[optXtrace] {
		r.xtrace(args)
	}
	if len(rds) > 0 {
		r.popScope(tmp)
		var ok bool
		saved, ok = r.redirects(rds)
		if !ok {
			return saved, true
		}
		r.own()
		tmp = &scope{vars: tmp.vars, parent: r.vars, temp: true}
		r.vars = tmp
		applied = true
	}
	r.exec(args, nil)
	r.popScope(tmp)
	if r.opts[optPosix] && specialBuiltins[args[0]] {
		// POSIX: assignments before a special builtin stay in the shell
		// (x=1 :, var=20 return)
		for _, name := range kept {
			r.setVar(name, tmp.vars[name].Str)
		}
	}
	return saved, applied
}

// funcNest is $FUNCNEST as a positive number, else 0 (no limit).
func (r *runner) funcNest() int {
	v := r.lookup("FUNCNEST")
	if v == nil || !v.Set {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.str()))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func (r *runner) popScope(s *scope) {
	// The scope may have been replaced by own(); find it by depth.
	r.own()
	if r.vars.temp {
		r.vars = r.vars.parent
	}
}

// exec runs argv through the ladder: function, builtin, nested shell,
// resident command, script or binary in the vfs.
func (r *runner) exec(args []string, extraEnv []string) {
	name := args[0]
	if body, ok := r.funcs[name]; ok {
		r.callFunc(name, body, args[1:])
		return
	}
	if b, ok := builtins[name]; ok {
		r.runBuiltin(b, args)
		return
	}
	r.external(args, extraEnv)
}

func (r *runner) runBuiltin(b builtinFunc, args []string) {
	r.outErr = nil
	r.status = b(r, args)
	if r.outErr != nil {
		err := r.outErr
		r.outErr = nil
		if r.status == 0 {
			r.status = r.writeErr(args[0], err)
		}
	}
}

func (r *runner) callFunc(name string, body *syntax.Stmt, args []string) {
	if n := r.funcNest(); n > 0 && len(r.funcNames) >= n {
		// bash's FUNCNEST: the call fails and the command line with it
		r.errf("%s: maximum function nesting level exceeded (%d)", name, n)
		r.status = 1
		r.exiting = true
		r.abandonLine = true
		return
	}
	if r.callDepth >= r.rs.lim.MaxCallDepth {
		r.errf("%s: maximum function nesting level exceeded (%d)", name, r.rs.lim.MaxCallDepth)
		r.rs.fail(limitf("function nesting limit exceeded (%d)", r.rs.lim.MaxCallDepth))
		r.exiting = true
		r.status = 1
		return
	}
	r.own()
	savedParams := r.params
	savedOptChar, savedOptInd := r.optind, r.goptInd
	r.params = args
	fscope := &scope{vars: map[string]*Var{}, parent: r.vars}
	r.vars = fscope
	r.funcNames = append(r.funcNames, name)
	r.frames = append(r.frames, frame{name: name, file: r.funcFile[name], line: r.lineno})
	// bash sets $_ to the call's last word once the function is done; the
	// body starts with the $_ of the command before the call
	callLast := r.lastArg
	r.lastArg = r.argPrev
	r.callDepth++
	savedLoops := r.loopDepth
	r.loopDepth = 0
	sets := r.returnTrapSets
	// A body's lines are its script's, not those of an eval that calls it.
	base := r.lineBase
	r.lineBase = 0
	r.stmt(body)
	r.lineBase = base
	// The call is a simple command: set -e and ERR look at its status,
	// whatever short-circuited list inside produced it.
	r.andOrFail = false
	_, localOptind := fscope.vars["OPTIND"]
	if saved := fscope.savedOpts; saved != nil {
		for i, on := range saved {
			if r.opts[i] != on {
				r.setOption(optNames[i], on)
			}
		}
	}
	r.releaseScope(fscope)
	if localOptind {
		// bash gives getopts back its place in the caller's words when
		// the function had its own OPTIND (a nested getopts loop)
		r.optind, r.goptInd = savedOptChar, savedOptInd
	}
	r.loopDepth = savedLoops
	r.callDepth--
	if r.returning {
		r.returning = false
	}
	if t, ok := r.traps["RETURN"]; ok && t != "" && !r.inTrap && (r.opts[optFunctrace] || r.returnTrapSets != sets) {
		st := r.status
		r.inTrap = true
		r.runScript(t, "")
		r.inTrap = false
		r.status = st
	}
	r.funcNames = r.funcNames[:len(r.funcNames)-1]
	r.frames = r.frames[:len(r.frames)-1]
	r.lastArg = callLast
	r.own()
	// pop to the scope below the function scope
	depth := 0
	for s := r.vars; s != nil; s = s.parent {
		if s.temp || len(r.funcNames) >= 0 {
			break
		}
		depth++
	}
	r.vars = r.popFuncScope()
	r.params = savedParams
}

// popFuncScope drops the innermost non-temp scope and everything above it.
func (r *runner) popFuncScope() *scope {
	for s := r.vars; s != nil; s = s.parent {
		if !s.temp {
			return s.parent
		}
	}
	return r.global
}

// invocation builds what a resident command sees.
func (r *runner) invocation(args, extraEnv []string) *commands.Invocation {
	inv := new(commands.Invocation)
	r.fillInvocation(inv, args, extraEnv)
	return inv
}

// fillInvocation is invocation into inv (runResident's is part of a
// larger allocation).
func (r *runner) fillInvocation(inv *commands.Invocation, args, extraEnv []string) {
	env := r.environ()
	if len(extraEnv) > 0 {
		env = append(env[:len(env):len(env)], extraEnv...)
	}
	r.curArgs = args
	h := r.cmdHooks()
	*inv = commands.Invocation{
		Args:     args,
		Stdin:    r.stdin(),
		Stdout:   r.stdout(),
		Stderr:   r.stderr(),
		Dir:      r.cwd,
		Env:      env,
		FS:       r.sh.cfg.FS,
		OpenHook: h.open,
		Exec:     h.exec,
		ExecDir:  h.execDir,
		Lookup:   h.lookup,
		Umask:    fs.FileMode(r.umask) & fs.ModePerm,
		Sys:      &h.sys,
	}
}

// hooks are the per-runner parts of an Invocation, built once per runner
// (a subshell builds its own: its jobs and descriptors are its own).
type hooks struct {
	sys     commands.System
	open    func(name string, flag int, perm fs.FileMode) (commands.File, bool, error)
	exec    func(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int
	execDir func(ctx context.Context, dir string, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int
	lookup  func(name string, all bool) []string
	// procs and kill are this runner's, for sys when the Config has none.
	procs func() []commands.Proc
	kill  func(pid int, sig string) error
}

func (r *runner) cmdHooks() *hooks {
	if r.hooksOf == r {
		return r.hooks
	}
	h := &hooks{open: r.openHook, exec: r.execHook, execDir: r.execDirHook, lookup: r.lookupPaths, procs: r.procs, kill: r.killPid}
	h.sys = r.system(h.procs, h.kill)
	r.hooks, r.hooksOf = h, r
	return h
}

// rehook makes h, the hooks built for r (a pooled stage runner) under a
// former Shell, r's hooks under its new one: the funcs are r's method
// values, which read r when called, so only the System is rebuilt, in
// place. That is as safe as the pool's reuse of r itself: the former
// stage's Invocations ended before r went back to the pool. With many
// sandboxes the pool seldom hands a runner back to its own Shell, and
// building new hooks (seven funcs, ~380 B) per stage cost ~1 µs in the
// density bench.
func (r *runner) rehook(h *hooks) {
	h.sys = r.system(h.procs, h.kill)
	r.hooks, r.hooksOf = h, r
}

// system is what commands see of the sandbox: Config.Sys completed from
// the Config and this runner's pid space and jobs (procs and kill, r's).
func (r *runner) system(procs func() []commands.Proc, kill func(pid int, sig string) error) commands.System {
	cfg := &r.sh.cfg
	var s commands.System
	if cfg.Sys != nil {
		s = *cfg.Sys
	}
	if s.Hostname == "" {
		s.Hostname = cfg.Hostname
	}
	if cfg.Sys == nil {
		s.Uid, s.Gid = cfg.Uid, cfg.Gid
	}
	if s.User == "" {
		s.User = cfg.User
	}
	if s.NumCPU == 0 {
		s.NumCPU = 1
	}
	if s.Started.IsZero() {
		s.Started = r.start
	}
	if s.MaxMemoryBytes == 0 {
		s.MaxMemoryBytes = int64(r.sh.lim.MaxStringBytes) * 4
	}
	if s.Now == nil {
		s.Now = cfg.Now
	}
	if s.Procs == nil {
		s.Procs = procs
	}
	if s.Kill == nil {
		s.Kill = kill
	}
	return s
}

// procs lists the sandbox processes: the shell, the subshell the command
// runs in, the session's live background jobs and the calling command.
func (r *runner) procs() []commands.Proc {
	ps := []commands.Proc{{Pid: r.pid, PPid: r.ppid, Cmd: "bash", Started: r.start}}
	parent := r.pid
	if r.bashpid != r.pid {
		ps = append(ps, commands.Proc{Pid: r.bashpid, PPid: r.pid, Cmd: "bash", Started: r.start})
		parent = r.bashpid
	}
	for _, j := range r.sh.jobs.list() {
		ps = append(ps, commands.Proc{Pid: j.pid, PPid: r.pid, Cmd: j.cmd, Started: j.started})
	}
	slices.SortFunc(ps, func(a, b commands.Proc) int { return a.Pid - b.Pid })
	if len(r.curArgs) > 0 {
		ps = append(ps, commands.Proc{Pid: r.newPid(), PPid: parent, Cmd: strings.Join(r.curArgs, " "), Started: r.now()})
	}
	return ps
}

// killPid is kill(2) inside the sandbox for commands: background jobs end
// (TERM, KILL, INT, HUP...), signal 0 probes, the shell's own pid is
// refused (a command cannot signal the shell that waits for it).
func (r *runner) killPid(pid int, sig string) error {
	j := r.sh.jobs.byPid(pid)
	if j == nil {
		if pid == r.pid || pid == r.bashpid {
			return syscall.EPERM
		}
		return syscall.ESRCH
	}
	if _, ok := normSig(sig); !ok {
		return syscall.EINVAL
	}
	if j.Signal(sig) != nil {
		return syscall.ESRCH
	}
	return nil
}

func (r *runner) openHook(name string, flag int, perm fs.FileMode) (commands.File, bool, error) {
	f, handled, err := r.openSpecial(name, flag)
	if !handled {
		// Opened here, not by the command after a Stat: one walk. The
		// command gets the same *vfs.File its own open would return.
		vf, fifo, verr := r.openVFS(name, flag, perm)
		switch {
		case fifo:
			f, err = r.openFifo(name, flag)
			handled = true
		case verr == nil:
			return vf, true, nil
		case readOnlyOpen(flag):
			return nil, false, nil // the command's own open reports it
		default:
			// Not opened again by the command: a writing open may have
			// waited for the write gate.
			return nil, true, verr
		}
	}
	if err != nil {
		return nil, true, err
	}
	return asFile(f), true, nil
}

func (r *runner) execHook(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	if len(argv) == 0 {
		return 0
	}
	sub := r.subshellRunner()
	defer sub.closeMem()
	sub.own()
	return sub.execArgv(argv, stdin, stdout, stderr, env)
}

// execArgv runs argv in the (already private) subshell r with env's
// variables exported and the given streams.
func (r *runner) execArgv(argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	r.fds = []*fdesc{{r: stdin}, {w: stdout}, {w: stderr}}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && syntax.ValidName(k) {
			if cur := r.lookup(k); cur == nil || cur.str() != v {
				r.global.vars[k] = &Var{Set: true, Kind: expand.String, Str: v, Attr: attrExport}
			}
		}
	}
	r.envCache = nil
	r.execProgram(argv, nil)
	return r.status
}

// execProgram runs argv as a program, the way exec, env, xargs and find
// -exec do in bash: execve finds files, never the shell's builtins or
// functions, so `env printf %q x` is coreutils printf, not the builtin.
// Functions are never reached; a builtin no file or resident command
// answers to still runs (an image may lack /bin/kill where a real system
// has it).
func (r *runner) execProgram(argv []string, extraEnv []string) {
	name := argv[0]
	b, isBuiltin := builtins[name]
	if !isBuiltin || (name != "bash" && name != "sh" && len(r.lookupPaths(name, false)) > 0) {
		r.external(argv, extraEnv)
		return
	}
	r.runBuiltin(b, argv)
}

// execDirHook is execHook with the command's working directory.
func (r *runner) execDirHook(ctx context.Context, dir string, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	if len(argv) == 0 {
		return 0
	}
	sub := r.subshellRunner()
	defer sub.closeMem()
	sub.own()
	if dir != "" {
		sub.cwd = r.abs(dir)
		sub.global.vars["PWD"] = &Var{Set: true, Kind: expand.String, Str: sub.cwd, Attr: attrExport}
	}
	return sub.execArgv(argv, stdin, stdout, stderr, env)
}

// external runs a non-builtin command.
func (r *runner) external(args []string, extraEnv []string) {
	if len(r.jobs) > 0 {
		defer r.noteEndedJobs()
	}
	name := args[0]
	if r.execArgv0 != "" {
		// exec -a/-l: the command is found by its name, runs with this
		// argv[0]
		args = append([]string{r.execArgv0}, args[1:]...)
		r.execArgv0 = ""
	}
	if name == "bash" || name == "sh" {
		r.status = r.nestedShell(args, extraEnv)
		return
	}
	if !strings.Contains(name, "/") {
		if fn, ok := r.sh.cfg.Commands[name]; ok {
			// A script of that name earlier in PATH wins (test doubles).
			if !r.customPath() {
				if !r.nativeFirst(name, args, extraEnv) {
					r.status = r.runResident(fn, args, extraEnv)
				}
				return
			}
			if p, found := r.pathLookup(name); !found || p == "/bin/"+name || !r.isScript(p) {
				if !r.nativeFirst(name, args, extraEnv) {
					r.status = r.runResident(fn, args, extraEnv)
				}
				return
			}
		}
		p, ok := r.pathLookup(name)
		if !ok {
			r.count(RungMissing, "")
			r.errf("%s: command not found", name)
			r.status = 127
			return
		}
		r.runFile(r.abs(p), args, extraEnv)
		return
	}
	r.runFile(r.abs(name), args, extraEnv)
}

// pathLookup searches $PATH in the vfs for an executable file.
// pathValue is the search path: $PATH, or during command -p the system's
// default (getconf PATH on Debian).
func (r *runner) pathValue() string {
	if r.stdPath {
		return "/bin:/usr/bin"
	}
	if v := r.lookup("PATH"); v != nil {
		return v.str()
	}
	return ""
}

func (r *runner) pathLookup(name string) (string, bool) {
	pathv := r.pathValue()
	for _, dir := range strings.Split(pathv, ":") {
		if dir == "" {
			dir = "."
		}
		p := strings.TrimSuffix(dir, "/") + "/" + name
		fi, err := r.sh.cfg.FS.Stat(r.abs(p))
		if err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
		if err != nil && (dir == "/bin" || dir == "/usr/bin") && r.resident(name) {
			// resident commands appear to live in /bin
			return p, true
		}
	}
	return "", false
}

// runFile executes a file of the sandbox: a script (nested shell), an ELF
// binary (native tier or a resident command of the same name) or a wasm
// module (the WASM tier, when the sandbox has one).
func (r *runner) runFile(p string, args, extraEnv []string) {
	fsys := r.sh.cfg.FS
	fi, err := fsys.Stat(p)
	if err != nil && (strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/usr/bin/")) {
		// /bin/NAME for a resident command or builtin that has no file
		base := p[strings.LastIndexByte(p, '/')+1:]
		if fn, ok := r.sh.cfg.Commands[base]; ok {
			r.status = r.runResident(fn, args, extraEnv)
			return
		}
		if b, ok := builtins[base]; ok && base != "cd" && base != "exit" {
			r.status = b(r, args)
			return
		}
		if base == "bash" || base == "sh" {
			r.status = r.nestedShell(args, extraEnv)
			return
		}
	}
	if err != nil {
		r.errf("%s: %s", args[0], errText(err))
		r.status = 127
		return
	}
	if fi.IsDir() {
		r.errf("%s: Is a directory", args[0])
		r.status = 126
		return
	}
	if fi.Mode()&0o111 == 0 {
		r.errf("%s: Permission denied", args[0])
		r.status = 126
		return
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	head := make([]byte, 256)
	n := 0
	if f, err := fsys.Open(p); err == nil {
		n, _ = io.ReadFull(f, head)
		f.Close()
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		if r.sh.cfg.Native != nil {
			r.count(RungNative, "")
			inv := r.invocation(args, extraEnv)
			r.status = r.sh.cfg.Native(r.context(), inv, p)
			return
		}
		if fn, ok := r.sh.cfg.Commands[base]; ok {
			r.status = r.runResident(fn, args, extraEnv)
			return
		}
		r.errf("%s: cannot execute binary file: Exec format error", args[0])
		r.status = 126
		return
	case bytes.HasPrefix(head, []byte("\x00asm")):
		if r.sh.cfg.WASM != nil {
			r.count(RungWASM, "")
			r.status = r.sh.cfg.WASM(r.context(), r.invocation(args, extraEnv), p)
			return
		}
		r.errf("%s: cannot execute WebAssembly module: wasm tier not available", args[0])
		r.status = 126
		return
	}
	if fn, ok := r.sh.cfg.Commands[base]; ok && n == 0 {
		// An empty placeholder file named like a resident command.
		r.status = r.runResident(fn, args, extraEnv)
		return
	}
	interp := ""
	if bytes.HasPrefix(head, []byte("#!")) {
		line := string(head[2:])
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		interp = strings.TrimSpace(line)
	}
	if interp != "" {
		fields := strings.Fields(interp)
		prog := fields[0]
		pbase := prog[strings.LastIndexByte(prog, '/')+1:]
		if pbase == "env" && len(fields) > 1 {
			fields = fields[1:]
			pbase = fields[0]
		}
		if pbase != "bash" && pbase != "sh" {
			argv := append(append([]string{pbase}, fields[1:]...), p)
			argv = append(argv, args[1:]...)
			if fn, ok := r.sh.cfg.Commands[pbase]; ok {
				r.status = r.runResident(fn, argv, extraEnv)
				return
			}
			r.errf("%s: %s: bad interpreter: No such file or directory", args[0], prog)
			r.status = 126
			return
		}
	}
	argv := append([]string{"bash", p}, args[1:]...)
	r.status = r.nestedShell(argv, extraEnv)
}

// nestedShell runs `bash ARGS` as a new interpreter over the same vfs.
func (r *runner) nestedShell(args, extraEnv []string) int {
	if r.callDepth >= r.rs.lim.MaxCallDepth {
		r.errf("%s: maximum nesting level exceeded", args[0])
		r.rs.fail(limitf("nesting limit exceeded (%d)", r.rs.lim.MaxCallDepth))
		r.exiting = true
		return StatusLimit
	}
	n := newRunner(&Shell{cfg: r.sh.cfg, lim: r.sh.lim, timeoutErr: r.sh.timeoutErr})
	n.sh.cfg.Env = append(r.environ(), extraEnv...)
	n = newRunner(n.sh)
	n.sh.st = n
	n.importFuncs(n.sh.cfg.Env)
	n.rs = r.rs
	defer n.closeMem()
	n.pidNext = r.pidNext
	n.pid = r.newPid()
	n.bashpid = n.pid
	n.ppid = r.pid
	n.cwd = r.cwd
	n.setVar("PWD", r.cwd)
	n.callDepth = r.callDepth + 1
	n.fds = append([]*fdesc(nil), r.fds...)
	n.arg0 = args[0]
	if path.Base(args[0]) == "sh" {
		n.setOption("posix", true) // bash run as sh is in POSIX mode
	}
	i := 1
	script := ""
	haveC := false
	readStdin := false
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if a == "-c" {
			haveC = true
			continue
		}
		if a == "--version" {
			io.WriteString(n.stdout(), bashVersionBanner)
			return 0
		}
		if a == "-s" {
			readStdin = true
			continue
		}
		if a == "-o" || a == "+o" {
			if i+1 < len(args) {
				i++
				n.setOption(args[i], a == "-o")
			}
			continue
		}
		if a == "-O" || a == "+O" {
			if i+1 < len(args) {
				i++
				n.setShopt(args[i], a == "-O")
			}
			continue
		}
		if a == "--posix" {
			n.setOption("posix", true)
			continue
		}
		if a == "--norc" || a == "--noprofile" || a == "--login" || a == "-l" || a == "-i" || a == "-p" {
			continue
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') && a != "-" {
			ok := true
			for _, c := range a[1:] {
				if c == 'c' {
					haveC = true
					continue
				}
				if c == 's' {
					readStdin = true
					continue
				}
				if c == 'i' || c == 'l' {
					continue
				}
				if !n.setFlag(byte(c), a[0] == '-') {
					ok = false
				}
			}
			if !ok {
				r.errf("%s: invalid option", a)
				return 2
			}
			continue
		}
		break
	}
	rest := args[i:]
	switch {
	case haveC:
		n.dashC = true
		if len(rest) == 0 {
			r.errf("-c: option requires an argument")
			return 2
		}
		script = rest[0]
		if len(rest) > 1 {
			n.arg0 = rest[1]
			n.params = append([]string(nil), rest[2:]...)
		} else {
			n.arg0 = args[0]
		}
		n.arg0bash(args[0], len(rest) > 1)
		n.setVar("BASH_EXECUTION_STRING", script)
		n.cMode = true
	case len(rest) > 0 && !readStdin:
		p := rest[0]
		data, err := r.readFileAll(p)
		if err != nil {
			if ap, ok := r.pathLookup(p); ok && !strings.Contains(p, "/") {
				data, err = r.readFileAll(ap)
			}
		}
		if err != nil {
			io.WriteString(r.stderr(), args[0]+": "+p+": "+errText(err)+"\n")
			return 127
		}
		script = string(data)
		n.readsFile(p, rest[1:])
	default:
		data, err := io.ReadAll(io.LimitReader(r.stdin(), int64(r.rs.lim.MaxStringBytes)))
		if err != nil && len(data) == 0 {
			data = nil
		}
		script = string(data)
		n.params = append([]string(nil), rest...)
	}
	if n.opts[optNoexec] {
		if _, err := n.parse(script); err != nil {
			return n.syntaxErrorIn(err, script, true) // a script's end-of-file line
		}
		return 0
	}
	n.runScript(script, "")
	n.runExitTrap()
	// Its background jobs outlive it, as bash's do (jobs.go).
	if r.cancelled() {
		r.exiting = true
	}
	return n.status
}

// readsFile makes r the shell of `bash NAME ARGS...`: $0, BASH_SOURCE
// and the prefix of its messages are name, its parameters args.
func (r *runner) readsFile(name string, args []string) {
	r.arg0, r.params = name, slices.Clone(args)
	r.dashFile = true
	r.srcNames = []string{name}
	r.topSrc, r.curSrc = name, name
}

// bashVersionBanner is what bash --version prints: the bash warren's shell
// follows (BASH_VERSION).
const bashVersionBanner = `GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)
Copyright (C) 2022 Free Software Foundation, Inc.
License GPLv3+: GNU GPL version 3 or later <http://gnu.org/licenses/gpl.html>

This is free software; you are free to change and redistribute it.
There is NO WARRANTY, to the extent permitted by law.
`

func (n *runner) arg0bash(shell string, explicit bool) {
	if !explicit {
		n.arg0 = shell
	}
}

func (r *runner) readFileAll(p string) ([]byte, error) {
	f, err := r.openFile(p, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer closeIf(f)
	return io.ReadAll(io.LimitReader(f.(io.Reader), int64(r.rs.lim.MaxStringBytes)))
}

func closeIf(x any) {
	if c, ok := x.(io.Closer); ok {
		c.Close()
	}
}

func (r *runner) setFlag(c byte, on bool) bool {
	for i, l := range optLetters {
		if l == c && l != 0 {
			r.opts[i] = on
			return true
		}
	}
	return false
}

func (r *runner) setOption(name string, on bool) bool {
	for i, n := range optNames {
		if n == name {
			r.opts[i] = on
			// the two editing modes exclude each other
			if on && i == optVi {
				r.opts[optEmacs] = false
			} else if on && i == optEmacs {
				r.opts[optVi] = false
			}
			if i == optPosix {
				r.setShopt("shift_verbose", on) // as bash's posix mode does
			}
			return true
		}
	}
	return false
}

// declClause runs declare/typeset/local/export/readonly/nameref.
func (r *runner) declClause(c *syntax.DeclClause) {
	r.declClauseRedir(c, nil)
}

// declClauseRedir runs declare & co. with the statement's redirections rds
// performed after the arguments are expanded, as for any simple command:
// `export x=$(cat f) > f` sees f's old content. (Array literals are still
// expanded after the redirections.)
func (r *runner) declClauseRedir(c *syntax.DeclClause, rds []*syntax.Redirect) (saved []*fdesc, applied bool) {
	if !r.countCommand() {
		return nil, false
	}
	r.debugTrap()
	variant := c.Variant.Value
	var flags []string
	var operands []*syntax.Assign
	endOpts := false
	for _, as := range c.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			// an option or an expanded word
			ws, ok := r.fields(as.Value)
			if !ok {
				return nil, false
			}
			for _, w := range ws {
				if w == "--" && !endOpts && len(operands) == 0 {
					endOpts = true // declare -- x=1, as declare -p prints it
					continue
				}
				if len(w) > 1 && (w[0] == '-' || w[0] == '+') && len(operands) == 0 && !endOpts {
					flags = append(flags, w)
					continue
				}
				// a word like "a=b" produced by expansion
				name, val, hasEq := strings.Cut(w, "=")
				na := &syntax.Assign{Name: &syntax.Lit{Value: name}}
				if hasEq {
					if strings.HasSuffix(name, "+") {
						na.Append = true
						na.Name.Value = name[:len(name)-1]
					}
					na.Value = &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: val}}}
				} else {
					na.Naked = true
				}
				if i := strings.IndexByte(na.Name.Value, '['); i > 0 && strings.HasSuffix(na.Name.Value, "]") {
					idx := na.Name.Value[i+1 : len(na.Name.Value)-1]
					na.Name.Value = na.Name.Value[:i]
					na.Index = litWord(idx)
				}
				operands = append(operands, na)
			}
			continue
		}
		operands = append(operands, as)
	}
	trace := r.opts[optXtrace]
	if len(rds) > 0 || trace {
		for i, as := range operands {
			if as.Value == nil || as.Array != nil {
				continue
			}
			v, ok := r.assignLiteral(as.Value)
			if !ok {
				return nil, false
			}
			na := *as // the AST is shared: copy, never modify
			na.Value = &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: v}}}
			operands[i] = &na
		}
	}
	if trace {
		r.xtraceDecl(variant, flags, operands)
	}
	if len(rds) > 0 {
		var ok bool
		saved, ok = r.redirects(rds)
		if !ok {
			return saved, true
		}
		applied = true
	}
	r.status = r.declare(variant, flags, operands)
	r.lastArg = r.declLastArg(variant, flags, operands)
	r.pipeMulti, r.pipeOne = nil, r.status // a simple command: $PIPESTATUS is its status
	return saved, applied
}

var _ = strconv.Itoa

func (r *runner) resident(name string) bool {
	_, ok := r.sh.cfg.Commands[name]
	return ok || binaryBuiltins[name]
}

// binaryBuiltins are builtins that a Linux system also has as files in
// /usr/bin (type -a lists both).
var binaryBuiltins = map[string]bool{"bash": true, "sh": true, "echo": true, "printf": true, "pwd": true, "test": true, "[": true, "true": true, "false": true, "kill": true}

// isScript reports whether p is an executable text file of the sandbox.
func (r *runner) isScript(p string) bool {
	f, err := r.sh.cfg.FS.Open(r.abs(p))
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if n == 0 {
		return false
	}
	return !bytes.HasPrefix(head[:n], []byte("\x7fELF")) && !bytes.HasPrefix(head[:n], []byte("\x00asm"))
}

var stdPathDirs = map[string]bool{"/usr/local/sbin": true, "/usr/local/bin": true, "/usr/sbin": true, "/usr/bin": true, "/sbin": true, "/bin": true}

// customPath reports whether PATH holds directories beyond the standard
// ones, where a script could shadow a resident command.
func (r *runner) customPath() bool {
	v := r.lookup("PATH")
	if v == nil {
		return false
	}
	p := v.str()
	// Sessions keep the default PATH (one string for all of them): the
	// verdict on the last PATH seen is kept, so the common case is one
	// comparison (same bytes at the same address), not a scan.
	if last := lastPathVerdict.Load(); last != nil && last.path == p {
		return last.custom
	}
	custom := isCustomPath(p)
	lastPathVerdict.Store(&pathVerdict{p, custom})
	return custom
}

type pathVerdict struct {
	path   string
	custom bool
}

var lastPathVerdict atomic.Pointer[pathVerdict]

func isCustomPath(p string) bool {
	// no strings.Split: this runs for every resident command
	for {
		d, rest, more := strings.Cut(p, ":")
		if !stdPathDirs[d] {
			return true // includes "" (the cwd)
		}
		if !more {
			return false
		}
		p = rest
	}
}

func arrayText(a *syntax.ArrayExpr) string {
	var b strings.Builder
	b.WriteByte('(')
	pr := syntax.NewPrinter()
	for i, e := range a.Elems {
		if i > 0 {
			b.WriteByte(' ')
		}
		if e.Index != nil {
			b.WriteByte('[')
			pr.Print(&b, e.Index)
			b.WriteString("]=")
		}
		if e.Value != nil {
			pr.Print(&b, e.Value)
		}
	}
	b.WriteByte(')')
	return b.String()
}
