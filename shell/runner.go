package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Shell options (set -o).
const (
	optErrexit = iota
	optNounset
	optPipefail
	optXtrace
	optNoglob
	optNoclobber
	optVerbose
	optAllexport
	optNoexec
	optErrtrace
	optFunctrace
	optPosix
	optHashall
	optBraceexpand
	optMonitor
	optInteractive
	// Options bash lists that mean nothing here (editing, history, job
	// notification, -k, -t, -P, -p): kept so that `set -o`/`set +o` list
	// and restore every option bash has. Appended: saved states hold the
	// options as a bitmask by index.
	optEmacs
	optHistexpand
	optHistory
	optIgnoreeof
	optKeyword
	optNolog
	optNotify
	optOnecmd
	optPhysical
	optPrivileged
	optVi
	numOpts
)

var optNames = [numOpts]string{"errexit", "nounset", "pipefail", "xtrace", "noglob", "noclobber", "verbose", "allexport", "noexec", "errtrace", "functrace", "posix", "hashall", "braceexpand", "monitor", "interactive-comments",
	"emacs", "histexpand", "history", "ignoreeof", "keyword", "nolog", "notify", "onecmd", "physical", "privileged", "vi"}
var optLetters = [numOpts]byte{'e', 'u', 0, 'x', 'f', 'C', 'v', 'a', 'n', 'E', 'T', 0, 'h', 'B', 'm', 0}

// shoptNames are bash 5.2's shopt options in the order it lists them;
// the ones that mean nothing here are accepted and stored.
var shoptNames = []string{"autocd", "assoc_expand_once", "cdable_vars", "cdspell", "checkhash", "checkjobs", "checkwinsize", "cmdhist", "compat31", "compat32", "compat40", "compat41", "compat42", "compat43", "compat44", "complete_fullquote", "direxpand", "dirspell", "dotglob", "execfail", "expand_aliases", "extdebug", "extglob", "extquote", "failglob", "force_fignore", "globasciiranges", "globskipdots", "globstar", "gnu_errfmt", "histappend", "histreedit", "histverify", "hostcomplete", "huponexit", "inherit_errexit", "interactive_comments", "lastpipe", "lithist", "localvar_inherit", "localvar_unset", "login_shell", "mailwarn", "no_empty_cmd_completion", "nocaseglob", "nocasematch", "noexpand_translation", "nullglob", "patsub_replacement", "progcomp", "progcomp_alias", "promptvars", "restricted_shell", "shift_verbose", "sourcepath", "varredir_close", "xpg_echo"}

// runState is what all runners of one Run share.
type runState struct {
	ctx      context.Context
	parent   context.Context // the caller's: newPipe's AfterFunc watches it (the deadline kills pipes itself)
	commands atomic.Int64
	loops    atomic.Int64
	jobs     *atomic.Int64 // live goroutines of the session (Shell.goroutines)
	out      atomic.Int64  // output bytes
	lim      *Limits
	fatal    atomic.Pointer[limitError]
	wg       sync.WaitGroup
	pipesMu  sync.Mutex
	pipes    []*pipe     // live pipes (pipe.slot is the index), killed when the Run ends
	unpipe   func() bool // stops the AfterFunc that kills them; registered with the first pipe
	pipesBuf [2]*pipe    // pipes' first backing array (a Run's pipes are few)
	stderr   io.Writer
	stdinTop io.Reader
	outMu    sync.Mutex
	top      [2]io.Writer // the Run's own stdout and stderr (a job writing there writes to its log: jobs.go)
	term     *runTerm     // the same, for jobs, until the Run ends
	termBuf  runTerm      // what term points to for a top-level Run (one allocation less)
	ladder   ladder       // the Run's commands policy and rung counts (ladder.go)
	outW     limitWriter  // the Run's stdout and stderr (in the runState: one allocation less)
	errW     limitWriter
	std      [3]fdesc  // the Run's descriptors 0-2 and the table's first backing
	stdFds   [3]*fdesc // array (in the runState too: two allocations less)
}

func (rs *runState) fail(le *limitError) {
	rs.fatal.CompareAndSwap(nil, le)
}

// errCancelled unwinds after the Run's context ended or a limit was hit.
var errCancelled = errors.New("cancelled")

