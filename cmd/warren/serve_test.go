package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

// The end-to-end tests build the warren binary, start `warren serve` on a
// free loopback port and drive it with the Go client and the CLI.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func warrenBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warren-e2e-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "warren")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type serveProc struct {
	cmd    *exec.Cmd
	url    string
	dir    string
	mu     sync.Mutex
	out    bytes.Buffer
	done   chan error
	header string // what serve printed before serving
}

var listenRE = regexp.MustCompile(`warren listening on (http://127\.0\.0\.1:\d+)`)

func startServe(t *testing.T, dir string, extra ...string) *serveProc {
	t.Helper()
	bin := warrenBinary(t)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, extra...)
	if !slices.Contains(extra, "--no-native") && !slices.Contains(extra, "--native-run-dir") {
		// Each serve gets its own native run dir (one runtime per dir).
		runDir, err := os.MkdirTemp("", "warren-e2e-native-")
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(runDir, 0o711) // workspace inits reach it as the mapped uid
		t.Cleanup(func() { os.RemoveAll(runDir) })
		args = append(args, "--native-run-dir", filepath.Join(runDir, "run"))
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "WARREN_DATA="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, dir: dir, done: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	var header []string
	for p.url == "" || !strings.HasPrefix(header[len(header)-1], "admin key file:") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited before listening:\n%s\n%s", strings.Join(header, "\n"), p.logs())
			}
			header = append(header, l)
			if m := listenRE.FindStringSubmatch(l); m != nil {
				p.url = m[1]
			}
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("serve did not print its address in 30s:\n%s", strings.Join(header, "\n"))
		}
	}
	// Collect the rest of stdout (the final line on shutdown).
	go func() {
		for l := range lines {
			p.mu.Lock()
			p.out.WriteString(l + "\n")
			p.mu.Unlock()
		}
		p.done <- cmd.Wait()
	}()
	p.header = strings.Join(header, "\n")
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *serveProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM:\n%s", err, p.logs())
		}
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("serve still running 60s after SIGTERM:\n%s", p.logs())
	}
	if !strings.Contains(p.logs(), "every sandbox is hibernated") {
		t.Fatalf("serve did not report hibernating:\n%s", p.logs())
	}
}

