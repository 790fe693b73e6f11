package oils

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
)

// Options configure a conformance run.
type Options struct {
	// Commands is the resident command table; the helpers are added to a
	// copy of it.
	Commands commands.Table
	// RefShell, when set, is a host shell run on every case too.
	RefShell string
	// Timeout per case; default 5s.
	Timeout time.Duration
	// Jobs runs cases concurrently; default GOMAXPROCS.
	Jobs int
	// Match, when set, keeps only files whose base name contains it.
	Match string
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	File    string
	Index   int
	Name    string
	Pass    bool
	RefPass bool
	Why     string // first mismatch, for warren
	Stderr  string // warren's stderr
}

// FileResult sums one file.
type FileResult struct {
	Name      string
	Cases     int
	Passed    int
	RefPassed int
	Failing   []int
}

// Summary is a whole run.
type Summary struct {
	Files     int
	CasesN    int
	Passed    int
	RefPassed int
	HasRef    bool
	PerFile   []FileResult
	Results   []CaseResult
}

// Run executes every case of every *.test.sh under dirs.
func Run(ctx context.Context, dirs []string, opts Options) (*Summary, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Jobs == 0 {
		opts.Jobs = runtime.GOMAXPROCS(0)
	}
	var files []*File
	var testdata string
	for _, d := range dirs {
		names, err := filepath.Glob(filepath.Join(d, "*.test.sh"))
		if err != nil {
			return nil, fmt.Errorf("cannot list %s: %w", d, err)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("no *.test.sh files in %s", d)
		}
		sort.Strings(names)
		for _, n := range names {
			if opts.Match != "" && !strings.Contains(filepath.Base(n), opts.Match) {
				continue
			}
			fh, err := os.Open(n)
			if err != nil {
				return nil, fmt.Errorf("cannot open %s: %w", n, err)
			}
			f, err := Parse(filepath.Base(n), fh)
			fh.Close()
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		if testdata == "" {
			if fi, err := os.Stat(filepath.Join(d, "spec", "testdata")); err == nil && fi.IsDir() {
				testdata = filepath.Join(d, "spec", "testdata")
			}
		}
	}
	base, err := buildBase(testdata)
	if err != nil {
		return nil, err
	}
	tbl := commands.Table{}
	for k, v := range opts.Commands {
		tbl[k] = v
	}
	RegisterHelpers(tbl)

	var host *hostRepo
	if opts.RefShell != "" {
		host, err = newHostRepo(opts.RefShell, testdata)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(host.root)
	}

	type job struct {
		f   *File
		idx int
	}
	var jobs []job
	for _, f := range files {
		for i := range f.Cases {
			jobs = append(jobs, job{f, i})
		}
	}
	results := make([]CaseResult, len(jobs))
	var wg sync.WaitGroup
	ch := make(chan int)
	for range opts.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				j := jobs[i]
				c := j.f.Cases[j.idx]
				res := CaseResult{File: j.f.Name, Index: j.idx, Name: c.Name}
				got := runWarren(ctx, base, tbl, c, opts.Timeout)
				res.Pass, res.Why = judge(c, got)
				res.Stderr = got.stderr
				if host != nil {
					hg := host.run(ctx, c, opts.Timeout)
					res.RefPass, _ = judge(c, hg)
				}
				results[i] = res
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		ch <- i
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("conformance run interrupted: %w", err)
	}
	s := &Summary{Files: len(files), CasesN: len(jobs), HasRef: host != nil, Results: results}
	byFile := map[string]*FileResult{}
	for _, f := range files {
		fr := &FileResult{Name: f.Name, Cases: len(f.Cases)}
		byFile[f.Name] = fr
	}
	for _, r := range results {
		fr := byFile[r.File]
		if r.Pass {
			fr.Passed++
			s.Passed++
		} else {
			fr.Failing = append(fr.Failing, r.Index)
		}
		if r.RefPass {
			fr.RefPassed++
			s.RefPassed++
		}
	}
	for _, f := range files {
		s.PerFile = append(s.PerFile, *byFile[f.Name])
	}
	return s, nil
}

