// Package server is warren's HTTP API: JSON under /v1, NDJSON streaming for
// execs, API keys mapped to tenants, structured request logs, /healthz and
// Prometheus /metrics. Errors are mapped to statuses in one place
// (api.ToHTTP); the client maps them back (api.ToNative).
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// Backend is what the server serves: a Service per tenant, and counts for
// /metrics (*sandbox.Manager).
type Backend interface {
	For(tenant string) api.Service
	Stats() sandbox.Stats
}

// Keys maps API keys to tenants (boltmeta.DB, or MemKeys).
type Keys interface {
	// LookupKey: an unknown key is an error matching errdefs.ErrNotFound.
	LookupKey(ctx context.Context, key string) (tenant string, admin bool, err error)
	PutKey(ctx context.Context, key, tenant string, admin bool) error
}

// Config configures a Server.
type Config struct {
	Backend Backend
	Keys    Keys
	Logger  *slog.Logger
	// MaxJSONBytes bounds JSON request bodies (default 1 MiB).
	MaxJSONBytes int64
	// MaxFileBytes bounds file and tar uploads (default 64 MiB).
	MaxFileBytes int64
	// Guard sheds new work under memory pressure (nil: never sheds).
	Guard *MemoryGuard
	// Console, if set, serves GET / and GET /console/ (the web console);
	// every other path stays the API's, so unknown paths still 404 as JSON.
	Console http.Handler
}

// Server is an http.Handler.
type Server struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *metrics
	// inflight counts requests being served (the guard frees memory
	// only when the node is idle).
	inflight atomic.Int64
	// fleet routes requests to their sandbox's owner (forward.go; nil:
	// a single node).
	fleet Fleet
	fwd   http.RoundTripper
}

// shedRoutes start new work: under memory pressure they are refused
// first. Reads, deletes, signals and hibernates go on, since they are how
// a tenant (or the node) gives memory back.
var shedRoutes = map[string]bool{
	"POST /v1/sandboxes":                            true,
	"POST /v1/sandboxes/{id}/exec":                  true,
	"POST /v1/sandboxes/{id}/processes":             true,
	"POST /v1/sandboxes/{id}/fork":                  true,
	"POST /v1/sandboxes/{id}/resume":                true,
	"PUT /v1/sandboxes/{id}/files":                  true,
	"POST /v1/sandboxes/{id}/processes/{pid}/stdin": true,
	"POST /v1/images":                               true,
}

// wildcard matches a quoted {name} in a route pattern.
var wildcard = regexp.MustCompile(`\\\{[a-z]+\\\}`)

type handler func(w http.ResponseWriter, r *http.Request, svc api.Service) error

type route struct {
	method, pattern string
	h               handler
	auth            authLevel
}

type authLevel int