// fdesc is an open file descriptor of the shell.
type fdesc struct {
	r    io.Reader
	w    io.Writer
	c    io.Closer // closed when the last reference goes (only for files we opened)
	path string
	refs *int32
}

// name is the descriptor's path as bash shows it (pipe:[N] for a
// pipeline's pipe, which keeps no path of its own).
func (f *fdesc) name() string {
	if f.path != "" {
		return f.path
	}
	if p, ok := f.w.(*pipe); ok {
		return "pipe:[" + strconv.Itoa(p.id) + "]"
	}
	if p, ok := f.r.(*pipe); ok {
		return "pipe:[" + strconv.Itoa(p.id) + "]"
	}
	return ""
}

// runner executes shell code. The session (vars, funcs, options...) lives in
// it; subshells are clones sharing maps until they write (own()).
type runner struct {
	killedBy int  // the signal that ended this (sub)shell, for the parent's report (reportKilled)
	stdPath  bool // command -p: look commands up in the default path
	sh       *Shell
	rs       *runState

	global  *scope
	vars    *scope
	funcs   map[string]*syntax.Stmt
	aliases map[string]string
	traps   map[string]string
	// compSpecs: complete's specs, cloned on every write (rare), so a
	// subshell's copy of the pointer never sees its changes.
	compSpecs *compTable
	ulimits   *ulimits // nil: the defaults; replaced, never changed, on write

	params   []string
	arg0     string
	opts     [numOpts]bool
	shopts   map[string]bool
	cwd      string
	dirs     []string
	status   int
	pid      int // $$
	bashpid  int
	ppid     int
	lastBg   int
	seed     uint64
	dyn      *dynState         // dynvars.go; nil until a dynamic variable is assigned or unset
	funcAttr map[string]uint16 // funcattr.go: export -f, readonly -f
	start    time.Time
	shlvl    int
	jobs     []*Job // this shell's jobs (%N), the ended ones kept for wait PID (jobs.go)
	pidNext  *atomic.Int64
	subshell int
	// stageTop is a pipeline stage's own statement: its status is the
	// pipeline's to judge (bash runs no ERR trap in the stage for it).
	stageTop *syntax.Stmt
	// stageLift: a simple command's stage, whose words bash expands at
	// the parent's $BASH_SUBSHELL; the command itself runs one deeper.
	stageLift bool
	// ahead: how many pipelines running ahead this runner's goroutine is
	// inside (pipeline), which bounds its stack.
	ahead int
	// xfsz: this shell wrote past ulimit -f and ends as SIGXFSZ ends one
	// (153, no EXIT trap).
	xfsz bool

	fds []*fdesc

	// control flow
	breakN      int
	contN       int
	callDepth   int
	noErrExit   int // >0 in conditions, where errexit is off
	funcNames   []string
	srcNames    []string
	srcDepth    int // of funcNames, the "source" entries: sourced files, not functions
	frames      []frame
	topSrc      string // script file of this shell ("" for stdin/-c)
	cMode       bool   // this shell runs a bash -c string
	execArgv0   string // exec -a/-l: argv[0] for the command exec runs
	evalText    bool   // the text being run is an eval's (syntax errors say so)
	errLabel    string // a word after $0 in messages ("eval")
	curSrc      string // file being read (for functions' BASH_SOURCE)
	funcFile    map[string]string
	lineno      int
	curStmt     *syntax.Stmt // the simple command running, for $BASH_COMMAND (bashcommand.go)
	substStat   int          // status of the last command substitution
	lastArg     string
	argPrev     string // $_ before the simple command running (a function's body starts with it)
	optind      int    // getopts char position within a word
	fdLinks     map[string]*fdesc
	outErr      error
	jobCtx      context.Context   // a background job's own context (kill %N)
	jobGroup    *jobGroup         // the group of the job this runner runs in (nil: none; jobs.go)
	loopDepth   int               // enclosing loops in this function (break/continue)
	envCache    []string          // exported environment, rebuilt after any write
	parentTraps map[string]string // what `trap` lists in a subshell (bash shows the parent's)
	pipeOne     int
	pipeMulti   []int
	readDepth   int // nested runRead loops (1: the script's own)
	// returnTrapSets counts `trap ... RETURN`: a function runs the RETURN
	// trap only when it set it itself (or under functrace), as bash does.
	returnTrapSets int
	lineBase       int
	goptInd        int
	procFds        []procEnt
	curArgs        []string // the resident command running (for ps)
	hooks          *hooks   // what commands see of this runner; valid when hooksOf == r
	hooksOf        *runner
	mem            *commands.Reservation // this runner's memory charges (memory.go); nil until the first
	trapRunning    map[string]bool       // signals whose trap is running (re-raise is pending, not recursion)
	trapPending    map[string]bool
	arithNest      int // strings being evaluated as arithmetic (arith.go)

	// flags, together (a runner is copied per subshell and pipeline stage:
	// padding between scattered bools made it larger)
	umask      uint32
	shared     bool // maps above are borrowed from a parent: copy before writing
	exiting    bool
	assignFail bool // an assignment-only command failed: the shell exits, eval and source return 1
	returning  bool
	inTrap     bool
	trapStatus int // $? before the running trap: exit and return without an operand use it
	traceLevel int // eval, source and command substitution levels, for set -x (xtraceText)
	inBracket  bool
	inExitTrap bool // running the EXIT trap (a job ended by TERM or INT still runs it)
	exitCalled bool
	cdPhysical bool
	andOrFail  bool // status comes from a short-circuited && / || list
	// errInherited: the ERR trap came from the parent of a subshell without
	// set -E, so it is listed (trap -p) but does not run, as in bash.
	errInherited bool
	dashC        bool
	dashFile     bool // reads a script file (bash FILE): $- has neither c nor s
	abandonLine  bool // a failglob or $(( )) error unwinds to the top-level read loop
	permRedir    bool
	shoptsOwned  bool // shopts is private (else defaultShopts, never written)
}

