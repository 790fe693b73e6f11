package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// TestE2E_CLIConventions drives the CLI as a user types it against a
// real `warren serve`: exit statuses, error wording, the verbs, and what
// an operator sees (key file, request log, /metrics).
func TestE2E_CLIConventions(t *testing.T) {
	dir := t.TempDir()
	const metricsKey = "mk_0123456789abcdef"
	p := startServe(t, dir, "--no-native", "--metrics-key", metricsKey)
	admin := p.adminKey(t)
	if strings.Contains(p.header, admin) || strings.Contains(p.logs(), admin) {
		t.Fatalf("serve printed the admin key:\n%s\n%s", p.header, p.logs())
	}
	if !strings.Contains(p.header, "admin key created in "+filepath.Join(dir, "admin.key")) {
		t.Fatalf("first start does not name the key file:\n%s", p.header)
	}
	cli := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return p.cli(t, admin, stdin, args...)
	}
	must := func(args ...string) string {
		t.Helper()
		out, errs, code := cli("", args...)
		if code != 0 {
			t.Fatalf("warren %s: status %d\n%s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	id := strings.TrimSpace(must("sandbox", "create", "--label", "team=a", "--max-output", "64", "--standby-after", "1s"))

	t.Run("ExitCodes", func(t *testing.T) {
		cases := []struct {
			name string
			args []string
			code int
			msg  string
		}{
			{"unknown subcommand", []string{"sandbox", "frob"}, exitUsage, `unknown command "frob" for "warren sandbox"`},
			{"unknown fs subcommand", []string{"fs", "frob"}, exitUsage, `unknown command "frob" for "warren fs"`},
			{"unknown verb", []string{"frob"}, exitUsage, `unknown command "frob" for "warren"`},
			{"missing argument", []string{"sandbox", "exec"}, exitUsage, "usage: warren sandbox exec ID"},
			{"unknown flag", []string{"sandbox", "ls", "--frob"}, exitUsage, "unknown flag: --frob"},
			{"bad duration", []string{"sandbox", "create", "--timeout", "soon"}, exitUsage, `invalid argument "soon" for "--timeout"`},
			{"bad size", []string{"sandbox", "create", "--memory", "lots"}, exitUsage, `bad size "lots"`},
			{"bad size on exec", []string{"sandbox", "exec", id, "--output-limit", "lots", "-c", "true"}, exitUsage, `bad size "lots"`},
			{"bad durability", []string{"sandbox", "exec", id, "--durability", "soon", "-c", "true"}, exitUsage, `bad durability "soon"`},
			{"bad security (checked by the server)", []string{"sandbox", "create", "--security", "lax"}, exitUsage, "lax"},
			{"bad pid", []string{"sandbox", "kill", id, "x"}, exitUsage, `bad pid "x"`},
			{"no such sandbox", []string{"sandbox", "exec", "sb-nope", "-c", "true"}, exitNotFound, `sandbox "sb-nope" not found`},
			{"no such snapshot", []string{"snapshot", "rm", "nope"}, exitNotFound, `snapshot "nope" not found`},
			{"no such file", []string{"fs", "get", id, "/nope", "-"}, exitNotFound, "no such file"},
			{"run has no --c", []string{"run", "--c", "true"}, exitUsage, "unknown flag: --c"},
			{"unknown help topic", []string{"help", "frob"}, exitUsage, `no help topic "frob"`},
			{"version takes no arguments", []string{"version", "x"}, exitUsage, "usage: warren version"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				out, errs, code := cli("", c.args...)
				if code != c.code || !strings.Contains(errs, c.msg) || strings.Contains(out, "Usage:") {
					t.Fatalf("status %d stderr %q stdout %q; want %d naming %q", code, errs, out, c.code, c.msg)
				}
			})
		}
		if out, _, code := cli("", "sandbox"); code != 0 || !strings.Contains(out, "Available Commands") {
			t.Fatalf("a bare group prints its help and exits 0: %d %q", code, out)
		}
		if out, _, code := cli("", "help", "exit-codes"); code != 0 || !strings.Contains(out, "66  not found") || !strings.Contains(out, "--result FILE") {
			t.Fatalf("help exit-codes: %d %q", code, out)
		}
		// The script's own status passes through; --result tells it from warren's.
		res := filepath.Join(t.TempDir(), "res.json")
		if _, _, code := cli("", "sandbox", "exec", id, "--result", res, "-c", "exit 66"); code != 66 {
			t.Fatalf("script status 66: got %d", code)
		}
		var r api.ExecResult
		if data, err := os.ReadFile(res); err != nil || json.Unmarshal(data, &r) != nil || r.Exit != 66 {
			t.Fatalf("--result of a script that ran: %q %v", data, err)
		}
		if _, _, code := cli("", "sandbox", "exec", "sb-nope", "--result", res, "-c", "true"); code != exitNotFound {
			t.Fatalf("not found: %d", code)
		}
		if data, err := os.ReadFile(res); err != nil || len(data) != 0 {
			t.Fatalf("--result after warren failed: %q %v, want an empty file", data, err)
		}
	})

	t.Run("ErrorsSayWhatToDo", func(t *testing.T) {
		run := func(env ...string) (string, int) {
			cmd := exec.Command(warrenBinary(t), "sandbox", "ls")
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			return string(out), code
		}
		if out, code := run("WARREN_SERVER=http://127.0.0.1:1", "WARREN_API_KEY=k"); code != exitUnavailable || !strings.Contains(out, "start it with `warren serve`") {
			t.Fatalf("no server: %d %q", code, out)
		}
		empty := t.TempDir()
		if out, code := run("WARREN_SERVER="+p.url, "WARREN_API_KEY=", "WARREN_DATA="+empty); code != exitNoPerm ||
			!strings.Contains(out, "WARREN_API_KEY") || !strings.Contains(out, filepath.Join(empty, "admin.key")) {
			t.Fatalf("no key: %d %q", code, out)
		}
		// The fallback reads DATA/admin.key with serve's own default DATA.
		if out, code := run("WARREN_SERVER="+p.url, "WARREN_API_KEY=", "WARREN_DATA="+dir); code != 0 || !strings.Contains(out, id) {
			t.Fatalf("the admin.key fallback: %d %q", code, out)
		}
		if out, code := run("WARREN_SERVER="+p.url, "WARREN_API_KEY=wk_wrong"); code != exitNoPerm || !strings.Contains(out, "check WARREN_API_KEY") {
			t.Fatalf("wrong key: %d %q", code, out)
		}
	})

	t.Run("LimitNotices", func(t *testing.T) {
		cases := []struct {
			name   string
			args   []string
			code   int
			notice string
		}{
			{"timeout", []string{"--timeout", "500ms", "-c", "echo started; sleep 5"}, 124, "warren: time limit exceeded (500ms)\n"},
			// The output fills the sandbox's 64 bytes: the notice still comes whole.
			{"output", []string{"-c", "yes 0123456789"}, 125, "warren: output limit exceeded (64 bytes)\n"},
			{"output-limit", []string{"--output-limit", "5", "-c", "echo 0123456789"}, 125, "warren: output limit exceeded (5 bytes)\n"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				out, errs, code := cli("", append([]string{"sandbox", "exec", id}, c.args...)...)
				if code != c.code || !strings.HasSuffix(errs, c.notice) || strings.Count(errs, "limit exceeded") != 1 || strings.Contains(errs, "stopped by") {
					t.Fatalf("status %d stderr %q, want %d ending in %q once", code, errs, c.code, c.notice)
				}
				if c.name == "output-limit" && out != "01234" {
					t.Fatalf("--output-limit 5 let through %q", out)
				}
				if c.name == "output" && len(out)+len(errs)-len(c.notice) != 64 {
					t.Fatalf("output limit 64: %d bytes of output came through", len(out)+len(errs)-len(c.notice))
				}
			})
		}
		// The shell's own wording (warren run) is the same.
		cmd := exec.Command(warrenBinary(t), "run", "--timeout", "500ms", "-c", "sleep 5")
		cmd.Env = append(os.Environ(), "WARREN_DATA="+dir)
		out, _ := cmd.CombinedOutput()
		if string(out) != "warren: time limit exceeded (500ms)\n" {
			t.Fatalf("warren run timeout: %q", out)
		}
	})

	t.Run("Verbs", func(t *testing.T) {
		if out := must("sandbox", "ls"); !regexp.MustCompile(`(?m)^ID\s+STATE\s+IMAGE\s+CREATED\s+LABELS$`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^`+id+`\s+\S+\s+default\s+.*team=a$`).MatchString(out) {
			t.Fatalf("ls with the image column: %q", out)
		}
		if out := must("sandbox", "get", id); !strings.Contains(out, "labels:         team=a") || !strings.Contains(out, "limits:") {
			t.Fatalf("get: %q", out)
		}
		var sb api.Sandbox
		if err := json.Unmarshal([]byte(must("sandbox", "inspect", id)), &sb); err != nil || sb.ID != id || sb.Labels["team"] != "a" {
			t.Fatalf("inspect: %+v %v", sb, err)
		}
		// Trees in and out.
		local := t.TempDir()
		os.MkdirAll(filepath.Join(local, "sub"), 0o755)
		os.WriteFile(filepath.Join(local, "a.sh"), []byte("echo a\n"), 0o755)
		os.WriteFile(filepath.Join(local, "sub", "b.txt"), []byte("b\n"), 0o644)
		os.Symlink("a.sh", filepath.Join(local, "link"))
		must("fs", "put", id, local, "/work/proj")
		if out := must("sandbox", "exec", id, "-c", "cd /work/proj && find . | sort && cat sub/b.txt && readlink link && ./a.sh"); out != ".\n./a.sh\n./link\n./sub\n./sub/b.txt\nb\na.sh\na\n" {
			t.Fatalf("fs put of a directory: %q", out)
		}
		back := filepath.Join(t.TempDir(), "back")
		must("fs", "get", id, "/work/proj", back)
		if data, err := os.ReadFile(filepath.Join(back, "sub", "b.txt")); err != nil || string(data) != "b\n" {
			t.Fatalf("fs get of a directory: %q %v", data, err)
		}
		if fi, err := os.Stat(filepath.Join(back, "a.sh")); err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("fs get kept no mode: %v %v", fi, err)
		}
		if l, err := os.Readlink(filepath.Join(back, "link")); err != nil || l != "a.sh" {
			t.Fatalf("fs get of a symlink: %q %v", l, err)
		}
		if out := must("fs", "get", id, "/work/proj/sub/b.txt", "-"); out != "b\n" {
			t.Fatalf("fs get of a file to stdout: %q", out)
		}
		here := t.TempDir()
		must("fs", "get", id, "/work/proj/sub/b.txt", here)
		if data, _ := os.ReadFile(filepath.Join(here, "b.txt")); string(data) != "b\n" {
			t.Fatalf("fs get of a file into a directory: %q", data)
		}
		// Snapshots.
		must("snapshot", "create", id, "snap-one")
		if out := must("snapshot", "ls"); !regexp.MustCompile(`(?m)^snap-one\s+` + id).MatchString(out) {
			t.Fatalf("snapshot ls: %q", out)
		}
		if out, errs, code := cli("", "snapshot", "rm", "snap-one", "nope"); code != exitNotFound || out != "snap-one\n" || !strings.Contains(errs, `"nope" not found`) {
			t.Fatalf("snapshot rm of one that exists and one that does not: %d %q %q", code, out, errs)
		}
		if out := must("snapshot", "ls"); strings.Contains(out, "snap-one") {
			t.Fatalf("snap-one still listed: %q", out)
		}
		// hibernate prints what its help promises: id, state and StateRef.
		if out := must("sandbox", "hibernate", id); !regexp.MustCompile(`^` + id + ` standby sha256:[0-9a-f]{64}\n$`).MatchString(out) {
			t.Fatalf("hibernate: %q", out)
		}
		// fork --label: the children keep the parent's labels, with the new over them.
		kids := strings.Fields(must("sandbox", "fork", id, "--count", "2", "--label", "role=child", "--label", "team=b"))
		if len(kids) != 2 {
			t.Fatalf("fork printed %q", kids)
		}
		if out := must("sandbox", "ls", "--label", "role=child"); !strings.Contains(out, kids[0]) || !strings.Contains(out, kids[1]) || strings.Contains(out, id) || !strings.Contains(out, "role=child,team=b") {
			t.Fatalf("ls of the labelled children: %q", out)
		}
		if out := must("sandbox", "get", id); !strings.Contains(out, "labels:         team=a\n") {
			t.Fatalf("the parent's labels changed: %q", out)
		}
		if _, errs, code := cli("", "sandbox", "fork", id, "--label", "bad key=x"); code != exitUsage || !strings.Contains(errs, "bad label key") {
			t.Fatalf("fork with a bad label: %d %q", code, errs)
		}
		must(append([]string{"sandbox", "rm"}, kids...)...)
		// rm of several ids.
		a := strings.TrimSpace(must("sandbox", "create"))
		b := strings.TrimSpace(must("sandbox", "create"))
		if out, errs, code := cli("", "sandbox", "rm", a, "sb-nope", b); code != exitNotFound || out != a+"\n"+b+"\n" || !strings.Contains(errs, "sb-nope") {
			t.Fatalf("rm of three ids, one absent: %d %q %q", code, out, errs)
		}
		if out := must("sandbox", "ls"); strings.Contains(out, a) || strings.Contains(out, b) {
			t.Fatalf("removed sandboxes still listed: %q", out)
		}
	})

	t.Run("Processes", func(t *testing.T) {
		pid := strings.TrimSpace(must("sandbox", "start", id, "-c", "echo one; sleep 1; echo two; exit 7"))
		if pid == "" {
			t.Fatal("start printed no pid")
		}
		// The job does not hold the session: an exec goes on meanwhile.
		t0 := time.Now()
		if out := must("sandbox", "exec", id, "-c", "echo meanwhile"); out != "meanwhile\n" || time.Since(t0) > 900*time.Millisecond {
			t.Fatalf("exec during a background process: %q after %v", out, time.Since(t0))
		}
		if out := must("sandbox", "ps", id); !regexp.MustCompile(`(?m)^` + pid + `\s+running\s+main\s+.*echo one`).MatchString(out) {
			t.Fatalf("ps while running: %q", out)
		}
		if out := must("sandbox", "logs", id, pid); out != "one\n" {
			t.Fatalf("logs while running: %q", out)
		}
		if out, _, code := cli("", "sandbox", "attach", id, pid); code != 7 || out != "one\ntwo\n" {
			t.Fatalf("attach: %d %q, want 7 and the whole output", code, out)
		}
		if out := must("sandbox", "ps", id); !regexp.MustCompile(`(?m)^` + pid + `\s+exited 7\s`).MatchString(out) {
			t.Fatalf("ps after exit: %q", out)
		}
		if out := must("sandbox", "logs", "-f", id, pid); out != "one\ntwo\n" {
			t.Fatalf("logs -f of an exited process: %q", out)
		}
		long := strings.TrimSpace(must("sandbox", "start", id, "--", "sleep", "60"))
		must("sandbox", "kill", id, long)
		if _, errs, code := cli("", "sandbox", "attach", id, long); code != 143 || !strings.HasSuffix(errs, "warren: killed by SIGTERM\n") {
			t.Fatalf("attach to a killed process: %d %q", code, errs)
		}
		if _, errs, code := cli("", "sandbox", "kill", id, long); code != exitConflict || !strings.Contains(errs, "has exited") {
			t.Fatalf("kill of an exited process: %d %q", code, errs)
		}
	})

	t.Run("Operators", func(t *testing.T) {
		short := strings.TrimSpace(must("sandbox", "create", "--ttl", "1s"))
		req, _ := http.NewRequest("GET", p.url+"/v1/sandboxes/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("X-Request-Id", "trace-42")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); got != "trace-42" {
			t.Fatalf("X-Request-Id echoed %q", got)
		}
		req.Header.Set("X-Request-Id", "bad id;"+strings.Repeat("x", 70))
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(got) {
			t.Fatalf("a malformed client id was not replaced: %q", got)
		}
		resp, err = http.Get(p.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("/metrics without the key: %d", resp.StatusCode)
		}
		mreq, _ := http.NewRequest("GET", p.url+"/metrics", nil)
		mreq.Header.Set("Authorization", "Bearer "+metricsKey)
		resp, err = http.DefaultClient.Do(mreq)
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		io.Copy(&body, resp.Body)
		resp.Body.Close()
		m := body.String()
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^warren_exec_outcomes_total\{tenant="admin",outcome="timeout"\} [1-9]`),
			regexp.MustCompile(`(?m)^warren_exec_outcomes_total\{tenant="admin",outcome="output"\} [2-9]`),
			regexp.MustCompile(`(?m)^warren_exec_outcomes_total\{tenant="admin",outcome="exit"\} [1-9]`),
			regexp.MustCompile(`(?m)^warren_tenant_requests_total\{tenant="admin"\} [1-9]`),
			regexp.MustCompile(`(?m)^process_resident_memory_bytes [1-9]`),
			regexp.MustCompile(`(?m)^process_open_fds [1-9]`),
			regexp.MustCompile(`(?m)^go_goroutines [1-9]`),
			regexp.MustCompile(`(?m)^go_gc_cycles_total \d`),
			regexp.MustCompile(`(?m)^warren_tenant_sandboxes\{tenant="admin"\} [1-9]`),
			regexp.MustCompile(`(?m)^warren_native_workspaces \d`),
			regexp.MustCompile(`(?m)^warren_native_oom_kills_total \d`),
			regexp.MustCompile(`(?m)^warren_native_cpu_seconds_total \d`),
			regexp.MustCompile(`(?m)^warren_blob_store_bytes [1-9]`),
			regexp.MustCompile(`(?m)^warren_blob_store_objects [1-9]`),
		} {
			if !want.MatchString(m) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		// The request log: ids, exec outcomes, lifecycle events.
		deadline := time.Now().Add(10 * time.Second)
		for {
			logs := p.logs()
			missing := ""
			for _, want := range []string{
				"request_id=trace-42",
				"exec_outcome=timeout", "limit=timeout",
				"event=create sandbox=" + id,
				"event=standby sandbox=" + id,
				"event=resume sandbox=" + id,
				"event=ttl_delete sandbox=" + short,
			} {
				if !strings.Contains(logs, want) {
					missing = want
				}
			}
			if missing == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the log lacks %q:\n%s", missing, logs)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if strings.Contains(p.logs(), admin) {
			t.Fatal("the admin key is in the log")
		}
	})
	p.stop(t)
	p2 := startServe(t, dir, "--no-native")
	if strings.Contains(p2.header, "admin key created") || strings.Contains(p2.header, admin) {
		t.Fatalf("the restart printed the key or claims it created one:\n%s", p2.header)
	}
	p2.stop(t)
}

