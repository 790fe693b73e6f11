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
	// Per tenant: requests; exec outcomes (ok, exit, timeout, output,
	// memory, signal, error); CPU of the execs' native processes.
	tenantRequests map[string]uint64
	outcomes       map[[2]string]uint64 // tenant, outcome
	execCPU        map[string]float64
}

func newMetrics() *metrics {
	return &metrics{requests: map[[2]string]uint64{}, latency: map[string]*histogram{}, exec: newHistogram(),
		tenantRequests: map[string]uint64{}, outcomes: map[[2]string]uint64{}, execCPU: map[string]float64{}}
}

func (m *metrics) observe(route, tenant string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[[2]string{route, fmt.Sprint(status)}]++
	if tenant != "" {
		m.tenantRequests[tenant]++
	}
	h := m.latency[route]
	if h == nil {
		h = newHistogram()
		m.latency[route] = h
	}
	h.observe(d.Seconds())
}

func (m *metrics) observeExec(tenant, outcome string, d time.Duration, cpu float64) {
	m.mu.Lock()
	m.exec.observe(d.Seconds())
	m.outcomes[[2]string{tenant, outcome}]++
	m.execCPU[tenant] += cpu
	m.mu.Unlock()
}

// writeTenants writes the per-tenant series (m.mu held).
func (m *metrics) writeTenants(sb *strings.Builder) {
	sb.WriteString("# HELP warren_tenant_requests_total Authenticated HTTP requests by tenant.\n# TYPE warren_tenant_requests_total counter\n")
	for _, t := range sortedKeys(m.tenantRequests) {
		fmt.Fprintf(sb, "warren_tenant_requests_total{tenant=%q} %d\n", t, m.tenantRequests[t])
	}
	sb.WriteString("# HELP warren_exec_outcomes_total Execs over HTTP by tenant and outcome: ok, exit (non-zero status), timeout, output, memory (a native process OOM-killed), signal, error (warren failed).\n# TYPE warren_exec_outcomes_total counter\n")
	keys := make([][2]string, 0, len(m.outcomes))
	for k := range m.outcomes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
	for _, k := range keys {
		fmt.Fprintf(sb, "warren_exec_outcomes_total{tenant=%q,outcome=%q} %d\n", k[0], k[1], m.outcomes[k])
	}
	sb.WriteString("# HELP warren_exec_cpu_seconds_total CPU time of the execs' native processes (their cgroups), by tenant.\n# TYPE warren_exec_cpu_seconds_total counter\n")
	for _, t := range sortedKeys(m.execCPU) {
		fmt.Fprintf(sb, "warren_exec_cpu_seconds_total{tenant=%q} %g\n", t, m.execCPU[t])
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// series writes one unlabelled series with its HELP and TYPE lines.
func series(sb *strings.Builder, kind, name, help string, v int64) {
	fmt.Fprintf(sb, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", name, help, name, kind, name, v)
}

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request, _ api.Service) error {
	st := s.cfg.Backend.Stats()
	var sb strings.Builder
	sb.WriteString("# HELP warren_sandboxes Sandboxes by state.\n# TYPE warren_sandboxes gauge\n")
	fmt.Fprintf(&sb, "warren_sandboxes{state=\"running\"} %d\nwarren_sandboxes{state=\"standby\"} %d\n", st.Running, st.Standby)
	sb.WriteString("# HELP warren_execs_total Execs run (in process and over HTTP).\n# TYPE warren_execs_total counter\n")
	fmt.Fprintf(&sb, "warren_execs_total %d\n", st.Execs)
	writeLadder(&sb, st.Rungs, st.Fallbacks)
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
	sb.WriteString("# HELP warren_tenant_sandboxes Sandboxes by tenant (running and standby).\n# TYPE warren_tenant_sandboxes gauge\n")
	for _, t := range sortedKeys(st.Tenants) {
		fmt.Fprintf(&sb, "warren_tenant_sandboxes{tenant=%q} %d\n", t, st.Tenants[t])
	}
	nt := st.Native
	fmt.Fprintf(&sb, "# HELP warren_native_workspaces Live native workspaces (namespaces, overlay, cgroup).\n# TYPE warren_native_workspaces gauge\nwarren_native_workspaces %d\n", nt.Workspaces)
	fmt.Fprintf(&sb, "# HELP warren_native_oom_kills_total Native processes killed over their sandbox's memory limit.\n# TYPE warren_native_oom_kills_total counter\nwarren_native_oom_kills_total %d\n", nt.OOMKills)
	fmt.Fprintf(&sb, "# HELP warren_native_cpu_seconds_total CPU time of native processes (from their cgroups).\n# TYPE warren_native_cpu_seconds_total counter\nwarren_native_cpu_seconds_total %g\n", nt.CPUSeconds)
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
	sb.WriteString("# HELP warren_egress_decisions_total Egress policy decisions (README \"Network\").\n# TYPE warren_egress_decisions_total counter\n")
	fmt.Fprintf(&sb, "warren_egress_decisions_total{verdict=\"allow\"} %d\nwarren_egress_decisions_total{verdict=\"deny\"} %d\n", st.EgressAllowed, st.EgressDenied)
	ch := st.Chunks
	series(&sb, "counter", "warren_chunks_released_total", "Committed chunks whose bytes left memory (read back through the chunk cache or the blob store).", ch.Released)
	series(&sb, "counter", "warren_chunk_cache_hits_total", "Reads of released chunks served by the chunk cache.", ch.CacheHits)
	series(&sb, "counter", "warren_chunk_fetches_total", "Fetches of released chunks from the blob store (a read-ahead range counts once).", ch.Fetches)
	series(&sb, "counter", "warren_chunk_fetch_bytes_total", "Bytes fetched from the blob store for released chunks.", ch.FetchBytes)
	series(&sb, "counter", "warren_chunk_fetch_errors_total", "Chunk fetches that failed (EIO to the reader).", ch.FetchErrors)
	sb.WriteString("# HELP warren_chunk_cache_bytes Bytes the chunk cache holds, by tier.\n# TYPE warren_chunk_cache_bytes gauge\n")
	fmt.Fprintf(&sb, "warren_chunk_cache_bytes{tier=\"memory\"} %d\nwarren_chunk_cache_bytes{tier=\"disk\"} %d\n", ch.CacheMemoryBytes, ch.CacheDiskBytes)
	s.writeFleetMetrics(&sb)
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
	writeProcess(&sb, &ms)

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
	s.metrics.writeTenants(&sb)
	s.metrics.mu.Unlock()

	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, err := w.Write([]byte(sb.String()))
	return err
}

// writeLadder is the execution ladder's series: commands by rung and
// resident refusals run elsewhere, by command (sandbox.Stats).
func writeLadder(sb *strings.Builder, rungs, fallbacks map[string]uint64) {
	sb.WriteString("# HELP warren_commands_total Exec'd commands by the rung they ran on.\n# TYPE warren_commands_total counter\n")
	for _, r := range []string{"resident", "wasm", "native", "missing"} {
		fmt.Fprintf(sb, "warren_commands_total{rung=%q} %d\n", r, rungs[r])
	}
	sb.WriteString("# HELP warren_fallbacks_total Resident refusals run on another rung, by command.\n# TYPE warren_fallbacks_total counter\n")
	names := make([]string, 0, len(fallbacks))
	for n := range fallbacks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(sb, "warren_fallbacks_total{command=%q} %d\n", n, fallbacks[n])
	}
}
