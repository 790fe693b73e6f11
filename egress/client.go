package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"syscall"

	"github.com/warren-sandbox/warren/commands"
)

// Client returns the sandbox's commands.HTTPClient (what resident curl and
// wget use).
func (s *Sandbox) Client() commands.HTTPClient { return client{s} }

type client struct{ s *Sandbox }

var _ commands.HTTPClient = client{}

func (c client) Do(ctx context.Context, r *commands.HTTPRequest) (*commands.HTTPResponse, error) {
	if r.Insecure {
		if !c.s.e.cfg.AllowInsecure {
			return nil, &commands.NetError{Code: commands.NetInsecure, Msg: ErrInsecureRefused.Error()}
		}
		ctx = context.WithValue(ctx, insecureKey{}, true)
	}
	body := r.Body
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, &commands.NetError{Code: 3, Msg: "URL using bad/illegal format or missing URL"}
	}
	if body != nil {
		req.ContentLength = r.Length
		if r.Length == 0 {
			req.Body = http.NoBody
		}
	}
	for _, h := range r.Header {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "curl/8.5.0")
	}
	resp, err := c.s.transport().RoundTrip(req)
	if err != nil {
		return nil, netError(ctx, err)
	}
	out := &commands.HTTPResponse{Status: resp.StatusCode, Proto: resp.Proto, Body: resp.Body}
	if i := strings.IndexByte(resp.Status, ' '); i >= 0 {
		out.Reason = resp.Status[i+1:]
	}
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			out.Header = append(out.Header, commands.HeaderField{Name: k, Value: v})
		}
	}
	return out, nil
}

// netError classes err as curl would. Messages never carry a request's
// headers or URL (a secret's value may be in them by now).
func netError(ctx context.Context, err error) error {
	var de *DeniedError
	var re *ResolveError
	var ne net.Error
	switch {
	case errors.As(err, &de):
		return &commands.NetError{Code: commands.NetConnect, Msg: de.Error()}
	case errors.As(err, &re):
		return &commands.NetError{Code: commands.NetResolve, Msg: "Could not resolve host: " + re.Host}
	case errors.Is(err, ErrInsecureRefused):
		return &commands.NetError{Code: commands.NetInsecure, Msg: err.Error()}
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return &commands.NetError{Code: commands.NetTimeout, Msg: "Operation timed out"}
	case isCertError(err):
		return &commands.NetError{Code: commands.NetCert, Msg: "SSL certificate problem: " + certReason(err)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &commands.NetError{Code: commands.NetConnect, Msg: "Couldn't connect to server: connection refused"}
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) || strings.Contains(err.Error(), "tls:") {
		return &commands.NetError{Code: commands.NetTLS, Msg: "TLS connect error: " + err.Error()}
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return &commands.NetError{Code: commands.NetConnect, Msg: "Couldn't connect to server: " + oe.Err.Error()}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &commands.NetError{Code: 52, Msg: "Empty reply from server"}
	}
	return &commands.NetError{Code: 56, Msg: "Failure when receiving data from the peer: " + err.Error()}
}

func certReason(err error) string {
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) {
		return "unable to get local issuer certificate"
	}
	return err.Error()
}
