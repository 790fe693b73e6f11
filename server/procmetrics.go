package server

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"io"
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

// MetricsFront wraps h (a Server, or a front of worker processes) for an
// operator: GET /metrics then needs "Authorization: Bearer KEY" when key
// is set (the series name tenants), and extra series (figures only the
// caller knows, e.g. the blob store's size) are appended to h's. Every
// other path goes to h untouched.
func MetricsFront(h http.Handler, key string, extra func(w io.Writer)) http.Handler {
	if key == "" && extra == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			h.ServeHTTP(w, r)
			return
		}
		if key != "" {
			got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(key)) != 1 {
				w.Header().Set("WWW-Authenticate", "Bearer")
				writeError(w, api.Errorf(errdefs.ErrUnauthenticated, "/metrics needs the metrics key (Authorization: Bearer KEY; warren serve --metrics-key)"))
				return
			}
		}
		if extra == nil || r.Method != http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		buf := &bufferedResponse{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(buf, r)
		w.Header().Del("Content-Length")
		w.WriteHeader(buf.code)
		w.Write(buf.body.Bytes())
		if buf.code == http.StatusOK {
			extra(w)
		}
	})
}

// bufferedResponse holds a response's status and body (the headers go to
// the real writer) so MetricsFront can append to it.
type bufferedResponse struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (b *bufferedResponse) WriteHeader(code int)        { b.code = code }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
