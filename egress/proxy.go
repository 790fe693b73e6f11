package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServeProxy serves the sandbox's forward proxy on ln until ln is closed:
// CONNECT tunnels (HTTPS and anything else over TCP) and plain-HTTP
// forwarding, every request under the sandbox's policy. A tunnel whose TLS
// ClientHello names another server (SNI) than the CONNECT target is
// checked on that name too. A tunnel to a host that carries one of the
// sandbox's secrets is intercepted instead (intercept.go), so the secret
// can be swapped in; every other tunnel is end to end.
func (s *Sandbox) ServeProxy(ln net.Listener) error {
	ln = &limitListener{Listener: ln, slots: make(chan struct{}, MaxProxyConns)}
	srv := &http.Server{
		Handler:           proxy{s},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	err := srv.Serve(ln)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

type proxy struct{ s *Sandbox }

// MaxProxyConns bounds a sandbox's open proxy connections: past it, new
// ones wait in the listen backlog (a sandbox cannot exhaust the host's file
// descriptors through its proxy).
const MaxProxyConns = 256

type limitListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
}

// slotConn gives its slot back once, on the first Close.
type slotConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

// hopHeaders are a proxy's own, never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (p proxy) refuse(w http.ResponseWriter, err error) {
	code := http.StatusBadGateway
	var de *DeniedError
	var re *ResolveError
	switch {
	case errors.As(err, &de):
		code = http.StatusForbidden
	case errors.As(err, &re):
		code = http.StatusBadGateway
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Warren-Egress", "refused")
	w.WriteHeader(code)
	fmt.Fprintf(w, "warren egress proxy: %v\n", err)
}

func (p proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "warren egress proxy: want an absolute URL (this is a forward proxy)", http.StatusBadRequest)
		return
	}
	// Some clients (busybox wget) half-close after the request, which
	// cancels its context in net/http: the exchange goes on until the
	// response is written or fails, bounded by the transport's timeouts.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Minute)
	defer cancel()
	out := r.Clone(ctx)
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := p.s.transport().RoundTrip(out)
	if err != nil {
		p.refuse(w, err)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, portStr, err := net.SplitHostPort(r.Host)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil || port < 1 || port > 65535 {
		http.Error(w, "warren egress proxy: CONNECT wants host:port", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	addrs, err := p.s.Check(ctx, host, port)
	if err != nil {
		p.refuse(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "warren egress proxy: cannot tunnel over this connection", http.StatusInternalServerError)
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if p.s.carriesSecret(host, port) {
		p.intercept(ctx, conn, brw.Reader, host, port)
		return
	}
	// What the client sends first: for TLS, its ClientHello, whose SNI
	// must be the checked name or pass the policy itself.
	// A client that sends nothing for a while waits for the server to
	// speak first (SSH, SMTP): then there is no name to match.
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	first, sni, err := peekHello(brw.Reader)
	var ne net.Error
	if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
		return
	}
	conn.SetReadDeadline(time.Time{})
	if sni != "" && !strings.EqualFold(strings.TrimSuffix(sni, "."), host) {
		if _, err := p.s.check(ctx, sni, port); err != nil {
			p.s.record(Decision{Host: sni, Port: port, Reason: fmt.Sprintf("TLS server name %q differs from the CONNECT target %q and is not allowed", sni, host)})
			return
		}
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.s.e.cfg.DialTimeout)
	up, err := p.s.DialContext(context.WithValue(dctx, checkedKey{}, &checked{hostport: net.JoinHostPort(host, portStr), addrs: addrs}), "tcp", net.JoinHostPort(host, portStr))
	cancel()
	if err != nil {
		return
	}
	defer up.Close()
	if _, err := up.Write(first); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, brw.Reader); closeWrite(up); done <- struct{}{} }()
	go func() { io.Copy(conn, up); closeWrite(conn); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

// errHelloSeen stops the handshake peekHello runs once the ClientHello is
// parsed.
var errHelloSeen = errors.New("client hello seen")

// peekHello reads what a tunnel's client sends first. For TLS (a handshake
// record) it reads the whole ClientHello and returns its server name; the
// bytes read are returned to be forwarded as they were.
func peekHello(r *bufio.Reader) ([]byte, string, error) {
	b, err := r.Peek(1)
	if err != nil {
		return nil, "", err
	}
	if b[0] != 0x16 { // not TLS: nothing to match
		n := r.Buffered()
		out := make([]byte, n)
		io.ReadFull(r, out)
		return out, "", nil
	}
	var seen bytes.Buffer
	var sni string
	parsed := false
	c := &helloConn{r: io.TeeReader(r, &seen)}
	err = tls.Server(c, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		sni, parsed = h.ServerName, true
		return nil, errHelloSeen
	}}).Handshake()
	if !parsed {
		// A TLS record that is no ClientHello is not let through unnamed.
		return nil, "", fmt.Errorf("bad TLS ClientHello: %w", err)
	}
	return seen.Bytes(), sni, nil
}

// helloConn is a read-only net.Conn for peekHello's handshake.
type helloConn struct {
	net.Conn
	r io.Reader
}

func (c *helloConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *helloConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *helloConn) Close() error                     { return nil }
func (c *helloConn) SetDeadline(time.Time) error      { return nil }
func (c *helloConn) SetReadDeadline(time.Time) error  { return nil }
func (c *helloConn) SetWriteDeadline(time.Time) error { return nil }
func (c *helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
