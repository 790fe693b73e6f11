package shell

// Pipelines and background jobs.

import (
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// pipeStage is one stage of a pipeline; pipeAll: its stderr goes down the
// pipe too (|&).
type pipeStage struct {
	st      *syntax.Stmt
	pipeAll bool
}

// flattenPipe appends the stages of st to stages (a | b | c parses as a
// tree of binary commands).
func flattenPipe(stages []pipeStage, st *syntax.Stmt, pipeAll bool) []pipeStage {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && !st.Negated && !st.Background && len(st.Redirs) == 0 {
		stages = flattenPipe(stages, b.X, b.Op == syntax.PipeAll)
		return flattenPipe(stages, b.Y, pipeAll)
	}
	return append(stages, pipeStage{st, pipeAll})
}

// pipeRun is one pipeline's shared state: its stages' wait group and
// statuses, and for a pipeline run ahead (see pipeline) the stages not
// started yet. One allocation for all when the pipeline is small
// ($PIPESTATUS keeps statuses).
type pipeRun struct {
	wg   sync.WaitGroup
	st   [4]int
	r    *runner
	stat []int // st[:n], or a slice of its own for a long pipeline

	mu       sync.Mutex
	next     int       // first stage not yet claimed by the caller or a goroutine
	released bool      // the stages from next on were started in goroutines
	since    time.Time // when it started running ahead (aheadWatch)
	slot     int       // index in aheadWatch.runs, -1 when not there
	runs     [4]stageRun
}

// stageRun is a stage ready to run: its runner and its pipes.
type stageRun struct {
	st      *syntax.Stmt
	sub     *runner // r itself for a lastpipe last stage
	fds     []*fdesc
	in, out *pipe
	skip    bool // the job limit refused it: status 1, nothing runs
}

// aheadGrace is how long the caller runs a pipeline's stages one after the
// other before it starts the rest concurrently (at most twice that, on the
// watchdog's tick). A stage that fills its pipe starts them at once; the
// grace bounds what a stage that blocks on anything else (sleep, a FIFO,
// stdin, a later stage's effects) waits.
const aheadGrace = time.Millisecond

// aheadReleases counts releases, for tests of when they happen.
var aheadReleases atomic.Int64

// maxAhead bounds how many pipelines run ahead inside one another on one
// goroutine's stack; deeper ones start their stages as goroutines.
const maxAhead = 16

func (r *runner) pipeline(c *syntax.BinaryCmd) {
	// A small pipeline's stages stay on the stack (no closure, no growth).
	var buf [4]pipeStage
	stages := flattenPipe(buf[:0], c.X, c.Op == syntax.PipeAll)
	stages = flattenPipe(stages, c.Y, false)
	n := len(stages)
	pr := new(pipeRun)
	pr.r = r
	statuses := pr.st[:0]
	if n > len(pr.st) {
		statuses = make([]int, 0, n)
	}
	statuses = statuses[:n:n]
	pr.stat = statuses
	r.environ() // built once here, shared by the stages' copies
	lastpipe := r.shopts["lastpipe"] && !r.opts[optMonitor]
	// A pipeline of a few stages and no DEBUG trap runs ahead: the caller
	// runs its stages one after the other, each writing into its pipe,
	// until one fills its pipe, blocks past aheadGrace, or the last stage
	// is reached; only then do the remaining stages start as goroutines.
	// A heartbeat's `cat f | wc -l` then costs no goroutine wake-ups (a
	// third of its CPU), and a stage that needs its readers running (a
	// full pipe, a FIFO, a stream) gets them within aheadGrace.
	dbg := false
	if len(r.traps) > 0 && !r.inTrap {
		_, dbg = r.traps["DEBUG"]
	}
	if !dbg && n <= len(pr.runs) && r.ahead < maxAhead {
		r.pipelineAhead(pr, stages, statuses, lastpipe)
	} else {
		r.pipelineEager(pr, stages, statuses, lastpipe)
	}
	pr.wg.Wait()
	pr.runs = [4]stageRun{} // PIPESTATUS keeps pr: not the runners
	if last := stages[n-1].st; !r.inTrap && commandText(last.Cmd) {
		r.curStmt = last // the stages ran in copies of r
	}
	st := statuses[n-1]
	if r.opts[optPipefail] {
		for _, s := range statuses {
			if s != 0 {
				st = s
			}
		}
	}
	r.pipeMulti = statuses
	r.status = st
}

// prepStage makes stage i's runner and pipes (in is the previous stage's
// output) and, for all but the last, takes a job slot for it.
func (r *runner) prepStage(i, n int, stage pipeStage, in *pipe, lastpipe bool, statuses []int) stageRun {
	st := stage.st
	var out *pipe
	if i < n-1 {
		out = r.newPipe()
	}
	var sub *runner
	if i == n-1 && lastpipe {
		sub = r
	} else {
		sub = r.stageRunner()
		// bash's stage is a subshell ($BASH_SUBSHELL one deeper), but
		// a ( ) stage is not forked twice, and a simple command's words
		// are expanded before the stage's level applies.
		sub.stageTop = st
		switch st.Cmd.(type) {
		case *syntax.Subshell:
			sub.subshell--
		case *syntax.CallExpr:
			sub.subshell--
			sub.stageLift = true
		}
	}
	fds := sub.fds
	if len(fds) < 3 {
		fds = append(fds, make([]*fdesc, 3-len(fds))...)
	}
	if in != nil {
		in.ends[0] = fdesc{r: in}
		fds[0] = &in.ends[0]
	}
	if out != nil {
		// No path: name() derives it from the pipe when an error
		// needs it, which saves a string per pipeline.
		out.ends[1] = fdesc{w: out}
		fds[1] = &out.ends[1]
		if stage.pipeAll {
			fds[2] = fds[1]
		}
	}
	if sub != r {
		sub.fds = fds
	}
	s := stageRun{st: st, sub: sub, fds: fds, in: in, out: out}
	if i < n-1 && !r.startJob() {
		out.CloseWrite()
		if in != nil {
			in.CloseRead()
		}
		statuses[i] = 1
		sub.releaseStage()
		s.skip, s.sub = true, nil
	}
	return s
}

// pipelineEager starts every stage but the last as a goroutine at once,
// and runs the last in the caller.
func (r *runner) pipelineEager(pr *pipeRun, stages []pipeStage, statuses []int, lastpipe bool) {
	n := len(stages)
	var in *pipe
	for i, stage := range stages {
		if len(r.traps) > 0 && !r.inTrap && commandText(stage.st.Cmd) && !(i == n-1 && lastpipe) {
			// bash runs the DEBUG trap for a simple stage in the shell,
			// before the stage starts (its copy runs none: subshells drop
			// DEBUG).
			r.curStmt = stage.st
			r.debugTrap()
		}
		s := r.prepStage(i, n, stage, in, lastpipe, statuses)
		in = s.out
		switch {
		case s.skip:
		case i < n-1:
			r.goStage(pr, s, i, statuses)
		default:
			r.lastStage(s, i, statuses)
		}
	}
}

// pipelineAhead runs the stages in the caller one after the other until
// release starts the rest (see pipeline).
func (r *runner) pipelineAhead(pr *pipeRun, stages []pipeStage, statuses []int, lastpipe bool) {
	n := len(stages)
	var in *pipe
	for i, stage := range stages {
		pr.runs[i] = r.prepStage(i, n, stage, in, lastpipe, statuses)
		in = pr.runs[i].out
		if o := pr.runs[i].out; o != nil {
			o.ahead = pr
		}
	}
	watchAhead(pr)
	watched := true
	for {
		pr.mu.Lock()
		if pr.released || pr.next == n {
			pr.mu.Unlock()
			break
		}
		i := pr.next
		pr.next++
		pr.mu.Unlock()
		s := pr.runs[i]
		if i == n-1 {
			// Nothing is left to start: the last stage may block as
			// long as it likes.
			unwatchAhead(pr)
			watched = false
		}
		switch {
		case s.skip:
		case i < n-1:
			s.sub.ahead = r.ahead + 1
			pr.wg.Add(1)
			r.runStage(pr, s, i, statuses)
		default:
			if s.sub != r {
				s.sub.ahead = r.ahead + 1
			}
			r.lastStage(s, i, statuses)
		}
	}
	if watched {
		unwatchAhead(pr)
	}
}

// release starts the stages not yet claimed as goroutines: a stage's pipe
// is full or the grace is over. Safe from any goroutine, more than once.
func (pr *pipeRun) release() {
	pr.mu.Lock()
	if pr.released {
		pr.mu.Unlock()
		return
	}
	pr.released = true
	aheadReleases.Add(1)
	from, n := pr.next, len(pr.stat)
	pr.next = n
	// wg counts them before the caller can see released and wait
	for i := from; i < n; i++ {
		if !pr.runs[i].skip {
			pr.wg.Add(1)
		}
	}
	pr.mu.Unlock()
	r := pr.r
	for i := from; i < n; i++ {
		s := pr.runs[i]
		switch {
		case s.skip:
		case s.out != nil:
			goWork(func() {
				s.sub.ahead = 0
				r.runStage(pr, s, i, pr.stat)
			})
		default:
			// the last stage, in a goroutine now: the caller is busy with
			// an earlier one and then waits for this one
			goWork(func() {
				defer pr.wg.Done()
				defer s.sub.recoverPanic()
				if s.sub != r {
					s.sub.ahead = 0
				}
				r.lastStage(s, i, pr.stat)
			})
		}
	}
}

// goStage runs stage i (not the last) as a goroutine.
func (r *runner) goStage(pr *pipeRun, s stageRun, i int, statuses []int) {
	pr.wg.Add(1)
	goWork(func() {
		s.sub.ahead = 0
		r.runStage(pr, s, i, statuses)
	})
}

// runStage runs stage i (not the last) in a runner of its own and closes
// its pipe ends.
func (r *runner) runStage(pr *pipeRun, s stageRun, i int, statuses []int) {
	sub := s.sub
	defer pr.wg.Done()
	defer r.endJob()
	defer sub.releaseStage()
	defer sub.closeMem()
	defer sub.recoverPanic()
	sub.stmt(s.st)
	sub.runExitTrap()
	statuses[i] = sub.status
	s.out.CloseWrite()
	if s.in != nil {
		s.in.CloseRead()
	}
}

// lastStage runs a pipeline's last stage: in r itself under lastpipe.
func (r *runner) lastStage(s stageRun, i int, statuses []int) {
	sub := s.sub
	if sub == r {
		saved := r.fds
		r.fds = s.fds
		r.stmt(s.st)
		r.fds = saved
	} else {
		sub.stmt(s.st)
		sub.runExitTrap()
		sub.closeMem()
	}
	statuses[i] = sub.status
	if sub != r {
		sub.releaseStage()
	}
	if s.in != nil {
		s.in.CloseRead()
	}
}

// aheadWatch ends the run-ahead grace of pipelines that take too long: one
// goroutine ticking every aheadGrace while pipelines run ahead (and a
// while after, so a busy node does not start it per exec), not a timer per
// pipeline: arming a timer sooner than the runtime's next one wakes the
// netpoller's thread (netpollBreak), a syscall and a context switch for
// every heartbeat.
var aheadWatch struct {
	mu      sync.Mutex
	runs    []*pipeRun
	running bool
}

// aheadIdleTicks is how many empty ticks the watchdog waits before it
// stops (100 ms): a node busy at one exec a second per agent keeps it.
const aheadIdleTicks = 100

func watchAhead(pr *pipeRun) {
	pr.since = time.Now()
	w := &aheadWatch
	w.mu.Lock()
	pr.slot = len(w.runs)
	w.runs = append(w.runs, pr)
	if !w.running {
		w.running = true
		go aheadWatchdog()
	}
	w.mu.Unlock()
}

func unwatchAhead(pr *pipeRun) {
	w := &aheadWatch
	w.mu.Lock()
	if i := pr.slot; i >= 0 && i < len(w.runs) && w.runs[i] == pr {
		last := len(w.runs) - 1
		w.runs[i] = w.runs[last]
		w.runs[i].slot = i
		w.runs[last] = nil
		w.runs = w.runs[:last]
	}
	pr.slot = -1
	w.mu.Unlock()
}

func aheadWatchdog() {
	t := time.NewTicker(aheadGrace)
	defer t.Stop()
	w := &aheadWatch
	var due []*pipeRun
	idle := 0
	for now := range t.C {
		due = due[:0]
		w.mu.Lock()
		for _, pr := range w.runs {
			if now.Sub(pr.since) >= aheadGrace {
				due = append(due, pr)
			}
		}
		if len(w.runs) > 0 {
			idle = 0
		} else if idle++; idle >= aheadIdleTicks {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		// A pipeline done meanwhile has nothing left to start: release
		// is a no-op for it.
		for i, pr := range due {
			pr.release()
			due[i] = nil
		}
	}
}

// startJob accounts one more goroutine; false (with a bash-like message)
// when the limit is reached.
func (r *runner) startJob() bool {
	if n := r.rs.jobs.Add(1); n > int64(r.rs.lim.MaxJobs) {
		r.rs.jobs.Add(-1)
		r.errf("fork: retry: Resource temporarily unavailable (warren: at most %d concurrent jobs)", r.rs.lim.MaxJobs)
		r.rs.fail(limitf("job limit exceeded (%d concurrent)", r.rs.lim.MaxJobs))
		return false
	}
	return true
}

func (r *runner) endJob() { r.rs.jobs.Add(-1) }

// ---- helpers for output of builtins ----
