package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// transport is a sandbox's http.RoundTripper: every request is checked
// (so every redirect hop, since nothing here follows them), its Host
// header must be the URL's host or pass the policy itself, and secrets are
// swapped in on the way to their hosts.
type transport struct {
	s        *Sandbox
	verified *http.Transport
	insecure *http.Transport // curl -k, only when the node allows it
}

func (s *Sandbox) transport() *transport {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if s.tr == nil {
		mk := func(skip bool) *http.Transport {
			return &http.Transport{
				DialContext:           s.DialContext,
				TLSClientConfig:       &tls.Config{RootCAs: s.e.cfg.RootCAs, InsecureSkipVerify: skip},
				ForceAttemptHTTP2:     true,
				MaxIdleConnsPerHost:   2,
				IdleConnTimeout:       30 * time.Second,
				TLSHandshakeTimeout:   10 * time.Second,
				ExpectContinueTimeout: time.Second,
			}
		}
		s.tr = &transport{s: s, verified: mk(false)}
		if s.e.cfg.AllowInsecure {
			s.tr.insecure = mk(true)
		}
	}
	return s.tr
}

// RoundTripper returns the sandbox's http.RoundTripper.
func (s *Sandbox) RoundTripper() http.RoundTripper { return s.transport() }

func (t *transport) CloseIdleConnections() {
	t.verified.CloseIdleConnections()
	if t.insecure != nil {
		t.insecure.CloseIdleConnections()
	}
}

// insecureKey marks a request that asked to skip certificate checks.
type insecureKey struct{}

// ErrInsecureRefused is curl -k on a node that does not allow it.
var ErrInsecureRefused = errors.New("skipping TLS certificate verification (-k/--insecure) is not allowed on this server")

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	closeBody := func() {
		if req.Body != nil {
			req.Body.Close()
		}
	}
	scheme := req.URL.Scheme
	if scheme != "http" && scheme != "https" {
		closeBody()
		return nil, fmt.Errorf("unsupported protocol scheme %q", scheme)
	}
	host := req.URL.Hostname()
	port := 80
	if scheme == "https" {
		port = 443
	}
	if p := req.URL.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			closeBody()
			return nil, fmt.Errorf("bad port %q", p)
		}
		port = n
	}
	ctx := req.Context()
	addrs, err := t.s.Check(ctx, host, port)
	if err != nil {
		closeBody()
		return nil, err
	}
	// The Host header (and so, over TLS, what the server routes on) must be
	// the checked name, or pass the policy on its own: no fronting a
	// denied name behind an allowed one.
	if req.Host != "" {
		hh := req.Host
		if h, _, err := net.SplitHostPort(hh); err == nil {
			hh = h
		}
		if !strings.EqualFold(hh, host) {
			if _, err := t.s.check(ctx, hh, port); err != nil {
				closeBody()
				de := &DeniedError{Sandbox: t.s.id, Host: hh, Port: port, Reason: fmt.Sprintf("Host header %q differs from the URL's host %q and is not allowed", req.Host, host)}
				t.s.record(Decision{Host: hh, Port: port, Reason: de.Reason})
				return nil, de
			}
		}
	}
	rt := t.verified
	if ins, _ := ctx.Value(insecureKey{}).(bool); ins {
		if t.insecure == nil {
			closeBody()
			return nil, ErrInsecureRefused
		}
		rt = t.insecure
	}
	req = req.Clone(context.WithValue(ctx, checkedKey{}, &checked{hostport: net.JoinHostPort(host, strconv.Itoa(port)), addrs: addrs}))
	if err := t.s.inject(req, port); err != nil {
		return nil, err
	}
	return rt.RoundTrip(req)
}

// isCertError reports a server certificate that did not verify.
func isCertError(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci)
}