// TestE2E_MetricsInProcess: with --workers 0 the blob store's size comes
// from the node's own store (storeCounter), and the request log and key
// file behave as in worker mode.
func TestE2E_MetricsInProcess(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir, "--no-native", "--workers", "0")
	admin := p.adminKey(t)
	if strings.Contains(p.header, admin) {
		t.Fatalf("serve printed the admin key:\n%s", p.header)
	}
	id, errs, code := p.cli(t, admin, "", "sandbox", "create")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errs)
	}
	id = strings.TrimSpace(id)
	if _, errs, code := p.cli(t, admin, "", "sandbox", "exec", id, "-c", "echo data > /tmp/f"); code != 0 {
		t.Fatalf("exec: %d %s", code, errs)
	}
	if _, errs, code := p.cli(t, admin, "", "sandbox", "hibernate", id); code != 0 {
		t.Fatalf("hibernate: %d %s", code, errs)
	}
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`(?m)^warren_blob_store_bytes [1-9]`, `(?m)^warren_blob_store_objects [1-9]`, `(?m)^warren_exec_outcomes_total\{tenant="admin",outcome="ok"\} 1$`, `(?m)^warren_tenant_sandboxes\{tenant="admin"\} 1$`} {
		if !regexp.MustCompile(want).Match(m) {
			t.Errorf("/metrics lacks %s:\n%s", want, m)
		}
	}
	waitLog(t, p, "event=create sandbox="+id)
	if strings.Contains(p.logs(), admin) {
		t.Fatal("the admin key is in the log")
	}
	p.stop(t)
}