// outcome is what one shell did with a case.
type outcome struct {
	stdout, stderr string
	status         int
	timedOut       bool
}

func judge(c Case, o outcome) (bool, string) {
	if o.timedOut {
		return false, "timeout"
	}
	if c.Stdout != nil && o.stdout != *c.Stdout {
		return false, fmt.Sprintf("stdout %q, want %q", clip(o.stdout), clip(*c.Stdout))
	}
	if c.Stderr != nil && o.stderr != *c.Stderr {
		return false, fmt.Sprintf("stderr %q, want %q", clip(o.stderr), clip(*c.Stderr))
	}
	if o.status != c.Status {
		return false, fmt.Sprintf("status %d, want %d (stderr %q)", o.status, c.Status, clip(o.stderr))
	}
	if strings.Contains(o.stderr, "Traceback (most recent") {
		return false, "traceback on stderr"
	}
	return true, ""
}

func clip(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}

const (
	caseDir  = "/tmp/case"
	repoRoot = "/repo"
)

// buildBase makes the filesystem every case forks: the FHS skeleton, the
// case dir and REPO_ROOT with spec/testdata, spec/bin, bin and _tmp.
func buildBase(testdata string) (*vfs.FS, error) {
	fsys := vfs.New(vfs.Options{})
	for _, d := range []string{"/tmp", "/root", "/home/user", "/etc", "/bin", "/usr/bin", "/dev", "/proc", caseDir, repoRoot + "/spec/testdata", repoRoot + "/spec/bin", repoRoot + "/bin", repoRoot + "/_tmp/spec-tmp", caseDir + "/_tmp"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create %s: %w", d, err)
		}
	}
	if err := fsys.WriteFile("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		return nil, fmt.Errorf("cannot write /etc/passwd: %w", err)
	}
	if err := shell.MakeDev(fsys); err != nil {
		return nil, err
	}
	if err := fsys.WriteFile(repoRoot+"/spec/bin/builtins-exec-here-doc-helper.sh", []byte(herdocHelper), 0o755); err != nil {
		return nil, fmt.Errorf("cannot write helper: %w", err)
	}
	if testdata != "" {
		ents, err := os.ReadDir(testdata)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", testdata, err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(testdata, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("cannot read testdata: %w", err)
			}
			info, err := e.Info()
			if err != nil {
				return nil, fmt.Errorf("cannot stat testdata: %w", err)
			}
			if err := fsys.WriteFile(repoRoot+"/spec/testdata/"+e.Name(), data, info.Mode().Perm()); err != nil {
				return nil, fmt.Errorf("cannot copy testdata: %w", err)
			}
		}
	}
	return fsys, nil
}

func caseEnv() []string {
	return []string{
		"PATH=" + repoRoot + "/spec/bin:/usr/local/bin:/usr/bin:/bin",
		"LC_ALL=C.UTF-8",
		"SH=bash",
		"TMP=" + caseDir,
		"REPO_ROOT=" + repoRoot,
		"LOCALE_ARCHIVE=",
		"OILS_GC_ON_EXIT=",
	}
}

func runWarren(ctx context.Context, base *vfs.FS, tbl commands.Table, c Case, timeout time.Duration) outcome {
	fsys := base.Fork()
	sh, err := shell.New(shell.Config{
		FS: fsys, Commands: tbl, Env: caseEnv(), Dir: caseDir,
		Limits: shell.Limits{Timeout: timeout},
		Uid:    0, Gid: 0, User: "root",
	})
	if err != nil {
		return outcome{stderr: err.Error(), status: -1}
	}
	var out, errb bytes.Buffer
	st, err := sh.RunStdinScript(ctx, c.Code, &out, &errb)
	if err != nil {
		return outcome{stderr: err.Error(), status: -1}
	}
	return outcome{stdout: out.String(), stderr: errb.String(), status: st, timedOut: st == shell.StatusTimeout && strings.Contains(errb.String(), "time limit exceeded")}
}

// hostRepo is the REPO_ROOT for the reference shell.
type hostRepo struct {
	root  string
	shell string
}