func (p *serveProc) adminKey(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// cli runs the warren binary against p with key and returns stdout,
// stderr and the exit status.
func (p *serveProc) cli(t *testing.T, key, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(warrenBinary(t), args...)
	cmd.Env = append(os.Environ(), "WARREN_SERVER="+p.url, "WARREN_API_KEY="+key, "WARREN_DATA="+p.dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func sh(t *testing.T, c *client.Client, id, script string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := c.Exec(context.Background(), id, api.ExecRequest{Script: script}, &out, &errb)
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return out.String(), res.Exit
}

func TestE2E_Serve(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir)
	if !strings.Contains(p.header, "admin key created in "+filepath.Join(dir, "admin.key")) || strings.Contains(p.header, "wk_") {
		t.Fatalf("serve header:\n%s", p.header)
	}
	fi, err := os.Stat(filepath.Join(dir, "admin.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin.key: %v mode %v", err, fi.Mode())
	}
	admin := p.adminKey(t)
	ac, err := client.New(p.url, admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ka, err := ac.CreateKey(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	kb, err := ac.CreateKey(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := client.New(p.url, ka.Key)
	bob, _ := client.New(p.url, kb.Key)
	var keep string // a sandbox checked again after the restart

	t.Run("ClientFlow", func(t *testing.T) {
		sb, err := alice.Create(ctx, api.CreateRequest{Labels: map[string]string{"flow": "client"}})
		if err != nil {
			t.Fatal(err)
		}
		if out, st := sh(t, alice, sb.ID, "echo hello; uname -s"); out != "hello\nLinux\n" || st != 0 {
			t.Fatalf("exec: %q %d", out, st)
		}
		if err := alice.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/work/in.txt", Data: strings.NewReader("payload")}); err != nil {
			t.Fatal(err)
		}
		sh(t, alice, sb.ID, "cd /work; tr a-z A-Z < in.txt > out.txt; STATE=set")
		if data, err := alice.ReadFile(ctx, sb.ID, "/work/out.txt", 0, 0); err != nil || string(data) != "PAYLOAD" {
			t.Fatalf("read: %q %v", data, err)
		}
		if h, err := alice.Hibernate(ctx, sb.ID); err != nil || h.State != api.StateStandby {
			t.Fatalf("hibernate: %+v %v", h, err)
		}
		if out, _ := sh(t, alice, sb.ID, "echo $STATE $(pwd); cat out.txt"); out != "set /work\nPAYLOAD" {
			t.Fatalf("after auto-resume: %q", out)
		}
		kids, err := alice.Fork(ctx, sb.ID, 3)
		if err != nil || len(kids) != 3 {
			t.Fatalf("fork: %v %v", kids, err)
		}
		for i, k := range kids {
			sh(t, alice, k.ID, "echo child"+string(rune('0'+i))+" > who")
		}
		sh(t, alice, sb.ID, "echo parent > who")
		for i, k := range kids {
			if out, _ := sh(t, alice, k.ID, "cat who; echo $STATE"); out != "child"+string(rune('0'+i))+"\nset\n" {
				t.Fatalf("child %d diverged wrong: %q", i, out)
			}
		}
		if _, err := alice.CreateSnapshot(ctx, sb.ID, "flow-snap"); err != nil {
			t.Fatal(err)
		}
		sh(t, alice, sb.ID, "echo later > who")
		from, err := alice.Create(ctx, api.CreateRequest{Snapshot: "flow-snap"})
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := sh(t, alice, from.ID, "cat who; pwd"); out != "parent\n/work\n" {
			t.Fatalf("from snapshot: %q", out)
		}
		for _, id := range append([]string{sb.ID, from.ID}, kids[0].ID) {
			if err := alice.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := alice.Get(ctx, sb.ID); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("deleted sandbox: %v", err)
		}
		keep = kids[1].ID
	})

	t.Run("CLI", func(t *testing.T) {
		out, errs, code := p.cli(t, ka.Key, "", "sandbox", "create", "--label", "via=cli")
		id := strings.TrimSpace(out)
		if code != 0 || !strings.HasPrefix(id, "sb-") {
			t.Fatalf("create: %q %q %d", out, errs, code)
		}
		if out, _, code := p.cli(t, ka.Key, "", "sandbox", "exec", id, "-c", "echo streamed; echo err >&2; exit 3"); out != "streamed\n" || code != 3 {
			t.Fatalf("exec: %q code %d", out, code)
		}
		if out, _, code := p.cli(t, ka.Key, "", "sandbox", "exec", id, "--", "echo", "a b"); out != "a b\n" || code != 0 {
			t.Fatalf("exec argv: %q code %d", out, code)
		}
		if out, _, code := p.cli(t, ka.Key, "piped input", "sandbox", "exec", id, "-c", "cat"); out != "piped input" || code != 0 {
			t.Fatalf("exec stdin: %q code %d", out, code)
		}
		local := filepath.Join(t.TempDir(), "local.txt")
		os.WriteFile(local, []byte("from disk\n"), 0o644)
		if _, errs, code := p.cli(t, ka.Key, "", "fs", "put", id, local, "/up/file.txt"); code != 0 {
			t.Fatalf("fs put: %q %d", errs, code)
		}
		if out, _, _ := p.cli(t, ka.Key, "", "fs", "cat", id, "/up/file.txt"); out != "from disk\n" {
			t.Fatalf("fs cat: %q", out)
		}
		if out, _, _ := p.cli(t, ka.Key, "", "fs", "ls", id, "/up"); !strings.Contains(out, "file.txt") {
			t.Fatalf("fs ls: %q", out)
		}
		if out, _, _ := p.cli(t, ka.Key, "", "sandbox", "ls"); !strings.Contains(out, id) || !strings.Contains(out, "via=cli") {
			t.Fatalf("ls: %q", out)
		}
		if out, _, code := p.cli(t, ka.Key, "", "sandbox", "hibernate", id); code != 0 || !strings.Contains(out, "standby") {
			t.Fatalf("hibernate: %q %d", out, code)
		}
		if out, _, code := p.cli(t, ka.Key, "", "sandbox", "resume", id); code != 0 || !strings.Contains(out, "running") {
			t.Fatalf("resume: %q %d", out, code)
		}
		out, _, code = p.cli(t, ka.Key, "", "sandbox", "fork", id, "--count", "3")
		if ids := strings.Fields(out); code != 0 || len(ids) != 3 {
			t.Fatalf("fork: %q %d", out, code)
		}
		if out, _, code := p.cli(t, ka.Key, "", "sandbox", "snapshot", id, "cli-snap"); code != 0 || !strings.HasPrefix(out, "cli-snap sha256:") {
			t.Fatalf("snapshot: %q %d", out, code)
		}
		out, _, code = p.cli(t, ka.Key, "cd /up\nX=42\necho \"$X $(pwd)\"\nfalse\nhistory\n", "shell", id)
		if code != 0 || !strings.Contains(out, "42 /up") || !strings.Contains(out, "main [1]$ ") || !strings.Contains(out, "    2  X=42") {
			t.Fatalf("shell: %q %d", out, code)
		}
		if out, _ := sh(t, alice, id, "echo $X; pwd"); out != "42\n/up\n" {
			t.Fatalf("the shell's session did not persist: %q", out)
		}
		if _, _, code := p.cli(t, ka.Key, "", "sandbox", "rm", id); code != 0 {
			t.Fatalf("rm: %d", code)
		}
		if _, errs, code := p.cli(t, ka.Key, "", "sandbox", "exec", id, "-c", "true"); code != exitNotFound || !strings.Contains(errs, "not found") {
			t.Fatalf("exec on a removed sandbox: %q code %d, want %d", errs, code, exitNotFound)
		}
		if _, _, code := p.cli(t, "wk_wrong", "", "sandbox", "ls"); code != exitNoPerm {
			t.Fatalf("wrong key: code %d, want %d", code, exitNoPerm)
		}
	})

	t.Run("Standby", func(t *testing.T) {
		sb, err := alice.Create(ctx, api.CreateRequest{StandbyAfter: api.Duration(300 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		sh(t, alice, sb.ID, "V=before-standby")
		deadline := time.Now().Add(15 * time.Second)
		for {
			got, err := alice.Get(ctx, sb.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State == api.StateStandby {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no standby 15s after standby_after=300ms")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if out, _ := sh(t, alice, sb.ID, "echo $V"); out != "before-standby\n" {
			t.Fatalf("after standby: %q", out)
		}
	})

	t.Run("Tenants", func(t *testing.T) {
		sb, err := bob.Create(ctx, api.CreateRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := alice.Get(ctx, sb.ID); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("alice sees bob's sandbox: %v", err)
		}
		if _, err := bob.Get(ctx, keep); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("bob sees alice's sandbox: %v", err)
		}
		if _, err := bob.GetSnapshot(ctx, "flow-snap"); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("bob sees alice's snapshot: %v", err)
		}
		if list, _ := bob.List(ctx, api.ListOptions{}); len(list) != 1 {
			t.Fatalf("bob lists %d sandboxes", len(list))
		}
		if _, err := bob.CreateKey(ctx, "mallory"); !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("bob created a key: %v", err)
		}
	})

	t.Run("BadInputs", func(t *testing.T) {
		cases := []struct {
			name, method, path, key string
			body                    io.Reader
			status                  int
		}{
			{"malformed JSON", "POST", "/v1/sandboxes", ka.Key, strings.NewReader("{"), 400},
			{"unknown field", "POST", "/v1/sandboxes", ka.Key, strings.NewReader(`{"imagee":"x"}`), 400},
			{"100 MB body", "PUT", "/v1/sandboxes/" + keep + "/files?path=/big", ka.Key, bytes.NewReader(make([]byte, 100<<20)), 413},
			{"dotdot path", "GET", "/v1/sandboxes/" + keep + "/files?path=/../etc/passwd", ka.Key, nil, 400},
			{"absent sandbox", "POST", "/v1/sandboxes/sb-absent/exec", ka.Key, strings.NewReader(`{"script":"true"}`), 404},
			{"wrong key", "GET", "/v1/sandboxes", "wk_nope", nil, 401},
			{"no key", "GET", "/v1/sandboxes", "", nil, 401},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				req, _ := http.NewRequest(c.method, p.url+c.path, c.body)
				if c.key != "" {
					req.Header.Set("Authorization", "Bearer "+c.key)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var eb api.ErrorBody
				json.NewDecoder(resp.Body).Decode(&eb)
				if resp.StatusCode != c.status || eb.Error.Code == "" {
					t.Fatalf("status %d body %+v, want %d with an error body", resp.StatusCode, eb, c.status)
				}
			})
		}
	})

	// State to find again after the restart.
	sh(t, alice, keep, `cd /tmp; RESTART_VAR=kept; rf() { echo "function kept"; }; echo on-disk > /tmp/r.txt`)
	if _, err := alice.Exec(ctx, keep, api.ExecRequest{Script: "S2=second", Session: "two"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	before, err := alice.List(ctx, api.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("SIGTERMRestart", func(t *testing.T) {
		p.stop(t)
		p2 := startServe(t, dir)
		if strings.Contains(p2.header, "admin key created") {
			t.Fatalf("restart printed a new admin key:\n%s", p2.header)
		}
		alice2, _ := client.New(p2.url, ka.Key) // keys survive the restart
		after, err := alice2.List(ctx, api.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Fatalf("after restart %d sandboxes, before %d", len(after), len(before))
		}
		for _, sb := range after {
			if sb.State != api.StateStandby {
				t.Fatalf("%s is %s after restart, want standby", sb.ID, sb.State)
			}
		}
		if out, _ := sh(t, alice2, keep, `echo "$RESTART_VAR $(pwd)"; rf; cat r.txt`); out != "kept /tmp\nfunction kept\non-disk\n" {
			t.Fatalf("after restart: %q", out)
		}
		var o bytes.Buffer
		if _, err := alice2.Exec(ctx, keep, api.ExecRequest{Script: "echo $S2", Session: "two"}, &o, nil); err != nil || o.String() != "second\n" {
			t.Fatalf("session two after restart: %q %v", o.String(), err)
		}
		from, err := alice2.Create(ctx, api.CreateRequest{Snapshot: "flow-snap"})
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := sh(t, alice2, from.ID, "cat /work/who"); out != "parent\n" {
			t.Fatalf("snapshot after restart: %q", out)
		}
		p2.stop(t)
	})
}

// waitLog waits up to 10 s for want in p's log.
func waitLog(t *testing.T, p *serveProc, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.logs(), want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log lacks %q:\n%s", want, p.logs())
		}
	}
}

// busyboxTar writes a tar of busybox-static and its applet links, or skips
// the test when busybox is not installed.
func busyboxTar(t *testing.T) string {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox not installed (apt-get install busybox-static)")
	}
	root := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"bin", "usr/bin", "sbin", "usr/sbin", "tmp", "etc", "root", "proc", "dev", "sys"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin/busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bb, "--list-full").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "bin/busybox" {
			dst := filepath.Join(root, p)
			rel, _ := filepath.Rel(filepath.Dir(dst), filepath.Join(root, "bin/busybox"))
			os.Symlink(rel, dst)
		}
	}
	tarPath := filepath.Join(t.TempDir(), "busybox.tar")
	if out, err := exec.Command("tar", "-C", root, "-cf", tarPath, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	return tarPath
}

// TestE2E_Native drives the native tier through `warren serve`, the Go
// client and the CLI flags.
func TestE2E_Native(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the native tier needs root")
	}
	tarPath := busyboxTar(t)
	p := startServe(t, t.TempDir())
	if strings.Contains(p.logs(), "native tier unavailable") {
		t.Skipf("native tier unavailable on this host:\n%s", p.logs())
	}
	admin := p.adminKey(t)
	c, err := client.New(p.url, admin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.BuildImage(context.Background(), "busybox", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	id, errs, code := p.cli(t, admin, "", "sandbox", "create", "--image", "busybox", "--memory", "64M", "--cpus", "0.5", "--pids", "100")
	id = strings.TrimSpace(id)
	if code != 0 || id == "" {
		t.Fatalf("create: %q %q %d", id, errs, code)
	}
	sb, err := c.Get(context.Background(), id)
	if err != nil || sb.Limits.MaxMemoryBytes != 64<<20 || sb.Limits.CPUs != 0.5 || sb.Limits.Pids != 100 {
		t.Fatalf("limits from the CLI flags: %+v %v", sb.Limits, err)
	}
	out, errs, code := p.cli(t, admin, "", "sandbox", "exec", id, "-c", "/bin/busybox echo hi; /bin/busybox seq 1 1000 | grep 7 | wc -l")
	if code != 0 || out != "hi\n271\n" {
		t.Fatalf("native exec: %q %q %d", out, errs, code)
	}
	_, errs, code = p.cli(t, admin, "", "sandbox", "exec", id, "-c", `/bin/busybox sh -c 'x=$(head -c 300000000 /dev/zero | tr "\0" a); echo $x'`)
	if code != 137 || !strings.Contains(errs, "out of memory (limit 64MiB)") {
		t.Fatalf("memory hog: status %d stderr %q: want 137 and the limit", code, errs)
	}
	if !strings.HasSuffix(errs, "warren: memory limit exceeded (64 MiB)\n") {
		t.Fatalf("memory hog: the CLI's notice is not last: %q", errs)
	}
	waitLog(t, p, "event=native_oom sandbox="+id)
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`(?m)^warren_native_oom_kills_total [1-9]`, `(?m)^warren_native_workspaces [1-9]`, `(?m)^warren_native_cpu_seconds_total [0-9.e-]*[1-9]`, `(?m)^warren_exec_outcomes_total\{tenant="admin",outcome="memory"\} 1$`} {
		if !regexp.MustCompile(want).Match(metricsText) {
			t.Errorf("/metrics lacks %s:\n%s", want, metricsText)
		}
	}
	off, errs, code := p.cli(t, admin, "", "sandbox", "create", "--image", "busybox", "--no-native")
	if code != 0 {
		t.Fatalf("create --no-native: %q %d", errs, code)
	}
	_, errs, code = p.cli(t, admin, "", "sandbox", "exec", strings.TrimSpace(off), "-c", "/bin/busybox echo hi")
	if code != 126 || !strings.Contains(errs, "native tier is off for this sandbox") {
		t.Fatalf("ELF in a --no-native sandbox: status %d stderr %q", code, errs)
	}
	if _, errs, code := p.cli(t, admin, "", "sandbox", "create", "--memory", "lots"); code == 0 || !strings.Contains(errs, "bad size") {
		t.Fatalf("--memory lots: status %d stderr %q", code, errs)
	}
	p.stop(t)

	// A node started with --no-native says so in the message.
	p2 := startServe(t, t.TempDir(), "--no-native")
	admin2 := p2.adminKey(t)
	c2, _ := client.New(p2.url, admin2)
	f, _ = os.Open(tarPath)
	_, err = c2.BuildImage(context.Background(), "busybox", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	id2, _, _ := p2.cli(t, admin2, "", "sandbox", "create", "--image", "busybox")
	_, errs, code = p2.cli(t, admin2, "", "sandbox", "exec", strings.TrimSpace(id2), "-c", "/bin/busybox echo hi")
	if code != 126 || !strings.Contains(errs, "disabled on this node (warren serve --no-native)") {
		t.Fatalf("ELF on a --no-native node: status %d stderr %q", code, errs)
	}
	p2.stop(t)
}

// TestE2E_ImageBuildRun: `warren image build -f` runs RUN in a sandbox and
// keeps its files as the layer; `image rm` refuses while sandboxes use the
// image.
func TestE2E_ImageBuildRun(t *testing.T) {
	dir := t.TempDir()
	ctxDir := t.TempDir()
	df := filepath.Join(ctxDir, "Dockerfile")
	if err := os.WriteFile(df, []byte("FROM default\nRUN mkdir -p /app && echo hi > /app/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Install the default image into DIR first (serve does it on start).
	p := startServe(t, dir)
	p.stop(t)
	cmd := exec.Command(warrenBinary(t), "image", "build", "--data", dir, "-t", "tenants/admin/app", "-f", df, ctxDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("image build: %v\n%s", err, out)
	}
	p = startServe(t, dir)
	admin := p.adminKey(t)
	id, errs, code := p.cli(t, admin, "", "sandbox", "create", "--image", "app")
	id = strings.TrimSpace(id)
	if code != 0 {
		t.Fatalf("create from the built image: %q %d", errs, code)
	}
	if out, errs, code := p.cli(t, admin, "", "fs", "cat", id, "/app/x"); code != 0 || out != "hi\n" {
		t.Fatalf("/app/x of the built image: %q %q %d", out, errs, code)
	}
	rm := func() (string, error) {
		out, err := exec.Command(warrenBinary(t), "image", "rm", "--data", dir, "tenants/admin/app").CombinedOutput()
		return string(out), err
	}
	if out, err := rm(); err == nil || !strings.Contains(out, "stop it first") {
		t.Fatalf("image rm while serve holds the metadata: %v %s", err, out)
	}
	p.stop(t)
	if out, err := rm(); err == nil || !strings.Contains(out, "in use") {
		t.Fatalf("image rm while a sandbox uses it: %v %s", err, out)
	}
}