const (
	authTenant authLevel = iota
	authNone
	authAdmin
)

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Backend == nil || cfg.Keys == nil {
		return nil, errors.New("server: Config needs Backend and Keys")
	}
	if cfg.MaxJSONBytes <= 0 {
		cfg.MaxJSONBytes = 1 << 20
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = 64 << 20
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), metrics: newMetrics()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, rt := range s.routes() {
		s.mux.Handle(rt.method+" "+rt.pattern, s.wrap(rt))
	}
	if cfg.Console != nil {
		s.mux.Handle("GET /{$}", cfg.Console)
		s.mux.Handle("GET /console/", cfg.Console)
	}
	// Anything else: 405 when the path exists with other methods, else 404.
	type pathRE struct {
		re      *regexp.Regexp
		methods []string
	}
	var paths []*pathRE
	byPattern := map[string]*pathRE{}
	for _, rt := range s.routes() {
		p := byPattern[rt.pattern]
		if p == nil {
			p = &pathRE{re: regexp.MustCompile("^" + wildcard.ReplaceAllString(regexp.QuoteMeta(rt.pattern), `[^/]+`) + "$")}
			byPattern[rt.pattern] = p
			paths = append(paths, p)
		}
		p.methods = append(p.methods, rt.method)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		for _, p := range paths {
			if p.re.MatchString(r.URL.Path) {
				w.Header().Set("Allow", strings.Join(p.methods, ", "))
				writeJSON(w, http.StatusMethodNotAllowed, api.ErrorBody{Error: api.ErrorDetail{
					Code: "method_not_allowed", Message: fmt.Sprintf("%s %s: allowed methods are %s", r.Method, r.URL.Path, strings.Join(p.methods, ", ")),
				}})
				return
			}
		}
		writeError(w, api.Errorf(errdefs.ErrNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	return s, nil
}

// routes is the one table of the API; the OpenAPI document is checked
// against it by TestOpenAPI_MatchesRoutes.
func (s *Server) routes() []route {
	return []route{
		{"GET", "/healthz", s.healthz, authNone},
		{"GET", "/metrics", s.metricsHandler, authNone},
		{"GET", "/v1/openapi.json", s.openapi, authNone},
		{"POST", "/v1/keys", s.createKey, authAdmin},
		{"POST", "/v1/sandboxes", s.create, authTenant},
		{"GET", "/v1/sandboxes", s.list, authTenant},
		{"GET", "/v1/sandboxes/{id}", s.get, authTenant},
		{"DELETE", "/v1/sandboxes/{id}", s.delete, authTenant},
		{"POST", "/v1/sandboxes/{id}/exec", s.exec, authTenant},
		{"POST", "/v1/sandboxes/{id}/processes", s.startProcess, authTenant},
		{"GET", "/v1/sandboxes/{id}/processes", s.listProcesses, authTenant},
		{"GET", "/v1/sandboxes/{id}/processes/{pid}", s.getProcess, authTenant},
		{"GET", "/v1/sandboxes/{id}/processes/{pid}/attach", s.attachProcess, authTenant},
		{"GET", "/v1/sandboxes/{id}/processes/{pid}/wait", s.waitProcess, authTenant},
		{"POST", "/v1/sandboxes/{id}/processes/{pid}/stdin", s.stdinProcess, authTenant},
		{"POST", "/v1/sandboxes/{id}/processes/{pid}/signal", s.signalProcess, authTenant},
		{"POST", "/v1/sandboxes/{id}/processes/{pid}/resize", s.resizeProcess, authTenant},
		{"GET", "/v1/sandboxes/{id}/processes/{pid}/pty", s.ptySocket, authTenant},
		{"GET", "/v1/sandboxes/{id}/files", s.getFiles, authTenant},
		{"PUT", "/v1/sandboxes/{id}/files", s.putFiles, authTenant},
		{"DELETE", "/v1/sandboxes/{id}/files", s.deleteFiles, authTenant},
		{"GET", "/v1/sandboxes/{id}/files/watch", s.watchFiles, authTenant},
		{"POST", "/v1/sandboxes/{id}/files/mkdir", s.mkdir, authTenant},
		{"POST", "/v1/sandboxes/{id}/files/move", s.move, authTenant},
		{"POST", "/v1/sandboxes/{id}/hibernate", s.hibernate, authTenant},
		{"POST", "/v1/sandboxes/{id}/resume", s.resume, authTenant},
		{"POST", "/v1/sandboxes/{id}/fork", s.fork, authTenant},
		{"POST", "/v1/sandboxes/{id}/snapshots", s.createSnapshot, authTenant},
		{"GET", "/v1/sandboxes/{id}/network", s.getNetwork, authTenant},
		{"PUT", "/v1/sandboxes/{id}/network", s.putNetwork, authTenant},
		{"GET", "/v1/sandboxes/{id}/generations", s.listGenerations, authTenant},
		{"GET", "/v1/snapshots", s.listSnapshots, authTenant},
		{"GET", "/v1/snapshots/{name}", s.getSnapshot, authTenant},
		{"DELETE", "/v1/snapshots/{name}", s.deleteSnapshot, authTenant},
		{"GET", "/v1/images", s.listImages, authTenant},
		{"POST", "/v1/images", s.buildImage, authTenant},
		{"DELETE", "/v1/images/{name}", s.deleteImage, authTenant},
		{"POST", "/v1/volumes", s.createVolume, authTenant}, // volumes.go
		{"GET", "/v1/volumes", s.listVolumes, authTenant},
		{"GET", "/v1/volumes/{name}", s.getVolume, authTenant},
		{"PATCH", "/v1/volumes/{name}", s.resizeVolume, authTenant},
		{"DELETE", "/v1/volumes/{name}", s.deleteVolume, authTenant},
		{"POST", "/v1/drives", s.createDrive, authTenant}, // drives.go
		{"GET", "/v1/drives", s.listDrives, authTenant},
		{"GET", "/v1/drives/{name}", s.getDrive, authTenant},
		{"DELETE", "/v1/drives/{name}", s.deleteDrive, authTenant},
		{"POST", "/v1/sandboxes/{id}/mounts", s.mountDrive, authTenant},
		{"GET", "/v1/sandboxes/{id}/mounts", s.listMounts, authTenant},
		{"DELETE", "/v1/sandboxes/{id}/mounts", s.unmountDrive, authTenant},
		{"POST", "/v1/mcp", s.mcp, authTenant},
		{"GET", "/v1/nodes", s.listNodes, authAdmin},
		{"POST", "/v1/nodes/{id}/drain", s.drainNode, authAdmin},
	}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.fleet != nil && s.routeFleet(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Idle reports whether no request is being served.
func (s *Server) Idle() bool { return s.inflight.Load() == 0 }

// Guard is the server's memory guard (nil when it has none).
func (s *Server) Guard() *MemoryGuard { return s.cfg.Guard }

// recorder remembers the status for logs and metrics.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

type ctxKey struct{}

// wrap adds auth, panic recovery, one log line and metrics to a route.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		rid := requestID(r)
		w.Header().Set(RequestIDHeader, rid)
		ctx, ri := withReqInfo(r.Context())
		r = r.WithContext(ctx)
		rec := &recorder{ResponseWriter: w}
		tenant := ""
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in handler", "route", rt.pattern, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, fmt.Errorf("internal error: %v", p))
				}
			}
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			d := time.Since(t0)
			s.metrics.observe(rt.method+" "+rt.pattern, tenant, rec.status, d)
			s.logRequest(r, rid, rt.pattern, tenant, rec.status, d, rec.bytes, ri)
		}()
		if g := s.cfg.Guard; g != nil && shedRoutes[rt.method+" "+rt.pattern] {
			// Before auth and body: under pressure, do as little as can be.
			if err := g.Check(rt.method + " " + rt.pattern); err != nil {
				rec.Header().Set("Retry-After", strconv.Itoa(g.RetryAfter()))
				writeError(rec, err)
				return
			}
		}
		var svc api.Service
		if rt.auth != authNone {
			name, admin, err := s.authenticate(r)
			if err != nil {
				writeError(rec, err)
				return
			}
			if rt.auth == authAdmin && !admin {
				writeError(rec, api.Errorf(errdefs.ErrPermissionDenied, "%s %s needs the admin key", rt.method, rt.pattern))
				return
			}
			tenant = name
			r = r.WithContext(context.WithValue(r.Context(), tenantKey{}, name))
			svc = s.cfg.Backend.For(name)
		}
		if err := rt.h(rec, r, svc); err != nil {
			if rec.status != 0 {
				// Already streaming: the handler reported the error in-band.
				return
			}
			writeError(rec, err)
		}
	})
}

