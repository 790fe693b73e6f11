package sandbox

import (
	"strings"

	"github.com/warren-sandbox/warren/native"
)

// The native tier's way out (README "Network"): a workspace's network
// namespace has only loopback, so native processes reach nothing unless
// they go through the sandbox's egress proxy, which the host serves on a
// listener inside that namespace. Tools that honour the usual proxy
// variables (curl, pip, npm, git, python's urllib) use it; anything else
// fails closed: there is no route out.

// ProxyAddr is where the proxy listens inside each workspace.
const ProxyAddr = "127.0.0.1:3128"

// startProxy serves b's egress proxy inside ws's network namespace. Without
// it native processes simply have no network, so a failure is logged, not
// fatal.
func (b *box) startProxy(ws *native.Workspace) {
	if b.net == nil {
		return
	}
	ln, err := ws.Listen(ProxyAddr)
	if err != nil {
		b.m.log.Warn("native egress proxy not started: native commands have no network", "sandbox", b.id, "err", err)
		return
	}
	go b.net.ServeProxy(ln)
}

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
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	for _, k := range proxyVars {
		out = append(out, k+"=http://"+ProxyAddr)
	}
	return append(out, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}
