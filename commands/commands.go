// Package commands defines the resident tier's command interface: a command
// is a Go function over the sandbox's vfs and the shell's streams. It never
// touches the host (no os file calls, no os/exec, no host environment).
//
// The command implementations live in subpackages grouped by what they are
// (coreutils, grep, sed, find, archive, jq, awk, git, ...); each exports
// Register(Table). Package commands/std assembles the default table.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/vfs"
)

// Func runs one command and returns its exit status.
// A command writes its diagnostics to inv.Stderr in the GNU form
// "NAME: FILE: No such file or directory" and returns the GNU status.
// It must return promptly when ctx is done (the status is then ignored).
type Func func(ctx context.Context, inv *Invocation) int

// Table maps command names to implementations.
type Table map[string]Func

// Register adds fn under name (and is how subpackages fill a table).
func (t Table) Register(name string, fn Func) { t[name] = fn }

// Names returns the sorted command names.
func (t Table) Names() []string {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Invocation is everything a command may see.
type Invocation struct {
	Args   []string // Args[0] is the name the command was invoked as
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Dir    string   // absolute sandbox cwd
	Env    []string // the exported environment, "K=V"
	FS     *vfs.FS

	// OpenHook, when set, is consulted before FS for paths the shell
	// virtualises (/dev/stdin, /dev/fd/N, /dev/null, /proc/self/...). It
	// returns handled=false to fall through to FS.
	OpenHook func(name string, flag int, perm fs.FileMode) (f File, handled bool, err error)

	// Exec runs argv through the shell's execution ladder (builtins,
	// functions, resident commands, wasm, native). Used by xargs, find -exec,
	// timeout, env CMD, nice, nohup... nil means "not available".
	Exec func(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int

	// ExecDir is Exec with a working directory for the command (find
	// -execdir, env -C); dir is absolute or relative to Dir, "" means Dir.
	// nil means "not available".
	ExecDir func(ctx context.Context, dir string, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int

	// Umask is the shell's file mode creation mask: commands that create
	// files (touch, mkdir, cp, tar...) clear these permission bits
	// (OpenFile does for the files it creates).
	// 0 means nothing is masked.
	Umask fs.FileMode

	// Sys describes the sandbox (hostname, ids, limits, processes); nil
	// means defaults. The shell fills it from its Config (Config.Sys) and
	// its own job table; commands must not modify it (it may be shared by
	// several invocations).
	Sys *System

	// FallBack, set by the shell, collects a refusal (Refuse) that can be
	// run on another rung of the ladder: the command then reports nothing
	// itself. A pointer, so that a command that parses its options on a
	// copy of its Invocation (head, seq, ...) still reaches it. nil:
	// Refuse reports at once.
	FallBack *Refusals

	// Lookup, when set, resolves a command name as the shell would run it
	// (which, so that it agrees with type and command -v): the paths, in
	// PATH order, of every executable the name reaches; all=false stops at
	// the first.
	Lookup func(name string, all bool) []string
}

// File is what OpenHook returns: the subset of *vfs.File commands use.
type File interface {
	io.Reader
	io.Writer
	io.Closer
}

// System is the sandbox as commands report it (never the host's values).
type System struct {
	Hostname string
	Uid, Gid int
	User     string
	NumCPU   int
	Started  time.Time // for uptime
	// MaxOutputBytes / MaxMemoryBytes let buffering commands (sort, tac,
	// shuf) fail cleanly instead of exhausting the process; 0 = unlimited.
	MaxMemoryBytes int64
	// Memory is the sandbox's shared memory budget (nil: unlimited).
	// Commands charge what grows with their input to it.
	Memory *Memory
	// Procs lists the sandbox's processes for ps; nil means just the caller.
	Procs func() []Proc
	// Kill delivers a signal to a sandbox pid (kill, timeout).
	Kill func(pid int, sig string) error
	// Now is the clock (date, touch); nil means time.Now.
	Now func() time.Time
	// Net is the sandbox's network under its egress policy (curl, wget);
	// nil means no network.
	Net HTTPClient
}

// Proc is one sandbox process as ps shows it.
type Proc struct {
	Pid, PPid int
	Cmd       string
	Started   time.Time
}

// Getenv returns the value of key in inv.Env ("" when unset).
func (inv *Invocation) Getenv(key string) string {
	v, _ := inv.LookupEnv(key)
	return v
}

// LookupEnv reports key's value in inv.Env and whether it is set.
func (inv *Invocation) LookupEnv(key string) (string, bool) {
	for i := len(inv.Env) - 1; i >= 0; i-- {
		kv := inv.Env[i]
		if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
			return kv[len(key)+1:], true
		}
	}
	return "", false
}

// Abs joins name to the cwd unless it is already absolute.
func (inv *Invocation) Abs(name string) string {
	if strings.HasPrefix(name, "/") {
		return path.Clean(name)
	}
	dir := inv.Dir
	if dir == "" {
		dir = "/"
	}
	return path.Join(dir, name)
}

// Open opens name for reading: "-" is stdin, shell-virtualised paths go
// through OpenHook, the rest through the vfs.
func (inv *Invocation) Open(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(inv.Stdin), nil
	}
	return inv.OpenFile(name, vfs.O_RDONLY, 0)
}

// OpenFile opens name with flags through OpenHook, then the vfs. A file it
// creates has the Umask bits cleared, as open(2) does, so that no command
// (tee, sort -o, sed w, ...) has to remember to.
func (inv *Invocation) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	abs := inv.Abs(name)
	if flag&vfs.O_CREATE != 0 {
		perm &^= inv.Umask & fs.ModePerm
	}
	if inv.OpenHook != nil {
		f, handled, err := inv.OpenHook(abs, flag, perm)
		if handled {
			if err != nil {
				return nil, relabel(err, name)
			}
			return f, nil
		}
	}
	f, err := inv.FS.OpenFile(abs, flag, perm)
	if err != nil {
		return nil, relabel(err, name)
	}
	return f, nil
}

// relabel makes a PathError name the path the user typed, as GNU tools do.
func relabel(err error, name string) error {
	if pe, ok := err.(*fs.PathError); ok {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

// Errorf prints "NAME: msg" to stderr, the GNU diagnostic form.
func (inv *Invocation) Errorf(format string, args ...any) {
	fmt.Fprintf(inv.Stderr, "%s: %s\n", inv.Args[0], fmt.Sprintf(format, args...))
}

// Now returns the sandbox clock.
func (inv *Invocation) Now() time.Time {
	if inv.Sys != nil && inv.Sys.Now != nil {
		return inv.Sys.Now()
	}
	return time.Now()
}

// Describe renders err as GNU tools do: "FILE: No such file or directory".
func Describe(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Path + ": " + Strerror(pe.Err)
	}
	return Strerror(err)
}

// Strerror is strerror(3): the errno text with its first letter capitalised
// ("No such file or directory"), for any error wrapping a syscall.Errno.
func Strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
