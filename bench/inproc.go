package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"time"
)

// In-process scenarios: the resident tier (shell over vfs) as an embedder
// uses it, the same workloads as the peer's phases.
func init() {
	register(
		Scenario{Name: "create_first_exec", Keys: []string{"create_first_exec", "create_only"}, Run: runCreateFirstExec},
		Scenario{Name: "exec_rtt", Run: func(ctx context.Context, e *Env, r *Result) error {
			return runWarmExec(ctx, e, r, "exec_rtt", CmdRTT, isHi, 2000, 20000)
		}},
		Scenario{Name: "exec_pipeline", Run: func(ctx context.Context, e *Env, r *Result) error {
			return runWarmExec(ctx, e, r, "exec_pipeline", CmdPipe, isOne, 1000, 10000)
		}},
		Scenario{Name: "fork", Keys: []string{"fork", "fork_first_exec"}, Run: runFork},
		Scenario{Name: "mem_per_sandbox_bytes", Run: runMem},
		Scenario{Name: "density", Run: runDensity},
	)
}

// allocMeter counts the Go heap allocations of a measured loop (two
// ReadMemStats, outside the timed regions): allocation per exec bounds
// throughput once GC is a large share of CPU.
type allocMeter struct{ mallocs, bytes uint64 }

func (a *allocMeter) start() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	a.mallocs, a.bytes = ms.Mallocs, ms.TotalAlloc
}

// per returns allocs_per_op and alloc_bytes_per_op over n operations
// (harness included: its buffers are reused, so it adds next to nothing).
func (a *allocMeter) per(n int) map[string]any {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return map[string]any{
		"allocs_per_op":      (ms.Mallocs - a.mallocs) / uint64(n),
		"alloc_bytes_per_op": (ms.TotalAlloc - a.bytes) / uint64(n),
	}
}

// buffers is a reusable stdout/stderr pair, so the harness does not add
// allocations to the exec it measures.
type buffers struct{ out, err bytes.Buffer }

func (b *buffers) reset() { b.out.Reset(); b.err.Reset() }

func (b *buffers) run(ctx context.Context, box Box, script string, c Check) error {
	b.reset()
	st, err := box.Run(ctx, script, &b.out, &b.err)
	return verify(script, st, err, b.out.Bytes(), b.err.Bytes(), c)
}

// runCreateFirstExec: new sandbox (vfs over the base + shell session) →
// first exec of the create command returned. Samples after warm-up, like
// the peer (200 + 2,000 at scale 1). create_only: the constructor alone.
func runCreateFirstExec(ctx context.Context, e *Env, r *Result) error {
	warm, n := e.Opts.iters(200), e.Opts.iters(2000)
	var b buffers
	samples := make([]float64, 0, n)
	var alloc allocMeter
	for i := range warm + n {
		if i == warm {
			alloc.start()
		}
		b.reset()
		t0 := time.Now()
		box, err := e.Runtime.New(ctx)
		if err != nil {
			return err
		}
		st, err := box.Run(ctx, CmdFirst, &b.out, &b.err)
		us := Micros(time.Since(t0))
		if err := verify(CmdFirst, st, err, b.out.Bytes(), b.err.Bytes(), isHello); err != nil {
			return err
		}
		if i >= warm {
			samples = append(samples, us)
		}
	}
	allocs := alloc.per(n)
	ctor := make([]float64, 0, n)
	for range n {
		t0 := time.Now()
		box, err := e.Runtime.New(ctx)
		us := Micros(time.Since(t0))
		if err != nil {
			return err
		}
		_ = box
		ctor = append(ctor, us)
	}
	cfe := Summarize(samples, warm)
	cfe.Extra = allocs
	r.Metrics.Set("create_first_exec", cfe)
	r.Metrics.Set("create_only", Summarize(ctor, 0))
	r.Notes.Set("create", "create_first_exec = vfs.New over the shared base fs.FS + shell.New (cwd, env) + the first Run of the create command, output checked. The base is shared, not copied: a new sandbox's delta is empty. create_only (informational) = the constructors alone.")
	return nil
}

