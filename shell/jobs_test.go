package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// jobLogs is an OnJob hook keeping each job's output, by pid.
type jobLogs struct {
	mu     sync.Mutex
	logs   map[int]*lockedBuf
	jobs   map[int]*Job
	refuse error
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (h *jobLogs) hook(ctx context.Context, j *Job) (io.Writer, io.Writer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refuse != nil {
		return nil, nil, h.refuse
	}
	if h.logs == nil {
		h.logs, h.jobs = map[int]*lockedBuf{}, map[int]*Job{}
	}
	b := &lockedBuf{}
	h.logs[j.PID()], h.jobs[j.PID()] = b, j
	return b, b, nil
}

func (h *jobLogs) log(pid int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b := h.logs[pid]; b != nil {
		return b.String()
	}
	return ""
}

func (h *jobLogs) job(pid int) *Job {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.jobs[pid]
}

func newJobShell(t *testing.T, lim Limits) (*Shell, *jobLogs) {
	t.Helper()
	sh := newTestShell(t, lim)
	h := &jobLogs{}
	sh.cfg.OnJob = h.hook
	// ps as commands see the sandbox's processes (Sys.Procs).
	sh.cfg.Commands["ps"] = func(ctx context.Context, inv *commands.Invocation) int {
		for _, p := range inv.Sys.Procs() {
			fmt.Fprintf(inv.Stdout, "%d %d %s\n", p.Pid, p.PPid, p.Cmd)
		}
		return 0
	}
	t.Cleanup(func() {
		if !sh.StopJobs("test over", 5*time.Second) {
			t.Errorf("jobs still running after StopJobs: %d", len(sh.Jobs()))
		}
	})
	return sh, h
}

// must runs script and wants status 0.
func must(t *testing.T, sh *Shell, script string) string {
	t.Helper()
	out, errs, st := runScript(t, sh, script)
	if st != 0 {
		t.Fatalf("%q: status %d, stderr %q", script, st, errs)
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestJobOutlivesRun: `sleep & echo` returns at once; later Runs of the
// session see the job in jobs, $!, ps, kill and wait.
func TestJobOutlivesRun(t *testing.T) {
	sh, _ := newJobShell(t, Limits{})
	start := time.Now()
	if out := must(t, sh, "sleep 30 & echo started"); out != "started\n" {
		t.Fatalf("got %q", out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the Run waited for its job: %v", d)
	}
	if out := must(t, sh, "jobs"); out != "[1]+  Running                 sleep 30 &\n" {
		t.Fatalf("jobs in the next Run: %q", out)
	}
	pid := strings.TrimSpace(must(t, sh, "echo $!"))
	if got := strings.TrimSpace(must(t, sh, "jobs -p")); got != pid {
		t.Fatalf("jobs -p %q, $! %q", got, pid)
	}
	if out := must(t, sh, "ps"); !strings.Contains(out, "sleep 30") {
		t.Fatalf("ps does not list the job:\n%s", out)
	}
	if js := sh.Jobs(); len(js) != 1 || strconv.Itoa(js[0].PID()) != pid || js[0].Command() != "sleep 30" {
		t.Fatalf("Shell.Jobs = %v", js)
	}
	if out := must(t, sh, "sleep 30 & jobs; kill %1; wait %1; echo $?"); out != "[1]-  Running                 sleep 30 &\n[2]+  Running                 sleep 30 &\n143\n" {
		t.Fatalf("kill %%1: %q", out)
	}
	if out := must(t, sh, "jobs; kill -KILL $!; wait $!; echo $?; wait; jobs; echo end"); out != "[2]+  Running                 sleep 30 &\n137\nend\n" {
		t.Fatalf("kill PID: %q", out)
	}
	if n := len(sh.Jobs()); n != 0 {
		t.Fatalf("%d jobs left", n)
	}
}

// TestJobStatusAcrossRuns: wait in a later Run collects a job's status.
func TestJobStatusAcrossRuns(t *testing.T) {
	sh, _ := newJobShell(t, Limits{})
	must(t, sh, "(sleep 0.1; exit 3) &")
	tests := []struct{ script, want string }{
		{"wait $!; echo $?", "3\n"},
		{"jobs; echo none", "none\n"},
		{"wait %7; echo $?", "127\n"},
		{"kill %9; echo $?", "1\n"},
	}
	for _, tt := range tests {
		if out, _, _ := runScript(t, sh, tt.script); out != tt.want {
			t.Errorf("%q: got %q, want %q", tt.script, out, tt.want)
		}
	}
}

// TestJobOutput: a job's output reaches the Run that started it while it
// runs, and its log always; redirected output goes where the script said.
func TestJobOutput(t *testing.T) {
	sh, h := newJobShell(t, Limits{})
	out := must(t, sh, "(echo early; echo err >&2; sleep 0.3; echo late) & sleep 0.1; echo $! > /tmp/pid")
	if out != "early\n" {
		t.Fatalf("the Run's output: %q", out)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(must(t, sh, "cat /tmp/pid")))
	j := h.job(pid)
	if j == nil {
		t.Fatalf("no job %d was given a log", pid)
	}
	<-j.Done()
	if got := h.log(pid); got != "early\nerr\nlate\n" {
		t.Fatalf("the job's log: %q", got)
	}
	if j.Status() != 0 || j.Cause() != "" {
		t.Fatalf("status %d cause %q", j.Status(), j.Cause())
	}
	must(t, sh, "echo redirected > /tmp/r 2>&1 & wait; echo $! > /tmp/pid")
	pid, _ = strconv.Atoi(strings.TrimSpace(must(t, sh, "cat /tmp/pid")))
	if got := h.log(pid); got != "" {
		t.Errorf("a redirected job's log: %q", got)
	}
	if got := must(t, sh, "cat /tmp/r"); got != "redirected\n" {
		t.Errorf("its file: %q", got)
	}
	// A command substitution reads until the jobs holding it end.
	if got := must(t, sh, `x=$( (sleep 0.1; echo held) & ); echo "[$x]"`); got != "[held]\n" {
		t.Errorf("command substitution: %q", got)
	}
}

// TestJobKeepsWriting: a dev-server-like loop goes on writing between Runs.
func TestJobKeepsWriting(t *testing.T) {
	sh, _ := newJobShell(t, Limits{})
	must(t, sh, "while :; do echo tick >> /tmp/ticks; sleep 0.02; done &")
	count := func() int {
		n, _ := strconv.Atoi(strings.TrimSpace(must(t, sh, "cat /tmp/ticks 2>/dev/null | wc -l")))
		return n
	}
	a := 0
	waitFor(t, "a first tick", func() bool { a = count(); return a > 0 })
	waitFor(t, "more ticks", func() bool { return count() > a+2 })
	must(t, sh, "kill %1; wait")
	b := count()
	time.Sleep(100 * time.Millisecond)
	if c := count(); c != b {
		t.Fatalf("still writing after kill: %d then %d", b, c)
	}
}

// TestNohupSetsidDisown: the ways agents start services.
func TestNohupSetsidDisown(t *testing.T) {
	sh, _ := newJobShell(t, Limits{})
	tests := []struct {
		name, script, want string
		status             int
	}{
		{"nohup runs the command", "nohup echo hi", "hi\n", 0},
		{"nohup without a command", "nohup", "", 125},
		{"nohup job", "nohup sleep 30 > /dev/null 2>&1 & jobs; kill %1; wait", "[1]+  Running                 nohup sleep 30 > /dev/null 2>&1 &\n", 0},
		{"setsid detaches", "setsid sleep 30; echo $?; jobs; ps | grep -c 'sleep 30'", "0\n1\n", 0},
		{"setsid -w waits", "setsid -w sh -c 'exit 4' 2>/dev/null || setsid -w false; echo $?", "1\n", 0},
		{"setsid without a command", "setsid", "", 1},
		{"disown", "sleep 30 & disown; jobs; wait; echo $?; ps | grep -c 'sleep 30'", "0\n2\n", 0},
		{"disown -a", "sleep 30 & sleep 30 & disown -a; jobs; echo n", "n\n", 0},
		{"disown a bad job", "disown %5", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, st := runScript(t, sh, tt.script)
			if out != tt.want || st != tt.status {
				t.Errorf("got %q status %d (stderr %q), want %q %d", out, st, errs, tt.want, tt.status)
			}
		})
	}
	if n := len(sh.Jobs()); n != 4 {
		t.Errorf("session jobs: %d, want the 4 detached sleeps", n)
	}
}

// TestJobLimits: the job limit spans Runs; a job's time is bounded; the
// host may refuse a job.
func TestJobLimits(t *testing.T) {
	t.Run("jobs limit across Runs", func(t *testing.T) {
		sh, _ := newJobShell(t, Limits{MaxJobs: 3})
		must(t, sh, "sleep 30 & sleep 30 & sleep 30 &")
		_, errs, st := runScript(t, sh, "sleep 30 &")
		if st != StatusLimit || !strings.Contains(errs, "job limit exceeded (3 concurrent)") {
			t.Fatalf("a fourth job: status %d, stderr %q", st, errs)
		}
		must(t, sh, "kill %1")
		waitFor(t, "a slot", func() bool { return len(sh.Jobs()) == 2 })
		must(t, sh, "sleep 30 &")
	})
	t.Run("job time limit", func(t *testing.T) {
		sh, h := newJobShell(t, Limits{JobTimeout: 200 * time.Millisecond})
		pid, _ := strconv.Atoi(strings.TrimSpace(must(t, sh, "sleep 30 & echo $!")))
		j := h.job(pid)
		if j == nil {
			t.Fatal("no job")
		}
		select {
		case <-j.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the job outlived its time limit")
		}
		if j.Status() != StatusTimeout || j.Cause() != "timeout" || !strings.Contains(h.log(pid), "warren: time limit exceeded (200ms)") {
			t.Fatalf("status %d cause %q log %q", j.Status(), j.Cause(), h.log(pid))
		}
		if out := must(t, sh, "wait "+strconv.Itoa(pid)+"; echo $?"); out != "124\n" {
			t.Fatalf("wait: %q", out)
		}
	})
	t.Run("the host refuses", func(t *testing.T) {
		sh, h := newJobShell(t, Limits{})
		h.refuse = errors.New("sandbox has 64 background processes running; the limit is 64")
		_, errs, st := runScript(t, sh, "sleep 30 & echo not reached")
		if st != StatusLimit || !strings.Contains(errs, "the limit is 64") || len(sh.Jobs()) != 0 {
			t.Fatalf("status %d stderr %q jobs %d", st, errs, len(sh.Jobs()))
		}
	})
	t.Run("the Run's output limit does not end a job", func(t *testing.T) {
		sh, h := newJobShell(t, Limits{MaxOutputBytes: 1000})
		out, _, st := runScript(t, sh, "(sleep 0.1; for i in $(seq 200); do echo line $i; done; echo last) & echo $! > /tmp/pid; wait $!")
		if st != StatusLimit || len(out) > 1000 {
			t.Fatalf("the Run: status %d, %d bytes", st, len(out))
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(must(t, sh, "cat /tmp/pid")))
		j := h.job(pid)
		if j == nil {
			t.Fatal("no job")
		}
		<-j.Done()
		if !strings.HasSuffix(h.log(pid), "line 200\nlast\n") || j.Status() != 0 {
			t.Fatalf("status %d, log ends %q", j.Status(), h.log(pid)[max(0, len(h.log(pid))-30):])
		}
	})
}

// TestJobForkBomb: the classic fork bomb returns (as in bash), its jobs hit
// the session's job limit and are stopped together; the session goes on.
func TestJobForkBomb(t *testing.T) {
	sh, h := newJobShell(t, Limits{MaxJobs: 32, Timeout: 20 * time.Second})
	must(t, sh, ":(){ :|:& };:")
	waitFor(t, "the bomb to be stopped", func() bool { return len(sh.Jobs()) == 0 })
	// The jobs the bomb starts write where their first job does.
	h.mu.Lock()
	stopped, logs := 0, ""
	for pid, j := range h.jobs {
		if j.Cause() == "limit" && j.Status() == StatusLimit {
			stopped++
		}
		logs += h.logs[pid].String()
	}
	n := len(h.jobs)
	h.mu.Unlock()
	if stopped == 0 || !strings.Contains(logs, "job limit exceeded (32 concurrent); its group of jobs was stopped") {
		t.Fatalf("%d of %d jobs ended by the job limit; logs %q", stopped, n, logs)
	}
	if out := must(t, sh, "echo ok"); out != "ok\n" {
		t.Fatalf("next run: %q", out)
	}
}

// TestStopJobs: the host ends every job with a reason it can record, and
// a forked session has no jobs.
func TestStopJobs(t *testing.T) {
	sh, _ := newJobShell(t, Limits{})
	must(t, sh, "sleep 30 & (sleep 30 & sleep 30) &")
	waitFor(t, "three jobs", func() bool { return len(sh.Jobs()) == 3 })
	fork := sh.Fork(sh.FS().Fork())
	if out := must(t, fork, "jobs; ps | grep -c 'sleep 30' || true"); out != "0\n" {
		t.Errorf("the fork sees jobs: %q", out)
	}
	js := sh.Jobs()
	if !sh.StopJobs("hibernate", 5*time.Second) {
		t.Fatal("StopJobs timed out")
	}
	for _, j := range js {
		if j.Status() != 143 || j.Cause() != "hibernate" {
			t.Errorf("job %d: status %d cause %q", j.PID(), j.Status(), j.Cause())
		}
	}
}

// TestJobExitTrapOnSignal: TERM and INT end a job after its EXIT trap ran
// (bash's termination handler runs it); KILL does not run it.
func TestJobExitTrapOnSignal(t *testing.T) {
	tests := []struct{ script, want string }{
		{`(trap "echo bye" EXIT; sleep 30) & sleep 0.1; kill $!; wait $!; echo $?`, "bye\n143\n"},
		{`bash -c 'trap "echo bye" EXIT; sleep 30' & sleep 0.1; kill -INT $!; wait $!; :`, "bye\n"},
		{`(trap "echo bye" EXIT; sleep 30) & sleep 0.1; kill -KILL $!; wait $!; echo $?`, "137\n"},
	}
	for _, tt := range tests {
		sh, _ := newJobShell(t, Limits{})
		if out := must(t, sh, tt.script); out != tt.want {
			t.Errorf("%s: got %q, want %q", tt.script, out, tt.want)
		}
	}
}

// TestJobsReapedLikeBash: a job that ends while a foreground command runs
// is reaped then, as bash collects dead children while it waits for one
// (no longer %N or wait -n's; wait PID still finds its status); builtins
// reap nothing. Job text is bash's layout. Recorded from bash 5.2.
func TestJobsReapedLikeBash(t *testing.T) {
	tests := []recorded{
		{`(exit 7) & p=$!; wait $p; echo $?; wait $p; echo $?; wait -n; echo $?`, "7\n7\n127\n", ""},
		{`(exit 3)& sleep 0.1; jobs; wait -n; echo $?`, "127\n", ""},
		{`(exit 3)& true; true; wait -n; echo $?`, "3\n", ""},
		{`(exit 3) & p=$!; sleep 0.1; wait $p; echo $?; wait %1; echo $?`, "3\n127\n", ""},
		{`sleep 5 & kill %1; wait %1; echo $?`, "143\n", ""},
		{`sleep 5 2>/dev/null >>/dev/null </dev/null & { sleep 4; sleep 3 & } & ( sleep 3; sleep 2 ) & jobs; kill %1 %2 %3`,
			"[1]   Running                 sleep 5 2> /dev/null >> /dev/null < /dev/null &\n" +
				"[2]-  Running                 { sleep 4; sleep 3 & } &\n" +
				"[3]+  Running                 ( sleep 3; sleep 2 ) &\n", ""},
		{`while true; do sleep 1; done & jobs; kill %1`, "[1]+  Running                 while true; do\n    sleep 1;\ndone &\n", ""},
	}
	checkRecorded(t, tests, false)
}

// TestSubshellSignalsLikeBash: a subshell starts with caught signals back
// at their defaults (ignored ones stay ignored, trap still lists the
// parent's), and the parent reports a child a signal ended as a
// non-interactive bash does. Recorded from bash 5.2 (pids vary).
func TestSubshellSignalsLikeBash(t *testing.T) {
	tests := []recorded{
		{`trap "echo T" USR1; (kill -USR1 $BASHPID; echo after); echo st=$?; (trap -p USR1); x=$(kill -USR1 $BASHPID; echo cs); echo "x=$x st=$?"`,
			"st=138\ntrap -- 'echo T' SIGUSR1\nx= st=138\n", ""},
		{`trap "" USR2; (kill -USR2 $BASHPID; echo ignored); (trap "echo own" USR1; kill -USR1 $BASHPID; echo after-own)`, "ignored\nown\nafter-own\n", ""},
	}
	checkRecorded(t, tests, false)
	for _, tt := range []struct{ src, stderr string }{
		{`f() { kill -USR1 $BASHPID; }; (f)`, `^bash: line 1: +[0-9]+ User defined signal 1   \( f \)\n$`},
		{`(kill -TERM $BASHPID); (kill -INT $BASHPID); (kill -PIPE $BASHPID)`, `^Terminated\n$`},
		{`trap : HUP; (kill -HUP $BASHPID)`, `^Hangup\n$`},
		{`(kill -KILL $BASHPID; echo no)`, `^bash: line 1: +[0-9]+ Killed {18}\( kill -KILL \$BASHPID; echo no \)\n$`},
	} {
		_, errs, _ := runScript(t, newTestShell(t, Limits{}), tt.src)
		if !regexp.MustCompile(tt.stderr).MatchString(errs) {
			t.Errorf("%s: stderr %q, want %s", tt.src, errs, tt.stderr)
		}
	}
}
