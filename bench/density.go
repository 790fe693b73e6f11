package bench

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DensityParams is the offered load: Agents resident sandboxes, each running
// the heartbeat every Period, over Window.
type DensityParams struct {
	Agents int
	Period time.Duration
	Window time.Duration
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
	SysBusy     float64       // whole machine busy CPU seconds over Wall (-1 unknown)
	SysSteal    float64
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
// agent stays late), at most one exec in flight per agent (one goroutine
// each), and no exec starts after the window closes. exec returns an error
// when the heartbeat's output is wrong; errors are counted, not fatal here.
func RunDensity(ctx context.Context, p DensityParams, exec func(ctx context.Context, agent int) error) Density {
	d := Density{Params: p, Scheduled: ScheduledInWindow(p)}
	type agentSamples struct{ lat, lag, e2e []float64 }
	per := make([]agentSamples, p.Agents)
	var (
		inflight, maxInflight atomic.Int64
		errs                  atomic.Int64
		firstErr              error
		errOnce               sync.Once
		lastDone              atomic.Int64 // unix ns
		wg                    sync.WaitGroup
	)
	runtime.GC()
	// small lead so every goroutine is parked before the first tick
	start := time.Now().Add(100*time.Millisecond + time.Duration(p.Agents)*2*time.Microsecond)
	end := start.Add(p.Window)
	cpu0, sys0 := processCPU(), sysOrZero()
	ticks := int(math.Ceil(float64(p.Window)/float64(p.Period))) + 1
	for i := range p.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &per[i]
			s.lat = make([]float64, 0, ticks)
			s.lag = make([]float64, 0, ticks)
			s.e2e = make([]float64, 0, ticks)
			due := start.Add(time.Duration(float64(i) / float64(p.Agents) * float64(p.Period)))
			for due.Before(end) {
				if w := time.Until(due); w > 0 {
					t := time.NewTimer(w)
					select {
					case <-ctx.Done():
						t.Stop()
						return
					case <-t.C:
					}
				}
				st := time.Now()
				if st.Before(due) { // never start early
					continue
				}
				if !st.Before(end) {
					return // window over: no new execs
				}
				n := inflight.Add(1)
				for {
					m := maxInflight.Load()
					if n <= m || maxInflight.CompareAndSwap(m, n) {
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
				due = due.Add(p.Period)
			}
		}()
	}
	wg.Wait()
	last := time.Unix(0, lastDone.Load())
	if last.Before(end) {
		last = end
	}
	d.Wall = last.Sub(start)
	d.ProcessCPU = processCPU() - cpu0
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
	}
	o.Set("processes", 1)
	o.Set("gomaxprocs", runtime.GOMAXPROCS(0))
	return o
}
