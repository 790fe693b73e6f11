package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/egress/egresstest"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// TestNative_EgressProxy: busybox in the native tier reaches an allowed
// host only through the sandbox's proxy (served inside its network
// namespace), and nothing without it. Loopback servers under test names;
// the operator's loopback allow is explicit.
func TestNative_EgressProxy(t *testing.T) {
	rt := requireNative(t)
	ca := egresstest.NewCA(t)
	var gotAuth atomic.Value
	gotAuth.Store("")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		io.WriteString(w, "hello native\n")
	})
	plain := ca.Serve(t, h)
	tlsUp := ca.Serve(t, h, "api.test")
	decoy := ca.Serve(t, h)
	lo := netip.MustParseAddr("127.0.0.1")
	eg := egress.New(egress.Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "decoy.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:    ca.Pool,
	})
	p := openParts(t, t.TempDir())
	busyboxImage(t, p.cat, "t1")
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: p.blobs, Deltas: sandbox.VFSDeltas(p.blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: p.meta,
		TickInterval: 20 * time.Millisecond, Native: rt, Egress: eg,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close(context.Background())
		p.close()
	})
	svc := m.For("t1")
	sb, err := svc.Create(context.Background(), api.CreateRequest{
		Image:   "busybox",
		Network: &api.NetworkPolicy{Allow: []string{"api.test"}},
		Secrets: []api.SecretSpec{{Name: "TOKEN", Value: "native-secret-value", Hosts: []string{"api.test"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ph := sb.Env["TOKEN"]
	for _, c := range []struct {
		name, script string
		exit         int
		out, err     string
		auth         string
	}{
		{"proxy variables", "/bin/busybox env | /bin/busybox grep -c '^https\\?_proxy=http://127.0.0.1:3128$'", 0, "2\n", "", ""},
		{"CA installed and pointed at", `/bin/busybox sh -c '/bin/busybox grep -c "BEGIN CERTIFICATE" $SSL_CERT_FILE $NODE_EXTRA_CA_CERTS'`, 0, "/etc/ssl/certs/warren-egress-bundle.pem:1\n/etc/ssl/certs/warren-egress-ca.pem:1\n", "", ""},
		{"environ holds the placeholder", "/bin/busybox tr '\\0' '\\n' < /proc/self/environ | /bin/busybox grep ^TOKEN=", 0, "TOKEN=" + ph + "\n", "", ""},
		{"allowed host through the proxy", "/bin/busybox wget -q -O - http://api.test:" + plain.Port() + "/", 0, "hello native\n", "", ""},
		{"https through the proxy gets the secret", `/bin/busybox wget -q -O - --header "Authorization: Bearer $TOKEN" https://api.test:` + tlsUp.Port() + "/", 0, "hello native\n", "", "Bearer native-secret-value"},
		{"denied host", "/bin/busybox wget -q -O - http://decoy.test:" + decoy.Port() + "/", 1, "", "403", ""},
		{"ignoring the proxy fails closed", "/bin/busybox wget -Y off -q -O - http://127.0.0.1:" + plain.Port() + "/", 1, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			gotAuth.Store("")
			out, errs, res := run(t, svc, sb.ID, c.script)
			if res.Exit != c.exit || !strings.Contains(out, c.out) || !strings.Contains(errs, c.err) {
				t.Fatalf("exit %d out %q err %q; want %d %q %q", res.Exit, out, errs, c.exit, c.out, c.err)
			}
			if strings.Contains(out+errs, "native-secret-value") {
				t.Fatal("the secret's value reached the sandbox")
			}
			if c.auth != "" && gotAuth.Load().(string) != c.auth {
				t.Fatalf("upstream saw %q, want %q", gotAuth.Load(), c.auth)
			}
		})
	}
	if decoy.Hits() != 0 {
		t.Fatalf("decoy reached %d times", decoy.Hits())
	}
}
