package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/fleet"
)

// Fleet is what the routing middleware asks (fleet.Node implements it):
// where a sandbox's requests go, where a new one goes, and the fleet's
// admin operations.
type Fleet interface {
	ID() string
	// Route: serve here, or forward to the owner; fresh skips the owner
	// cache; forwarded means a peer sent the request (never forward it
	// again: an owner elsewhere is fleet.ErrMisdirected).
	Route(ctx context.Context, id string, q fleet.Query) (fleet.Route, error)
	Invalidate(id string)
	Place(ctx context.Context, selector map[string]string) (fleet.Route, error)
	// Sync loads the sandboxes other nodes created (before a listing).
	Sync(ctx context.Context) error
	Members(ctx context.Context) ([]fleet.Member, error)
	Peer(ctx context.Context, id string) (fleet.Member, error)
	Drain(ctx context.Context) (fleet.DrainResult, error)
	Counted(misdirected bool)
	Stats() fleet.Stats
	// Lost is closed once node no longer holds id with a live lease.
	Lost(ctx context.Context, id, node string) <-chan struct{}
}

// Headers between the nodes of a fleet.
const (
	// HeaderForwardedBy names the node that forwarded a request; the
	// receiver serves it or answers 421, never forwards it again.
	HeaderForwardedBy = "Warren-Forwarded-By"
	// HeaderOwnerEpoch is the owner epoch the sender expects.
	HeaderOwnerEpoch = "Warren-Owner-Epoch"
	// HeaderPlaced marks a create that placement sent to this node.
	HeaderPlaced = "Warren-Placed"
)

// maxReplay is the largest request body kept to retry a forward after a
// 421 or a refused connection; a larger or chunked body is streamed once.
const maxReplay = 1 << 20

// SetFleet turns on routing: any request for a sandbox is served by its
// owner, forwarded there from whichever node received it.
func (s *Server) SetFleet(f Fleet) {
	s.fleet = f
	s.fwd = &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // execs stream for as long as they run
	}
}

