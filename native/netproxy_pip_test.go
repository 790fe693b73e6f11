package native_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/egress/egresstest"
	"github.com/warren-sandbox/warren/native"
)

// wheel builds a pure-Python wheel of one module.
func wheel(t *testing.T, name, version, code string) []byte {
	t.Helper()
	files := []struct{ path, data string }{
		{name + "/__init__.py", code},
		{name + "-" + version + ".dist-info/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"},
		{name + "-" + version + ".dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: warren-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, _ := zw.Create(f.path)
		w.Write([]byte(f.data))
		sum := sha256.Sum256([]byte(f.data))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.path, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.data))
	}
	rec := name + "-" + version + ".dist-info/RECORD"
	fmt.Fprintf(&record, "%s,,\n", rec)
	w, _ := zw.Create(rec)
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestListen_PipThroughProxy: pip in a Debian workspace installs from an
// allowed package index (HTTPS on loopback under a test name) through the
// egress proxy, and fails against a denied one.
func TestListen_PipThroughProxy(t *testing.T) {
	rt, _ := requireRuntime(t)
	root, img := debianImage(t)
	ca := egresstest.NewCA(t)
	whl := wheel(t, "warrenprobe", "0.1", "VALUE = 42\n")
	sum := sha256.Sum256(whl)
	const file = "warrenprobe-0.1-py3-none-any.whl"
	index := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/warrenprobe/":
			fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"/files/%s#sha256=%s\">%s</a></body></html>\n", file, hex.EncodeToString(sum[:]), file)
		case "/files/" + file:
			w.Write(whl)
		default:
			http.NotFound(w, r)
		}
	}), "pypi.test", "evil-pypi.test")
	lo := netip.MustParseAddr("127.0.0.1")
	eg := egress.New(egress.Config{
		Hosts:      map[string][]netip.Addr{"pypi.test": {lo}, "evil-pypi.test": {lo}},
		HostsOnly:  true,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	p, _ := egress.ParsePolicy([]string{"pypi.test"}, nil)
	sb := eg.Sandbox("pip", p)
	ws, _, _ := proxiedWorkspace(t, rt, "pip", root, img, sb, map[string][]byte{"/root/ca.pem": ca.CertPEM()})
	env := append(append([]string{}, testEnv...), "LANG=C.UTF-8", "https_proxy=http://127.0.0.1:3128",
		"PIP_CERT=/root/ca.pem", "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1")
	pip := func(host, target string) (native.Result, string) {
		var out, errb strings.Builder
		res, err := ws.Exec(context.Background(), native.Cmd{Path: "/usr/bin/python3",
			Args: []string{"python3", "-m", "pip", "install", "--break-system-packages", "--retries", "0", "--timeout", "5",
				"--index-url", "https://" + host + ":" + index.Port() + "/simple/", "--target", target, "warrenprobe"},
			Env: env, Dir: "/root", Stdout: &out, Stderr: &errb})
		if err != nil {
			t.Fatal(err)
		}
		return res, out.String() + errb.String()
	}
	if res, out := pip("pypi.test", "/root/site"); res.Status != 0 {
		t.Fatalf("pip from the allowed index: status %d\n%s", res.Status, lastLines(out, 10))
	}
	var out strings.Builder
	res, err := ws.Exec(context.Background(), native.Cmd{Path: "/usr/bin/python3",
		Args: []string{"python3", "-c", "import sys; sys.path.insert(0, '/root/site'); import warrenprobe; print(warrenprobe.VALUE)"},
		Env:  env, Dir: "/root", Stdout: &out, Stderr: &out})
	if err != nil || res.Status != 0 || out.String() != "42\n" {
		t.Fatalf("import after pip: %v %d %q", err, res.Status, out.String())
	}
	hits := index.Hits()
	if res, out := pip("evil-pypi.test", "/root/site2"); res.Status == 0 {
		t.Fatalf("pip from a denied index succeeded:\n%s", lastLines(out, 10))
	}
	if index.Hits() != hits {
		t.Fatalf("the denied index was reached (%d requests)", index.Hits()-hits)
	}
}
