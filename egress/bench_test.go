package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/egress/egresstest"
)

// percentiles reports p50/p95/p99 of per-request latencies (n = b.N).
func percentiles(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.95), "p95-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(float64(len(ds)), "n")
}

func benchSandbox(b *testing.B, roots *x509.CertPool) *Sandbox {
	lo := netip.MustParseAddr("127.0.0.1")
	e := New(Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "vault.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:    roots,
	})
	// A policy of realistic size: the allowed name is the last rule.
	var allow []string
	for _, h := range []string{"pypi.org", "*.pythonhosted.org", "registry.npmjs.org", "github.com", "*.github.com", "*.githubusercontent.com", "proxy.golang.org", "10.20.0.0/16", "vault.test", "api.test"} {
		allow = append(allow, h)
	}
	p, err := ParsePolicy(allow, []string{"evil.test", "192.0.2.0/24"})
	if err != nil {
		b.Fatal(err)
	}
	return e.Sandbox("sb-bench", p)
}

// BenchmarkCheck is the policy decision alone (name rules, hosts lookup,
// address checks, one audit entry).
func BenchmarkCheck(b *testing.B) {
	s := benchSandbox(b, nil)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := s.Check(ctx, "api.test", 443); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkRequest is one GET to a loopback server, kept-alive: straight
// through net/http (the baseline), through the resident egress transport,
// and through the native tier's forward proxy (plain forwarding; the
// proxy's own hop is loopback TCP too); over TLS the same, plus a CONNECT
// tunnel and an intercepted tunnel (a secret's host: TLS terminated and
// re-made by the proxy). The difference to direct is the egress overhead
// per request.
func BenchmarkRequest(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	ca := egresstest.NewCA(b)
	tup := ca.Serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), "api.test", "vault.test")
	tport := tup.Port()
	s := benchSandbox(b, ca.Pool)
	sec, _ := NewSecret("TOKEN", "v", []string{"vault.test"}, false)
	s.SetSecrets([]Secret{sec})
	sbCA, _ := s.CACert()
	both := ca.Pool.Clone()
	both.AppendCertsFromPEM(sbCA)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go s.ServeProxy(ln)
	proxyURL, _ := url.Parse("http://" + ln.Addr().String())
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
		url  string
	}{
		{"direct", &http.Transport{}, "http://127.0.0.1:" + port + "/"},
		{"egress", s.RoundTripper(), "http://api.test:" + port + "/"},
		{"proxy", &http.Transport{Proxy: http.ProxyURL(proxyURL)}, "http://api.test:" + port + "/"},
		{"tls-direct", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}, "https://127.0.0.1:" + tport + "/"},
		{"tls-egress", s.RoundTripper(), "https://api.test:" + tport + "/"},
		{"tls-proxy-connect", &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: both}}, "https://api.test:" + tport + "/"},
		{"tls-proxy-intercept", &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: both}}, "https://vault.test:" + tport + "/"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				req, _ := http.NewRequest("GET", c.url, nil)
				resp, err := c.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ds = append(ds, time.Since(t0))
			}
			percentiles(b, ds)
		})
	}
}