// routeFleet serves or forwards r if it belongs to another node, and
// reports whether it did; false leaves r to the local mux.
func (s *Server) routeFleet(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.Path
	if id, ok := strings.CutPrefix(path, "/v1/nodes/"); ok && r.Method == http.MethodPost {
		if node, ok := strings.CutSuffix(id, "/drain"); ok && node != s.fleet.ID() && !strings.Contains(node, "/") {
			return s.forwardToNode(w, r, node)
		}
		return false
	}
	rest, ok := strings.CutPrefix(path, "/v1/sandboxes")
	if !ok {
		return false
	}
	if rest == "" || rest == "/" {
		switch r.Method {
		case http.MethodPost:
			return s.place(w, r)
		case http.MethodGet:
			if _, _, err := s.authenticate(r); err != nil {
				return false // the mux refuses it
			}
			if err := s.fleet.Sync(r.Context()); err != nil {
				s.log.Warn("fleet: cannot load other nodes' sandboxes before a listing", "err", err)
			}
		}
		return false
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	if id == "" {
		return false
	}
	// The owner authenticates what is forwarded to it; a takeover (a
	// write) is only made for a caller with a key.
	q := fleet.Query{Forwarded: r.Header.Get(HeaderForwardedBy) != "",
		Authorize: func() error { _, _, err := s.authenticate(r); return err }}
	if q.Forwarded {
		q.Epoch, _ = strconv.ParseUint(r.Header.Get(HeaderOwnerEpoch), 10, 64)
	}
	body, replay, err := keepBody(r)
	if err != nil {
		writeError(w, err)
		return true
	}
	for try := 0; try < 2; try++ {
		q.Fresh = try > 0
		rt, err := s.fleet.Route(r.Context(), id, q)
		if errors.Is(err, fleet.ErrMisdirected) {
			writeJSON(w, http.StatusMisdirectedRequest, api.ErrorBody{Error: api.ErrorDetail{Code: "misdirected", Message: err.Error()}})
			return true
		}
		if err != nil {
			writeFleetError(w, err)
			return true
		}
		if rt.Local {
			restoreBody(r, body, replay)
			if rt.Epoch != 0 {
				w.Header().Set(HeaderOwnerEpoch, strconv.FormatUint(rt.Epoch, 10))
			}
			return false
		}
		if !s.forward(w, r.WithContext(context.WithValue(r.Context(), sandboxKey{}, id)), rt, body, replay, try == 1) {
			return true
		}
		s.fleet.Invalidate(id)
	}
	return true
}

// place sends a create to the node placement picks.
func (s *Server) place(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(HeaderPlaced) != "" {
		return false
	}
	if _, _, err := s.authenticate(r); err != nil {
		return false
	}
	body, replay, err := keepBody(r)
	if err != nil {
		writeError(w, err)
		return true
	}
	var req struct {
		NodeSelector map[string]string `json:"node_selector"`
	}
	if replay && len(bytes.TrimSpace(body)) > 0 {
		json.Unmarshal(body, &req) // a bad body is the local handler's to refuse
	}
	rt, err := s.fleet.Place(r.Context(), req.NodeSelector)
	if err != nil {
		writeFleetError(w, err)
		return true
	}
	if rt.Local || !replay {
		restoreBody(r, body, replay)
		return false
	}
	r.Header.Set(HeaderPlaced, rt.Node)
	if s.forward(w, r, rt, body, replay, false) {
		// The chosen node did not answer: make it here.
		restoreBody(r, body, replay)
		r.Header.Del(HeaderPlaced)
		return false
	}
	return true
}

// forwardToNode sends an admin request about node id to that node.
func (s *Server) forwardToNode(w http.ResponseWriter, r *http.Request, id string) bool {
	m, err := s.fleet.Peer(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return true
	}
	if !m.Live {
		writeError(w, api.Errorf(errdefs.ErrUnavailable, "node %s is not live (its lease expired at %s)", id, m.Expires.Format(time.RFC3339)))
		return true
	}
	body, replay, err := keepBody(r)
	if err != nil {
		writeError(w, err)
		return true
	}
	s.forward(w, r, fleet.Route{Node: m.ID, Address: m.Address}, body, replay, true)
	return true
}

var errMisdirected = errors.New("the peer answered 421")

// sandboxKey carries the sandbox id of a forwarded request to forward.
type sandboxKey struct{}

// forward proxies r to rt's node, streaming the response (every write is
// flushed at once, so exec output arrives as it is made). It returns true
// when nothing reached the client and the request may be routed again
// (the peer answered 421 or refused the connection) and last is false.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, rt fleet.Route, body []byte, replay, last bool) (again bool) {
	target, err := url.Parse(rt.Address)
	if err != nil || target.Host == "" {
		writeError(w, api.Errorf(errdefs.ErrUnavailable, "node %s advertises a bad address %q", rt.Node, rt.Address))
		return false
	}
	restoreBody(r, body, replay)
	var lost atomic.Bool
	if id, _ := r.Context().Value(sandboxKey{}).(string); id != "" {
		// A peer that stops answering (stopped, partitioned) loses its
		// lease: then the wait ends, retryable, and the next try takes
		// the sandbox over.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		gone := s.fleet.Lost(ctx, id, rt.Node)
		go func() {
			select {
			case <-gone:
				lost.Store(true)
				cancel()
			case <-ctx.Done():
			}
		}()
		r = r.WithContext(ctx)
	}
	var failed error
	misdirected := false
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
			pr.Out.Header.Set(HeaderForwardedBy, s.fleet.ID())
			pr.Out.Header.Set(HeaderOwnerEpoch, strconv.FormatUint(rt.Epoch, 10))
		},
		Transport:     s.fwd,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusMisdirectedRequest && replay && !last {
				misdirected = true
				resp.Body.Close()
				return errMisdirected
			}
			return nil
		},
		ErrorHandler: func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err },
	}
	p.ServeHTTP(w, r)
	s.fleet.Counted(misdirected)
	switch {
	case failed == nil:
		return false
	case misdirected:
		return true
	case replay && !last && refused(failed):
		return true
	}
	if lost.Load() {
		w.Header().Set("Retry-After", "1")
		writeError(w, api.Errorf(errdefs.ErrUnavailable, "node %s stopped answering and lost its lease on this sandbox; retry (another node takes it over)", rt.Node))
		return false
	}
	if r.Context().Err() != nil {
		return false // the client went away
	}
	w.Header().Set("Retry-After", "1")
	writeError(w, api.Errorf(errdefs.ErrUnavailable, "node %s (%s), which holds this sandbox, did not answer: %v; retry", rt.Node, rt.Address, failed))
	return false
}

