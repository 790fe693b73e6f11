// Package cmdtest runs resident commands in tests: an in-memory file set
// served through Invocation.OpenHook (or a real vfs once it is usable), and
// a small interpreter for the fixture scripts of shared/conformance (simple
// commands, pipelines, && || ;, if, redirections, $?, command substitution),
// so command packages can replay fixtures before the real shell exists.
// It never touches the host.
package cmdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// Cwd is the working directory fixtures run in.
const Cwd = "/work"

// Files is an in-memory file set keyed by absolute path; it is safe for the
// concurrent stages of a pipeline.
type Files struct {
	mu   sync.Mutex
	data map[string][]byte
	// FS is a real vfs holding the same files when the vfs implementation
	// is available (directory walks need it); nil otherwise.
	FS *vfs.FS
}

// NewFiles creates the file set; names relative to Cwd.
func NewFiles(files map[string]string) *Files {
	f := &Files{data: map[string][]byte{}}
	for name, content := range files {
		f.data[path.Join(Cwd, name)] = []byte(content)
	}
	fsys := vfs.New(vfs.Options{Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if err := fsys.MkdirAll(Cwd, 0o755); err == nil {
		ok := true
		for name, content := range f.data {
			if fsys.MkdirAll(path.Dir(name), 0o755) != nil || fsys.WriteFile(name, content, 0o644) != nil {
				ok = false
			}
		}
		if ok {
			f.FS = fsys
		}
	}
	return f
}

// Get returns a file's content (from the vfs when in use).
func (f *Files) Get(name string) ([]byte, bool) {
	name = path.Join(Cwd, name)
	if f.FS != nil {
		b, err := f.FS.ReadFile(name)
		return b, err == nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.data[name]
	return b, ok
}

type memFile struct {
	r      *bytes.Reader
	w      *bytes.Buffer
	files  *Files
	name   string
	closed bool
}

func (m *memFile) Read(p []byte) (int, error) {
	if m.r == nil {
		return 0, &fs.PathError{Op: "read", Path: m.name, Err: syscall.EBADF}
	}
	return m.r.Read(p)
}

func (m *memFile) Write(p []byte) (int, error) {
	if m.w == nil {
		return 0, &fs.PathError{Op: "write", Path: m.name, Err: syscall.EBADF}
	}
	n, _ := m.w.Write(p)
	m.files.mu.Lock()
	m.files.data[m.name] = append(m.files.data[m.name], p...)
	m.files.mu.Unlock()
	return n, nil
}

func (m *memFile) Close() error { return nil }

type discard struct{}

func (discard) Read(p []byte) (int, error)  { return 0, io.EOF }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

// Hook returns an OpenHook serving /dev/null, /dev/stdin (as stdin) and,
// when no vfs is in use, the file set itself.
func (f *Files) Hook(stdin io.Reader) func(string, int, fs.FileMode) (commands.File, bool, error) {
	return func(name string, flag int, perm fs.FileMode) (commands.File, bool, error) {
		switch name {
		case "/dev/null":
			return discard{}, true, nil
		case "/dev/stdin":
			return readOnly{stdin}, true, nil
		}
		if f.FS != nil {
			return nil, false, nil
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		data, ok := f.data[name]
		if !ok && flag&vfs.O_CREATE == 0 {
			if f.isDir(name) {
				if flag&vfs.O_ACCMODE != vfs.O_RDONLY {
					return nil, true, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
				}
				return readErr{name}, true, nil
			}
			return nil, true, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
		}
		m := &memFile{files: f, name: name}
		if flag&vfs.O_ACCMODE == vfs.O_RDONLY || flag&vfs.O_ACCMODE == vfs.O_RDWR {
			m.r = bytes.NewReader(append([]byte(nil), data...))
		}
		if flag&vfs.O_ACCMODE != vfs.O_RDONLY {
			m.w = new(bytes.Buffer)
			if flag&vfs.O_TRUNC != 0 || !ok {
				f.data[name] = nil
			}
		}
		return m, true, nil
	}
}

func (f *Files) isDir(name string) bool {
	for k := range f.data {
		if strings.HasPrefix(k, name+"/") {
			return true
		}
	}
	return false
}

type readOnly struct{ io.Reader }

func (readOnly) Write(p []byte) (int, error) { return 0, syscall.EBADF }
func (readOnly) Close() error                { return nil }

type readErr struct{ name string }

func (r readErr) Read(p []byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: r.name, Err: syscall.EISDIR}
}
func (readErr) Write(p []byte) (int, error) { return 0, syscall.EBADF }
func (readErr) Close() error                { return nil }

// Result is what a run produced.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run invokes fn with args (args[0] = the name) over files and stdin.
func Run(fn commands.Func, args []string, stdin string, files *Files) Result {
	if files == nil {
		files = NewFiles(nil)
	}
	var out, errb bytes.Buffer
	in := strings.NewReader(stdin)
	inv := files.Invocation(args, in, &out, &errb)
	code := fn(context.Background(), inv)
	return Result{out.String(), errb.String(), code}
}

// Invocation builds an invocation over the file set.
func (f *Files) Invocation(args []string, stdin io.Reader, stdout, stderr io.Writer) *commands.Invocation {
	fsys := f.FS
	if fsys == nil {
		fsys = vfs.New(vfs.Options{})
	}
	return &commands.Invocation{
		Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Dir: Cwd, Env: []string{"HOME=/root", "PATH=/usr/bin:/bin", "LC_ALL=C"},
		FS: fsys, OpenHook: f.Hook(stdin), Umask: 0o022,
	}
}

// ErrUnsupported marks scripts the mini-interpreter cannot run.
var ErrUnsupported = errors.New("unsupported by the test interpreter")

// Shell is the fixture interpreter.
type Shell struct {
	Table  commands.Table
	Files  *Files
	vars   map[string]string // shell variables set by plain assignments
	status int
}

// Script runs src and returns its output and final status; the error is
// ErrUnsupported (wrapped) when the script uses something it cannot run.
func (sh *Shell) Script(ctx context.Context, src string) (Result, error) {
	file, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return Result{}, fmt.Errorf("%w: parse: %v", ErrUnsupported, err)
	}
	if err := sh.check(file); err != nil {
		return Result{}, err
	}
	var out, errb bytes.Buffer
	io := stdio{in: strings.NewReader(""), out: &syncWriter{w: &out}, err: &syncWriter{w: &errb}}
	for _, st := range file.Stmts {
		sh.status = sh.stmt(ctx, st, io)
		if sh.status == exitMarker {
			break
		}
	}
	if sh.status >= exitMarker {
		sh.status -= exitMarker
	}
	return Result{out.String(), errb.String(), sh.status}, nil
}

const exitMarker = 1 << 20

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

var builtins = map[string]bool{"true": true, "false": true, ":": true, "exit": true}

// check refuses scripts that need commands or syntax outside the harness.
func (sh *Shell) check(file *syntax.File) error {
	var bad error
	syntax.Walk(file, func(n syntax.Node) bool {
		if bad != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, as := range n.Assigns {
				if as.Append || as.Naked || as.Index != nil || as.Array != nil {
					bad = fmt.Errorf("%w: assignment form", ErrUnsupported)
					return false
				}
			}
			if len(n.Args) == 0 {
				return true
			}
			name := n.Args[0].Lit()
			if _, ok := sh.Table[name]; !ok && !builtins[name] {
				bad = fmt.Errorf("%w: command %q", ErrUnsupported, name)
			}
		case *syntax.Stmt:
			if n.Cmd == nil {
				bad = fmt.Errorf("%w: statement without a command", ErrUnsupported)
			}
			if n.Background || n.Coprocess {
				bad = fmt.Errorf("%w: background", ErrUnsupported)
			}
			for _, r := range n.Redirs {
				switch r.Op {
				case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.DplOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrAll:
				default:
					bad = fmt.Errorf("%w: redirection %s", ErrUnsupported, r.Op)
				}
			}
		case *syntax.BinaryCmd, *syntax.IfClause, *syntax.Block, *syntax.Subshell, *syntax.Word,
			*syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted, *syntax.ParamExp, *syntax.Redirect,
			*syntax.CmdSubst, *syntax.Comment:
		case *syntax.File, nil:
		default:
			bad = fmt.Errorf("%w: %T", ErrUnsupported, n)
		}
		return true
	})
	return bad
}

func (sh *Shell) expandCfg(ctx context.Context, io stdio) *expand.Config {
	var readDir func(string) ([]fs.DirEntry, error)
	if sh.Files.FS != nil {
		// Globs resolve relative to the fixture's cwd in the vfs.
		readDir = func(dir string) ([]fs.DirEntry, error) {
			if !strings.HasPrefix(dir, "/") {
				dir = path.Join(Cwd, dir)
			}
			return sh.Files.FS.ReadDir(dir)
		}
	}
	return &expand.Config{
		ReadDir2: readDir,
		Env:      expand.ListEnviron(sh.environ()...),
		CmdSubst: func(w ioWriter, cs *syntax.CmdSubst) error {
			sub := stdio{in: io.in, out: w, err: io.err}
			for _, st := range cs.Stmts {
				sh.status = sh.stmt(ctx, st, sub)
			}
			return nil
		},
	}
}

type ioWriter = io.Writer

// environ is what word expansion sees: $? and the shell variables.
func (sh *Shell) environ() []string {
	env := []string{"HOME=/root", "?=" + strconv.Itoa(sh.status)}
	for _, k := range SortedKeys(sh.vars) {
		env = append(env, k+"="+sh.vars[k])
	}
	return env
}

func (sh *Shell) stmts(ctx context.Context, list []*syntax.Stmt, io stdio) int {
	st := 0
	for _, s := range list {
		st = sh.stmt(ctx, s, io)
		sh.status = st
		if st >= exitMarker {
			return st
		}
	}
	return st
}

func (sh *Shell) stmt(ctx context.Context, st *syntax.Stmt, sio stdio) int {
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for _, r := range st.Redirs {
		cfg := sh.expandCfg(ctx, sio)
		var target string
		if r.Word != nil {
			t, err := expand.Literal(cfg, r.Word)
			if err != nil {
				fmt.Fprintf(sio.err, "harness: %v\n", err)
				return 1
			}
			target = t
		}
		fd := "1"
		if r.N != nil {
			fd = r.N.Value
		}
		switch r.Op {
		case syntax.RdrIn:
			f, err := sh.Files.Invocation([]string{"sh"}, sio.in, sio.out, sio.err).Open(target)
			if err != nil {
				fmt.Fprintf(sio.err, "/bin/bash: line 1: %s\n", commands.Describe(err))
				return 1
			}
			closers = append(closers, f)
			sio.in = f
		case syntax.Hdoc, syntax.DashHdoc:
			h, err := expand.Document(cfg, r.Hdoc)
			if err != nil {
				return 1
			}
			sio.in = strings.NewReader(h)
		case syntax.WordHdoc:
			sio.in = strings.NewReader(target + "\n")
		case syntax.DplOut:
			switch {
			case fd == "2" && target == "1":
				sio.err = sio.out
			case fd == "1" && target == "2":
				sio.out = sio.err
			default:
				return 1
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll:
			flag := vfs.O_WRONLY | vfs.O_CREATE | vfs.O_TRUNC
			if r.Op == syntax.AppOut {
				flag = vfs.O_WRONLY | vfs.O_CREATE | vfs.O_APPEND
			}
			f, err := sh.Files.Invocation([]string{"sh"}, sio.in, sio.out, sio.err).OpenFile(target, flag, 0o644)
			if err != nil {
				fmt.Fprintf(sio.err, "/bin/bash: line 1: %s\n", commands.Describe(err))
				return 1
			}
			closers = append(closers, f)
			switch {
			case r.Op == syntax.RdrAll:
				sio.out, sio.err = f, f
			case fd == "2":
				sio.err = f
			default:
				sio.out = f
			}
		}
	}
	code := sh.cmd(ctx, st.Cmd, sio)
	if st.Negated {
		if code == 0 {
			code = 1
		} else {
			code = 0
		}
	}
	return code
}

func (sh *Shell) cmd(ctx context.Context, c syntax.Command, sio stdio) int {
	switch c := c.(type) {
	case *syntax.CallExpr:
		// Assignments: alone they set shell variables; before a command
		// they only reach that command's environment.
		var env []string
		for _, as := range c.Assigns {
			v := ""
			if as.Value != nil {
				var err error
				if v, err = expand.Literal(sh.expandCfg(ctx, sio), as.Value); err != nil {
					fmt.Fprintf(sio.err, "harness: %v\n", err)
					return 1
				}
			}
			env = append(env, as.Name.Value+"="+v)
		}
		if len(c.Args) == 0 {
			if sh.vars == nil {
				sh.vars = map[string]string{}
			}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				sh.vars[k] = v
			}
			return 0
		}
		args, err := expand.Fields(sh.expandCfg(ctx, sio), c.Args...)
		if err != nil {
			fmt.Fprintf(sio.err, "harness: %v\n", err)
			return 1
		}
		if len(args) == 0 {
			return 0
		}
		switch args[0] {
		case "true", ":":
			return 0
		case "false":
			return 1
		case "exit":
			n := sh.status
			if len(args) > 1 {
				n, _ = strconv.Atoi(args[1])
			}
			return exitMarker + n
		}
		fn := sh.Table[args[0]]
		inv := sh.Files.Invocation(args, sio.in, sio.out, sio.err)
		inv.Env = append(inv.Env, env...)
		return fn(ctx, inv)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt:
			st := sh.stmt(ctx, c.X, sio)
			sh.status = st
			if st >= exitMarker || (st == 0) != (c.Op == syntax.AndStmt) {
				return st
			}
			return sh.stmt(ctx, c.Y, sio)
		case syntax.Pipe, syntax.PipeAll:
			pr, pw := io.Pipe()
			left := sio
			left.out = pw
			if c.Op == syntax.PipeAll {
				left.err = pw
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				sh.stmt(ctx, c.X, left)
				pw.Close()
			}()
			right := sio
			right.in = pr
			st := sh.stmt(ctx, c.Y, right)
			// Like a shell: the reader is gone, writers see EPIPE.
			pr.CloseWithError(errors.New("broken pipe"))
			<-done
			if st >= exitMarker {
				st -= exitMarker
			}
			return st
		}
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			if len(ic.Cond) == 0 {
				return sh.stmts(ctx, ic.Then, sio)
			}
			if st := sh.stmts(ctx, ic.Cond, sio); st == 0 {
				return sh.stmts(ctx, ic.Then, sio)
			}
		}
		return 0
	case *syntax.Block:
		return sh.stmts(ctx, c.Stmts, sio)
	case *syntax.Subshell:
		st := sh.stmts(ctx, c.Stmts, sio)
		if st >= exitMarker {
			st -= exitMarker
		}
		return st
	}
	fmt.Fprintf(sio.err, "harness: unsupported %T\n", c)
	return 2
}

