// Package gnucase replays scenarios recorded with the Debian tools (each
// step's argv, stdout, stderr and exit status, run in /tmp/wcase with
// LC_ALL=C and TZ=UTC, every file dated 2024-01-02 03:04:05 UTC) against the
// resident commands. The command packages' tests share it; it is only for
// tests.
package gnucase

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// Case is one recorded scenario.
type Case struct {
	Name    string            `json:"name"`
	Files   map[string]string `json:"files"` // "dir/" entries are directories
	Links   map[string]string `json:"links"` // symlink name -> target
	Stdin   string            `json:"stdin"`
	Env     map[string]string `json:"env"`
	Results []Step            `json:"results"`
}

// Step is one command of a case and what the Debian tool printed. A step
// whose argv[0] is "write" writes argv[2] into the file argv[1] instead.
type Step struct {
	Argv   []string `json:"argv"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	Code   int      `json:"code"`
}

// Dir is the recording's working directory.
const Dir = "/tmp/wcase"

var (
	// Stamp is the mtime of every file of a case.
	Stamp = time.Unix(1704164645, 0)
	// Now is the sandbox clock while steps run.
	Now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
)

// NewSandbox builds a vfs holding files and links under Dir, dated like
// the recording.
func NewSandbox(t testing.TB, files, links map[string]string) *vfs.FS {
	now := Stamp // entries are created at the recording's stamp, then the clock moves on
	fsys := vfs.New(vfs.Options{Now: func() time.Time { return now }})
	defer func() { now = Now }()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fsys.MkdirAll(Dir, 0o755))
	var all []string
	for p, content := range files {
		full := path.Join(Dir, p)
		if strings.HasSuffix(p, "/") {
			must(fsys.MkdirAll(full, 0o755))
			continue
		}
		must(fsys.MkdirAll(path.Dir(full), 0o755))
		must(fsys.WriteFile(full, []byte(content), 0o644))
		all = append(all, full)
	}
	for p, target := range links {
		must(fsys.Symlink(target, path.Join(Dir, p)))
	}
	for _, p := range all {
		for d := p; d != "/tmp"; d = path.Dir(d) {
			fsys.Chtimes(d, Stamp, Stamp)
		}
	}
	for p := range files {
		fsys.Chtimes(path.Join(Dir, p), Stamp, Stamp)
	}
	fsys.Chtimes(Dir, Stamp, Stamp)
	return fsys
}

// RunIn runs argv from tab in fsys with Dir as cwd, the recording's
// environment plus env, and an Exec that re-enters tab (find -exec, xargs).
func RunIn(fsys *vfs.FS, tab commands.Table, argv []string, stdin string, env ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	var exec func(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int
	exec = func(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
		fn := tab[argv[0]]
		if fn == nil {
			fmt.Fprintf(stderr, "warren: %s: command not found\n", argv[0])
			return 127
		}
		if stdin == nil {
			stdin = strings.NewReader("")
		}
		return fn(ctx, &commands.Invocation{Args: argv, Stdin: stdin, Stdout: stdout, Stderr: stderr,
			Dir: Dir, Env: env, FS: fsys, Exec: exec, Umask: 0o022})
	}
	inv := &commands.Invocation{
		Args: argv, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Dir: Dir, Env: append([]string{"LC_ALL=C", "TZ=UTC", "PATH=/usr/bin:/bin", "HOME=/root"}, env...), FS: fsys, Exec: exec, Umask: 0o022, // a login shell's default
		Sys: &commands.System{Hostname: "sandbox", NumCPU: 2, Now: func() time.Time { return Now }},
	}
	fn := tab[argv[0]]
	if fn == nil {
		return "", argv[0] + ": not in table", 127
	}
	code = fn(context.Background(), inv)
	return out.String(), errb.String(), code
}

// SameLines compares output as a set of lines (NUL-terminated records when
// either side has a NUL): the recording follows the host's directory order,
// the vfs lists names sorted.
func SameLines(a, b string) bool {
	sep := "\n"
	if strings.Contains(a+b, "\x00") {
		sep = "\x00"
	}
	x, y := strings.Split(a, sep), strings.Split(b, sep)
	sort.Strings(x)
	sort.Strings(y)
	return strings.Join(x, sep) == strings.Join(y, sep)
}

// Options tune a replay.
type Options struct {
	// KnownDiff lists steps whose output legitimately differs in the
	// sandbox ("case name/argv joined by spaces" -> reason); they are logged.
	KnownDiff map[string]string
	// Unordered compares stdout with SameLines.
	Unordered bool
}

// Replay runs every case of the JSON file (read from testdata, usually
// os.DirFS("testdata"): this package stays off the host filesystem like
// every command package) against tab, one subtest each.
func Replay(t *testing.T, testdata fs.FS, file string, tab commands.Table, opts Options) {
	data, err := fs.ReadFile(testdata, file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s holds no cases", file)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			fsys := NewSandbox(t, c.Files, c.Links)
			var env []string
			for k, v := range c.Env {
				env = append(env, k+"="+v)
			}
			for i, r := range c.Results {
				if r.Argv[0] == "write" {
					p := path.Join(Dir, r.Argv[1])
					if err := fsys.MkdirAll(path.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := fsys.WriteFile(p, []byte(r.Argv[2]), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				out, errs, code := RunIn(fsys, tab, r.Argv, c.Stdin, env...)
				key := c.Name + "/" + strings.Join(r.Argv, " ")
				if why, ok := opts.KnownDiff[key]; ok {
					t.Logf("step %d %q: known difference: %s", i, r.Argv, why)
					continue
				}
				same := out == r.Stdout
				if opts.Unordered {
					same = SameLines(out, r.Stdout)
				}
				if !same || code != r.Code || errs != r.Stderr {
					t.Errorf("step %d %q\n got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d",
						i, r.Argv, out, errs, code, r.Stdout, r.Stderr, r.Code)
				}
			}
		})
	}
}
