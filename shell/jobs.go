package shell

// Background jobs that outlive the Run that started them.
//
// A job (`cmd &`, `nohup cmd &`, `setsid cmd`) runs on its own goroutine
// with its own run state: its context (ended by kill, by Shell.StopJobs or
// by Limits.JobTimeout, never by the end of the Run), its command and loop
// counters, its pipes. So `sleep 5 & echo started` returns at once, like a
// shell whose terminal stays open: the job goes on, and later Runs of the
// session see it in `jobs`, `wait`, `kill %1`, `kill PID`, `$!` and `ps`.
//
// Output: a job's stdout and stderr, when they are the Run's own streams
// (the script did not redirect them), go to the job's log (Config.OnJob
// gives it; without a hook there is none) and, while the Run that started
// the job is still running, to that Run's streams as well, as on a
// terminal; after that Run returns, only to the log. The Run's output limit
// counts what reached its streams; a job is bounded by its log, not by it.
// A job whose stdout is a command substitution's capture is waited for by
// that substitution (as bash waits for the pipe to close).
//
// Limits: every goroutine of a session (foreground stages and all its
// jobs, whichever Run started them) counts against one Limits.MaxJobs; a
// job's commands and loop iterations are bounded as a Run's are (its own
// counters), its wall time by Limits.JobTimeout (status 124 and a
// "warren: time limit exceeded" line in its log). Memory is the sandbox's
// one budget. A forked Shell (Shell.Fork) and a restored one have no jobs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/commands/bashfmt"
	"mvdan.cc/sh/v3/syntax"
)

// Job is a background job of a session.
type Job struct {
	id, pid int
	cmd     string
	started time.Time
	done    chan struct{}
	cancel  context.CancelCauseFunc
	holds   io.Writer // its stdout when it started (command substitution waits for the jobs holding its capture)
	// cleaned is set once bash would have reaped the ended job: wait
	// collected it, or a foreground command ran while it ended (bash
	// reaps dead children while it waits for one, noteEndedJobs). It is
	// no longer a job (%N, wait -n); wait PID still finds it, as bash
	// remembers the statuses of its background pids.
	cleaned atomic.Bool

	// set before done is closed
	status int
	cause  string
}

// ID is the job's number in its shell (%N).
func (j *Job) ID() int { return j.id }

// PID is the job's pid in the session ($!).
func (j *Job) PID() int { return j.pid }

// Command is the job's text, as `jobs` shows it.
func (j *Job) Command() string { return j.cmd }

// Started is when the job started.
func (j *Job) Started() time.Time { return j.started }

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Status is the job's exit status once Done is closed: 128+N when a
// signal ended it, 124 past its time limit, 125 past another limit.
func (j *Job) Status() int {
	<-j.done
	return j.status
}

// Cause says why the job ended when it did not end by itself ("" then):
// "signal:TERM", "timeout", "limit", or the reason given to Stop.
func (j *Job) Cause() string {
	<-j.done
	return j.cause
}

// Running reports whether the job has not ended yet.
func (j *Job) Running() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

type inJobKey struct{}

// InJob reports whether ctx is a background job's (a hook such as
// Config.Native sees it: a job's native command is the job's, and the
// host accounts for the job, not for an exec).
func InJob(ctx context.Context) bool {
	v, _ := ctx.Value(inJobKey{}).(bool)
	return v
}

// jobEnd is the cause a job's context is cancelled with.
type jobEnd struct {
	status int
	cause  string
	msg    string // what the job's log says about it ("" for a signal)
}

// jobGroup is a job started by a Run and the jobs it starts (spawnJob).
type jobGroup struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	live   atomic.Int64
}

// leave counts one job of g out; the last one frees the group's timer.
func (g *jobGroup) leave() {
	if g.live.Add(-1) == 0 {
		g.cancel(nil)
	}
}

func (e *jobEnd) Error() string { return "job ended: " + e.cause }

// Signal delivers sig (a name, SIGNAME or number, as kill takes it) to
// the job: TERM, INT, HUP, KILL, QUIT, USR1, USR2 and ALRM end it with
// 128+N; 0 only probes; STOP, CONT, WINCH and the other signals whose
// default is to do nothing in a sandbox are ignored.
func (j *Job) Signal(sig string) error {
	n, ok := normSig(sig)
	if !ok {
		return fmt.Errorf("%s: invalid signal specification", sig)
	}
	if !j.Running() {
		return errors.New("no such process")
	}
	if n == "EXIT" || slices.Contains(otherSigs, n) {
		return nil // 0, and signals ignored by default (traps in a job are not modelled)
	}
	num := slices.Index(sigNames, n)
	if num < 0 {
		return fmt.Errorf("%s: invalid signal specification", sig)
	}
	j.cancel(&jobEnd{status: 128 + num, cause: "signal:" + n})
	return nil
}

