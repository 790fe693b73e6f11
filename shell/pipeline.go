package shell

// Pipelines and background jobs.

import (
	"io"
	"sync"

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

type pipeRun struct {
	wg sync.WaitGroup
	st [4]int
}

func (r *runner) pipeline(c *syntax.BinaryCmd) {
	// A small pipeline's stages stay on the stack (no closure, no growth).
	var buf [4]pipeStage
	stages := flattenPipe(buf[:0], c.X, c.Op == syntax.PipeAll)
	stages = flattenPipe(stages, c.Y, false)
	n := len(stages)
	// The stages' goroutines share wg and statuses: one allocation for
	// both when the pipeline is small ($PIPESTATUS keeps statuses).
	pr := new(pipeRun)
	statuses := pr.st[:0]
	if n > len(pr.st) {
		statuses = make([]int, 0, n)
	}
	statuses = statuses[:n:n]
	r.environ() // built once here, shared by the stages' copies
	lastpipe := r.shopts["lastpipe"] && !r.opts[optMonitor]
	wg := &pr.wg
	var in io.Reader = nil
	var inPipe *pipe
	for i, stage := range stages {
		st := stage.st
		if len(r.traps) > 0 && !r.inTrap && commandText(st.Cmd) && !(i == n-1 && lastpipe) {
			// bash runs the DEBUG trap for a simple stage in the shell,
			// before the stage starts (its copy runs none: subshells drop
			// DEBUG).
			r.curStmt = st
			r.debugTrap()
		}
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
		if inPipe != nil {
			inPipe.ends[0] = fdesc{r: in}
			fds[0] = &inPipe.ends[0]
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
		sub.fds = fds
		myIn, myOut := inPipe, out
		i := i
		if i < n-1 {
			if !r.startJob() {
				myOut.CloseWrite()
				if myIn != nil {
					myIn.CloseRead()
				}
				statuses[i] = 1
				sub.releaseStage()
				inPipe = out
				in = out
				continue
			}
			wg.Add(1)
			goWork(func() {
				defer wg.Done()
				defer r.endJob()
				defer sub.releaseStage()
				defer sub.closeMem()
				defer sub.recoverPanic()
				sub.stmt(st)
				sub.runExitTrap()
				statuses[i] = sub.status
				myOut.CloseWrite()
				if myIn != nil {
					myIn.CloseRead()
				}
			})
		} else {
			if sub == r {
				saved := r.fds
				r.fds = fds
				r.stmt(st)
				r.fds = saved
			} else {
				sub.stmt(st)
				sub.runExitTrap()
				sub.closeMem()
			}
			statuses[i] = sub.status
			if sub != r {
				sub.releaseStage()
			}
			if myIn != nil {
				myIn.CloseRead()
			}
		}
		inPipe = out
		in = out
	}
	wg.Wait()
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
