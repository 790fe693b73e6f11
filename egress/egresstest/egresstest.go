// Package egresstest serves HTTPS on loopback under test names: a
// throwaway CA and a server certificate for the names asked for, so tests
// reach "api.test" through a hosts override instead of the internet.
package egresstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// CA is a throwaway certificate authority.
type CA struct {
	Pool *x509.CertPool
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA valid for an hour.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "warren test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Pool: pool, cert: cert, key: key}
}

// CertPEM is the CA's certificate in PEM (for a sandbox's trust file).
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// Leaf issues a server certificate for names (and 127.0.0.1).
func (ca *CA) Leaf(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: names, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Server is an HTTPS (or HTTP) test server counting its requests.
type Server struct {
	*httptest.Server
	hits chan struct{}
}

// Hits returns how many requests reached the server.
func (s *Server) Hits() int { return len(s.hits) }

// Serve starts h on 127.0.0.1 over TLS under names (no names: plain HTTP).
// It is closed at the end of the test.
func (ca *CA) Serve(t testing.TB, h http.Handler, names ...string) *Server {
	t.Helper()
	s := &Server{hits: make(chan struct{}, 1<<16)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.hits <- struct{}{}:
		default:
		}
		h.ServeHTTP(w, r)
	}))
	if len(names) == 0 {
		s.Start()
	} else {
		s.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Leaf(t, names...)}}
		s.StartTLS()
	}
	t.Cleanup(s.Close)
	return s
}

// Port returns the server's port.
func (s *Server) Port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}