// refused reports a connection that never reached a server (nothing of
// the request was processed, so it may go elsewhere).
func refused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// keepBody reads a small body so a forward can be retried.
func keepBody(r *http.Request) ([]byte, bool, error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil, true, nil
	}
	if r.ContentLength < 0 || r.ContentLength > maxReplay {
		return nil, false, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxReplay+1))
	if err != nil {
		return nil, false, api.Errorf(errdefs.ErrInvalidArgument, "cannot read the request body: %v", err)
	}
	return b, true, nil
}

func restoreBody(r *http.Request, body []byte, replay bool) {
	if !replay {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if len(body) == 0 {
		r.Body = http.NoBody
	}
}

// writeFleetError sends err; an unavailable one says when to retry.
func writeFleetError(w http.ResponseWriter, err error) {
	if errdefs.IsUnavailable(err) {
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, err)
}

// writeFleetMetrics appends the fleet's counters to /metrics.
func (s *Server) writeFleetMetrics(sb *strings.Builder) {
	if s.fleet == nil {
		return
	}
	st := s.fleet.Stats()
	live := 0
	if st.Live {
		live = 1
	}
	fmt.Fprintf(sb, "# HELP warren_fleet_lease_held 1 while this node's lease is held (it acknowledges writes).\n# TYPE warren_fleet_lease_held gauge\nwarren_fleet_lease_held{node=%q} %d\n", s.fleet.ID(), live)
	sb.WriteString("# HELP warren_fleet_forwarded_total Requests forwarded to the owner node.\n# TYPE warren_fleet_forwarded_total counter\n")
	fmt.Fprintf(sb, "warren_fleet_forwarded_total %d\n", st.Forwarded)
	sb.WriteString("# HELP warren_fleet_misdirected_total Forwards the receiver refused with 421 (the route was refreshed).\n# TYPE warren_fleet_misdirected_total counter\n")
	fmt.Fprintf(sb, "warren_fleet_misdirected_total %d\n", st.Misdirected)
	sb.WriteString("# HELP warren_fleet_takeovers_total Sandboxes this node claimed from an expired or absent owner.\n# TYPE warren_fleet_takeovers_total counter\n")
	fmt.Fprintf(sb, "warren_fleet_takeovers_total %d\n", st.Takeovers)
	sb.WriteString("# HELP warren_fleet_dropped_sandboxes_total Sandboxes this node dropped because another node took them over.\n# TYPE warren_fleet_dropped_sandboxes_total counter\n")
	fmt.Fprintf(sb, "warren_fleet_dropped_sandboxes_total %d\n", st.Dropped)
	sb.WriteString("# HELP warren_fleet_lost_local_writes_total Write-log records acked at local (not committed) lost when another node took their sandbox over.\n# TYPE warren_fleet_lost_local_writes_total counter\n")
	fmt.Fprintf(sb, "warren_fleet_lost_local_writes_total %d\n", st.LostRecords)
}
