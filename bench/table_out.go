package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report for people: one row per latency metric
// (p50/p95/p99 in µs with n), then the memory and density summaries.
func WriteTable(w io.Writer, rep *Object) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	peer, _ := rep.Get("peer")
	fmt.Fprintf(w, "%v  (%s)\n", peer, Schema)
	if m, ok := rep.Get("machine"); ok {
		if mo, ok := m.(*Object); ok {
			g := func(k string) any { v, _ := mo.Get(k); return v }
			fmt.Fprintf(w, "%v, %v, %v cores, GOMAXPROCS %v, %v, load %v\n\n", g("go"), g("cpu_model"), g("cores"), g("gomaxprocs"), g("date"), g("loadavg_at_start"))
		}
	}
	var failed []string
	fmt.Fprintln(tw, "metric\tp50 us\tp95 us\tp99 us\tn\t")
	for _, k := range rep.Keys() {
		v, _ := rep.Get(k)
		switch x := v.(type) {
		case Stats:
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%d\t\n", k, x.P50, x.P95, x.P99, x.N)
		case map[string]string:
			fmt.Fprintf(tw, "%s\tFAILED\t-\t-\t-\t\n", k)
			failed = append(failed, k+": "+x["error"])
		case Object:
			if k == "density" {
				for _, s := range []string{"exec_latency", "start_lag", "sched_to_done"} {
					if st, ok := x.vals[s].(Stats); ok {
						fmt.Fprintf(tw, "density.%s\t%.2f\t%.2f\t%.2f\t%d\t\n", s, st.P50, st.P95, st.P99, st.N)
					}
				}
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range failed {
		fmt.Fprintln(w, "FAILED", f)
	}
	if n, ok := rep.Get("notes"); ok {
		if no, ok := n.(*Object); ok {
			for _, k := range no.Keys() {
				if v, _ := no.Get(k); strings.HasPrefix(fmt.Sprint(v), "not measured") {
					fmt.Fprintf(w, "%s: %v\n", k, v)
				}
			}
		}
	}
	for _, k := range rep.Keys() {
		v, _ := rep.Get(k)
		x, ok := v.(Object)
		if !ok {
			continue
		}
		g := func(k string) any { v, _ := x.Get(k); return v }
		switch k {
		case "density":
			fmt.Fprintf(w, "\ndensity: %v agents every %v ms for %v s: target %v exec/s, achieved %v, completed %v/%v, errors %v, kept_up %v, max_inflight %v, cpu %v cores (machine busy %v cores)\n",
				g("agents"), g("period_ms"), g("seconds"), g("target_exec_per_s"), g("achieved_exec_per_s"), g("completed_execs"), g("scheduled_execs"), g("errors"), g("kept_up"), g("max_inflight"), g("cpu_cores_used"), g("system_cpu_cores_busy"))
		default:
			if u := g("unit"); u == "bytes" {
				fmt.Fprintf(w, "%s: heap_used %v B, rss %v B per sandbox (n %v)\n", k, g("heap_used"), g("rss"), g("n"))
			}
		}
	}
	return nil
}
