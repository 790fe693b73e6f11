package shell

import (
	"sync/atomic"
	"time"
)

// Pipeline stages and process substitutions run on pooled goroutines: a
// fresh goroutine starts with a small stack that grows (and is copied) on
// every stage, which cost ~14% of a pipeline's CPU. At most maxIdleWorkers
// wait for work, each for at most workerIdle; a stage never waits for a
// worker (a new goroutine is started when none is idle), so the MaxJobs
// accounting of the callers is unchanged. Idle workers leave after a
// second, so a quiet process (or a test counting goroutines after Close)
// has none left.
const (
	maxIdleWorkers = 16
	workerIdle     = time.Second
)

var (
	workCh      = make(chan func()) // unbuffered: a send succeeds only into an idle worker
	idleWorkers atomic.Int32
)

// goWork runs fn on another goroutine. fn must recover its own panics (the
// stage functions do, with recoverPanic).
func goWork(fn func()) {
	select {
	case workCh <- fn:
	default:
		go worker(fn)
	}
}

func worker(fn func()) {
	fn()
	var t *time.Timer
	for {
		if idleWorkers.Add(1) > maxIdleWorkers {
			idleWorkers.Add(-1)
			return
		}
		if t == nil {
			t = time.NewTimer(workerIdle)
		} else {
			t.Reset(workerIdle)
		}
		select {
		case fn = <-workCh:
			idleWorkers.Add(-1)
			fn()
		case <-t.C:
			idleWorkers.Add(-1)
			return
		}
	}
}