// defaultShopts are the shopt settings of a new session, shared by every
// session until one changes an option (see biShopt).
var defaultShopts = map[string]bool{"extglob": true, "interactive_comments": true, "globskipdots": true, "sourcepath": true, "cmdhist": true, "extquote": true, "progcomp": true, "promptvars": true, "hostcomplete": true, "complete_fullquote": true, "checkwinsize": true, "patsub_replacement": true, "force_fignore": true, "globasciiranges": true}

// numDefaultVars is how many variables newRunner sets besides Config.Env.
const numDefaultVars = 21

func newRunner(s *Shell) *runner {
	// funcs, aliases and traps stay nil until written (after own()); the
	// default variables share one allocation.
	r := &runner{
		sh:      s,
		global:  &scope{vars: make(map[string]*Var, numDefaultVars+len(s.cfg.Env))},
		shopts:  defaultShopts,
		cwd:     s.cfg.Dir,
		umask:   0o022,
		arg0:    "bash",
		pidNext: new(atomic.Int64),
		start:   time.Now(),
	}
	r.opts[optHashall] = true
	r.opts[optInteractive] = true // interactive-comments
	r.opts[optBraceexpand] = true
	r.vars = r.global
	r.pipeMulti = []int{}
	r.pidNext.Store(1)
	r.pid = r.newPid()
	r.bashpid = r.pid
	r.ppid = 0
	r.seed = s.cfg.Seed
	if r.seed == 0 {
		r.seed = uint64(r.now().UnixNano())
	}
	slab := make([]Var, 0, numDefaultVars+len(s.cfg.Env))
	set := func(k, v string, attr uint16) {
		var nv *Var
		if len(slab) < cap(slab) {
			slab = append(slab, Var{Set: true, Kind: expand.String, Str: v, Attr: attr})
			nv = &slab[len(slab)-1]
		} else {
			nv = &Var{Set: true, Kind: expand.String, Str: v, Attr: attr}
		}
		r.global.vars[k] = nv
	}
	set("IFS", " \t\n", 0)
	set("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin", attrExport)
	set("HOME", s.cfg.Home, attrExport)
	set("USER", s.cfg.User, attrExport)
	set("LOGNAME", s.cfg.User, attrExport)
	set("HOSTNAME", s.cfg.Hostname, 0)
	set("SHELL", "/bin/bash", attrExport)
	set("TERM", "dumb", attrExport)
	set("UID", strconv.Itoa(s.cfg.Uid), attrReadonly|attrInteger)
	set("EUID", strconv.Itoa(s.cfg.Uid), attrReadonly|attrInteger)
	set("PPID", "0", attrReadonly|attrInteger)
	set("OPTIND", "1", 0)
	set("OPTERR", "1", 0)
	set("PS4", "+ ", 0)
	set("BASH", "/bin/bash", 0)
	set("BASH_VERSION", "5.2.15(1)-release", 0)
	set("HOSTTYPE", "x86_64", 0)
	set("OSTYPE", "linux-gnu", 0)
	set("MACHTYPE", "x86_64-pc-linux-gnu", 0)
	r.global.vars["BASH_VERSINFO"] = &Var{Set: true, Kind: expand.Indexed, List: slices.Clone(bashVersinfo), Attr: attrReadonly}
	for _, kv := range s.cfg.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !syntax.ValidName(k) {
			continue
		}
		set(k, v, attrExport)
	}
	shlvl := 0
	if v := r.global.vars["SHLVL"]; v != nil {
		shlvl, _ = strconv.Atoi(v.Str)
	}
	set("SHLVL", strconv.Itoa(shlvl+1), attrExport)
	set("PWD", r.cwd, attrExport)
	return r
}

