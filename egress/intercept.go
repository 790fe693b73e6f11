package egress

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Interception: HTTPS from the native tier to a host that carries one of
// the sandbox's secrets is terminated by the proxy with a certificate from
// the sandbox's own CA (made on first use, held in memory only, trusted by
// native programs through the bundle and variables the sandbox package
// installs), so the placeholder can be swapped for the value on the way
// out; the request then leaves over a fresh, verified TLS connection under
// the same policy. Hosts without secrets are tunneled end to end.

type interceptCA struct {
	once   sync.Once
	err    error
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    []byte
	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// CACert returns the PEM certificate of the sandbox's interception CA.
func (s *Sandbox) CACert() ([]byte, error) {
	ca, err := s.ca()
	if err != nil {
		return nil, err
	}
	return ca.pem, nil
}

func (s *Sandbox) ca() (*interceptCA, error) {
	ca := &s.icpt
	ca.once.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			ca.err = err
			return
		}
		serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
		tmpl := &x509.Certificate{
			SerialNumber: serial, Subject: pkix.Name{CommonName: "warren egress CA for " + s.id},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			ca.err = err
			return
		}
		ca.cert, _ = x509.ParseCertificate(der)
		ca.key, ca.leaves = key, map[string]*tls.Certificate{}
		ca.pem = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	})
	return ca, ca.err
}

// leaf returns the interception certificate for name.
func (ca *interceptCA) leaf(name string) (*tls.Certificate, error) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c, ok := ca.leaves[name]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}
	if len(ca.leaves) > 1024 { // bounded: names come from the sandbox
		ca.leaves = map[string]*tls.Certificate{}
	}
	ca.leaves[name] = c
	return c, nil
}

// carriesSecret reports whether a request to name:port may carry one of
// the sandbox's secrets (and so is intercepted).
func (s *Sandbox) carriesSecret(name string, port int) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	for _, sec := range s.Secrets() {
		for _, r := range sec.Hosts {
			if r.matchName(name, port) {
				return true
			}
		}
	}
	return false
}

// bufConn reads what a bufio.Reader already holds before the conn.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// intercept serves HTTP over TLS on a CONNECT tunnel to host:port,
// forwarding each request through the sandbox's transport.
func (p proxy) intercept(ctx context.Context, conn net.Conn, r *bufio.Reader, host string, port int) {
	ca, err := p.s.ca()
	if err != nil {
		return
	}
	tc := tls.Server(bufConn{conn, r}, &tls.Config{
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := strings.ToLower(strings.TrimSuffix(h.ServerName, "."))
			if name == "" {
				name = strings.ToLower(host)
			}
			if name != strings.ToLower(host) {
				if _, err := p.s.check(ctx, name, port); err != nil {
					p.s.record(Decision{Host: name, Port: port, Reason: fmt.Sprintf("TLS server name %q differs from the CONNECT target %q and is not allowed", name, host)})
					return nil, err
				}
			}
			return ca.leaf(name)
		},
	})
	tc.SetDeadline(time.Now().Add(30 * time.Second))
	if err := tc.HandshakeContext(ctx); err != nil {
		return
	}
	tc.SetDeadline(time.Time{})
	br := bufio.NewReader(tc)
	authority := net.JoinHostPort(host, strconv.Itoa(port))
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		req.URL.Scheme, req.URL.Host, req.RequestURI = "https", authority, ""
		for _, h := range hopHeaders {
			req.Header.Del(h)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		resp, err := p.s.transport().RoundTrip(req.WithContext(rctx))
		if err != nil {
			msg := fmt.Sprintf("warren egress proxy: %v\n", err)
			code := http.StatusBadGateway
			var de *DeniedError
			if errors.As(err, &de) {
				code = http.StatusForbidden
			}
			resp = &http.Response{StatusCode: code, ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
				Body: io.NopCloser(strings.NewReader(msg)), ContentLength: int64(len(msg))}
		}
		werr := resp.Write(tc)
		resp.Body.Close()
		cancel()
		if werr != nil || req.Close || resp.Close {
			return
		}
	}
}
