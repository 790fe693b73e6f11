package bench

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// Stats is a latency distribution in the peer-bench/v1 form: nearest-rank
// percentiles over every measured sample (after warm-up), in microseconds.
type Stats struct {
	P50, P95, P99  float64
	N              int
	Unit           string
	Min, Max, Mean float64
	Warmup         int
	Emulated       *bool // only where the peer schema carries it (fork)
	Extra          map[string]any
}

// Percentile returns the nearest-rank percentile sorted[ceil(q·n)−1] of an
// ascending slice, clamped to its bounds like the peer harness (0 for none).
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	return sorted[min(n-1, max(0, i))]
}

// Summarize turns raw samples (microseconds) into Stats; samples is sorted
// in place. warmup records how many samples were discarded before these.
func Summarize(samples []float64, warmup int) Stats {
	s := Stats{N: len(samples), Unit: "us", Warmup: warmup}
	if len(samples) == 0 {
		return s
	}
	slices.Sort(samples)
	sum := 0.0
	for _, x := range samples {
		sum += x
	}
	s.P50 = Percentile(samples, 0.50)
	s.P95 = Percentile(samples, 0.95)
	s.P99 = Percentile(samples, 0.99)
	s.Min, s.Max = samples[0], samples[len(samples)-1]
	s.Mean = sum / float64(len(samples))
	return s
}

// Micros converts a duration to float microseconds.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// round2 keeps 10 ns resolution: warren's figures are often below 1 µs, where
// the peer's one decimal would erase the difference.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// MarshalJSON writes the peer-bench/v1 stats object; with no samples the
// percentiles are null, as in the peer harness.
func (s Stats) MarshalJSON() ([]byte, error) {
	var o Object
	num := func(x float64) any {
		if s.N == 0 {
			return nil
		}
		return round2(x)
	}
	o.Set("p50", num(s.P50))
	o.Set("p95", num(s.P95))
	o.Set("p99", num(s.P99))
	o.Set("n", s.N)
	o.Set("unit", s.Unit)
	if s.N > 0 {
		o.Set("min", round2(s.Min))
		o.Set("max", round2(s.Max))
		o.Set("mean", round2(s.Mean))
	}
	if s.Warmup > 0 {
		o.Set("warmup", s.Warmup)
	}
	if s.Emulated != nil {
		o.Set("emulated", *s.Emulated)
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		o.Set(k, s.Extra[k])
	}
	return json.Marshal(o)
}

// Object is a JSON object that keeps its keys in insertion order, so the
// report reads in the same order as the peer's.
type Object struct {
	keys []string
	vals map[string]any
}

// Set adds or replaces key (a replaced key keeps its position).
func (o *Object) Set(key string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Get returns the value under key.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Keys returns the keys in order.
func (o *Object) Keys() []string { return slices.Clone(o.keys) }

// MarshalJSON writes the keys in insertion order.
func (o Object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, vb...)
	}
	return append(b, '}'), nil
}