// runWarmExec: one warm sandbox, script run warm+n times; every sample's
// output is checked (outside the timed region).
func runWarmExec(ctx context.Context, e *Env, r *Result, key, script string, c Check, warm, n int) error {
	warm, n = e.Opts.iters(warm), e.Opts.iters(n)
	box, err := e.Runtime.New(ctx)
	if err != nil {
		return err
	}
	var b buffers
	samples := make([]float64, 0, n)
	var alloc allocMeter
	for i := range warm + n {
		if i == warm {
			alloc.start()
		}
		b.reset()
		t0 := time.Now()
		st, err := box.Run(ctx, script, &b.out, &b.err)
		us := Micros(time.Since(t0))
		if err := verify(script, st, err, b.out.Bytes(), b.err.Bytes(), c); err != nil {
			return err
		}
		if i >= warm {
			samples = append(samples, us)
		}
	}
	st := Summarize(samples, warm)
	st.Extra = alloc.per(n)
	r.Metrics.Set(key, st)
	r.Notes.Set("allocs", "allocs_per_op / alloc_bytes_per_op on create_first_exec, exec_rtt and exec_pipeline: Go heap allocations per measured op (runtime.MemStats Mallocs and TotalAlloc deltas over the measured loop; the harness reuses its buffers).")
	return nil
}

// runFork: the parent is the base + the create command, the pipeline and a
// 1 KiB write (as the peer's). fork = vfs Fork + shell Fork; fork_first_exec
// additionally runs `cat /tmp/a` in the child. The first child also proves
// the fork carries the parent's blob and is isolated from the parent.
func runFork(ctx context.Context, e *Env, r *Result) error {
	warm, n := e.Opts.iters(100), e.Opts.iters(1000)
	parent, err := e.Runtime.New(ctx)
	if err != nil {
		return err
	}
	var b buffers
	if err := prepare(ctx, parent, &b, 7); err != nil {
		return err
	}
	forkOnly := make([]float64, 0, n)
	forkExec := make([]float64, 0, n)
	for i := range warm + n {
		b.reset()
		t0 := time.Now()
		child, err := parent.Fork()
		tf := Micros(time.Since(t0))
		if err != nil {
			return fmt.Errorf("fork: %w", err)
		}
		st, err := child.Run(ctx, CmdForkRead, &b.out, &b.err)
		te := Micros(time.Since(t0))
		if err := verify(CmdForkRead+" (in fork)", st, err, b.out.Bytes(), b.err.Bytes(), isHello); err != nil {
			return err
		}
		if i == 0 {
			if err := b.run(ctx, child, "wc -c < "+blobPath, Check{`"1024"`, func(o []byte) bool { return string(bytes.TrimSpace(o)) == "1024" }}); err != nil {
				return fmt.Errorf("fork lost the parent's 1 KiB file: %w", err)
			}
			if err := b.run(ctx, child, "echo child > /tmp/a", isEmpty); err != nil {
				return err
			}
			if err := b.run(ctx, parent, "cat /tmp/a", isHello); err != nil {
				return fmt.Errorf("a write in the fork shows in the parent: %w", err)
			}
		}
		if i >= warm {
			forkOnly = append(forkOnly, tf)
			forkExec = append(forkExec, te)
		}
	}
	f := Summarize(forkOnly, warm)
	no := false
	f.Emulated = &no
	r.Metrics.Set("fork", f)
	r.Metrics.Set("fork_first_exec", Summarize(forkExec, warm))
	r.Notes.Set("fork", "native fork, not emulated: vfs.Fork (O(1): the child shares the parent's copy-on-write tree) + shell.Fork (variables, functions, cwd copied). Parent = base + create command + pipeline + 1 KiB write, as the peer's. fork_first_exec adds `cat /tmp/a` in the child. Checked on the first child: the 1 KiB file is there and a child write does not show in the parent.")
	return nil
}