var bashVersinfo = []string{"5", "2", "15", "1", "release", "x86_64-pc-linux-gnu"}

// setShopt is the only writer of r.shopts: the map may be the shared
// defaultShopts, which must never change (every session reads it).
func (r *runner) setShopt(name string, on bool) {
	r.own()
	if !r.shoptsOwned {
		r.shopts = maps.Clone(r.shopts)
		r.shoptsOwned = true
	}
	r.shopts[name] = on
}

func (r *runner) now() time.Time {
	if r.sh.cfg.Now != nil {
		return r.sh.cfg.Now()
	}
	return time.Now()
}

func (r *runner) newPid() int {
	return int(r.pidNext.Add(1))
}

// own makes the runner's maps private before a write, and forgets the
// exported environment (the write may change it).
func (r *runner) own() {
	r.envCache = nil
	r.ownMaps()
}

// ownMaps makes the runner's maps private, keeping the environment cache
// (for writes that cannot change it, see varForWrite).
func (r *runner) ownMaps() {
	if !r.shared {
		return
	}
	r.shared = false
	// Clone the scope chain, keeping the position of r.vars in it.
	depth := 0
	for s := r.vars; s != r.global; s = s.parent {
		depth++
	}
	r.vars = r.vars.cloneChain()
	g := r.vars
	for range depth {
		g = g.parent
	}
	r.global = g
	r.funcs = maps.Clone(r.funcs)
	r.funcFile = maps.Clone(r.funcFile)
	r.aliases = maps.Clone(r.aliases)
	r.traps = maps.Clone(r.traps)
	r.shopts = maps.Clone(r.shopts)
	r.shoptsOwned = true
}

// subshell returns a child runner: same state, copy-on-write maps, its own
// control flow.
func (r *runner) subshellRunner() *runner {
	c := new(runner)
	r.subshellInto(c)
	return c
}

// subshellInto makes c a subshell of r (c's old contents are overwritten).
func (r *runner) subshellInto(c *runner) {
	*c = *r
	c.shared = true
	r.shared = true // the parent must not write into maps the child reads
	c.fds = append([]*fdesc(nil), r.fds...)
	c.params = r.params
	// Clip the stacks: the child's appends must not write into the
	// parent's (or a sibling stage's) backing arrays.
	c.funcNames = c.funcNames[:len(c.funcNames):len(c.funcNames)]
	c.frames = c.frames[:len(c.frames):len(c.frames)]
	c.srcNames = c.srcNames[:len(c.srcNames):len(c.srcNames)]
	c.procFds = c.procFds[:len(c.procFds):len(c.procFds)]
	c.params = c.params[:len(c.params):len(c.params)]
	c.dirs = append([]string(nil), r.dirs...)
	c.jobs = nil
	c.exiting, c.breakN, c.contN, c.returning = false, 0, 0, false
	c.trapRunning, c.trapPending = nil, nil // a subshell's own (stages run concurrently)
	c.mem = nil                             // its own charges, given back when it ends
	c.subshell++
	if !r.opts[optErrtrace] {
		c.errInherited = true // without set -E the ERR trap stays behind
	}
	c.bashpid = r.newPid()
	// EXIT and DEBUG traps do not carry into a subshell, and a caught
	// signal's action goes back to the default there (an ignored one
	// stays ignored): bash's subshell is a child process, and exec resets
	// caught signals. `trap` still lists the parent's until the subshell
	// sets one of its own.
	reset := false
	for k, v := range c.traps {
		if notInherited(k, v) {
			reset = true
			break
		}
	}
	if reset {
		c.parentTraps = r.traps
		c.own()
		for k, v := range c.traps {
			if notInherited(k, v) {
				delete(c.traps, k)
			}
		}
	}
}

