package sandbox

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/shell"
)

// Background jobs of a sandbox's sessions (`cmd &`, nohup, setsid; package
// shell's jobs.go) are processes of the sandbox: each is listed by the
// processes API under a sandbox pid (with its shell's job number and pid),
// keeps its output in a log bounded by Config.ReplayBytes (the newest
// bytes; older ones are dropped and attach says so), and counts against
// maxRunningProcs with the processes started through the API. kill, logs
// and attach work on it; it has no stdin.
//
// Lifetime: a job ends by itself, by a signal (the shell's kill or the
// API's), past its time limit (the sandbox's exec time limit, counted
// from the job's start; status 124), or when the sandbox stops holding
// it: hibernate (explicit, or standby when StandbyWithJobs allows it),
// delete and shutdown end it with status 143 and the reason as its
// result's limit ("hibernate", "standby", "deleted", "shutdown"). A
// resident job is a goroutine: it cannot be part of a StateRef, so a
// resumed sandbox, a fork and a snapshot have no running jobs. A native
// command in a job runs in the sandbox's native workspace, which lives
// while the sandbox runs; it ends with its job (and the workspace closes
// at hibernate as before). A sandbox with a live job is not idle, so the
// standby timer leaves it running unless StandbyWithJobs is set.

// stopJobsWait bounds how long hibernate waits for jobs to end.
const stopJobsWait = 5 * time.Second

// jobStarted is every session's shell.Config.OnJob: it lists the job as a
// process of the sandbox the Run's context names.
func (m *Manager) jobStarted(ctx context.Context, j *shell.Job) (io.Writer, io.Writer, error) {
	ri, _ := ctx.Value(runInfoKey{}).(*runInfo)
	if ri == nil {
		return nil, nil, nil // no sandbox (a test's bare shell): no log
	}
	b := ri.b
	p := &process{
		session: ri.session, command: clip(j.Command(), 200), started: j.Started(),
		out: newOutLog(m.cfg.ReplayBytes), done: make(chan struct{}), job: j,
	}
	if err := b.addProc(p, nil); err != nil {
		return nil, nil, err
	}
	go func() {
		<-j.Done()
		res := api.ExecResult{Exit: j.Status(), DurationMS: float64(time.Since(j.Started()).Microseconds()) / 1000}
		switch c := j.Cause(); c {
		case "":
		case "limit":
			res.Limit = "jobs"
		default:
			res.Limit = c
		}
		p.mu.Lock()
		p.result = res
		p.mu.Unlock()
		p.out.close()
		close(p.done)
	}()
	return p.out.writer(0), p.out.writer(1), nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// liveJobsLocked counts b's running jobs (b.mu held).
func (b *box) liveJobsLocked() int {
	n := 0
	for _, p := range b.procs {
		if p.job != nil && p.job.Running() {
			n++
		}
	}
	return n
}

// stopJobs ends b's running jobs with reason and waits for them, bounded
// by ctx and stopJobsWait. Jobs that jobs start meanwhile are ended too.
func (b *box) stopJobs(ctx context.Context, reason string) error {
	deadline := time.Now().Add(stopJobsWait)
	for {
		b.mu.Lock()
		var live []*process
		for _, p := range b.procs {
			if p.job != nil && p.job.Running() {
				live = append(live, p)
			}
		}
		b.mu.Unlock()
		if len(live) == 0 {
			return nil
		}
		for _, p := range live {
			p.job.Stop(reason)
		}
		for _, p := range live {
			select {
			case <-p.done:
			case <-ctx.Done():
				return fmt.Errorf("stopping the background jobs of %s: %w", b.id, ctx.Err())
			case <-time.After(time.Until(deadline)):
				return api.Errorf(errdefs.ErrFailedPrecondition, "sandbox %s: background job %d (%s) did not stop within %s", b.id, p.pid, p.command, stopJobsWait)
			}
		}
	}
}
