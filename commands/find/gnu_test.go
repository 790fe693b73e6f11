package find_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// gnuCase is one scenario recorded with the Debian tools (findutils 4.9) by running its steps in /tmp/wcase with LC_ALL=C
// and TZ=UTC; every file starts with mtime 2024-01-02 03:04:05 UTC.
type gnuCase struct {
	Name    string            `json:"name"`
	Files   map[string]string `json:"files"`
	Links   map[string]string `json:"links"`
	Stdin   string            `json:"stdin"`
	Results []struct {
		Argv   []string `json:"argv"`
		Stdout string   `json:"stdout"`
		Stderr string   `json:"stderr"`
		Code   int      `json:"code"`
	} `json:"results"`
}

const caseDir = "/tmp/wcase"

var (
	stamp      = time.Unix(1704164645, 0)
	sandboxNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
)

// newSandbox builds a vfs holding c's files, dated like the recording.
func newSandbox(t testing.TB, files, links map[string]string) *vfs.FS {
	// entries are created at the recording's stamp, then the clock moves on
	now := stamp
	fsys := vfs.New(vfs.Options{Now: func() time.Time { return now }})
	defer func() { now = sandboxNow }()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fsys.MkdirAll(caseDir, 0o755))
	var all []string
	for p, content := range files {
		full := path.Join(caseDir, p)
		if strings.HasSuffix(p, "/") {
			must(fsys.MkdirAll(full, 0o755))
			continue
		}
		must(fsys.MkdirAll(path.Dir(full), 0o755))
		must(fsys.WriteFile(full, []byte(content), 0o644))
		all = append(all, full)
	}
	for p, target := range links {
		must(fsys.Symlink(target, path.Join(caseDir, p)))
	}
	for _, p := range all {
		for d := p; d != "/tmp"; d = path.Dir(d) {
			fsys.Chtimes(d, stamp, stamp)
		}
	}
	for p := range files {
		fsys.Chtimes(path.Join(caseDir, p), stamp, stamp)
	}
	fsys.Chtimes(caseDir, stamp, stamp)
	return fsys
}

func runIn(fsys *vfs.FS, tab commands.Table, argv []string, stdin string) (string, string, int) {
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
			Dir: caseDir, Env: env, FS: fsys, Exec: exec})
	}
	inv := &commands.Invocation{
		Args: argv, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Dir: caseDir, Env: []string{"LC_ALL=C", "TZ=UTC", "PATH=/usr/bin:/bin", "HOME=/root"}, FS: fsys, Exec: exec,
		Sys: &commands.System{Hostname: "sandbox", NumCPU: 2,
			Now: func() time.Time { return sandboxNow }},
	}
	fn := tab[argv[0]]
	if fn == nil {
		return "", argv[0] + ": not in table", 127
	}
	code := fn(context.Background(), inv)
	return out.String(), errb.String(), code
}

// knownDiff lists recorded steps whose output legitimately differs in the
// sandbox, with the reason (key: "case name/argv joined by spaces").
var knownDiff = map[string]string{
	"basic/find . -name *.txt -exec echo X {} +": "one batch in the host's directory order",
	"xargs4/xargs nosuchcmd":                     "the not-found message comes from the shell's execution ladder",
}

// sameLines compares find output as a set of lines: the recording follows
// the host's directory order, warren's vfs order is sorted by name
// (TestOrder checks that order).
func sameLines(a, b string) bool {
	sep := "\n"
	if strings.Contains(a+b, "\x00") {
		sep = "\x00"
	}
	x, y := strings.Split(a, sep), strings.Split(b, sep)
	sort.Strings(x)
	sort.Strings(y)
	return strings.Join(x, sep) == strings.Join(y, sep)
}

func TestGNU(t *testing.T) {
	data, err := os.ReadFile("testdata/gnu.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []gnuCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	tab := std.Table()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			fsys := newSandbox(t, c.Files, c.Links)
			for i, r := range c.Results {
				out, errs, code := runIn(fsys, tab, r.Argv, c.Stdin)
				key := c.Name + "/" + strings.Join(r.Argv, " ")
				if why, ok := knownDiff[key]; ok {
					t.Logf("step %d %q: known difference: %s", i, r.Argv, why)
					continue
				}
				if !sameLines(out, r.Stdout) || code != r.Code || errs != r.Stderr {
					t.Errorf("step %d %q\n got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d",
						i, r.Argv, out, errs, code, r.Stdout, r.Stderr, r.Code)
				}
			}
		})
	}
}