// signalledJob reports whether ctx is a job's ended by a signal its shell
// handles by exiting (not KILL): the shell's EXIT trap still runs then,
// as bash's does.
func signalledJob(ctx context.Context) bool {
	var e *jobEnd
	return errors.As(context.Cause(ctx), &e) && strings.HasPrefix(e.cause, "signal:") && e.cause != "signal:KILL"
}

// Stop ends the job with status 143 and reason as its Cause (e.g.
// "hibernate": the sandbox is going to standby).
func (j *Job) Stop(reason string) {
	j.cancel(&jobEnd{status: 143, cause: reason})
}

// jobTable is a session's live jobs, whichever shell of the session (the
// top level, a subshell, a job) started them: ps, kill PID and the host
// see them all.
type jobTable struct {
	mu   sync.Mutex
	live map[int]*Job
	wg   sync.WaitGroup
}

func (t *jobTable) add(j *Job) {
	t.mu.Lock()
	if t.live == nil {
		t.live = map[int]*Job{}
	}
	t.live[j.pid] = j
	t.mu.Unlock()
}

func (t *jobTable) remove(j *Job) {
	t.mu.Lock()
	delete(t.live, j.pid)
	t.mu.Unlock()
}

func (t *jobTable) byPid(pid int) *Job {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live[pid]
}

func (t *jobTable) list() []*Job {
	t.mu.Lock()
	out := make([]*Job, 0, len(t.live))
	for _, j := range t.live {
		out = append(out, j)
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b *Job) int { return a.pid - b.pid })
	return out
}

// Jobs returns the session's running background jobs, by pid.
func (s *Shell) Jobs() []*Job { return s.jobs.list() }

// StopJobs ends every running job of the session with reason (see
// Job.Stop) and waits up to wait for them to end; it reports whether they
// all did. Jobs started by the jobs being stopped are stopped too.
func (s *Shell) StopJobs(reason string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		js := s.jobs.list()
		if len(js) == 0 {
			return true
		}
		for _, j := range js {
			j.Stop(reason)
		}
		for _, j := range js {
			select {
			case <-j.done:
			case <-time.After(time.Until(deadline)):
				return false
			}
		}
	}
}

// runTerm is a Run's own stdout and stderr as its jobs see them: while
// the Run runs they write there too; detach (at the Run's end) stops it.
type runTerm struct {
	mu sync.Mutex
	w  [2]io.Writer
}

func (t *runTerm) write(i int, p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w[i] == nil {
		return
	}
	if _, err := t.w[i].Write(p); err != nil {
		// The Run's output limit or a closed stream: the job goes on
		// into its log.
		t.w[i] = nil
	}
}

func (t *runTerm) detach() {
	t.mu.Lock()
	t.w = [2]io.Writer{}
	t.mu.Unlock()
}

// jobOut is a job's stdout or stderr when the script did not redirect it.
type jobOut struct {
	log  io.Writer // nil: no log
	term *runTerm
	i    int
}

func (w *jobOut) Write(p []byte) (int, error) {
	if w.term != nil {
		w.term.write(w.i, p)
	}
	if w.log != nil {
		w.log.Write(p) // a log keeps the newest bytes; it does not fail a job
	}
	return len(p), nil
}

// JobHook is told of each background job as it starts (ctx is the Run's
// where it started: its values say which exec). It returns the job's log
// for stdout and stderr (nil: none), or an error that refuses the job (a
// limit of the host's: the Run ends with status 125 and the message).
type JobHook func(ctx context.Context, j *Job) (stdout, stderr io.Writer, err error)

// background runs st as a job (`st &`).
func (r *runner) background(st *syntax.Stmt) {
	cp := *st
	cp.Background = false
	r.spawnJob(jobText(&cp), true, func(sub *runner) { sub.stmt(&cp) })
}