// notInherited reports whether trap name (action) is left behind by a
// subshell: EXIT, DEBUG and caught signals (ERR and RETURN follow set -E
// and set -T elsewhere; an ignored signal stays ignored).
func notInherited(name, action string) bool {
	switch name {
	case "EXIT", "DEBUG":
		return true
	case "ERR", "RETURN":
		return false
	}
	return action != ""
}

// stagePool recycles the runners of pipeline stages: a runner is 760
// bytes, copied per stage, and the heartbeat of an idle agent is a
// pipeline (issue 12). A stage's runner goes back only once its stage has
// ended, zeroed (releaseStage), so nothing of one sandbox reaches another;
// what ran in it keeps no pointer to it past its end: the goroutines of
// process substitutions and jobs keep the runState and the Shell, not the
// runner.
var stagePool = sync.Pool{New: func() any { return new(runner) }}

// stageRunner is subshellRunner for a pipeline stage: call releaseStage when
// the stage has ended.
func (r *runner) stageRunner() *runner {
	c := stagePool.Get().(*runner)
	h, hsh := c.hooks, c.sh
	r.subshellInto(c)
	c.stageTop, c.stageLift = nil, false
	switch {
	case h != nil && hsh == r.sh:
		// The hooks of this runner pointer, built for the same Shell: the
		// same as cmdHooks would build (they depend on the Shell's Config
		// and the session's start only; their funcs read c when called).
		c.hooks, c.hooksOf = h, c
	case h != nil:
		c.rehook(h)
	}
	return c
}

// releaseStage zeroes a stage's runner and returns it to stagePool. Only its
// hooks stay, with the Shell they were built for (stageRunner reuses them
// for that Shell only).
func (c *runner) releaseStage() {
	c.resetStage()
	stagePool.Put(c)
}

func (c *runner) resetStage() {
	h, sh := c.hooks, c.sh
	if c.hooksOf != c {
		h, sh = nil, nil
	}
	*c = runner{}
	c.hooks, c.sh = h, sh
}

// cloneSession copies the session for Shell.Fork.
func (r *runner) cloneSession(s *Shell) *runner {
	c := *r
	c.sh = s
	c.shared = true
	r.shared = true
	c.own()
	c.rs = nil
	c.fds = nil
	c.jobs = nil
	c.mem, c.trapRunning, c.trapPending = nil, nil, nil
	c.dirs = append([]string(nil), r.dirs...)
	c.params = append([]string(nil), r.params...)
	c.pidNext = new(atomic.Int64)
	c.pidNext.Store(r.pidNext.Load())
	return &c
}

// lineErr prints "bash: line N: msg" to the shell's stderr.
func (r *runner) errf(format string, args ...any) {
	r.errPrefix()
	fmt.Fprintf(r.stderr(), format, args...)
	if !strings.HasSuffix(format, "\n") {
		io.WriteString(r.stderr(), "\n")
	}
}

// usage prints a builtin's usage line bare, as bash does after the
// message that names the problem.
func (r *runner) usage(line string) {
	io.WriteString(r.stderr(), line+"\n")
}

// errPrefix names where the error is as bash does: the script (its $0),
// or inside a function or a sourced file the file it came from
// (frameFile).
func (r *runner) errPrefix() {
	name := r.arg0
	if n := len(r.frames); n > 0 {
		name = r.frameFile(r.frames[n-1])
	}
	if r.errLabel != "" {
		name += ": " + r.errLabel
	}
	if r.lineno > 0 {
		fmt.Fprintf(r.stderr(), "%s: line %d: ", name, r.lineno)
	} else {
		fmt.Fprintf(r.stderr(), "%s: ", name)
	}
}

