package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warren-sandbox/warren/egress/egresstest"
)

func mustPolicy(t *testing.T, allow, deny []string) Policy {
	t.Helper()
	p, err := ParsePolicy(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseRule(t *testing.T) {
	for _, c := range []struct {
		in, err string
	}{
		{"example.com", ""}, {"*.example.com", ""}, {"*", ""}, {"10.0.0.0/8", ""},
		{"192.0.2.7", ""}, {"api.example.com:443", ""}, {"[::1]:443", ""}, {"fd00::/8", ""},
		{"*:443", ""},
		{"", "empty"}, {"exa mple.com", "character"}, {"a..b", "bad host name"},
		{"10.0.0.0/33", "bad CIDR"}, {"x.com:0", "bad port"}, {"x.com:99999", "bad port"},
		{"[::1", "missing ]"},
	} {
		_, err := ParseRule(c.in)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseRule(%q) = %v, want error containing %q", c.in, err, c.err)
		}
	}
}

func TestCheck(t *testing.T) {
	hosts, err := ParseHosts(strings.NewReader(`
# test names on loopback
127.0.0.2 api.test www.api.test
127.0.0.3 decoy.test
10.9.8.7  rebind.test
169.254.169.254 metadata.test
127.0.0.4 mixed.test
10.0.0.1 mixed.test
`))
	if err != nil {
		t.Fatal(err)
	}
	loop := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	ceiling := mustPolicy(t, []string{"*"}, []string{"banned.test"})
	for _, c := range []struct {
		name        string
		allow, deny []string
		operator    []netip.Prefix
		ceiling     Policy
		host        string
		port        int
		want        string // "" allowed, else a piece of the reason
		addr        string // the first address to dial when allowed
	}{
		{"exact name", []string{"api.test"}, nil, loop, Policy{}, "api.test", 443, "", "127.0.0.2"},
		{"default deny", nil, nil, loop, Policy{}, "api.test", 443, "not in the sandbox's allow list", ""},
		{"other name", []string{"api.test"}, nil, loop, Policy{}, "decoy.test", 443, "not in the sandbox's allow list", ""},
		{"suffix", []string{"*.api.test"}, nil, loop, Policy{}, "www.api.test", 80, "", "127.0.0.2"},
		{"suffix is not the apex", []string{"*.api.test"}, nil, loop, Policy{}, "api.test", 80, "not in the sandbox's allow list", ""},
		{"deny wins", []string{"*.test"}, []string{"decoy.test"}, loop, Policy{}, "decoy.test", 443, `deny rule "decoy.test"`, ""},
		{"port rule", []string{"api.test:443"}, nil, loop, Policy{}, "api.test", 8080, "not in the sandbox's allow list", ""},
		{"port rule ok", []string{"api.test:443"}, nil, loop, Policy{}, "api.test", 443, "", "127.0.0.2"},
		{"loopback needs the operator", []string{"api.test"}, nil, nil, Policy{}, "api.test", 443, "127.0.0.0/8, always denied", ""},
		{"rebinding to private", []string{"rebind.test"}, nil, loop, Policy{}, "rebind.test", 443, "resolves to 10.9.8.7 is in 10.0.0.0/8", ""},
		{"metadata", []string{"*"}, nil, loop, Policy{}, "metadata.test", 80, "169.254.0.0/16", ""},
		{"metadata literal", []string{"*"}, nil, loop, Policy{}, "169.254.169.254", 80, "169.254.0.0/16", ""},
		{"mixed: only the good address", []string{"mixed.test"}, nil, loop, Policy{}, "mixed.test", 443, "", "127.0.0.4"},
		{"literal in a denied range", []string{"*"}, nil, loop, Policy{}, "10.1.2.3", 80, "10.0.0.0/8", ""},
		{"literal mapped v6", []string{"*"}, nil, nil, Policy{}, "::ffff:127.0.0.1", 80, "127.0.0.0/8", ""},
		{"literal needs an address rule", []string{"api.test"}, nil, loop, Policy{}, "127.0.0.2", 80, "not in the sandbox's allow list", ""},
		{"literal cidr rule", []string{"127.0.0.0/24"}, nil, loop, Policy{}, "127.0.0.2", 80, "", "127.0.0.2"},
		{"cidr rule does not allow names", []string{"127.0.0.0/24"}, nil, loop, Policy{}, "api.test", 80, "not in the sandbox's allow list", ""},
		{"deny cidr on resolved", []string{"api.test"}, []string{"127.0.0.2"}, loop, Policy{}, "api.test", 80, `deny rule "127.0.0.2"`, ""},
		{"v6 loopback", []string{"*"}, nil, loop, Policy{}, "::1", 80, "::1/128", ""},
		{"unique local", []string{"*"}, nil, loop, Policy{}, "fd00::1", 80, "fc00::/7", ""},
		{"server deny", []string{"*"}, nil, loop, ceiling, "banned.test", 80, `server's deny rule "banned.test"`, ""},
		{"cannot widen the server", []string{"*"}, nil, loop, mustPolicy(t, []string{"api.test"}, nil), "decoy.test", 80, "server's allow list", ""},
		{"bad name", []string{"*"}, nil, loop, Policy{}, "a_b!.test", 80, "bad host name", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := New(Config{Hosts: hosts, AllowCIDRs: c.operator, Ceiling: c.ceiling})
			lookups := 0
			e.resolve = func(context.Context, string) ([]netip.Addr, error) {
				lookups++
				return nil, errors.New("no DNS in tests")
			}
			s := e.Sandbox("sb-t", mustPolicy(t, c.allow, c.deny))
			addrs, err := s.Check(context.Background(), c.host, c.port)
			if c.want == "" {
				if err != nil || addrs[0].String() != c.addr {
					t.Fatalf("got %v %v, want allowed to %s", addrs, err, c.addr)
				}
			} else {
				var de *DeniedError
				if !errors.As(err, &de) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %v %v, want denied with %q", addrs, err, c.want)
				}
				if !strings.Contains(err.Error(), "egress policy of sandbox sb-t") {
					t.Fatalf("%v does not name the policy", err)
				}
			}
			if lookups != 0 {
				t.Fatalf("%d DNS lookups: the hosts file or the policy should have decided", lookups)
			}
			audit, total := s.Audit()
			if total != 1 || len(audit) != 1 || audit[0].Allowed != (c.want == "") || audit[0].Host != c.host {
				t.Fatalf("audit %+v (total %d)", audit, total)
			}
		})
	}
}

