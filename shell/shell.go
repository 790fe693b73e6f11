// Package shell is warren's bash interpreter: the boundary of the resident
// tier. It parses with mvdan.cc/sh/v3/syntax and expands words with
// mvdan.cc/sh/v3/expand, but runs everything itself over the sandbox's vfs:
// no host files, no host environment, no host pids, no OS pipes.
//
// It leaves out: interactive features (prompts, history, completion, job
// control with terminals: fg, bg, suspend) and real signals (kill delivers
// to the session's jobs only). Background jobs outlive the Run that started
// them (jobs.go).
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
	"mvdan.cc/sh/v3/syntax"
)

// Exit statuses for limits. A script that hits a limit ends with one of these
// and a "warren: ..." line on stderr; the Shell stays usable.
const (
	StatusTimeout = 124 // Limits.Timeout or the caller's context deadline
	StatusLimit   = 125 // any other limit (commands, loops, depth, sizes, jobs, output)
)

// Limits bound one Run. Zero fields take the defaults below.
type Limits struct {
	Timeout        time.Duration // wall time per Run; default 5m
	MaxCommands    int64         // simple commands per Run; default 10,000,000
	MaxLoopIters   int64         // loop iterations per Run; default 10,000,000
	MaxCallDepth   int           // function/source/eval nesting; default 1,000
	MaxOutputBytes int64         // stdout+stderr bytes per Run; default 256 MiB
	MaxStringBytes int           // bytes in one variable value or word; default 64 MiB
	MaxArrayElems  int           // elements of one array; default 1,000,000
	MaxExpansion   int           // fields from one brace or glob expansion; default 1,000,000
	MaxHeredoc     int           // bytes of one here-doc/here-string; default 64 MiB
	MaxJobs        int           // concurrent goroutines of a session (its background jobs, pipeline stages); default 256
	JobTimeout     time.Duration // wall time of one background job (jobs.go); default Timeout
}

// DefaultLimits are the limits used for zero fields.
var DefaultLimits = Limits{
	Timeout:        5 * time.Minute,
	MaxCommands:    10_000_000,
	MaxLoopIters:   10_000_000,
	MaxCallDepth:   1000,
	MaxOutputBytes: 256 << 20,
	MaxStringBytes: 64 << 20,
	MaxArrayElems:  1_000_000,
	MaxExpansion:   1_000_000,
	MaxHeredoc:     64 << 20,
	MaxJobs:        256,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	if l.MaxCommands > 0 {
		d.MaxCommands = l.MaxCommands
	}
	if l.MaxLoopIters > 0 {
		d.MaxLoopIters = l.MaxLoopIters
	}
	if l.MaxCallDepth > 0 {
		d.MaxCallDepth = l.MaxCallDepth
	}
	if l.MaxOutputBytes > 0 {
		d.MaxOutputBytes = l.MaxOutputBytes
	}
	if l.MaxStringBytes > 0 {
		d.MaxStringBytes = l.MaxStringBytes
	}
	if l.MaxArrayElems > 0 {
		d.MaxArrayElems = l.MaxArrayElems
	}
	if l.MaxExpansion > 0 {
		d.MaxExpansion = l.MaxExpansion
	}
	if l.MaxHeredoc > 0 {
		d.MaxHeredoc = l.MaxHeredoc
	}
	if l.MaxJobs > 0 {
		d.MaxJobs = l.MaxJobs
	}
	d.JobTimeout = d.Timeout
	if l.JobTimeout > 0 {
		d.JobTimeout = l.JobTimeout
	}
	return d
}

// NativeFunc runs an ELF file of the sandbox in the native tier. nil in
// Config means native execution is off.
type NativeFunc func(ctx context.Context, inv *commands.Invocation, path string) int

// Config describes a sandbox to the interpreter. Hooks are fields; nil
// means off, never a fallback to the host.
type Config struct {
	FS       *vfs.FS
	Commands commands.Table
	Env      []string // initial environment, "K=V"; nothing of the host
	Dir      string   // initial cwd; default "/"
	Limits   Limits
	Hostname string // default "sandbox"
	Uid, Gid int
	User     string // default "user"
	Home     string // default "/home/" + User (or "/root" for uid 0)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Native runs ELF files; nil => "cannot execute binary file".
	Native NativeFunc
	// WASM runs WebAssembly (WASI) modules, files that start with
	// "\x00asm" (package wasm's Runtime.Exec); nil => refused with 126.
	WASM NativeFunc
	// Policy is the sandbox's commands policy (ladder.go): which rung a
	// command with a resident implementation tries first. An exec may
	// override it through its context (WithPolicy).
	Policy Policy
	// Seed seeds $RANDOM; 0 means derived from the clock.
	Seed uint64
	// Sys is the sandbox as commands see it (commands.Invocation.Sys):
	// hostname, ids, memory limit, ps and kill. nil means one built from
	// the fields above. Empty fields are filled from the fields above; nil
	// Procs and Kill are the shell's own pid space and job table.
	Sys *commands.System
	// OnJob, when set, is told of every background job as it starts and
	// gives its log (jobs.go); nil: a job's output reaches only the Run
	// that started it, while that Run runs.
	OnJob JobHook
}

