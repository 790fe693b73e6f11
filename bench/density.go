package bench

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// DensityParams is the offered load: Agents resident sandboxes, each running
// the heartbeat every Period, over Window.
type DensityParams struct {
	Agents int
	Period time.Duration
	Window time.Duration
	// Executors run the due heartbeats (default 2 × GOMAXPROCS): the
	// node's concurrency, not the agents'.
	Executors int
}

// Density is what the density scheduler measured, in the peer's terms.
type Density struct {
	ExecLatency Stats // exec call to return
	StartLag    Stats // actual start minus scheduled start
	SchedToDone Stats // scheduled start to return: what an agent experiences
	Params      DensityParams
	Scheduled   int // ticks due inside the window (the offered load)
	Completed   int
	Errors      int
	FirstError  error
	MaxInflight int64
	Wall        time.Duration // start to max(last return, window end)
	ProcessCPU  time.Duration // this process's CPU over Wall
	// DispatcherCPU is the dispatcher thread's own CPU (its nanosleeps,
	// clock reads and hand-offs to the executors, their futex wake-ups
	// included): the harness's share of ProcessCPU, which a node serving
	// requests from the network does not have in this form.
	DispatcherCPU time.Duration
	SysBusy       float64 // whole machine busy CPU seconds over Wall (-1 unknown)
	SysSteal      float64
	Runtime       RuntimeStats // the Go runtime over the run: GC and scheduler
}

// ScheduledInWindow counts the ticks due inside the window exactly as the
// peer does: agent i's phase is (i/N)·P, and it fires every P from there.
func ScheduledInWindow(p DensityParams) int {
	n, P, D := float64(p.Agents), float64(p.Period)/1e6, float64(p.Window)/1e6 // ms
	due := 0
	for i := range p.Agents {
		ph := float64(i) / n * P
		if ph < D {
			due += int(math.Ceil((D - ph) / P))
		}
	}
	return due
}

// RunDensity runs the peer's density model: agent i first fires at
// start + (i/N)·P, then at a fixed rate every P (no skipped ticks, a late
// agent stays late), at most one exec in flight per agent, and no exec
// starts after the window closes. exec returns an error when the
// heartbeat's output is wrong; errors are counted, not fatal here.
//
// The ticks come from one dispatcher, not one timer per agent: it walks
// the ticks in due order (they are regular: round k of agent i is due at
// start + (i/N)·P + k·P) on an OS thread of its own that sleeps with
// nanosleep(2) at 1 ns timer slack, and hands each due agent to a pool of
// p.Executors goroutines. Go's own timers wake late by up to ~1 ms (the
// scheduler sleeps in epoll_wait, whose timeout is in milliseconds), which
// the per-agent version measured as start_lag (p50 ≈ 0.5 ms: a uniform
// 0–1 ms wake-up error), and 10,000 parked goroutines are 10,000 stacks
// for every GC cycle to scan. A real node has no timer per agent either:
// its agents' requests arrive from the network.
func RunDensity(ctx context.Context, p DensityParams, exec func(ctx context.Context, agent int) error) Density {
	d := Density{Params: p, Scheduled: ScheduledInWindow(p)}
	if p.Executors <= 0 {
		d.Params.Executors = 2 * runtime.GOMAXPROCS(0)
	}
	n := p.Agents
	type agentSamples struct{ lat, lag, e2e []float64 }
	per := make([]agentSamples, n)
	ticks := int(math.Ceil(float64(p.Window)/float64(p.Period))) + 1
	for i := range per {
		per[i] = agentSamples{make([]float64, 0, ticks), make([]float64, 0, ticks), make([]float64, 0, ticks)}
	}
	// outstanding[i]: ticks of agent i due and not yet finished; the
	// executor that takes it from 0 to 1 runs them all, in order.
	outstanding := make([]atomic.Int32, n)
	round := make([]int, n) // ticks of agent i taken (owned by its executor)
	phase := func(i int) time.Duration { return time.Duration(float64(i) / float64(n) * float64(p.Period)) }
	var (
		inflight, maxInflight atomic.Int64
		errs                  atomic.Int64
		firstErr              error
		errOnce               sync.Once
		lastDone              atomic.Int64 // unix ns
		wg                    sync.WaitGroup
	)
	runtime.GC()
	rt0 := readRuntimeStats()
	start := time.Now().Add(100 * time.Millisecond)
	end := start.Add(p.Window)
	cpu0, sys0 := processCPU(), sysOrZero()
	jobs := make(chan int, n)
	for range d.Params.Executors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s := &per[i]
				for {
					due := start.Add(phase(i) + time.Duration(round[i])*p.Period)
					round[i]++
					if st := time.Now(); st.Before(end) && ctx.Err() == nil {
						m := inflight.Add(1)
						for {
							x := maxInflight.Load()
							if m <= x || maxInflight.CompareAndSwap(x, m) {
								break
							}
						}
						err := exec(ctx, i)
						et := time.Now()
						inflight.Add(-1)
						if err != nil {
							errs.Add(1)
							errOnce.Do(func() { firstErr = err })
						}
						s.lat = append(s.lat, Micros(et.Sub(st)))
						s.lag = append(s.lag, Micros(st.Sub(due)))
						s.e2e = append(s.e2e, Micros(et.Sub(due)))
						for {
							l := lastDone.Load()
							if et.UnixNano() <= l || lastDone.CompareAndSwap(l, et.UnixNano()) {
								break
							}
						}
					}
					if outstanding[i].Add(-1) == 0 {
						break
					}
				}
			}
		}()
	}
	dispatched := make(chan struct{})
	var dispatcherCPU time.Duration
	go func() {
		defer close(dispatched)
		defer close(jobs)
		// The thread stays locked to the end: a goroutine that exits
		// locked takes its thread (and its timer slack) with it.
		runtime.LockOSThread()
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		t0 := threadCPU()
		defer func() { dispatcherCPU = threadCPU() - t0 }()
		var woke time.Time
		for k := 0; ; k++ {
			for i := range n {
				due := start.Add(phase(i) + time.Duration(k)*p.Period)
				if !due.Before(end) {
					return // later agents and rounds are later still
				}
				if time.Now().Before(due) {
					// At most one wake-up per dispatchQuantum: each is a
					// syscall and a P hand-off, and every tick due by then
					// goes out in the same batch.
					if !sleepUntil(ctx, laterOf(due, woke.Add(dispatchQuantum))) {
						return
					}
					woke = time.Now()
				}
				if outstanding[i].Add(1) == 1 {
					jobs <- i
				}
			}
		}
	}()
	<-dispatched
	wg.Wait()
	last := time.Unix(0, lastDone.Load())
	if last.Before(end) {
		last = end
	}
	d.Wall = last.Sub(start)
	d.ProcessCPU = processCPU() - cpu0
	d.DispatcherCPU = dispatcherCPU
	d.Runtime = readRuntimeStats().since(rt0)
	if sys1, ok := readSysCPU(); ok && sys0.busy >= 0 {
		d.SysBusy, d.SysSteal = sys1.busy-sys0.busy, sys1.steal-sys0.steal
	} else {
		d.SysBusy, d.SysSteal = -1, -1
	}
	var lat, lag, e2e []float64
	for _, s := range per {
		lat = append(lat, s.lat...)
		lag = append(lag, s.lag...)
		e2e = append(e2e, s.e2e...)
	}
	d.Completed = len(lat)
	d.ExecLatency, d.StartLag, d.SchedToDone = Summarize(lat, 0), Summarize(lag, 0), Summarize(e2e, 0)
	d.Errors = int(errs.Load())
	d.FirstError = firstErr
	d.MaxInflight = maxInflight.Load()
	return d
}

