package differential

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
)

// Outcome is what a user sees of one run.
type Outcome struct {
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	Status int      `json:"status"`
	Files  []string `json:"files,omitempty"` // "path mode sha256-prefix", sorted
	// TimedOut: the run hit the harness's deadline (compared as a
	// mismatch unless both did).
	TimedOut bool `json:"timed_out,omitempty"`
}

// MarshalJSON keeps output that is not UTF-8 byte for byte (as base64),
// which encoding/json would replace with U+FFFD.
func (o Outcome) MarshalJSON() ([]byte, error) {
	type plain Outcome
	w := struct {
		plain
		StdoutB64 string `json:"stdout_b64,omitempty"`
		StderrB64 string `json:"stderr_b64,omitempty"`
	}{plain: plain(o)}
	if !utf8.ValidString(o.Stdout) {
		w.Stdout, w.StdoutB64 = "", base64.StdEncoding.EncodeToString([]byte(o.Stdout))
	}
	if !utf8.ValidString(o.Stderr) {
		w.Stderr, w.StderrB64 = "", base64.StdEncoding.EncodeToString([]byte(o.Stderr))
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	type plain Outcome
	var w struct {
		plain
		StdoutB64 string `json:"stdout_b64"`
		StderrB64 string `json:"stderr_b64"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*o = Outcome(w.plain)
	for _, f := range []struct {
		b64 string
		dst *string
	}{{w.StdoutB64, &o.Stdout}, {w.StderrB64, &o.Stderr}} {
		if f.b64 != "" {
			raw, err := base64.StdEncoding.DecodeString(f.b64)
			if err != nil {
				return err
			}
			*f.dst = string(raw)
		}
	}
	return nil
}

// Env is the fixed environment both shells get, apart from HOME and the
// working directory: no locale or time zone of the machine leaks in.
func Env(home string) []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C.UTF-8", "TZ=UTC", "HOME=" + home, "USER=user", "LOGNAME=user"}
}

// Runner runs scripts in both shells. Its zero value is not usable: use
// NewRunner.
type Runner struct {
	Bash     string         // path of the reference bash
	Commands commands.Table // warren's resident commands
	Timeout  time.Duration
	root     string // host dir under which each bash run gets its own dir
	base     *vfs.FS
	bin      string // put first in the reference's PATH: sh is bash there
	prlimit  string // util-linux prlimit, to start bash with warren's limits
	env      string // coreutils env, to start bash with default signal dispositions
}

// NewRunner finds bash and prepares the directories. Close removes them.
func NewRunner(tbl commands.Table) (*Runner, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, fmt.Errorf("differential: reference bash: %w", err)
	}
	root, err := os.MkdirTemp("", "warren-diff-")
	if err != nil {
		return nil, fmt.Errorf("differential: %w", err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		return nil, fmt.Errorf("differential: %w", err)
	}
	base := vfs.New(vfs.Options{})
	for _, d := range []string{"/tmp", "/etc", "/bin", "/usr/bin", "/dev", "/proc", root} {
		if err := base.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("differential: %w", err)
		}
	}
	// /tmp as every system has it (1777): programs such as bats refuse a
	// temporary directory the session's user cannot write.
	if err := base.Chmod("/tmp", fs.ModeSticky|0o777); err != nil {
		return nil, fmt.Errorf("differential: %w", err)
	}
	if err := shell.MakeDev(base); err != nil {
		return nil, err
	}
	// The reference's sh is bash too: warren's sh is bash in POSIX mode,
	// the host's /bin/sh may be dash, whose differences are not warren's.
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return nil, fmt.Errorf("differential: %w", err)
	}
	if err := os.Symlink(bash, filepath.Join(bin, "sh")); err != nil {
		return nil, fmt.Errorf("differential: %w", err)
	}
	prl, _ := exec.LookPath("prlimit")
	env, _ := exec.LookPath("env")
	return &Runner{Bash: bash, Commands: tbl, Timeout: 5 * time.Second, root: root, base: base, bin: bin, prlimit: prl, env: env}, nil
}

// Close removes the runner's host directories.
func (r *Runner) Close() error { return os.RemoveAll(r.root) }

// Both runs src in a fresh directory in each shell. The directory has the
// same absolute path in both, so `pwd` and error messages naming paths can
// match.
func (r *Runner) Both(ctx context.Context, src string) (bash, warren Outcome, err error) {
	dir, err := os.MkdirTemp(r.root, "w")
	if err != nil {
		return bash, warren, fmt.Errorf("differential: %w", err)
	}
	// MkdirTemp makes it 0700; warren's copy is 0755 (`ls -la` shows "..").
	if err := os.Chmod(dir, 0o755); err != nil {
		return bash, warren, fmt.Errorf("differential: %w", err)
	}
	defer os.RemoveAll(dir)
	bash = r.bash(ctx, dir, src)
	warren = r.warren(ctx, dir, src)
	return bash, warren, nil
}

func (r *Runner) bash(ctx context.Context, dir, src string) Outcome {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	argv := []string{r.Bash}
	if r.prlimit != "" {
		// The limits `ulimit` reports without being set are warren's, not
		// the host's: the reference starts from the same soft descriptor limit (it
		// may not raise the hard one)
		// and a cpu time equal to the exec's timeout, as warren says.
		secs := strconv.Itoa(int((r.Timeout + time.Second - 1) / time.Second))
		argv = append([]string{r.prlimit, "--nofile=1024:", "--cpu=" + secs + ":" + secs, "--"}, argv...)
	}
	if r.env != "" {
		// A signal the harness was started ignoring (nohup's SIGHUP) would
		// be ignored in bash too and listed by `trap`; warren's sandbox
		// starts from the defaults.
		argv = append([]string{r.env, "--default-signal"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = Env(dir)
	cmd.Env[0] = "PATH=" + r.bin + ":" + strings.TrimPrefix(cmd.Env[0], "PATH=")
	cmd.Stdin = strings.NewReader(src)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		// As the same unprivileged user warren's sessions are, so
		// permission checks (test -w, umask'd files) mean the same.
		os.Chown(dir, 1000, 1000)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 1000, Gid: 1000}
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	o := Outcome{Stdout: out.String(), Stderr: errb.String()}
	if ctx.Err() != nil {
		o.TimedOut = true
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.Status = 128 + int(ws.Signal())
		} else {
			o.Status = ee.ExitCode()
		}
	case err != nil:
		o.Status = -1
		o.Stderr += err.Error()
	}
	o.Files = hostFiles(dir)
	return o
}

func (r *Runner) warren(ctx context.Context, dir, src string) Outcome {
	fsys := r.base.Fork()
	fsys.SetOwner(1000, 1000) // the session's user, as bash runs as it on the host
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return Outcome{Status: -1, Stderr: err.Error()}
	}
	sh, err := shell.New(shell.Config{
		FS: fsys, Commands: r.Commands, Env: Env(dir), Dir: dir,
		Limits: shell.Limits{Timeout: r.Timeout},
		Uid:    1000, Gid: 1000, User: "user",
	})
	if err != nil {
		return Outcome{Status: -1, Stderr: err.Error()}
	}
	var out, errb bytes.Buffer
	st, err := sh.RunStdinScript(ctx, src, &out, &errb)
	if err != nil {
		return Outcome{Stdout: out.String(), Stderr: errb.String() + err.Error(), Status: -1}
	}
	o := Outcome{Stdout: out.String(), Stderr: errb.String(), Status: st}
	o.TimedOut = st == shell.StatusTimeout && strings.Contains(o.Stderr, "time limit")
	o.Files = vfsFiles(fsys, dir)
	return o
}

func fileLine(rel string, mode fs.FileMode, data []byte) string {
	sum := sha256.Sum256(data)
	kind := "f"
	switch {
	case mode.IsDir():
		kind, data = "d", nil
	case mode&fs.ModeSymlink != 0:
		kind = "l"
	}
	h := ""
	if kind != "d" {
		h = hex.EncodeToString(sum[:4])
	}
	return fmt.Sprintf("%s %s %o %s", rel, kind, mode.Perm(), h)
}

func hostFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		var data []byte
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			data = []byte(t)
		case info.Mode().IsRegular():
			data, _ = os.ReadFile(p)
		}
		out = append(out, fileLine(rel, info.Mode(), data))
		return nil
	})
	sort.Strings(out)
	return out
}

func vfsFiles(fsys *vfs.FS, dir string) []string {
	var out []string
	var walk func(p, rel string)
	walk = func(p, rel string) {
		ents, err := fsys.ReadDir(p)
		if err != nil {
			return
		}
		for _, e := range ents {
			cp, crel := path.Join(p, e.Name()), path.Join(rel, e.Name())
			info, err := fsys.Lstat(cp)
			if err != nil {
				continue
			}
			var data []byte
			switch {
			case info.Mode()&fs.ModeSymlink != 0:
				t, _ := fsys.Readlink(cp)
				data = []byte(t)
			case info.Mode().IsRegular():
				data, _ = fsys.ReadFile(cp)
			}
			out = append(out, fileLine(crel, info.Mode(), data))
			if info.IsDir() {
				walk(cp, crel)
			}
		}
	}
	walk(dir, "")
	sort.Strings(out)
	return out
}

// Verdict classes a comparison.
type Verdict string

const (
	Match Verdict = "match"
	// Loud: warren differs but said so on stderr with a non-zero status
	// (a missing feature reported, not a wrong answer).
	Loud Verdict = "loud"
	// Silent: warren gave a different answer without saying anything was
	// wrong. These are the divergences that hurt users.
	Silent Verdict = "silent"
)

// Compare judges warren's outcome against bash's and names the first
// difference. Stderr text is not compared (the shells' message prefixes
// and wordings differ); whether something went to stderr is.
func Compare(bash, warren Outcome) (Verdict, string) {
	var why string
	switch {
	case bash.TimedOut != warren.TimedOut:
		why = fmt.Sprintf("timed out: bash %v, warren %v", bash.TimedOut, warren.TimedOut)
	case bash.Status != warren.Status:
		why = fmt.Sprintf("status: bash %d, warren %d", bash.Status, warren.Status)
	case bash.Stdout != warren.Stdout:
		why = "stdout: " + firstDiff(bash.Stdout, warren.Stdout)
	case (bash.Stderr == "") != (warren.Stderr == ""):
		why = fmt.Sprintf("stderr: bash %q, warren %q", clip(bash.Stderr), clip(warren.Stderr))
	case strings.Join(bash.Files, "\n") != strings.Join(warren.Files, "\n"):
		why = "files: " + firstDiff(strings.Join(bash.Files, "\n"), strings.Join(warren.Files, "\n"))
	default:
		return Match, ""
	}
	if warren.Status != 0 && warren.Stderr != "" && bash.Stderr == "" {
		return Loud, why
	}
	if strings.Contains(warren.Stderr, "not supported") {
		return Loud, why
	}
	return Silent, why
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf("line %d: bash %q, warren %q", i+1, clip(x), clip(y))
		}
	}
	return "(equal)"
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// AddHostFiles copies host files and directory trees into warren's base at
// the same absolute paths, so that a script can run programs installed on
// the host (bats, shunit2, bash's examples) in both shells: bash reads
// them where they are, warren from its copy. Symlinks are copied as links.
func (r *Runner) AddHostFiles(paths ...string) error {
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if err := r.base.MkdirAll(path.Dir(p), 0o755); err != nil {
				return err
			}
			switch {
			case info.IsDir():
				return r.base.MkdirAll(p, info.Mode().Perm())
			case info.Mode()&fs.ModeSymlink != 0:
				t, err := os.Readlink(p)
				if err != nil {
					return err
				}
				return r.base.Symlink(t, p)
			case info.Mode().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				return r.base.WriteFile(p, data, info.Mode().Perm())
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("differential: host file %s: %w", root, err)
		}
	}
	return nil
}