// frameFile is a frame's file for BASH_SOURCE and messages: a function
// defined in no file was read from standard input ("main") or given to
// bash -c ("environment"), as bash 5.2 names them.
func (r *runner) frameFile(f frame) string {
	switch {
	case f.file != "":
		return f.file
	case r.cMode:
		return "environment"
	}
	return "main"
}

func (r *runner) stdout() io.Writer {
	if len(r.fds) > 1 && r.fds[1] != nil && r.fds[1].w != nil {
		return r.fds[1].w
	}
	return badFD{}
}

func (r *runner) stderr() io.Writer {
	if len(r.fds) > 2 && r.fds[2] != nil && r.fds[2].w != nil {
		return r.fds[2].w
	}
	return io.Discard
}

func (r *runner) stdin() io.Reader {
	if len(r.fds) > 0 && r.fds[0] != nil && r.fds[0].r != nil {
		return r.fds[0].r
	}
	return badFD{}
}

type badFD struct{}

var errBadFD = errors.New("Bad file descriptor")

func (badFD) Write([]byte) (int, error) { return 0, errBadFD }
func (badFD) Read([]byte) (int, error)  { return 0, errBadFD }

// limitWriter counts output bytes against the Run's limit.
type limitWriter struct {
	w  io.Writer
	rs *runState
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if n := l.rs.out.Add(int64(len(p))); n > l.rs.lim.MaxOutputBytes {
		l.rs.fail(limitf("output limit exceeded (%d bytes)", l.rs.lim.MaxOutputBytes))
		return 0, errCancelled
	}
	// Stages of a pipeline and background jobs write concurrently; the
	// caller's writers (often one buffer for both streams) are not safe
	// for that, and a process's write(2) would not interleave bytes either.
	l.rs.outMu.Lock()
	defer l.rs.outMu.Unlock()
	return l.w.Write(p)
}

// runTop runs a script as the session's top level.
func (r *runner) runTop(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	return r.runTopWith(ctx, stdin, stdout, stderr, func() { r.runScript(script, "") })
}