// prepare runs the mem/fork preparation: the create command, the pipeline,
// echo hi and a 1 KiB write.
func prepare(ctx context.Context, box Box, b *buffers, i int) error {
	if err := b.run(ctx, box, CmdFirst, isHello); err != nil {
		return err
	}
	if err := b.run(ctx, box, CmdPipe, isOne); err != nil {
		return err
	}
	if err := b.run(ctx, box, CmdRTT, isHi); err != nil {
		return err
	}
	return b.run(ctx, box, CmdWrite1K(i), isEmpty)
}

// memSample is Go heap in use and process RSS after a full GC that also
// returns freed pages to the OS, so RSS tracks live memory.
func memSample() (heap uint64, rss int64, err error) {
	// twice, with a pause: finalizers and the background scavenger settle
	for range 2 {
		runtime.GC()
		debug.FreeOSMemory()
		time.Sleep(20 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err = rssBytes()
	return ms.HeapAlloc, rss, err
}

// runMem keeps MemN sandboxes alive, each prepared like the peer's (three
// commands and a 1 KiB write), and divides the heap and RSS deltas by n.
func runMem(ctx context.Context, e *Env, r *Result) error {
	n := e.Opts.MemN
	var b buffers
	for i := range 20 { // warm-up: first-use allocations (pools, parser) before the baseline
		box, err := e.Runtime.New(ctx)
		if err != nil {
			return err
		}
		if err := prepare(ctx, box, &b, i); err != nil {
			return err
		}
	}
	b = buffers{}
	h0, rss0, err := memSample()
	if err != nil {
		return err
	}
	keep := make([]Box, n)
	t0 := time.Now()
	for i := range keep {
		box, err := e.Runtime.New(ctx)
		if err != nil {
			return err
		}
		if err := prepare(ctx, box, &b, i); err != nil {
			return err
		}
		keep[i] = box
	}
	build := time.Since(t0)
	b = buffers{}
	h1, rss1, err := memSample()
	if err != nil {
		return err
	}
	var o Object
	o.Set("heap_used", (int64(h1)-int64(h0))/int64(n))
	o.Set("rss", (rss1-rss0)/int64(n))
	o.Set("n", n)
	o.Set("unit", "bytes")
	o.Set("heap_used_total_delta", int64(h1)-int64(h0))
	o.Set("rss_total_delta", rss1-rss0)
	o.Set("build_all_ms", build.Milliseconds())
	r.Metrics.Set("mem_per_sandbox_bytes", o)
	r.Notes.Set("mem_per_sandbox_bytes", "n resident sandboxes (vfs + shell session), each having run the create command, the pipeline and echo hi and written a 1 KiB file with printf; kept alive. heap_used = Go runtime.MemStats.HeapAlloc delta, rss = process RSS delta (/proc/self/statm resident pages), both after runtime.GC() + debug.FreeOSMemory() (which returns freed spans to the OS so RSS follows the live heap), divided by n. The base tree is shared by every sandbox, so only the delta and the session are per sandbox. rss is process-wide and noisier than heap_used (a few hundred bytes per sandbox either way at n=2000; it can even come out negative when pages held before the baseline are returned later).")
	runtime.KeepAlive(keep)
	return nil
}

// runDensity: Agents resident sandboxes created up front, each running the
// heartbeat every PeriodMS over Seconds (RunDensity has the model).
func runDensity(ctx context.Context, e *Env, r *Result) error {
	p := DensityParams{
		Agents: e.Opts.Agents, Executors: e.Opts.Executors,
		Period: time.Duration(e.Opts.PeriodMS * float64(time.Millisecond)),
		Window: time.Duration(e.Opts.Seconds * float64(time.Second)),
	}
	e.Log("density: creating %d sandboxes", p.Agents)
	t0 := time.Now()
	boxes := make([]Box, p.Agents)
	for i := range boxes {
		box, err := e.Runtime.New(ctx)
		if err != nil {
			return err
		}
		boxes[i] = box
	}
	create := time.Since(t0)
	{ // warm the heartbeat path on a throwaway sandbox
		w, err := e.Runtime.New(ctx)
		if err != nil {
			return err
		}
		var b buffers
		for range 200 {
			if err := b.run(ctx, w, CmdHeartbeat, isCount); err != nil {
				return err
			}
		}
	}
	bufs := make([]buffers, p.Agents)
	e.Log("density: %d agents every %v for %v", p.Agents, p.Period, p.Window)
	d := RunDensity(ctx, p, func(ctx context.Context, i int) error {
		return bufs[i].run(ctx, boxes[i], CmdHeartbeat, isCount)
	})
	o := d.Object()
	o.Set("sandbox_create_total_ms", create.Milliseconds())
	if d.Completed > 0 {
		// The same ticks delivered to an empty exec, right after: what the
		// harness, the Go scheduler's wake-ups and this machine cost per
		// request at this rate with no sandbox work. It moves with the
		// machine (its idle-wake-up cost) as much as the heartbeat does, so
		// the difference is the figure that compares across runs.
		fp := p
		fp.Window = max(p.Window/3, min(p.Window, 2*time.Second))
		e.Log("density: the same ticks to an empty exec for %v (the floor)", fp.Window)
		f := RunDensity(ctx, fp, func(context.Context, int) error { return nil })
		if f.Completed > 0 {
			floor := Micros(f.ProcessCPU) / float64(f.Completed)
			per := Micros(d.ProcessCPU) / float64(d.Completed)
			o.Set("floor_cpu_us_per_exec", math.Round(floor*10)/10)
			o.Set("above_floor_cpu_us_per_exec", math.Round((per-floor)*10)/10)
			o.Set("floor_sched_to_done", f.SchedToDone)
		}
	}
	r.Metrics.Set("density", o)
	r.Notes.Set("density", "One Go process, N resident sandboxes created up front. The peer's tick model (agent i first fires at start+(i/N)*P, then every P, no skipped ticks, a late agent stays late, at most one exec in flight per agent, no exec starts after the window), driven by one dispatcher on its own OS thread (nanosleep at 1 ns timer slack, in due order) that hands due agents to `executors` goroutines; Go timers would add up to 1 ms of wake-up error per tick. exec_latency = Run call to return; start_lag = actual start minus scheduled start; sched_to_done = scheduled start to return. kept_up = completed >= 99% of scheduled and start_lag p99 <= period. Execs run in parallel on the executors (max_inflight <= executors), so exec_latency includes CPU contention among them. runtime: GC cycles, stop-the-world pauses and scheduler latency (runnable to running) over the run, from runtime/metrics (bucket upper bounds). Every heartbeat's output is checked; errors counts the wrong ones. dispatcher_cpu_us_per_exec: the dispatcher thread's own CPU (getrusage RUSAGE_THREAD: nanosleeps, clock reads, hand-offs and the futex wake-ups of executors they cause) per heartbeat, the harness's part of cpu_us_per_exec. floor_cpu_us_per_exec: the same agents, period and dispatcher delivering ticks to an empty exec for a third of the window (at least 2 s) right after: the CPU per request of the harness, the Go scheduler's thread wake-ups and the machine's idle-wake-up cost with no sandbox work; above_floor_cpu_us_per_exec = cpu_us_per_exec minus it, the sandbox's own work per heartbeat, the figure that compares across runs and machines; floor_sched_to_done: that run's sched_to_done.")
	if d.Errors > 0 {
		return fmt.Errorf("density: %d heartbeats failed, first: %w", d.Errors, d.FirstError)
	}
	return nil
}