// Shell is one sandbox's session: variables, functions, cwd, options and
// the rest of the state that survives between Runs. A Shell runs one script
// at a time; Run calls are serialised.
type Shell struct {
	mu  sync.Mutex
	cfg Config
	lim Limits
	st  *runner // the session state between runs
	// timeoutErr is the cause of a Run's deadline (built once: immutable)
	timeoutErr *limitError
	jobs       jobTable     // the session's live background jobs (jobs.go)
	goroutines atomic.Int64 // the session's live goroutines, for MaxJobs
	fifos      fifoTable    // the session's fifos (fifo.go)
	// topSig is a signal a subshell or job sent to $$ (kill $$ from
	// "(...)"): the top shell takes it at its next command (sigNames index).
	topSig atomic.Int32
	clock  runClock // the Run's deadline: one timer for the session's life
}

// New returns a fresh session for cfg.
func New(cfg Config) (*Shell, error) {
	if cfg.FS == nil {
		return nil, errors.New("shell: Config.FS is nil")
	}
	if cfg.Hostname == "" {
		cfg.Hostname = "sandbox"
	}
	if cfg.User == "" {
		if cfg.Uid == 0 {
			cfg.User = "root"
		} else {
			cfg.User = "user"
		}
	}
	if cfg.Home == "" {
		if cfg.Uid == 0 && cfg.User == "root" {
			cfg.Home = "/root"
		} else {
			cfg.Home = "/home/" + cfg.User
		}
	}
	if cfg.Dir == "" {
		cfg.Dir = "/"
	}
	s := &Shell{cfg: cfg, lim: cfg.Limits.withDefaults()}
	s.timeoutErr = &limitError{what: fmt.Sprintf("time limit exceeded (%s)", s.lim.Timeout), status: StatusTimeout}
	s.st = newRunner(s)
	return s, nil
}

// FS returns the sandbox filesystem.
func (s *Shell) FS() *vfs.FS { return s.cfg.FS }

// Fork returns an independent session with the same state over fs
// (normally the forked vfs of this Shell's FS).
func (s *Shell) Fork(fs *vfs.FS) *Shell {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := s.cfg
	cfg.FS = fs
	n := &Shell{cfg: cfg, lim: s.lim, timeoutErr: s.timeoutErr}
	n.st = s.st.cloneSession(n)
	return n
}

// Run executes script (bash source) and returns its exit status. err is
// reserved for failures of warren itself; script errors, syntax errors and
// limits are statuses with messages on stderr.
func (s *Shell) Run(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.runTop(ctx, script, stdin, stdout, stderr)
}

// RunFile runs script as `bash NAME ARGS...` runs the file NAME: $0,
// BASH_SOURCE and the prefix of error messages are name, the positional
// parameters are args, and line numbers are the file's own (prepending a
// `set --` line to the script shifted them and lost them in messages).
// The session keeps $0 and the parameters afterwards, as the shell that
// read the file would.
func (s *Shell) RunFile(ctx context.Context, name string, args []string, script string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.own()
	s.st.readsFile(name, args)
	return s.st.runTop(ctx, script, stdin, stdout, stderr)
}

// SetArgs sets the session's positional parameters, as `set -- ARGS`
// would, without a line of script (which would shift the script's line
// numbers).
func (s *Shell) SetArgs(args []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.own()
	s.st.params = slices.Clone(args)
}

// Getenv returns a shell variable's value (for callers and tests).
func (s *Shell) Getenv(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.lookup(name)
	if v == nil {
		return ""
	}
	return v.str()
}

// Dir returns the current working directory of the session.
func (s *Shell) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.cwd
}

// parser returns a bash parser; parsers are cheap but pooled anyway since
// every Run parses.
var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// limitError ends the Run with StatusLimit (or StatusTimeout).
type limitError struct {
	what   string
	status int
}

func (e *limitError) Error() string { return e.what }

func limitf(format string, args ...any) *limitError {
	return &limitError{what: fmt.Sprintf(format, args...), status: StatusLimit}
}

func isLimit(err error) (*limitError, bool) {
	var le *limitError
	if errors.As(err, &le) {
		return le, true
	}
	return nil, false
}

var _ = strings.TrimSpace