func newHostRepo(refShell, testdata string) (*hostRepo, error) {
	sh, err := exec.LookPath(refShell)
	if err != nil {
		return nil, fmt.Errorf("reference shell %q: %w", refShell, err)
	}
	sh, _ = filepath.Abs(sh)
	root, err := os.MkdirTemp("", "warren-oils-ref-")
	if err != nil {
		return nil, fmt.Errorf("cannot create reference dir: %w", err)
	}
	h := &hostRepo{root: root, shell: sh}
	for _, d := range []string{"spec/testdata", "spec/bin", "bin", "_tmp/spec-tmp", "cases"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, fmt.Errorf("cannot create reference dir: %w", err)
		}
	}
	for name, body := range hostHelpers {
		if err := os.WriteFile(filepath.Join(root, "spec/bin", name), []byte(body), 0o755); err != nil {
			return nil, fmt.Errorf("cannot write helper: %w", err)
		}
	}
	if err := os.Symlink(sh, filepath.Join(root, "spec/bin/bash")); err != nil {
		return nil, fmt.Errorf("cannot link reference shell: %w", err)
	}
	if testdata != "" {
		err := filepath.WalkDir(testdata, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(testdata, p)
			return os.WriteFile(filepath.Join(root, "spec/testdata", rel), data, info.Mode().Perm())
		})
		if err != nil {
			return nil, fmt.Errorf("cannot copy testdata: %w", err)
		}
	}
	return h, nil
}

func (h *hostRepo) run(ctx context.Context, c Case, timeout time.Duration) outcome {
	dir, err := os.MkdirTemp(filepath.Join(h.root, "cases"), "c")
	if err != nil {
		return outcome{status: -1, stderr: err.Error()}
	}
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "_tmp"), 0o755)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.shell)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(c.Code)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = []string{
		"PATH=" + filepath.Join(h.root, "spec/bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LC_ALL=C.UTF-8", "SH=bash", "TMP=" + dir, "REPO_ROOT=" + h.root,
		"LOCALE_ARCHIVE=", "OILS_GC_ON_EXIT=",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	o := outcome{stdout: out.String(), stderr: errb.String()}
	if ctx.Err() != nil {
		o.timedOut = true
		return o
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.status = -int(ws.Signal())
		} else {
			o.status = ee.ExitCode()
		}
	} else if err != nil {
		o.status = -1
		o.stderr += err.Error()
	}
	return o
}

// WriteTable prints the per-file table.
func (s *Summary) WriteTable(w io.Writer) {
	if s.HasRef {
		fmt.Fprintf(w, "%-32s %6s %6s %6s  %s\n", "file", "cases", "warren", "ref", "failing")
	} else {
		fmt.Fprintf(w, "%-32s %6s %6s  %s\n", "file", "cases", "warren", "failing")
	}
	for _, f := range s.PerFile {
		fail := make([]string, len(f.Failing))
		for i, n := range f.Failing {
			fail[i] = fmt.Sprint(n)
		}
		if s.HasRef {
			fmt.Fprintf(w, "%-32s %6d %6d %6d  %s\n", f.Name, f.Cases, f.Passed, f.RefPassed, strings.Join(fail, " "))
		} else {
			fmt.Fprintf(w, "%-32s %6d %6d  %s\n", f.Name, f.Cases, f.Passed, strings.Join(fail, " "))
		}
	}
}

// JSON is the final summary line.
func (s *Summary) JSON() string {
	m := map[string]any{"suite": "oils", "files": s.Files, "cases": s.CasesN, "passed": s.Passed}
	if s.HasRef {
		m["reference_passed"] = s.RefPassed
	}
	// fixed key order
	var b strings.Builder
	b.WriteString(`{"suite":"oils","files":`)
	fmt.Fprint(&b, s.Files)
	fmt.Fprintf(&b, `,"cases":%d,"passed":%d`, s.CasesN, s.Passed)
	if s.HasRef {
		fmt.Fprintf(&b, `,"reference_passed":%d`, s.RefPassed)
	}
	b.WriteString("}")
	_ = json.Marshal
	_ = m
	return b.String()
}