// spawnJob starts body as a background job and returns it (nil when a
// limit refused it; r.status says so). mine: it is r's job (%N, $!, wait);
// else only the session's (setsid's).
func (r *runner) spawnJob(text string, mine bool, body func(sub *runner)) *Job {
	r.reapJobs(maxDoneJobs)
	sub := r.subshellRunner()
	sub.own() // the parent goes on writing its maps
	r.own()
	if len(sub.fds) > 0 && !r.opts[optMonitor] {
		// stdin of a background job is /dev/null in a non-interactive shell
		sub.fds[0] = &fdesc{r: strings.NewReader(""), path: "/dev/null"}
	}
	if r.context().Err() != nil {
		r.status = 1 // a job being stopped starts no more
		return nil
	}
	if !r.startJob() {
		r.status = 1
		return nil
	}
	lim := r.sh.lim
	g := r.jobGroup
	if g == nil {
		// A job started by a Run leads a group: the jobs it starts, and
		// theirs, share its deadline and end together past the job
		// limit (a fork bomb), though kill ends one job only. The group
		// keeps the Run's values (which sandbox, the commands policy) but
		// not its end.
		g = &jobGroup{}
		gctx, gcancel := context.WithCancelCause(context.WithValue(context.WithoutCancel(r.context()), inJobKey{}, true))
		tctx, tcancel := context.WithTimeoutCause(gctx, lim.JobTimeout, &jobEnd{status: StatusTimeout, cause: "timeout",
			msg: fmt.Sprintf("time limit exceeded (%s)", lim.JobTimeout)})
		g.ctx, g.cancel = tctx, func(err error) { gcancel(err); tcancel() }
		g.live.Add(1)
	} else {
		g.live.Add(1)
	}
	ctx, cancel := context.WithCancelCause(g.ctx)
	tctx := ctx
	j := &Job{id: r.nextJobID(), pid: sub.bashpid, cmd: text, started: r.now(), done: make(chan struct{}), cancel: cancel}
	var logs [2]io.Writer
	if hook := r.sh.cfg.OnJob; hook != nil {
		var err error
		logs[0], logs[1], err = hook(r.context(), j)
		if err != nil {
			cancel(nil)
			g.leave()
			r.endJob()
			r.errf("fork: retry: Resource temporarily unavailable (warren: %v)", err)
			r.rs.fail(limitf("%v", err))
			r.status = 1
			return nil
		}
	}
	if len(sub.fds) > 1 && sub.fds[1] != nil {
		j.holds = sub.fds[1].w
	}
	for i := 1; i <= 2 && i < len(sub.fds); i++ {
		if f := sub.fds[i]; f != nil && f.w != nil && f.w == r.rs.top[i-1] {
			sub.fds[i] = &fdesc{w: &jobOut{log: logs[i-1], term: r.rs.term, i: i - 1}, path: f.name()}
		}
	}
	jrs := &runState{ctx: tctx, lim: &lim, jobs: r.rs.jobs, ladder: newLadder(tctx, &r.sh.cfg)}
	if len(sub.fds) > 2 && sub.fds[2] != nil {
		jrs.stderr = sub.fds[2].w
	}
	stop := context.AfterFunc(tctx, jrs.closePipes)
	jrs.unpipe = stop // newPipe registers no second one
	sub.rs = jrs
	sub.jobGroup = g
	sub.jobCtx = nil
	sub.pid = r.pid
	if mine {
		r.jobs = append(r.jobs, j)
		r.lastBg = j.pid
	}
	r.sh.jobs.add(j)
	r.sh.jobs.wg.Add(1)
	count := r.rs.jobs // r.rs is gone once the Run returns
	sh := r.sh         // and r may be a recycled pipeline stage (stagePool)
	go func() {
		defer sh.jobs.wg.Done()
		defer count.Add(-1)
		defer sub.closeMem()
		sub.safe(func() {
			body(sub)
			sub.runExitTrap()
		})
		jrs.wg.Wait()
		st, cause := sub.status, ""
		if le := jrs.fatal.Load(); le != nil {
			fmt.Fprintf(sub.stderr(), "warren: %s\n", le.what)
			st, cause = le.status, "limit"
			if strings.HasPrefix(le.what, "job limit") {
				g.cancel(&jobEnd{status: le.status, cause: "limit", msg: le.what + "; its group of jobs was stopped"})
			}
		} else if c := context.Cause(tctx); c != nil {
			var e *jobEnd
			if errors.As(c, &e) {
				st, cause = e.status, e.cause
				if e.msg != "" {
					fmt.Fprintf(sub.stderr(), "warren: %s\n", e.msg)
				}
			}
		}
		stop()
		cancel(nil)
		g.leave()
		j.status, j.cause = st, cause
		sh.jobs.remove(j)
		close(j.done)
	}()
	r.status = 0
	return j
}

// maxDoneJobs bounds the ended jobs a shell keeps for `wait PID`.
const maxDoneJobs = 64

// nextJobID is one more than the highest number of a running job (bash's
// rule: numbers of reaped jobs are given again).
func (r *runner) nextJobID() int {
	n := 0
	for _, j := range r.jobs {
		if j.Running() {
			n = max(n, j.id)
		}
	}
	return n + 1
}