// SortedKeys returns m's keys in order (fixture files are keyed by ID).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Golden is one recorded run of the real Debian tool (see
// commands/coreutils/testdata/record.py).
type Golden struct {
	Name   string
	Args   []string
	Stdin  string
	Files  map[string]string
	Stdout string
	Stderr string
	Code   int
	After  map[string]string // files the run created or changed
}

// RunGolden replays recorded cases against table. known marks cases that
// differ from the recording on purpose, by a reason with a prefix:
// "stderr: why" skips the stderr comparison; "order: why" compares stdout
// as a set of lines; "unsupported: why" expects a failure whose stderr says
// "not supported"; "differs: why" only logs the difference.
func RunGolden(t *testing.T, table commands.Table, cases []Golden, known map[string]string) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			files := NewFiles(c.Files)
			fn := table[c.Args[0]]
			if fn == nil {
				t.Fatalf("no command %q", c.Args[0])
			}
			res := Run(fn, c.Args, c.Stdin, files)
			why := known[c.Name]
			kind, _, _ := strings.Cut(why, ":")
			switch kind {
			case "unsupported":
				if res.Code == 0 || !strings.Contains(res.Stderr, "not supported") {
					t.Errorf("%q: want a clear 'not supported' failure, got exit %d stderr %q", c.Args, res.Code, res.Stderr)
				}
				return
			case "differs":
				if res.Stdout != c.Stdout || res.Code != c.Code {
					t.Logf("%q differs from GNU (%s): got %q exit %d, GNU %q exit %d", c.Args, why, res.Stdout, res.Code, c.Stdout, c.Code)
				}
				return
			}
			gotOut, wantOut := res.Stdout, c.Stdout
			if kind == "order" {
				gotOut, wantOut = sortedLines(gotOut), sortedLines(wantOut)
			}
			if gotOut != wantOut {
				t.Errorf("%q stdout\n got %q\nwant %q", c.Args, res.Stdout, c.Stdout)
			}
			if res.Code != c.Code {
				t.Errorf("%q exit %d, want %d (stderr %q)", c.Args, res.Code, c.Code, res.Stderr)
			}
			if kind != "stderr" && res.Stderr != c.Stderr {
				t.Errorf("%q stderr\n got %q\nwant %q", c.Args, res.Stderr, c.Stderr)
			}
			for name, want := range c.After {
				got, ok := files.Get(name)
				if !ok || string(got) != want {
					t.Errorf("%q: file %s = %q, want %q", c.Args, name, got, want)
				}
			}
		})
	}
}

func sortedLines(s string) string {
	l := strings.Split(s, "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// ReportPercentiles adds p50/p95/p99 of the per-op durations to a benchmark.
func ReportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	// Fractional µs: resident commands on small inputs take a few µs.
	pick := func(q float64) float64 { return float64(d[min(len(d)-1, int(q*float64(len(d))))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pick(0.50), "p50-µs")
	b.ReportMetric(pick(0.95), "p95-µs")
	b.ReportMetric(pick(0.99), "p99-µs")
	b.ReportMetric(float64(len(d)), "n")
}