func (r *runner) runTopWith(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, body func()) (int, error) {
	lim := &r.sh.lim // never written after New
	if stdin == nil {
		stdin = noInput{}
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	parent := ctx
	ctx, cancelCause := context.WithCancelCause(parent)
	cancel := func() { cancelCause(nil) }
	defer cancel()
	rs := &runState{ctx: ctx, parent: parent, lim: lim, jobs: &r.sh.goroutines, ladder: newLadder(ctx, &r.sh.cfg)}
	r.sh.clock.arm(rs, cancelCause, lim.Timeout, r.sh.timeoutErr)
	defer r.sh.clock.disarm()
	rs.stderr = stderr
	rs.pipes = rs.pipesBuf[:0]
	r.rs = rs
	rs.outW = limitWriter{w: stdout, rs: rs}
	rs.errW = limitWriter{w: stderr, rs: rs}
	ow, ew := &rs.outW, &rs.errW
	std := &rs.std
	*std = [3]fdesc{{r: stdin, path: "/dev/stdin"}, {w: ow, path: "/dev/stdout"}, {w: ew, path: "/dev/stderr"}}
	rs.stdFds = [3]*fdesc{&std[0], &std[1], &std[2]}
	r.fds = rs.stdFds[:]
	rs.top = [2]io.Writer{ow, ew}
	rs.termBuf.w = rs.top
	rs.term = &rs.termBuf
	r.exiting, r.breakN, r.contN, r.returning = false, 0, 0, false
	r.callDepth = 0
	r.safe(body)
	if !r.inTrap {
		r.runExitTrap()
	}
	// Background jobs outlive the Run (jobs.go): from now on they write
	// to their logs only. What else the Run started (process
	// substitutions) ends with it.
	rs.term.detach()
	rs.wg.Wait()
	ctxErr, cause := ctx.Err(), context.Cause(ctx)
	// Kill the pipes still open here, rather than by the AfterFunc in a
	// goroutine of its own once cancel runs.
	rs.pipesMu.Lock()
	unpipe := rs.unpipe
	rs.pipesMu.Unlock()
	if unpipe != nil && unpipe() {
		rs.closePipes()
	}
	cancel()
	st := r.status
	if le := rs.fatal.Load(); le != nil {
		fmt.Fprintf(stderr, "warren: %s\n", le.what)
		st = le.status
	} else if ctxErr != nil {
		if le, ok := cause.(*limitError); ok {
			fmt.Fprintf(stderr, "warren: %s\n", le.what)
			st = le.status
		} else {
			st = StatusTimeout
		}
	}
	r.closeFds()
	r.fds = nil
	r.rs = nil
	r.status = st
	return st, nil
}

// noInput is an exec's stdin when the caller gives none: end of file at
// once, shared by every Run (a strings.Reader would be one more
// allocation per exec).
type noInput struct{}

func (noInput) Read([]byte) (int, error) { return 0, io.EOF }

func (r *runner) closeFds() {
	for i := 3; i < len(r.fds); i++ {
		if f := r.fds[i]; f != nil {
			r.release(f)
		}
	}
}

func (r *runner) runExitTrap() {
	if r.xfsz {
		return
	}
	if t, ok := r.traps["EXIT"]; ok && t != "" {
		st := r.status
		r.own()
		delete(r.traps, "EXIT")
		r.exiting = false
		r.exitCalled = false
		r.inTrap = true
		was := r.inExitTrap
		r.inExitTrap = true
		ts := r.trapStatus
		r.trapStatus = st
		r.runScript(t, "")
		r.trapStatus = ts
		r.inExitTrap = was
		r.inTrap = false
		if !r.exitCalled {
			r.status = st
		}
		r.exiting = true
	}
}

// cancelled reports whether the Run must stop.
func (r *runner) cancelled() bool {
	if r.context().Err() != nil && !(r.inExitTrap && signalledJob(r.context())) {
		return true
	}
	return r.rs.fatal.Load() != nil
}

// runScript parses and runs src statement by statement, like bash reading a
// script: statements before a syntax error run, then the error ends the
// shell (status 2).
func (r *runner) runScript(src, name string) { r.runText(src, name, true) }

// runTrap runs a trap's text other than EXIT's: a syntax error in it does
// not end the shell (bash reports it, the trap's status is 2, and the
// caller restores $? as usual). It reports whether there was one.
func (r *runner) runTrap(t string) bool {
	ts := r.trapStatus
	r.trapStatus = r.status
	defer func() { r.trapStatus = ts }()
	return r.runText(t, "", false)
}

// runText is runScript for source and eval too: fatal says whether a syntax
// error ends the shell (a script, -c, traps) or only the text, whose status
// is then 2 (bash's source and eval, in posix mode as well). The lines
// before the bad one run either way.
func (r *runner) runText(src, name string, fatal bool) (syntaxErr bool) {
	orig := src
	stmts, src, docs, err := r.sh.parseCached(src)
	// Running must happen after parsing: the parser is not reentrant (and
	// pooled). Statements before the error still run, as in bash.
	errLine := uint(0)
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			errLine = pe.Pos.Line()
		}
	}
	closed := len(docs) > 0
	docs, aerr := r.runRead(src, stmts, errLine, docs)
	if aerr != nil {
		err = aerr
	}
	if r.returning || r.breakN > 0 || r.contN > 0 {
		return false
	}
	if err != nil && !r.exiting {
		if errLine > 0 {
			// bash read those here-documents before the bad line
			r.warnEOFDocs(docs, errLine)
		}
		if closed {
			src = orig // the end of file is the script's, not the closed text's
		}
		r.status = r.syntaxErrorIn(err, src, fatal || name != "")
		r.exiting = fatal
		return true
	}
	return false
}