func (s *Server) authenticate(r *http.Request) (tenant string, admin bool, err error) {
	h := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok && h == "" {
		key, ok = wsKey(r) // browsers cannot set headers on a WebSocket
	}
	if !ok || key == "" {
		return "", false, api.Errorf(errdefs.ErrUnauthenticated, "missing API key (Authorization: Bearer KEY)")
	}
	tenant, admin, err = s.cfg.Keys.LookupKey(r.Context(), strings.TrimSpace(key))
	if err != nil {
		if errdefs.IsNotFound(err) {
			return "", false, api.Errorf(errdefs.ErrUnauthenticated, "unknown API key")
		}
		return "", false, err
	}
	return tenant, admin, nil
}

// writeError sends {"error":{"code","message"}} with the class's status.
func writeError(w http.ResponseWriter, err error) {
	status, code := api.ToHTTP(err)
	if s := api.RetryAfterSeconds(err); s > 0 && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: err.Error()}})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// decode reads one JSON object from a size-limited body, refusing unknown
// fields and trailing data. An empty body leaves v as is when optional.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxJSONBytes)
	data, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return api.Errorf(api.ErrTooLarge, "request body over %d bytes", s.cfg.MaxJSONBytes)
		}
		return api.Errorf(errdefs.ErrInvalidArgument, "cannot read the request body: %v", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		if optional {
			return nil
		}
		return api.Errorf(errdefs.ErrInvalidArgument, "request body is empty; want a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return api.Errorf(errdefs.ErrInvalidArgument, "bad JSON body: %v", err)
	}
	if dec.More() {
		return api.Errorf(errdefs.ErrInvalidArgument, "bad JSON body: data after the object")
	}
	return nil
}

// query checks that r has only the allowed query parameters.
func query(r *http.Request, allowed ...string) (map[string]string, error) {
	q := r.URL.Query()
	out := make(map[string]string, len(q))
	for k, vs := range q {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			return nil, api.Errorf(errdefs.ErrInvalidArgument, "unknown query parameter %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
		if len(vs) != 1 {
			return nil, api.Errorf(errdefs.ErrInvalidArgument, "query parameter %q given %d times", k, len(vs))
		}
		out[k] = vs[0]
	}
	return out, nil
}

// NewKey returns a fresh random API key.
func NewKey() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "wk_" + hex.EncodeToString(b[:])
}

// MemKeys is an in-memory Keys (tests and keys from flags).
type MemKeys struct {
	mu   sync.RWMutex
	keys map[string][2]string // key -> tenant, "admin"|""
}

// NewMemKeys returns an empty MemKeys.
func NewMemKeys() *MemKeys { return &MemKeys{keys: map[string][2]string{}} }

func (m *MemKeys) LookupKey(_ context.Context, key string) (string, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.keys[key]
	if !ok {
		return "", false, api.Errorf(errdefs.ErrNotFound, "unknown API key")
	}
	return t[0], t[1] == "admin", nil
}

func (m *MemKeys) PutKey(_ context.Context, key, tenant string, admin bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := ""
	if admin {
		a = "admin"
	}
	m.keys[key] = [2]string{tenant, a}
	return nil
}
