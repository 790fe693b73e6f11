package sandbox_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/sandboxtest"
)

func jobsManager(t *testing.T) (*sandbox.Manager, api.Service) {
	t.Helper()
	p := openParts(t, t.TempDir())
	m := newManager(t, p)
	t.Cleanup(func() {
		m.Close(context.Background())
		p.close()
	})
	return m, m.For("t")
}

// jobProc returns the sandbox's process that is the job with shell pid
// spid (0: the only job).
func jobProc(t *testing.T, svc api.Service, id string, spid int) api.Process {
	t.Helper()
	ps, err := svc.ListProcesses(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Job > 0 && (spid == 0 || p.ShellPID == spid) {
			return p
		}
	}
	t.Fatalf("no job process (shell pid %d) in %+v", spid, ps)
	return api.Process{}
}

func waitExit(t *testing.T, svc api.Service, id string, pid int) api.ExecResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := svc.WaitProcess(ctx, id, pid)
	if err != nil {
		t.Fatalf("wait for process %d: %v", pid, err)
	}
	return res
}

func shOK(t *testing.T, svc api.Service, id, script string) string {
	t.Helper()
	out, errs, st := sandboxtest.Sh(t, svc, id, script)
	if st != 0 {
		t.Fatalf("%q: status %d, stderr %q", script, st, errs)
	}
	return out
}

