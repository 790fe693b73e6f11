package server

import (
	"fmt"
	"math"
	"net/http"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/api"
)

var nowFunc = time.Now

// histogram is a Prometheus-style cumulative histogram in seconds.
type histogram struct {
	bounds []float64
	counts []uint64
	sum    float64
	n      uint64
}

var latencyBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

func newHistogram() *histogram {
	return &histogram{bounds: latencyBounds, counts: make([]uint64, len(latencyBounds))}
}

func (h *histogram) observe(sec float64) {
	for i, b := range h.bounds {
		if sec <= b {
			h.counts[i]++
		}
	}
	h.sum += sec
	h.n++
}

func (h *histogram) write(sb *strings.Builder, name, labels string) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	for i, b := range h.bounds {
		fmt.Fprintf(sb, "%s_bucket{%s%sle=\"%g\"} %d\n", name, labels, sep, b, h.counts[i])
	}
	fmt.Fprintf(sb, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, h.n)
	if labels != "" {
		labels = "{" + labels + "}"
	}
	fmt.Fprintf(sb, "%s_sum%s %g\n%s_count%s %d\n", name, labels, h.sum, name, labels, h.n)
}

// metrics is hand-rolled Prometheus text: a handful of series does not
// justify the client library's dependency tree.
type metrics struct {
	mu       sync.Mutex
	requests map[[2]string]uint64 // route, status
	latency  map[string]*histogram
	exec     *histogram
}

func newMetrics() *metrics {
	return &metrics{requests: map[[2]string]uint64{}, latency: map[string]*histogram{}, exec: newHistogram()}
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[[2]string{route, fmt.Sprint(status)}]++
	h := m.latency[route]
	if h == nil {
		h = newHistogram()
		m.latency[route] = h
	}
	h.observe(d.Seconds())
}

