package server

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// writeProcess writes the Go and process series under the names the
// Prometheus client's collectors use, so stock dashboards find them.
func writeProcess(sb *strings.Builder, ms *runtime.MemStats) {
	fmt.Fprintf(sb, "# HELP go_goroutines Goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines %d\n", runtime.NumGoroutine())
	fmt.Fprintf(sb, "# HELP go_threads OS threads created.\n# TYPE go_threads gauge\ngo_threads %d\n", threads())
	fmt.Fprintf(sb, "# HELP go_memstats_heap_alloc_bytes Heap bytes allocated and in use.\n# TYPE go_memstats_heap_alloc_bytes gauge\ngo_memstats_heap_alloc_bytes %d\n", ms.HeapAlloc)
	fmt.Fprintf(sb, "# HELP go_memstats_heap_inuse_bytes Heap bytes in in-use spans.\n# TYPE go_memstats_heap_inuse_bytes gauge\ngo_memstats_heap_inuse_bytes %d\n", ms.HeapInuse)
	fmt.Fprintf(sb, "# HELP go_memstats_sys_bytes Bytes obtained from the OS.\n# TYPE go_memstats_sys_bytes gauge\ngo_memstats_sys_bytes %d\n", ms.Sys)
	fmt.Fprintf(sb, "# HELP go_gc_cycles_total Completed GC cycles.\n# TYPE go_gc_cycles_total counter\ngo_gc_cycles_total %d\n", ms.NumGC)
	fmt.Fprintf(sb, "# HELP go_gc_pause_seconds_total Stop-the-world GC pause time.\n# TYPE go_gc_pause_seconds_total counter\ngo_gc_pause_seconds_total %g\n", float64(ms.PauseTotalNs)/1e9)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
		fmt.Fprintf(sb, "# HELP process_cpu_seconds_total User and system CPU of this process.\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %g\n", cpu)
	}
	if rss, ok := residentBytes(); ok {
		fmt.Fprintf(sb, "# HELP process_resident_memory_bytes Resident memory (RSS).\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %d\n", rss)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		fmt.Fprintf(sb, "# HELP process_open_fds Open file descriptors.\n# TYPE process_open_fds gauge\nprocess_open_fds %d\n", len(fds))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		fmt.Fprintf(sb, "# HELP process_max_fds The open file descriptor limit.\n# TYPE process_max_fds gauge\nprocess_max_fds %d\n", lim.Cur)
	}
}

func threads() int {
	n, _ := runtime.ThreadCreateProfile(nil)
	return n
}

// residentBytes reads RSS from /proc/self/statm (pages).
func residentBytes() (int64, bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// RequireMetricsKey serves GET /metrics of h only with "Authorization:
// Bearer KEY" (the metrics carry tenant names); every other path goes to
// h untouched. An empty key leaves /metrics open.
func RequireMetricsKey(h http.Handler, key string) http.Handler {
	if key == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(key)) != 1 {
				writeError(w, api.Errorf(errdefs.ErrUnauthenticated, "/metrics needs the metrics key (Authorization: Bearer KEY; warren serve --metrics-key)"))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
