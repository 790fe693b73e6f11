package sandbox

import (
	"path"
	"strings"

	"github.com/warren-sandbox/warren/egress"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
)

// The native tier's way out (README "Network"): a workspace's network
// namespace has only loopback, so native processes reach nothing unless
// they go through the sandbox's egress proxy, which the host serves on a
// listener inside that namespace. Tools that honour the usual proxy
// variables (curl, pip, npm, git, python's urllib) use it; anything else
// fails closed: there is no route out.

// ProxyAddr is where the proxy listens inside each workspace.
const ProxyAddr = "127.0.0.1:3128"

// Where the interception CA (egress/intercept.go) is installed: the CA
// alone, and the image's own roots with it (for variables that replace the
// trust store rather than add to it).
const (
	caFile     = "/etc/ssl/certs/warren-egress-ca.pem"
	bundleFile = "/etc/ssl/certs/warren-egress-bundle.pem"
)

// systemBundles are where images keep their roots (Debian, Alpine; Fedora).
var systemBundles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"}

// startProxy serves b's egress proxy inside ws's network namespace and
// installs the interception CA in fsys. Without the proxy native processes
// simply have no network, so a failure is logged, not fatal.
func (b *box) startProxy(ws *native.Workspace, fsys *vfs.FS) {
	if b.net == nil {
		return
	}
	if err := installCA(b.net, fsys); err != nil {
		b.m.log.Warn("native egress CA not installed: HTTPS to secrets' hosts will not verify", "sandbox", b.id, "err", err)
	}
	ln, err := ws.Listen(ProxyAddr)
	if err != nil {
		b.m.log.Warn("native egress proxy not started: native commands have no network", "sandbox", b.id, "err", err)
		return
	}
	go b.net.ServeProxy(ln)
}

// installCA writes the sandbox's interception CA, alone and after the
// image's roots. The CA's key never leaves memory; a new workspace (after a
// restart: a new CA) writes them again.
func installCA(n *egress.Sandbox, fsys *vfs.FS) error {
	caPEM, err := n.CACert()
	if err != nil {
		return err
	}
	var bundle []byte
	for _, p := range systemBundles {
		if data, err := fsys.ReadFile(p); err == nil {
			bundle = append(data, '\n')
			break
		}
	}
	bundle = append(bundle, caPEM...)
	if err := fsys.MkdirAll(path.Dir(caFile), 0o755); err != nil {
		return err
	}
	if err := fsys.WriteFile(caFile, caPEM, 0o644); err != nil {
		return err
	}
	return fsys.WriteFile(bundleFile, bundle, 0o644)
}

// caVars point the usual TLS stacks at the bundle (NODE_EXTRA_CA_CERTS adds
// to node's roots, so it gets the CA alone).
var caVars = []string{"SSL_CERT_FILE=" + bundleFile, "REQUESTS_CA_BUNDLE=" + bundleFile, "CURL_CA_BUNDLE=" + bundleFile,
	"GIT_SSL_CAINFO=" + bundleFile, "PIP_CERT=" + bundleFile, "NODE_EXTRA_CA_CERTS=" + caFile}

// proxyVars are what native commands get, upper and lower case (curl reads
// only the lower-case http_proxy; others prefer the upper case).
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// nativeEnv is env with the proxy variables set (the sandbox's own values
// of them give way: the proxy is the only way out anyway).
func (b *box) nativeEnv(env []string) []string {
	if b.net == nil {
		return env
	}
	out := make([]string, 0, len(env)+len(proxyVars)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
			"CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT", "NODE_EXTRA_CA_CERTS":
			continue
		}
		out = append(out, kv)
	}
	for _, k := range proxyVars {
		out = append(out, k+"=http://"+ProxyAddr)
	}
	out = append(out, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
	return append(out, caVars...)
}