func (m *metrics) observeExec(d time.Duration) {
	m.mu.Lock()
	m.exec.observe(d.Seconds())
	m.mu.Unlock()
}

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request, _ api.Service) error {
	st := s.cfg.Backend.Stats()
	var sb strings.Builder
	sb.WriteString("# HELP warren_sandboxes Sandboxes by state.\n# TYPE warren_sandboxes gauge\n")
	fmt.Fprintf(&sb, "warren_sandboxes{state=\"running\"} %d\nwarren_sandboxes{state=\"standby\"} %d\n", st.Running, st.Standby)
	sb.WriteString("# HELP warren_execs_total Execs run (in process and over HTTP).\n# TYPE warren_execs_total counter\n")
	fmt.Fprintf(&sb, "warren_execs_total %d\n", st.Execs)
	sb.WriteString("# HELP warren_exec_errors_total Execs that failed in warren (not the script's status).\n# TYPE warren_exec_errors_total counter\n")
	fmt.Fprintf(&sb, "warren_exec_errors_total %d\n", st.ExecErrors)
	sb.WriteString("# HELP warren_hibernates_total Hibernations.\n# TYPE warren_hibernates_total counter\n")
	fmt.Fprintf(&sb, "warren_hibernates_total %d\n", st.Hibernates)
	sb.WriteString("# HELP warren_resumes_total Resumes.\n# TYPE warren_resumes_total counter\n")
	fmt.Fprintf(&sb, "warren_resumes_total %d\n", st.Resumes)
	sb.WriteString("# HELP warren_delta_bytes Bytes held by running sandboxes' deltas.\n# TYPE warren_delta_bytes gauge\n")
	fmt.Fprintf(&sb, "warren_delta_bytes %d\n", st.BytesInDeltas)
	sb.WriteString("# HELP warren_memory_charged_bytes What the sandboxes' memory budgets hold.\n# TYPE warren_memory_charged_bytes gauge\n")
	fmt.Fprintf(&sb, "warren_memory_charged_bytes %d\n", st.MemoryCharged)
	d := st.Durable
	sb.WriteString("# HELP warren_wlog_appends_total Write-log records acknowledged (local level).\n# TYPE warren_wlog_appends_total counter\n")
	fmt.Fprintf(&sb, "warren_wlog_appends_total %d\n", d.Log.Appends)
	sb.WriteString("# HELP warren_wlog_syncs_total Write-log fsyncs (appends/syncs is the group-commit size).\n# TYPE warren_wlog_syncs_total counter\n")
	fmt.Fprintf(&sb, "warren_wlog_syncs_total %d\n", d.Log.Syncs)
	sb.WriteString("# HELP warren_commits_total Generations published.\n# TYPE warren_commits_total counter\n")
	fmt.Fprintf(&sb, "warren_commits_total %d\n", d.Commits)
	sb.WriteString("# HELP warren_commits_fenced_total Commits refused because another node owns the sandbox.\n# TYPE warren_commits_fenced_total counter\n")
	fmt.Fprintf(&sb, "warren_commits_fenced_total %d\n", d.Fenced)
	sb.WriteString("# HELP warren_wlog_recovered_records Write-log records replayed at start.\n# TYPE warren_wlog_recovered_records gauge\n")
	fmt.Fprintf(&sb, "warren_wlog_recovered_records %d\n", d.RecoveredRecords)
	sb.WriteString("# HELP warren_wlog_abandoned_records Write-log records dropped at start or on takeover: writes of sandboxes this node no longer owns.\n# TYPE warren_wlog_abandoned_records gauge\n")
	fmt.Fprintf(&sb, "warren_wlog_abandoned_records %d\n", d.AbandonedRecords)
	sb.WriteString("# HELP warren_uncommitted_bytes Bytes the node's sandboxes hold that no committed generation has yet (what --node-uncommitted-budget bounds).\n# TYPE warren_uncommitted_bytes gauge\n")
	fmt.Fprintf(&sb, "warren_uncommitted_bytes %d\n", d.Budget.Uncommitted)
	sb.WriteString("# HELP warren_budget_waits_total Writes that waited for a commit to make room in an uncommitted budget.\n# TYPE warren_budget_waits_total counter\n")
	fmt.Fprintf(&sb, "warren_budget_waits_total %d\n", d.Budget.Waits)
	sb.WriteString("# HELP warren_budget_refused_total Writes refused over an uncommitted budget (507).\n# TYPE warren_budget_refused_total counter\n")
	fmt.Fprintf(&sb, "warren_budget_refused_total %d\n", d.Budget.Refused)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	sb.WriteString("# HELP warren_memory_bytes Go heap in use and memory obtained from the OS.\n# TYPE warren_memory_bytes gauge\n")
	fmt.Fprintf(&sb, "warren_memory_bytes{kind=\"heap_inuse\"} %d\nwarren_memory_bytes{kind=\"sys\"} %d\n", ms.HeapInuse, ms.Sys)
	if s.cfg.Guard != nil {
		g := s.cfg.Guard.Stats()
		sb.WriteString("# HELP warren_memory_guard_bytes The heap the memory guard sees, and its high- and low-water marks.\n# TYPE warren_memory_guard_bytes gauge\n")
		fmt.Fprintf(&sb, "warren_memory_guard_bytes{kind=\"heap\"} %d\nwarren_memory_guard_bytes{kind=\"high\"} %d\nwarren_memory_guard_bytes{kind=\"low\"} %d\n", g.Heap, g.High, g.Low)
		shedding := 0
		if g.Shedding {
			shedding = 1
		}
		fmt.Fprintf(&sb, "# HELP warren_memory_pressure 1 while new work is refused under memory pressure.\n# TYPE warren_memory_pressure gauge\nwarren_memory_pressure %d\n", shedding)
		sb.WriteString("# HELP warren_shed_requests_total Requests refused with 503 under memory pressure, by route.\n# TYPE warren_shed_requests_total counter\n")
		routes := make([]string, 0, len(g.Shed))
		for rt := range g.Shed {
			routes = append(routes, rt)
		}
		sort.Strings(routes)
		for _, rt := range routes {
			fmt.Fprintf(&sb, "warren_shed_requests_total{route=%q} %d\n", rt, g.Shed[rt])
		}
		fmt.Fprintf(&sb, "# HELP warren_memory_frees_total Times memory was returned to the OS after a spike.\n# TYPE warren_memory_frees_total counter\nwarren_memory_frees_total %d\n", g.Frees)
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		fmt.Fprintf(&sb, "# HELP warren_memory_limit_bytes The Go runtime's soft memory limit (GOMEMLIMIT).\n# TYPE warren_memory_limit_bytes gauge\nwarren_memory_limit_bytes %d\n", lim)
	}
	fmt.Fprintf(&sb, "# HELP warren_goroutines Goroutines.\n# TYPE warren_goroutines gauge\nwarren_goroutines %d\n", runtime.NumGoroutine())

	s.metrics.mu.Lock()
	sb.WriteString("# HELP warren_http_requests_total HTTP requests by route and status.\n# TYPE warren_http_requests_total counter\n")
	keys := make([][2]string, 0, len(s.metrics.requests))
	for k := range s.metrics.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		fmt.Fprintf(&sb, "warren_http_requests_total{route=%q,status=%q} %d\n", k[0], k[1], s.metrics.requests[k])
	}
	sb.WriteString("# HELP warren_http_request_duration_seconds HTTP latency by route.\n# TYPE warren_http_request_duration_seconds histogram\n")
	routes := make([]string, 0, len(s.metrics.latency))
	for k := range s.metrics.latency {
		routes = append(routes, k)
	}
	sort.Strings(routes)
	for _, rt := range routes {
		s.metrics.latency[rt].write(&sb, "warren_http_request_duration_seconds", fmt.Sprintf("route=%q", rt))
	}
	sb.WriteString("# HELP warren_exec_duration_seconds Exec latency over HTTP, request to exit.\n# TYPE warren_exec_duration_seconds histogram\n")
	s.metrics.exec.write(&sb, "warren_exec_duration_seconds", "")
	s.metrics.mu.Unlock()

	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, err := w.Write([]byte(sb.String()))
	return err
}
