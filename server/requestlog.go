package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// RequestIDHeader carries a request's id: the client's when well formed
// (so a caller can follow its own id through the log), else a fresh one;
// always returned on the response.
const RequestIDHeader = "X-Request-Id"

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

func requestID(r *http.Request) string {
	if id := r.Header.Get(RequestIDHeader); requestIDRE.MatchString(id) {
		return id
	}
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// reqInfo is what a handler adds to its request's log line.
type reqInfo struct {
	mu    sync.Mutex
	attrs []any
}

type reqInfoKey struct{}

func withReqInfo(ctx context.Context) (context.Context, *reqInfo) {
	ri := &reqInfo{}
	return context.WithValue(ctx, reqInfoKey{}, ri), ri
}

func (ri *reqInfo) add(kv ...any) {
	ri.mu.Lock()
	ri.attrs = append(ri.attrs, kv...)
	ri.mu.Unlock()
}

func (ri *reqInfo) all() []any {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return ri.attrs
}

// execOutcome names how an exec ended, for the log and /metrics: ok, exit
// (a non-zero status of the script's), a limit (timeout, output, memory),
// signal, or error (warren failed).
func execOutcome(res api.ExecResult, err error) string {
	switch {
	case err != nil:
		return "error"
	case res.Limit == "timeout" || res.Limit == "output" || res.Limit == "memory":
		return res.Limit
	case len(res.Limit) > 7 && res.Limit[:7] == "signal:":
		return "signal"
	case res.Exit != 0:
		return "exit"
	}
	return "ok"
}

// observeExec records an exec's outcome in /metrics and its request's log
// line: exit status, limit hit, duration and CPU (native processes).
func (s *Server) observeExec(r *http.Request, res api.ExecResult, err error, d time.Duration) {
	outcome := execOutcome(res, err)
	tenant := ""
	if ri, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		kv := []any{"exec_outcome", outcome, "exec_ms", float64(d.Microseconds()) / 1000}
		if err == nil {
			kv = append(kv, "exit", res.Exit, "cpu_seconds", res.CPUSeconds)
			if res.Limit != "" {
				kv = append(kv, "limit", res.Limit)
			}
			if res.Truncated {
				kv = append(kv, "truncated", true)
			}
		} else {
			kv = append(kv, "exec_error", err.Error())
		}
		ri.add(kv...)
	}
	if t, ok := r.Context().Value(tenantKey{}).(string); ok {
		tenant = t
	}
	s.metrics.observeExec(tenant, outcome, d, res.CPUSeconds)
}

type tenantKey struct{}

// logRequest writes the request's one structured line.
func (s *Server) logRequest(r *http.Request, rid, route, tenant string, status int, d time.Duration, bytes int64, ri *reqInfo) {
	args := []any{"request_id", rid, "method", r.Method, "path", r.URL.Path, "route", route,
		"tenant", tenant, "sandbox", r.PathValue("id"), "status", status,
		"duration_ms", float64(d.Microseconds()) / 1000, "bytes", bytes}
	args = append(args, ri.all()...)
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	s.log.Log(r.Context(), level, "request", args...)
}