// dispatchQuantum bounds the dispatcher's wake-ups (5,000/s): a tick can
// start up to this late beyond its due time, a tenth of the wake-up error
// of Go's timers.
const dispatchQuantum = 200 * time.Microsecond

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleepUntil blocks the calling (locked) thread until t with nanosleep(2),
// in slices of at most 10 ms so a cancelled ctx is seen; false: cancelled.
func sleepUntil(ctx context.Context, t time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		w := time.Until(t)
		if w <= 0 {
			return true
		}
		ts := unix.NsecToTimespec(int64(min(w, 10*time.Millisecond)))
		unix.Nanosleep(&ts, nil)
	}
}

// threadCPU is the calling thread's user+system CPU (the caller is locked
// to its thread); 0 when unknown.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sysOrZero() sysCPU {
	s, ok := readSysCPU()
	if !ok {
		return sysCPU{busy: -1}
	}
	return s
}

// KeptUp is the peer's criterion: completed ≥ 99 % of scheduled and
// start_lag p99 ≤ period.
func (d Density) KeptUp() bool {
	return d.StartLag.N > 0 && float64(d.Completed) >= 0.99*float64(d.Scheduled) &&
		d.StartLag.P99 <= Micros(d.Params.Period)
}

// Object is the report's "density" object (peer-bench/v1 keys first).
func (d Density) Object() Object {
	r1 := func(x float64) float64 { return math.Round(x*10) / 10 }
	r2 := func(x float64) float64 { return math.Round(x*100) / 100 }
	secs := d.Params.Window.Seconds()
	var o Object
	o.Set("exec_latency", d.ExecLatency)
	o.Set("start_lag", d.StartLag)
	o.Set("sched_to_done", d.SchedToDone)
	o.Set("agents", d.Params.Agents)
	o.Set("period_ms", float64(d.Params.Period)/1e6)
	o.Set("seconds", secs)
	o.Set("target_exec_per_s", r1(float64(d.Params.Agents)*float64(time.Second)/float64(d.Params.Period)))
	o.Set("achieved_exec_per_s", r1(float64(d.Completed)/secs))
	o.Set("scheduled_execs", d.Scheduled)
	o.Set("completed_execs", d.Completed)
	o.Set("errors", d.Errors)
	o.Set("kept_up", d.KeptUp())
	o.Set("max_inflight", d.MaxInflight)
	w := d.Wall.Seconds()
	o.Set("cpu_cores_used", r2(d.ProcessCPU.Seconds()/w))
	if d.SysBusy >= 0 {
		o.Set("system_cpu_cores_busy", r2(d.SysBusy/w))
		o.Set("system_cpu_cores_steal", r2(d.SysSteal/w))
	} else {
		o.Set("system_cpu_cores_busy", nil)
		o.Set("system_cpu_cores_steal", nil)
	}
	if d.Completed > 0 {
		// CPU per heartbeat (GC and scheduling included): the capacity
		// figure that survives a shared machine, since it does not count
		// time the process waited for a CPU
		per := Micros(d.ProcessCPU) / float64(d.Completed)
		o.Set("cpu_us_per_exec", r1(per))
		o.Set("exec_per_core_s", r1(1e6/per))
		if d.DispatcherCPU > 0 {
			// of which the harness's dispatcher thread (not the sandboxes')
			o.Set("dispatcher_cpu_us_per_exec", r1(Micros(d.DispatcherCPU)/float64(d.Completed)))
		}
	}
	o.Set("processes", 1)
	o.Set("gomaxprocs", runtime.GOMAXPROCS(0))
	o.Set("executors", d.Params.Executors)
	o.Set("runtime", d.Runtime.Object())
	return o
}
