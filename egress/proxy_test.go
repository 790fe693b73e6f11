package egress

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/egress/egresstest"
)

func TestProxy(t *testing.T) {
	ca := egresstest.NewCA(t)
	up := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "upstream "+r.Host) }), "api.test", "decoy.test")
	plain := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "plain") }))
	lo := netip.MustParseAddr("127.0.0.1")
	e := New(Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "decoy.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	s := e.Sandbox("sb-proxy", mustPolicy(t, []string{"api.test"}, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.ServeProxy(ln)
	t.Cleanup(func() { ln.Close() })
	proxyURL, _ := url.Parse("http://" + ln.Addr().String())
	client := func(serverName string) *http.Client {
		return &http.Client{Transport: &http.Transport{
			Proxy:           http.ProxyURL(proxyURL),
			TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: serverName},
		}}
	}
	for _, c := range []struct {
		name, url, sni string
		status         int
		body           string // contains; "" with status 0 means the request fails
	}{
		{"CONNECT allowed", "https://api.test:" + up.Port() + "/", "", 200, "upstream api.test"},
		{"CONNECT denied", "https://decoy.test:" + up.Port() + "/", "", 0, ""},
		{"SNI of a denied name through an allowed tunnel", "https://api.test:" + up.Port() + "/", "decoy.test", 0, ""},
		{"plain forward allowed", "http://api.test:" + plain.Port() + "/", "", 200, "plain"},
		{"plain forward denied", "http://decoy.test:" + plain.Port() + "/", "", 403, "not in the sandbox's allow list"},
		{"plain forward to a literal", "http://127.0.0.1:" + plain.Port() + "/", "", 403, "not in the sandbox's allow list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := client(c.sni).Get(c.url)
			if c.status == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("request went through: %d", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.body) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, body, c.status, c.body)
			}
		})
	}
	if up.Hits() != 1 { // only the allowed HTTPS request; the fronted one never arrived
		t.Fatalf("upstream saw %d requests, want 1", up.Hits())
	}
	audit, _ := s.Audit()
	found := false
	for _, d := range audit {
		found = found || strings.Contains(d.Reason, `TLS server name "decoy.test" differs`)
	}
	if !found {
		t.Fatalf("no SNI refusal in the audit: %+v", audit)
	}
}

// TestProxy_Intercept: HTTPS through the proxy to a secret's host is
// terminated with the sandbox's CA so the secret reaches the upstream;
// another host is tunneled end to end and gets the placeholder.
func TestProxy_Intercept(t *testing.T) {
	ca := egresstest.NewCA(t)
	seen := make(chan string, 4)
	up := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Host + " " + r.Header.Get("Authorization")
		io.WriteString(w, "ok")
	}), "api.test", "other.test")
	lo := netip.MustParseAddr("127.0.0.1")
	e := New(Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "other.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:    ca.Pool,
	})
	s := e.Sandbox("sb-icpt", mustPolicy(t, []string{"api.test", "other.test"}, nil))
	sec, _ := NewSecret("TOKEN", "intercepted-value", []string{"api.test"}, false)
	s.SetSecrets([]Secret{sec})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.ServeProxy(ln)
	t.Cleanup(func() { ln.Close() })
	caPEM, err := s.CACert()
	if err != nil {
		t.Fatal(err)
	}
	pool := ca.Pool.Clone()
	pool.AppendCertsFromPEM(caPEM)
	proxyURL, _ := url.Parse("http://" + ln.Addr().String())
	cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, c := range []struct{ url, want string }{
		{"https://api.test:" + up.Port() + "/", "api.test:" + up.Port() + " Bearer intercepted-value"},
		{"https://api.test:" + up.Port() + "/again", "api.test:" + up.Port() + " Bearer intercepted-value"},
		{"https://other.test:" + up.Port() + "/", "other.test:" + up.Port() + " Bearer " + sec.Placeholder},
	} {
		req, _ := http.NewRequest("GET", c.url, nil)
		req.Header.Set("Authorization", "Bearer "+sec.Placeholder)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-seen; got != c.want {
			t.Fatalf("%s: upstream saw %q, want %q", c.url, got, c.want)
		}
		// The intercepted host's certificate is the sandbox CA's; the
		// other's is the upstream's own.
		issuer := resp.TLS.PeerCertificates[0].Issuer.CommonName
		if want := map[bool]string{true: "warren egress CA for sb-icpt", false: "warren test CA"}[strings.Contains(c.url, "api.test")]; issuer != want {
			t.Fatalf("%s: certificate issued by %q, want %q", c.url, issuer, want)
		}
	}
}

func TestProxy_ConnectionLimit(t *testing.T) {
	s := New(Config{}).Sandbox("sb-limit", Policy{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.ServeProxy(ln)
	t.Cleanup(func() { ln.Close() })
	var held []net.Conn
	for range MaxProxyConns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// One more: accepted by the kernel, not served while the others are open.
	extra, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	io.WriteString(extra, "GET http://x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n")
	extra.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, _ := extra.Read(make([]byte, 1)); n != 0 {
		t.Fatal("a connection past the limit was served")
	}
	held[0].Close()
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := extra.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "403") {
		t.Fatalf("after a slot freed: %q %v, want the 403 of a denied host", buf[:n], err)
	}
	for _, c := range held[1:] {
		c.Close()
	}
}