// noteEndedJobs marks the jobs that have ended as reaped, after a
// foreground command that bash would have forked and waited for (it
// collects its dead background children then; builtins do not).
func (r *runner) noteEndedJobs() {
	for _, j := range r.jobs {
		if !j.Running() {
			j.cleaned.Store(true)
		}
	}
}

// reapJobs forgets ended jobs beyond keep (the oldest first); bash reaps
// them silently in a non-interactive shell.
func (r *runner) reapJobs(keep int) {
	ended := 0
	for _, j := range r.jobs {
		if !j.Running() {
			ended++
		}
	}
	if ended <= keep {
		return
	}
	drop := ended - keep
	out := r.jobs[:0:0]
	for _, j := range r.jobs {
		if drop > 0 && !j.Running() {
			drop--
			continue
		}
		out = append(out, j)
	}
	r.jobs = out
}

// waitHolding waits for the session's jobs whose stdout was w (a command
// substitution's capture), bounded by ctx.
func (t *jobTable) waitHolding(ctx context.Context, w io.Writer) {
	for _, j := range t.list() {
		if j.holds != w {
			continue
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return
		}
	}
}

// ---- nohup, setsid, disown ----

// biNohup runs a command immune to hangups. Its output is not a terminal
// here, so nothing goes to nohup.out.
func biNohup(r *runner, args []string) int {
	args = args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		r.errf("nohup: missing operand\nTry 'nohup --help' for more information.")
		return 125
	}
	if strings.HasPrefix(args[0], "-") {
		r.errf("nohup: unrecognized option '%s'\nTry 'nohup --help' for more information.", args[0])
		return 125
	}
	r.external(args, nil)
	return r.status
}

// biSetsid runs a command in a new session. As from an interactive shell
// (where the command leads its own process group), it detaches: the
// command becomes a background job and setsid returns 0 at once; -w waits
// for it and returns its status.
func biSetsid(r *runner, args []string) int {
	args = args[1:]
	wait := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		switch a {
		case "-w", "--wait":
			wait = true
		case "-f", "--fork", "-c", "--ctty":
		default:
			r.errf("setsid: unrecognized option '%s'\nTry 'setsid --help' for more information.", a)
			return 1
		}
		args = args[1:]
	}
	if len(args) == 0 {
		r.errf("setsid: no command specified\nTry 'setsid --help' for more information.")
		return 1
	}
	if wait {
		r.external(args, nil)
		return r.status
	}
	argv := slices.Clone(args)
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = bashfmt.QuoteXtrace(a)
	}
	if r.spawnJob(strings.Join(words, " "), false, func(sub *runner) { sub.external(argv, nil) }) == nil {
		return 1
	}
	return 0
}

// biDisown removes jobs from the shell's table: they go on running (ps and
// the sandbox's processes still list them) but jobs, wait and %N no longer
// see them.
func biDisown(r *runner, args []string) int {
	args = args[1:]
	all, running := false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for _, c := range args[0][1:] {
			switch c {
			case 'a':
				all = true
			case 'r':
				running = true
			case 'h':
			default:
				r.errf("disown: -%c: invalid option\ndisown: usage: disown [-h] [-ar] [jobspec ... | pid ...]", c)
				return 2
			}
		}
		args = args[1:]
	}
	drop := map[*Job]bool{}
	st := 0
	switch {
	case all || (running && len(args) == 0):
		for _, j := range r.jobs {
			if !running || j.Running() {
				drop[j] = true
			}
		}
	case len(args) == 0:
		if j := r.currentJob(); j != nil {
			drop[j] = true
		} else {
			r.errf("disown: current: no such job")
			st = 1
		}
	default:
		for _, a := range args {
			j := r.findJob(a)
			if j == nil {
				r.errf("disown: %s: no such job", a)
				st = 1
				continue
			}
			drop[j] = true
		}
	}
	r.jobs = slices.DeleteFunc(r.jobs, func(j *Job) bool { return drop[j] })
	return st
}

// jobState is how `jobs` names a job's state.
func jobState(j *Job) string {
	if j.Running() {
		return "Running"
	}
	switch st := j.status; {
	case st == 0:
		return "Done"
	case st > 128 && st-128 < len(sigNames):
		switch sigNames[st-128] {
		case "TERM":
			return "Terminated"
		case "KILL":
			return "Killed"
		case "INT":
			return "Interrupt"
		case "HUP":
			return "Hangup"
		}
	}
	return "Exit " + strconv.Itoa(j.status)
}