// TestJobs_Processes: a job outlives its exec, is one of the sandbox's
// processes (ps, logs, kill) and its session's job in later execs.
func TestJobs_Processes(t *testing.T) {
	_, svc := jobsManager(t)
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if out := shOK(t, svc, sb.ID, "(sleep 0.1; echo one; sleep 30; echo never) & echo started"); out != "started\n" {
		t.Fatalf("exec: %q", out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the exec waited for its job: %v", d)
	}
	p := jobProc(t, svc, sb.ID, 0)
	spid, _ := strconv.Atoi(strings.TrimSpace(shOK(t, svc, sb.ID, "echo $!")))
	if !p.Running || p.Job != 1 || p.ShellPID != spid || p.Session != "main" || !strings.Contains(p.Command, "sleep 30") {
		t.Fatalf("job process: %+v ($! %d)", p, spid)
	}
	if out := shOK(t, svc, sb.ID, "jobs"); !strings.HasPrefix(out, "[1]+  Running ") {
		t.Fatalf("jobs in a later exec: %q", out)
	}
	if err := svc.WriteStdin(ctx, sb.ID, p.PID, []byte("x"), false); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("stdin of a job: %v", err)
	}
	// Its output after the exec returned is in its log.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var log strings.Builder
		actx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		svc.AttachProcess(actx, sb.ID, p.PID, &log, &log)
		cancel()
		if log.String() == "one\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %q", log.String())
		}
	}
	if err := svc.SignalProcess(ctx, sb.ID, p.PID, "TERM"); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := svc.AttachProcess(ctx, sb.ID, p.PID, &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "one\n" || res.Exit != 143 || res.Limit != "signal:TERM" {
		t.Fatalf("attach: %q %+v", out.String(), res)
	}
	if out := shOK(t, svc, sb.ID, "jobs; wait "+strconv.Itoa(spid)+"; echo $?"); out != "143\n" {
		t.Fatalf("after kill: %q", out)
	}
	// The shell's kill, from another exec, ends it too.
	shOK(t, svc, sb.ID, "sleep 30 &")
	p = jobProc(t, svc, sb.ID, mustAtoi(t, shOK(t, svc, sb.ID, "echo $!")))
	shOK(t, svc, sb.ID, "kill -KILL %1")
	if res := waitExit(t, svc, sb.ID, p.PID); res.Exit != 137 || res.Limit != "signal:KILL" {
		t.Fatalf("kill -KILL: %+v", res)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestJobs_KeepsWriting: a dev-server-like loop writes on between execs.
func TestJobs_KeepsWriting(t *testing.T) {
	_, svc := jobsManager(t)
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	shOK(t, svc, sb.ID, "while :; do date +%s%N >> /tmp/ticks; sleep 0.02; done &")
	count := func() int { return mustAtoi(t, shOK(t, svc, sb.ID, "cat /tmp/ticks 2>/dev/null | wc -l")) }
	deadline := time.Now().Add(10 * time.Second)
	a := count()
	for count() < a+3 {
		if time.Now().After(deadline) {
			t.Fatalf("the loop stopped writing at %d lines", count())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if data, err := svc.ReadFile(ctx, sb.ID, "/tmp/ticks", 0, 0); err != nil || len(data) == 0 {
		t.Fatalf("the file API does not see the job's writes: %v", err)
	}
}

// TestJobs_Limits: the session's job limit, the sandbox's process limit and
// the job time limit hold; the exec's own status and limits are its own.
func TestJobs_Limits(t *testing.T) {
	_, svc := jobsManager(t)
	ctx := context.Background()
	t.Run("jobs per session", func(t *testing.T) {
		sb, err := svc.Create(ctx, api.CreateRequest{Limits: api.Limits{Jobs: 4}})
		if err != nil {
			t.Fatal(err)
		}
		shOK(t, svc, sb.ID, "sleep 30 & sleep 30 & sleep 30 &")
		_, errs, st := sandboxtest.Sh(t, svc, sb.ID, "sleep 30 & sleep 30 &")
		if st != sandbox.StatusLimit || !strings.Contains(errs, "job limit exceeded (4 concurrent)") {
			t.Fatalf("status %d stderr %q", st, errs)
		}
	})
	t.Run("processes per sandbox", func(t *testing.T) {
		sb, err := svc.Create(ctx, api.CreateRequest{})
		if err != nil {
			t.Fatal(err)
		}
		_, errs, st := sandboxtest.Sh(t, svc, sb.ID, "for i in $(seq 70); do sleep 30 & done")
		if st != sandbox.StatusLimit || !strings.Contains(errs, "background processes running; the limit is 64") {
			t.Fatalf("status %d stderr %q", st, errs)
		}
		if _, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "true", Isolated: true}); !errors.Is(err, errdefs.ErrResourceExhausted) {
			t.Fatalf("a process past 64 jobs: %v", err)
		}
	})
	t.Run("time limit", func(t *testing.T) {
		sb, err := svc.Create(ctx, api.CreateRequest{Limits: api.Limits{Timeout: api.Duration(300 * time.Millisecond)}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "sleep 30 & echo ok"}, nil, nil)
		if err != nil || res.Exit != 0 || res.Limit != "" {
			t.Fatalf("the exec: %+v %v", res, err)
		}
		p := jobProc(t, svc, sb.ID, 0)
		if res := waitExit(t, svc, sb.ID, p.PID); res.Exit != sandbox.StatusTimeout || res.Limit != "timeout" {
			t.Fatalf("job: %+v", res)
		}
		var out strings.Builder
		svc.AttachProcess(ctx, sb.ID, p.PID, &out, &out)
		if !strings.Contains(out.String(), "warren: time limit exceeded (300ms)") {
			t.Fatalf("job log: %q", out.String())
		}
	})
}

// TestJobs_Lifecycle: live jobs keep a sandbox out of standby unless it
// allows standby with jobs; hibernate ends them with a recorded reason;
// forks and resumed sandboxes have none.
func TestJobs_Lifecycle(t *testing.T) {
	_, svc := jobsManager(t)
	ctx := context.Background()
	state := func(id string) string {
		sb, err := svc.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return sb.State
	}
	waitState := func(id, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for state(id) != want {
			if time.Now().After(deadline) {
				t.Fatalf("sandbox %s is %s, want %s", id, state(id), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Run("not idle while a job runs", func(t *testing.T) {
		sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: api.Duration(100 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		shOK(t, svc, sb.ID, "sleep 30 &")
		p := jobProc(t, svc, sb.ID, 0)
		time.Sleep(500 * time.Millisecond)
		if s := state(sb.ID); s != api.StateRunning {
			t.Fatalf("with a live job: %s", s)
		}
		if err := svc.SignalProcess(ctx, sb.ID, p.PID, "TERM"); err != nil {
			t.Fatal(err)
		}
		waitState(sb.ID, api.StateStandby)
	})
	t.Run("standby_with_jobs", func(t *testing.T) {
		sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: api.Duration(100 * time.Millisecond), StandbyWithJobs: true})
		if err != nil {
			t.Fatal(err)
		}
		shOK(t, svc, sb.ID, "sleep 30 &")
		p := jobProc(t, svc, sb.ID, 0)
		waitState(sb.ID, api.StateStandby)
		if res := waitExit(t, svc, sb.ID, p.PID); res.Exit != 143 || res.Limit != "standby" {
			t.Fatalf("job after standby: %+v", res)
		}
	})
	t.Run("hibernate, resume, fork", func(t *testing.T) {
		sb, err := svc.Create(ctx, api.CreateRequest{})
		if err != nil {
			t.Fatal(err)
		}
		shOK(t, svc, sb.ID, "while :; do echo x >> /tmp/f; sleep 0.01; done &")
		shOK(t, svc, sb.ID, "until [ -s /tmp/f ]; do sleep 0.01; done")
		kids, err := svc.Fork(ctx, sb.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ps, _ := svc.ListProcesses(ctx, kids[0].ID); len(ps) != 0 {
			t.Errorf("a fork has processes: %+v", ps)
		}
		if out := shOK(t, svc, kids[0].ID, "jobs; echo none"); out != "none\n" {
			t.Errorf("a fork has jobs: %q", out)
		}
		p := jobProc(t, svc, sb.ID, 0)
		if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
			t.Fatalf("hibernate with a live job: %v", err)
		}
		if res := waitExit(t, svc, sb.ID, p.PID); res.Exit != 143 || res.Limit != "hibernate" {
			t.Fatalf("job after hibernate: %+v", res)
		}
		if out := shOK(t, svc, sb.ID, "jobs; echo resumed"); out != "resumed\n" {
			t.Fatalf("after resume: %q", out)
		}
		a := shOK(t, svc, sb.ID, "wc -l < /tmp/f")
		time.Sleep(50 * time.Millisecond)
		if b := shOK(t, svc, sb.ID, "wc -l < /tmp/f"); a != b {
			t.Fatalf("still written after hibernate: %s then %s", a, b)
		}
	})
}
