package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/client"
)

// TestE2E_Jobs: background jobs against a real `warren serve` (default
// worker processes), typed as a user would.
func TestE2E_Jobs(t *testing.T) {
	p := startServe(t, t.TempDir())
	if !strings.Contains(p.logs()+p.header, "worker") {
		t.Logf("serve header (workers expected by default):\n%s", p.header)
	}
	admin := p.adminKey(t)
	must := func(args ...string) string {
		t.Helper()
		t1 := time.Now()
		out, errs, code := p.cli(t, admin, "", args...)
		if d := time.Since(t1); d > time.Second {
			t.Logf("warren %s took %v", strings.Join(args, " "), d)
		}
		if code != 0 {
			t.Fatalf("warren %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
		}
		return out
	}
	id := strings.TrimSpace(must("sandbox", "create"))

	start := time.Now()
	if out := must("sandbox", "exec", id, "-c", "sleep 5 & echo started"); out != "started\n" {
		t.Fatalf("exec: %q", out)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("`sleep 5 & echo started` took %v: the exec waited for its job", d)
	}
	if out := must("sandbox", "exec", id, "-c", "jobs"); out != "[1]+  Running                 sleep 5 &\n" {
		t.Fatalf("jobs in a later exec: %q", out)
	}
	psRE := regexp.MustCompile(`(?m)^(\d+)\s+running\s+main\s+%1\(pid (\d+)\)\s+.*sleep 5$`)
	m := psRE.FindStringSubmatch(must("sandbox", "ps", id))
	if m == nil {
		t.Fatalf("sandbox ps does not show the job:\n%s", must("sandbox", "ps", id))
	}
	if bang := strings.TrimSpace(must("sandbox", "exec", id, "-c", "echo $!")); bang != m[2] {
		t.Fatalf("$! %s, ps says shell pid %s", bang, m[2])
	}
	if _, errs, code := p.cli(t, admin, "", "sandbox", "kill", id, m[1]); code != 0 {
		t.Fatalf("kill: %d %q", code, errs)
	}
	if out := must("sandbox", "exec", id, "-c", "wait "+m[2]+"; echo $?; jobs"); out != "143\n" {
		t.Fatalf("after sandbox kill: %q", out)
	}
	if out := must("sandbox", "ps", id); !regexp.MustCompile(`(?m)^` + m[1] + `\s+exited 143 \(signal:TERM\)\s`).MatchString(out) {
		t.Fatalf("ps after kill:\n%s", out)
	}

	// A dev-server-like loop: keeps writing across execs, logs through
	// `sandbox logs`, ended by the shell's kill in a later exec.
	must("sandbox", "exec", id, "-c", `(i=0; while :; do i=$((i+1)); echo "tick $i"; echo $i >> /tmp/ticks; sleep 0.1; done) &`)
	lines := func() int {
		n, _ := strconv.Atoi(strings.TrimSpace(must("sandbox", "exec", id, "-c", "cat /tmp/ticks 2>/dev/null | wc -l")))
		return n
	}
	waitUntil(t, "the loop to write", func() bool { return lines() >= 2 })
	a := lines()
	waitUntil(t, "the loop to go on writing", func() bool { return lines() > a })
	m = regexp.MustCompile(`(?m)^(\d+)\s+running\s+main\s+%1\(pid (\d+)\)`).FindStringSubmatch(must("sandbox", "ps", id))
	if m == nil {
		t.Fatalf("the loop is not in ps:\n%s", must("sandbox", "ps", id))
	}
	if out := must("sandbox", "logs", id, m[1]); !strings.HasPrefix(out, "tick 1\ntick 2\n") {
		t.Fatalf("sandbox logs: %q", out)
	}
	must("sandbox", "exec", id, "-c", "kill %1")
	b := lines()
	time.Sleep(400 * time.Millisecond)
	if c := lines(); c != b {
		t.Fatalf("still writing after kill %%1: %d then %d", b, c)
	}

	// nohup and setsid start services too.
	must("sandbox", "exec", id, "-c", "nohup sh -c 'sleep 0.3; echo up > /tmp/svc' > /dev/null 2>&1 & setsid sleep 30")
	waitUntil(t, "the nohup job", func() bool {
		out, _, _ := p.cli(t, admin, "", "sandbox", "exec", id, "-c", "cat /tmp/svc")
		return out == "up\n"
	})
	if out := must("sandbox", "ps", id); !regexp.MustCompile(`(?m)running\s+main\s+.*sleep 30$`).MatchString(out) {
		t.Fatalf("setsid's job is not in ps:\n%s", out)
	}

	// --standby-with-jobs lets the idle timer hibernate a sandbox whose job
	// still runs (without it a live job keeps the sandbox up: sandbox tests).
	idle := strings.TrimSpace(must("sandbox", "create", "--standby-after", "300ms", "--standby-with-jobs"))
	must("sandbox", "exec", idle, "-c", "sleep 60 &")
	standby := regexp.MustCompile(`"state":\s*"standby"`)
	for deadline := time.Now().Add(15 * time.Second); !standby.MatchString(must("sandbox", "inspect", idle)); {
		if time.Now().After(deadline) {
			t.Fatalf("--standby-with-jobs: still not in standby after 15 s:\n%s", must("sandbox", "inspect", idle))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Native tier: an ELF started with & keeps running after the exec.
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("busybox"); err == nil && !strings.Contains(p.logs(), "native tier unavailable") {
			testNativeJob(t, p, admin)
		} else {
			t.Log("native job part skipped: busybox not installed or the native tier is unavailable")
		}
	}
	p.stop(t)
}

func testNativeJob(t *testing.T, p *serveProc, admin string) {
	t.Helper()
	tarPath := busyboxTar(t)
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
	id, errs, code := p.cli(t, admin, "", "sandbox", "create", "--image", "busybox")
	if code != 0 {
		t.Fatalf("create --image busybox: %q %d", errs, code)
	}
	id = strings.TrimSpace(id)
	start := time.Now()
	out, errs, code := p.cli(t, admin, "", "sandbox", "exec", id, "-c", "/bin/busybox sh -c 'while :; do echo n >> /tmp/native; sleep 0.1; done' & echo started")
	if code != 0 || out != "started\n" || time.Since(start) > 5*time.Second {
		t.Fatalf("native job: %q %q %d after %v", out, errs, code, time.Since(start))
	}
	count := func() int {
		out, _, _ := p.cli(t, admin, "", "sandbox", "exec", id, "-c", "cat /tmp/native 2>/dev/null | wc -l")
		n, _ := strconv.Atoi(strings.TrimSpace(out))
		return n
	}
	waitUntil(t, "the native loop to write", func() bool { return count() >= 2 })
	a := count()
	waitUntil(t, "the native loop to go on", func() bool { return count() > a })
	out, _, _ = p.cli(t, admin, "", "sandbox", "ps", id)
	m := regexp.MustCompile(`(?m)^(\d+)\s+running\s+main\s+%1`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("native job not in ps:\n%s", out)
	}
	if _, errs, code := p.cli(t, admin, "", "sandbox", "kill", id, m[1]); code != 0 {
		t.Fatalf("kill: %q", errs)
	}
	waitUntil(t, "the native job to end", func() bool {
		out, _, _ := p.cli(t, admin, "", "sandbox", "ps", id)
		return regexp.MustCompile(`(?m)^` + m[1] + `\s+exited`).MatchString(out)
	})
	b := count()
	time.Sleep(400 * time.Millisecond)
	if c := count(); c != b {
		t.Fatalf("the native process still writes after kill: %d then %d", b, c)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
