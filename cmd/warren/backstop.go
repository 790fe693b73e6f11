package main

import (
	"fmt"
	"io"
	"runtime/metrics"
	"time"

	"github.com/warren-sandbox/warren/shell"
)

// A `warren run` process holds one sandbox, so when code the memory budget
// cannot see (a library's loop: mvdan's brace expansion once wrapped around
// int64 and took 24 GB) runs away, ending the process is the containment:
// runBackstop ends it with 125 when the heap passes twice what the run may
// hold, and with 124 a second past the exec's deadline when the shell did
// not stop by then. `warren serve` has its worker processes and their
// memory cgroups for this (DESIGN.md).
type backstop struct {
	heapMax  uint64        // bytes of heap objects past which the run ends
	deadline time.Duration // after start; 0 = none
	every    time.Duration
	stderr   io.Writer
	exit     func(code int)
}

// run watches until stop is closed.
func (b backstop) run(stop <-chan struct{}) {
	start := time.Now()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if h := sample[0].Value.Uint64(); b.heapMax > 0 && h > b.heapMax {
			fmt.Fprintf(b.stderr, "warren: memory limit exceeded (%d MiB): the run's heap reached %d MiB outside the shell's accounting\n", b.heapMax>>20, h>>20)
			b.exit(shell.StatusLimit)
			return
		}
		if b.deadline > 0 && time.Since(start) > b.deadline+time.Second {
			fmt.Fprintf(b.stderr, "warren: time limit exceeded (%s): the script did not stop at its deadline\n", b.deadline)
			b.exit(shell.StatusTimeout)
			return
		}
	}
}