func TestCheck_DeniedNameNotResolved(t *testing.T) {
	e := New(Config{})
	var lookups atomic.Int32
	e.resolve = func(context.Context, string) ([]netip.Addr, error) {
		lookups.Add(1)
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	s := e.Sandbox("sb", mustPolicy(t, []string{"allowed.test"}, nil))
	if _, err := s.Check(context.Background(), "exfil-data.denied.test", 443); err == nil {
		t.Fatal("denied name allowed")
	}
	if lookups.Load() != 0 {
		t.Fatal("a denied name was looked up (DNS exfiltration)")
	}
	if _, err := s.Check(context.Background(), "allowed.test", 443); err == nil || !strings.Contains(err.Error(), "127.0.0.0/8") {
		t.Fatalf("DNS answer to loopback: %v", err)
	}
	if lookups.Load() != 1 {
		t.Fatalf("%d lookups of an allowed name, want 1", lookups.Load())
	}
}

func TestDial_ChecksBeforeDialing(t *testing.T) {
	hosts := map[string][]netip.Addr{"rebind.test": {netip.MustParseAddr("10.0.0.9"), netip.MustParseAddr("127.0.0.5")}}
	for _, c := range []struct {
		name     string
		operator []netip.Prefix
		want     string // the address dialed, "" none
	}{
		{"no operator allow: nothing dialed", nil, ""},
		{"only the allowed address dialed", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, "127.0.0.5:443"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := New(Config{Hosts: hosts, AllowCIDRs: c.operator})
			var dialed []string
			e.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialed = append(dialed, addr)
				return nil, errors.New("test: not dialing")
			}
			s := e.Sandbox("sb", mustPolicy(t, []string{"rebind.test"}, nil))
			_, err := s.DialContext(context.Background(), "tcp", "rebind.test:443")
			if err == nil {
				t.Fatal("dial succeeded")
			}
			got := strings.Join(dialed, ",")
			if got != c.want {
				t.Fatalf("dialed %q, want %q (err %v)", got, c.want, err)
			}
		})
	}
}

