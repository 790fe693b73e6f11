package s3test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Faults are the rates (0..1, per request) at which a Proxy misbehaves.
// Each request draws once per kind, in this order: latency, then at most
// one of the failures.
type Faults struct {
	Seed uint64
	// Latency delays a request by a uniform time in [0, Latency].
	LatencyRate float64
	Latency     time.Duration
	// Error5xx answers 500 InternalError or 503 SlowDown without
	// forwarding (the request body is drained first).
	Error5xx float64
	// DropBefore closes the connection without forwarding or answering.
	DropBefore float64
	// DropAfter forwards the request, then closes the connection instead
	// of answering: the server did the work, the client does not know.
	DropAfter float64
	// Truncate forwards a GET and cuts the answer's body in the middle.
	Truncate float64
}

// Proxy is an HTTP proxy in front of an S3 server that injects Faults. It
// keeps the Host header, so SigV4 signatures made for the proxy's address
// verify at the server.
type Proxy struct {
	URL    string // the proxy's endpoint, http://127.0.0.1:PORT
	target string
	faults Faults
	tr     *http.Transport

	mu       sync.Mutex
	rng      *rand.Rand
	requests map[string]int // by method
	injected map[string]int // by fault kind
}

// NewProxy starts a proxy to target (an http:// endpoint) for the rest of
// tb.
func NewProxy(tb testing.TB, target string, f Faults) *Proxy {
	p := &Proxy{
		target: strings.TrimSuffix(target, "/"), faults: f,
		tr:       &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64},
		rng:      rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15)),
		requests: map[string]int{}, injected: map[string]int{},
	}
	srv := httptest.NewServer(p)
	p.URL = srv.URL
	tb.Cleanup(func() { srv.Close(); p.tr.CloseIdleConnections() })
	return p
}

// SetFaults changes the rates for the requests that follow.
func (p *Proxy) SetFaults(f Faults) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = f
}

// Counts returns requests by method and injected faults by kind.
func (p *Proxy) Counts() (requests, injected map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	requests, injected = map[string]int{}, map[string]int{}
	for k, v := range p.requests {
		requests[k] = v
	}
	for k, v := range p.injected {
		injected[k] = v
	}
	return requests, injected
}

// String summarizes the counts, e.g. "GET=120 PUT=80; 5xx=9 drop-before=4".
func (p *Proxy) String() string {
	r, i := p.Counts()
	return fmtCounts(r) + "; injected " + fmtCounts(i)
}

func fmtCounts(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// decide draws this request's fate under the lock.
func (p *Proxy) decide(method string) (delay time.Duration, fault string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests[method]++
	f := p.faults
	if f.Latency > 0 && p.rng.Float64() < f.LatencyRate {
		delay = time.Duration(p.rng.Int64N(int64(f.Latency) + 1))
		p.injected["latency"]++
	}
	switch x := p.rng.Float64(); {
	case x < f.Error5xx:
		fault = "5xx"
	case x < f.Error5xx+f.DropBefore:
		fault = "drop-before"
	case x < f.Error5xx+f.DropBefore+f.DropAfter:
		fault = "drop-after"
	case x < f.Error5xx+f.DropBefore+f.DropAfter+f.Truncate && method == http.MethodGet:
		fault = "truncate"
	}
	if fault != "" {
		p.injected[fault]++
	}
	return delay, fault
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	delay, fault := p.decide(r.Method)
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	switch fault {
	case "5xx":
		io.Copy(io.Discard, r.Body)
		status, code := http.StatusInternalServerError, "InternalError"
		if p.coin() {
			status, code = http.StatusServiceUnavailable, "SlowDown"
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected by s3test.Proxy</Message></Error>`, code)
		return
	case "drop-before":
		panic(http.ErrAbortHandler) // net/http closes the connection, logs nothing
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host
	out.ContentLength = r.ContentLength
	if r.ContentLength == 0 {
		out.Body = http.NoBody
	}
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if fault == "drop-after" {
		panic(http.ErrAbortHandler)
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if fault == "truncate" && resp.ContentLength > 1 {
		io.CopyN(w, resp.Body, resp.ContentLength/2)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	io.Copy(w, resp.Body)
}

func (p *Proxy) coin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rng.IntN(2) == 0
}
