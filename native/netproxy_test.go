package native_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/egress/egresstest"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
)

// TestListen_ProxyInNetns: the egress proxy served by the host on a
// listener inside a Debian workspace's network namespace. python3 (urllib:
// CONNECT for HTTPS, like pip) reaches an allowed host through it, a denied
// host is refused, and with the proxy ignored nothing is reachable (the
// namespace has only loopback). Loopback servers under test names; the
// operator's loopback allow is explicit.
func TestListen_ProxyInNetns(t *testing.T) {
	rt, _ := requireRuntime(t)
	root, img := debianImage(t)
	ca := egresstest.NewCA(t)
	up := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.Host+" "+r.Header.Get("Authorization"))
	}), "api.test", "decoy.test", "vault.test")
	lo := netip.MustParseAddr("127.0.0.1")
	eg := egress.New(egress.Config{
		Hosts:      map[string][]netip.Addr{"api.test": {lo}, "decoy.test": {lo}, "vault.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:    ca.Pool,
	})
	p, _ := egress.ParsePolicy([]string{"api.test", "vault.test"}, nil)
	sb := eg.Sandbox("netproxy", p)
	sec, _ := egress.NewSecret("TOKEN", "value-for-vault", []string{"vault.test"}, false)
	sb.SetSecrets([]egress.Secret{sec})
	sbCA, err := sb.CACert()
	if err != nil {
		t.Fatal(err)
	}

	ws, v, ln := proxiedWorkspace(t, rt, "netproxy", root, img, sb, map[string][]byte{"/root/ca.pem": ca.CertPEM(), "/root/sandbox-ca.pem": sbCA})

	fetch := `import os, ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=os.environ.get("CAFILE", "/root/ca.pem"))
req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + os.environ.get("TOKEN", "")})
try:
    print(urllib.request.urlopen(req, context=ctx, timeout=5).read().decode())
except Exception as e:
    print("ERR", e); sys.exit(3)
`
	if err := v.WriteFile("/root/fetch.py", []byte(fetch), 0o644); err != nil {
		t.Fatal(err)
	}
	proxied := append(append([]string{}, testEnv...), "https_proxy=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128", "TOKEN="+sec.Placeholder)
	intercepted := append(append([]string{}, proxied...), "CAFILE=/root/sandbox-ca.pem")
	for _, c := range []struct {
		name string
		env  []string
		url  string
		exit int
		out  string
	}{
		{"allowed through CONNECT", proxied, "https://api.test:" + up.Port() + "/", 0, "hello api.test:" + up.Port() + " Bearer " + sec.Placeholder},
		{"secret's host intercepted, value swapped in", intercepted, "https://vault.test:" + up.Port() + "/", 0, "hello vault.test:" + up.Port() + " Bearer value-for-vault"},
		{"denied through CONNECT", proxied, "https://decoy.test:" + up.Port() + "/", 3, "403"},
		{"ignoring the proxy fails closed", testEnv, "https://127.0.0.1:" + up.Port() + "/", 3, "ERR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb strings.Builder
			res, err := ws.Exec(context.Background(), native.Cmd{Path: "/usr/bin/python3", Args: []string{"python3", "/root/fetch.py", c.url}, Env: c.env, Dir: "/root", Stdout: &out, Stderr: &errb})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.exit || !strings.Contains(out.String(), c.out) {
				t.Fatalf("status %d out %q err %q; want %d %q", res.Status, out.String(), lastLines(errb.String(), 5), c.exit, c.out)
			}
		})
	}
	if up.Hits() != 2 {
		t.Fatalf("upstream saw %d requests, want 2 (the allowed ones)", up.Hits())
	}
	// The listener goes with the workspace.
	ws.Close()
	if _, err := ln.Accept(); err == nil {
		t.Fatal("the proxy listener outlived its workspace")
	}
}

// proxiedWorkspace opens a workspace of the Debian image (root, img) whose
// network namespace serves sb's egress proxy on 127.0.0.1:3128, after
// writing files (path -> contents) into its tree. Closed with the test;
// the listener is returned so a test can see it close with the workspace.
func proxiedWorkspace(t *testing.T, rt *native.Runtime, id, root, img string, sb *egress.Sandbox, files map[string][]byte) (*native.Workspace, *vfs.FS, net.Listener) {
	t.Helper()
	v := vfs.New(vfs.Options{Base: os.DirFS(root)})
	for p, data := range files {
		if err := v.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := rt.Workspace(context.Background(), id, img, v, native.Limits{Memory: 512 << 20, Pids: 256})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ln, err := ws.Listen("127.0.0.1:3128")
	if err != nil {
		t.Fatal(err)
	}
	go sb.ServeProxy(ln)
	return ws, v, ln
}