func TestAudit_Bounded(t *testing.T) {
	e := New(Config{AuditSize: 4})
	s := e.Sandbox("sb", Policy{})
	for i := 0; i < 10; i++ {
		s.Check(context.Background(), fmt.Sprintf("h%d.test", i), 80)
	}
	audit, total := s.Audit()
	if total != 10 || len(audit) != 4 || audit[0].Host != "h6.test" || audit[3].Host != "h9.test" {
		t.Fatalf("audit %+v total %d", audit, total)
	}
	if a, d := e.Counts(); a != 0 || d != 10 {
		t.Fatalf("counts %d allowed %d denied", a, d)
	}
}

func TestParseHosts_Errors(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"1.2.3.4\n", "without a name"},
		{"nonsense name\n", "bad address"},
		{"1.2.3.4 bad!name\n", "bad host name"},
	} {
		if _, err := ParseHosts(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		}
	}
}

// TestTransport runs real HTTPS servers on loopback, named through the
// hosts override, with the operator's loopback allow made explicit.
func TestTransport(t *testing.T) {
	ca := egresstest.NewCA(t)
	var got atomic.Value
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization") + "|" + r.URL.RawQuery)
		io.WriteString(w, "ok")
	})
	upstream := ca.Serve(t, record, "api.test", "other.test")
	plain := ca.Serve(t, record)
	decoy := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), "decoy.test")
	lo := netip.MustParseAddr("127.0.0.1")
	e := New(Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "other.test": {lo}, "decoy.test": {lo}},
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, RootCAs: ca.Pool,
	})
	s := e.Sandbox("sb", mustPolicy(t, []string{"api.test", "other.test"}, nil))
	sec, err := NewSecret("TOKEN", "s3cr3t-value", []string{"api.test"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s.SetSecrets([]Secret{sec})
	rt := s.RoundTripper()
	do := func(rawurl, host string) (string, error) {
		req, _ := http.NewRequest("GET", rawurl, nil)
		req.Header.Set("Authorization", "Bearer "+sec.Placeholder)
		req.Host = host
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		return got.Load().(string), nil
	}
	for _, c := range []struct {
		name, url, host, want, err string
	}{
		{"secret host gets the value", "https://api.test:" + upstream.Port() + "/?k=" + sec.Placeholder, "", "Bearer s3cr3t-value|k=s3cr3t-value", ""},
		{"other host gets the placeholder", "https://other.test:" + upstream.Port() + "/", "", "Bearer " + sec.Placeholder + "|", ""},
		{"plain http gets the placeholder", "http://api.test:" + plain.Port() + "/", "", "Bearer " + sec.Placeholder + "|", ""},
		{"denied host", "https://decoy.test:" + decoy.Port() + "/", "", "", "not in the sandbox's allow list"},
		{"fronting a denied name", "https://api.test:" + upstream.Port() + "/", "decoy.test", "", "Host header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := do(c.url, c.host)
			if c.err == "" && (err != nil || out != c.want) || c.err != "" && err == nil {
				t.Fatalf("got %q %v, want %q / error %q", out, err, c.want, c.err)
			}
		})
	}
	if decoy.Hits() != 0 {
		t.Fatalf("decoy reached %d times", decoy.Hits())
	}
	// A policy update applies to the next request, even over a kept-alive
	// connection.
	s.SetPolicy(mustPolicy(t, []string{"other.test"}, nil))
	if _, err := do("https://api.test:"+upstream.Port()+"/", ""); err == nil {
		t.Fatal("request allowed after its host left the policy")
	}
}
