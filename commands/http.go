package commands

import (
	"context"
	"fmt"
	"io"
)

// HTTPClient is a sandbox's only way to the network (System.Net): package
// egress implements it under the sandbox's policy. Commands never import
// net or net/http (internal/layers), so requests and responses are the
// plain values below. nil means the sandbox has no network.
type HTTPClient interface {
	// Do sends one request (no redirects followed: the caller decides,
	// so every hop is checked). The caller closes the response body.
	Do(ctx context.Context, req *HTTPRequest) (*HTTPResponse, error)
}

// HTTPRequest is one request.
type HTTPRequest struct {
	Method string
	URL    string
	Header []HeaderField // in order; a "Host" field sets the Host header
	Body   io.Reader     // nil: no body
	// Length is the body's size (-1: unknown, chunked).
	Length int64
	// Insecure skips the server certificate check (curl -k); the client
	// refuses it unless the operator allows it.
	Insecure bool
}

// HeaderField is one header line.
type HeaderField struct{ Name, Value string }

// HTTPResponse is one response.
type HTTPResponse struct {
	Status int    // 200
	Proto  string // "HTTP/1.1"
	Reason string // "OK"
	Header []HeaderField
	Body   io.ReadCloser
}

// Get returns the first value of header name (case-insensitive).
func (r *HTTPResponse) Get(name string) string {
	for _, h := range r.Header {
		if equalFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Network failure classes, numbered as curl's exit codes.
const (
	NetResolve  = 6  // could not resolve host
	NetConnect  = 7  // could not connect, or blocked by the egress policy
	NetTimeout  = 28 // operation timed out
	NetTLS      = 35 // TLS handshake failed
	NetCert     = 60 // server certificate not verified
	NetInsecure = 4  // -k refused (curl: a feature not enabled)
)

// NetError is a failed request: Code is one of the classes above, Msg says
// what happened (for a policy refusal, which policy and rule).
type NetError struct {
	Code int
	Msg  string
}

func (e *NetError) Error() string { return fmt.Sprintf("%s (%d)", e.Msg, e.Code) }
