// Package cmdtest runs resident commands in tests: a file set in a vfs
// (also served through Invocation.OpenHook), invocations over it, recorded
// golden cases and hostile-input checks. Scripts run through warren's own
// shell in the tests that need one (a _test file may import package shell;
// this package may not, being commands code). It never touches the host.
package cmdtest

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
