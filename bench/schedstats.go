package bench

import (
	"math"
	"runtime/metrics"
)

// RuntimeStats is what the Go runtime did over a run: where a latency tail
// comes from when the process is not CPU-bound (GC pauses, goroutines
// waiting for a P), from runtime/metrics.
type RuntimeStats struct {
	GCCycles   uint64
	GCPauses   Hist    // /sched/pauses/total/gc:seconds: stop-the-world, stopping included
	SchedWait  Hist    // /sched/latencies:seconds: runnable to running
	GCCPU      float64 // seconds of CPU spent in GC (marking, assists, pauses)
	TotalCPU   float64 // seconds of CPU the runtime accounted
	LiveHeapMB float64 // at the end
}

// Hist is a runtime/metrics histogram's difference between two reads.
type Hist struct {
	counts  []uint64
	buckets []float64
}

var runtimeMetricNames = []string{
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
	"/sched/latencies:seconds",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/gc/heap/live:bytes",
}

func readRuntimeStats() RuntimeStats {
	s := make([]metrics.Sample, len(runtimeMetricNames))
	for i, n := range runtimeMetricNames {
		s[i].Name = n
	}
	metrics.Read(s)
	var r RuntimeStats
	hist := func(v metrics.Value) Hist {
		if v.Kind() != metrics.KindFloat64Histogram {
			return Hist{}
		}
		h := v.Float64Histogram()
		return Hist{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
	}
	u := func(v metrics.Value) uint64 {
		if v.Kind() == metrics.KindUint64 {
			return v.Uint64()
		}
		return 0
	}
	f := func(v metrics.Value) float64 {
		if v.Kind() == metrics.KindFloat64 {
			return v.Float64()
		}
		return 0
	}
	r.GCCycles = u(s[0].Value)
	r.GCPauses, r.SchedWait = hist(s[1].Value), hist(s[2].Value)
	r.GCCPU, r.TotalCPU = f(s[3].Value), f(s[4].Value)
	r.LiveHeapMB = float64(u(s[5].Value)) / (1 << 20)
	return r
}

// since is r minus an earlier read (the live heap stays r's).
func (r RuntimeStats) since(a RuntimeStats) RuntimeStats {
	out := r
	out.GCCycles -= a.GCCycles
	out.GCCPU -= a.GCCPU
	out.TotalCPU -= a.TotalCPU
	out.GCPauses, out.SchedWait = r.GCPauses.minus(a.GCPauses), r.SchedWait.minus(a.SchedWait)
	return out
}

func (h Hist) minus(a Hist) Hist {
	out := Hist{counts: append([]uint64(nil), h.counts...), buckets: h.buckets}
	if len(a.counts) == len(h.counts) {
		for i := range out.counts {
			out.counts[i] -= a.counts[i]
		}
	}
	return out
}

// N is the number of events counted.
func (h Hist) N() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// Quantile is the upper bound of the bucket holding the q-th event, in
// seconds (the histograms' buckets are a few % wide); 0 for none.
func (h Hist) Quantile(q float64) float64 {
	n := h.N()
	if n == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(n)))
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= max(want, 1) {
			hi := h.buckets[i+1]
			if math.IsInf(hi, 1) {
				hi = h.buckets[i]
			}
			return hi
		}
	}
	return h.buckets[len(h.buckets)-1]
}

// Object is the report's form: latencies in µs.
func (h Hist) Object() Object {
	var o Object
	us := func(s float64) float64 { return math.Round(s*1e6*10) / 10 }
	o.Set("p50", us(h.Quantile(0.50)))
	o.Set("p99", us(h.Quantile(0.99)))
	o.Set("p999", us(h.Quantile(0.999)))
	o.Set("max", us(h.Quantile(1)))
	o.Set("n", h.N())
	o.Set("unit", "us")
	return o
}

// Object is the report's "runtime" object.
func (r RuntimeStats) Object() Object {
	var o Object
	o.Set("gc_cycles", r.GCCycles)
	o.Set("gc_pauses", r.GCPauses.Object())
	o.Set("sched_latency", r.SchedWait.Object())
	if r.TotalCPU > 0 {
		o.Set("gc_cpu_share_of_gomaxprocs", math.Round(r.GCCPU/r.TotalCPU*1000)/1000)
	}
	o.Set("live_heap_mib", math.Round(r.LiveHeapMB*10)/10)
	return o
}