// parse parses src fully (for eval, functions from state, -c).
func (r *runner) parse(src string) (*syntax.File, error) { return parseFile(src) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// out writes a builtin's output; a write error (full disk, closed pipe)
// is remembered so the builtin fails as in bash.
func (r *runner) out(s string) {
	if _, err := io.WriteString(r.stdout(), s); err != nil && r.outErr == nil {
		r.outErr = err
	}
}

func (r *runner) outf(format string, args ...any) {
	r.out(fmt.Sprintf(format, args...))
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// safe runs fn, turning a panic (a bug in warren or a library) into a
// message and status 2 instead of a crashed process.
func (r *runner) safe(fn func()) {
	defer r.recoverPanic()
	fn()
}

func (r *runner) recoverPanic() {
	if p := recover(); p != nil {
		if debugPanics {
			panic(p)
		}
		fmt.Fprintf(r.stderr(), "%s: line %d: warren: internal error: %v\n", r.arg0, r.lineno, p)
		r.status = 2
		r.exiting = true
	}
}

// debugTrap runs the DEBUG trap before a command; its status does not
// change $? unless errexit ends the shell.
func (r *runner) debugTrap() {
	t, ok := r.traps["DEBUG"]
	if !ok || t == "" || r.inTrap {
		return
	}
	if r.inFunc() && !r.opts[optFunctrace] {
		return
	}
	st := r.status
	r.inTrap = true
	r.runTrap(t)
	r.inTrap = false
	r.returning = false
	if r.exiting {
		return
	}
	r.status = st
}

// simpleCmd reports whether st is a simple command (a call or a
// declaration builtin) with redirections.
func simpleCmd(st *syntax.Stmt) (syntax.Command, bool) {
	if len(st.Redirs) == 0 {
		return nil, false
	}
	switch st.Cmd.(type) {
	case *syntax.CallExpr, *syntax.DeclClause:
		return st.Cmd, true
	}
	return nil, false
}

func assignOnly(c syntax.Command) bool {
	if c, ok := c.(*syntax.CallExpr); ok {
		return len(c.Args) == 0
	}
	return false
}

// parsed is a cached parse of a script: statements up to the first error.
type parsed struct {
	stmts []*syntax.Stmt
	err   error
	text  string // what the positions refer to (see parseStmtsText)
	docs  []eofDoc
}

// The parse cache is bounded in entries and in bytes of source (an AST is
// roughly 10-30 times its source), since scripts are untrusted: at most
// parseCacheEntries scripts of at most parseCacheMaxSrc bytes each and
// parseCacheBytes in all. When full it starts over (cheap, and a flood of
// distinct scripts cannot pin memory).
const (
	parseCacheEntries = 1024
	parseCacheMaxSrc  = 4096
	parseCacheBytes   = 512 << 10
)

// parseCached parses src, reusing earlier parses of the same text (agents
// repeat commands). The AST is shared by every Shell of the process, so
// the interpreter treats it as immutable: it never assigns to a node it
// did not allocate (copies are made where a node must change, as for
// background statements and ${x////c}).
func (s *Shell) parseCached(src string) ([]*syntax.Stmt, string, []eofDoc, error) {
	if len(src) > parseCacheMaxSrc {
		return parseScript(src)
	}
	pc := &globalParseCache
	pc.mu.Lock()
	if p, ok := pc.m[src]; ok {
		pc.mu.Unlock()
		return p.stmts, p.text, p.docs, p.err
	}
	pc.mu.Unlock()
	stmts, text, docs, err := parseScript(src)
	pc.mu.Lock()
	if pc.m == nil || len(pc.m) >= parseCacheEntries || pc.bytes+len(src) > parseCacheBytes {
		pc.m = make(map[string]parsed, 64)
		pc.bytes = 0
	}
	if _, dup := pc.m[src]; !dup {
		pc.m[src] = parsed{stmts, err, text, docs}
		pc.bytes += len(src)
		if text != src {
			pc.bytes += len(text)
		}
	}
	pc.mu.Unlock()
	return stmts, text, docs, err
}

// globalParseCache is shared by every Shell of the process: parsed ASTs
// are immutable, and sandboxes run the same small scripts again and again.
var globalParseCache struct {
	mu    sync.Mutex
	m     map[string]parsed
	bytes int // source bytes of the entries
}

// context is the Run's context, or a background job's.
func (r *runner) context() context.Context {
	if r.jobCtx != nil {
		return r.jobCtx
	}
	return r.rs.ctx
}

func jobText(st *syntax.Stmt) string {
	// bash shows a job in the layout declare -f prints a body in
	// (`sleep 5 > /dev/null`, `( exit 4 )`, compound commands over lines)
	p := newBashLayout()
	p.outsideFunc = true
	p.stmt(st, 0)
	p.flushDocs()
	return p.b.String()
}

// debugPanics re-raises recovered panics (tests flip it to get stacks).
var debugPanics = false
