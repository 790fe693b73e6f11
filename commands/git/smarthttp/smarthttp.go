// Package smarthttp is git's smart HTTP protocol (v0/v1, stateless RPC)
// over a sandbox's commands.HTTPClient, so the resident git reaches
// remotes only through the egress policy: every request, and every
// redirect hop, is one Do call the policy checks, and secret placeholders
// in its headers are swapped by the egress layer toward their hosts only.
// The wire formats are go-git's (plumbing/protocol/packp), which import
// neither net nor net/http; go-git's own HTTP transport is not used.
//
// Every byte read from a remote is charged to the sandbox's memory budget
// before it is kept, and the advertisement and the pack are capped on
// their own, so a hostile server (an endless pack, a huge advertisement)
// ends the command with a clear error.
package smarthttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"

	"github.com/warren-sandbox/warren/commands"
)

// Services.
const (
	UploadPack  = "git-upload-pack"
	ReceivePack = "git-receive-pack"
)

// Caps on what one remote may send, whatever the budget (which charges
// them too): an advertisement is refs (a large monorepo's is tens of MB),
// a pack is bounded by the sandbox's memory and disk first.
var (
	MaxAdvertisement int64 = 64 << 20
	MaxPack          int64 = 4 << 30
	maxRedirects           = 5
)

// Remote is one remote repository.
type Remote struct {
	client commands.HTTPClient
	base   string // https://host/path, no userinfo, no trailing slash
	shown  string // base as git's messages show it
	header []commands.HeaderField
	creds  bool // an Authorization header or URL credentials were given
	res    *commands.Reservation
	failed error // the first error a metered stream returned
	// Warn receives git's warnings ("redirecting to ...").
	Warn func(string)
}

// Options configure a Remote.
type Options struct {
	// Header is sent with every request: http.extraHeader values, in order.
	Header []commands.HeaderField
	// Budget is charged every byte read from the remote (nil: unlimited).
	Budget *commands.Reservation
}

// Open returns the remote at raw (an http:// or https:// URL; userinfo
// becomes Basic credentials, as git's).
func Open(client commands.HTTPClient, raw string, o Options) (*Remote, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &Error{Kind: Protocol, URL: raw, Msg: fmt.Sprintf("unable to access '%s': URL using bad/illegal format or missing URL", raw)}
	}
	r := &Remote{client: client, res: o.Budget}
	if u.User != nil {
		pw, _ := u.User.Password()
		cred := u.User.Username() + ":" + pw
		r.header = append(r.header, commands.HeaderField{Name: "Authorization", Value: "Basic " + base64.StdEncoding.EncodeToString([]byte(cred))})
		r.creds = true
		u.User = nil
	}
	for _, h := range o.Header {
		if strings.EqualFold(h.Name, "Authorization") {
			r.creds = true
		}
		r.header = append(r.header, h)
	}
	u.RawQuery, u.Fragment = "", ""
	r.base = strings.TrimRight(u.String(), "/")
	r.shown = r.base + "/"
	return r, nil
}

// URL is the remote's URL as git shows it (no credentials).
func (r *Remote) URL() string { return strings.TrimSuffix(r.shown, "/") }

// Kind classes a failure as git reports it.
type Kind int

// Failure classes.
const (
	Network  Kind = iota // unable to access (policy, resolve, connect, TLS, timeout)
	Auth                 // 401
	NotFound             // 404
	HTTP                 // another HTTP error status
	Protocol             // the server does not speak smart HTTP, or broke it
	Limit                // a cap on what the server may send
)

// Error is a failed exchange; Msg is git's text without "fatal: ".
type Error struct {
	Kind Kind
	URL  string
	Msg  string
	Err  error // the cause, when there is one (a *commands.NetError, a memory limit)
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func (r *Remote) netErr(err error) error {
	var ne *commands.NetError
	if errors.As(err, &ne) {
		msg := ne.Msg
		if ne.Code == commands.NetConnect {
			u, _ := url.Parse(r.base)
			port := u.Port()
			if port == "" {
				port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
			}
			msg = fmt.Sprintf("Failed to connect to %s port %s after 0 ms: %s", u.Hostname(), port, ne.Msg)
		}
		return &Error{Kind: Network, URL: r.shown, Msg: fmt.Sprintf("unable to access '%s': %s", r.shown, msg), Err: err}
	}
	if errors.Is(err, commands.ErrMemoryLimit) {
		return err
	}
	return &Error{Kind: Network, URL: r.shown, Msg: fmt.Sprintf("unable to access '%s': %v", r.shown, err), Err: err}
}

func (r *Remote) statusErr(resp *commands.HTTPResponse) error {
	switch resp.Status {
	case 401:
		if !r.creds {
			u, _ := url.Parse(r.base)
			return &Error{Kind: Auth, URL: r.shown, Msg: fmt.Sprintf("could not read Username for '%s://%s': terminal prompts disabled", u.Scheme, u.Host)}
		}
		return &Error{Kind: Auth, URL: r.shown, Msg: fmt.Sprintf("Authentication failed for '%s'", r.shown)}
	case 404:
		return &Error{Kind: NotFound, URL: r.shown, Msg: fmt.Sprintf("repository '%s' not found", r.shown)}
	}
	return &Error{Kind: HTTP, URL: r.shown, Msg: fmt.Sprintf("unable to access '%s': The requested URL returned error: %d", r.shown, resp.Status)}
}

func (r *Remote) do(ctx context.Context, method, u string, hdr []commands.HeaderField, body []byte) (*commands.HTTPResponse, error) {
	req := &commands.HTTPRequest{Method: method, URL: u, Length: -1,
		Header: append(append([]commands.HeaderField{
			{Name: "User-Agent", Value: "git/2.39.5"},
			{Name: "Pragma", Value: "no-cache"},
		}, hdr...), r.header...)}
	if body != nil {
		req.Body, req.Length = bytes.NewReader(body), int64(len(body))
	}
	resp, err := r.client.Do(ctx, req)
	if err != nil {
		return nil, r.netErr(err)
	}
	return resp, nil
}

// Advertise asks for service's advertised refs (GET info/refs). It follows
// redirects of this first request, each hop checked by the policy, and
// moves the remote's base with them, as git's http.followRedirects=initial.
func (r *Remote) Advertise(ctx context.Context, service string) (*packp.AdvRefs, error) {
	suffix := "/info/refs?service=" + service
	u := r.base + suffix
	var resp *commands.HTTPResponse
	for hops := 0; ; hops++ {
		var err error
		resp, err = r.do(ctx, "GET", u, []commands.HeaderField{{Name: "Accept", Value: "*/*"}}, nil)
		if err != nil {
			return nil, err
		}
		loc := resp.Get("Location")
		if resp.Status < 300 || resp.Status > 399 || loc == "" {
			break
		}
		drain(resp)
		if hops == maxRedirects {
			return nil, &Error{Kind: HTTP, URL: r.shown, Msg: fmt.Sprintf("unable to access '%s': Maximum (%d) redirects followed", r.shown, maxRedirects)}
		}
		cur, _ := url.Parse(u)
		next, err := cur.Parse(loc)
		if err != nil || (next.Scheme != "https" && next.Scheme != "http") {
			return nil, &Error{Kind: HTTP, URL: r.shown, Msg: fmt.Sprintf("unable to access '%s': bad redirect to %q", r.shown, loc)}
		}
		if cur.Scheme == "https" && next.Scheme == "http" {
			return nil, &Error{Kind: HTTP, URL: r.shown, Msg: fmt.Sprintf("unable to access '%s': redirect from https to http refused", r.shown)}
		}
		// Credentials do not follow to another host (git, curl).
		if !strings.EqualFold(next.Host, cur.Host) {
			var kept []commands.HeaderField
			for _, h := range r.header {
				if !strings.EqualFold(h.Name, "Authorization") {
					kept = append(kept, h)
				}
			}
			r.header = kept
		}
		u = next.String()
	}
	defer resp.Body.Close()
	if resp.Status != 200 {
		drain(resp)
		return nil, r.statusErr(resp)
	}
	if base, ok := strings.CutSuffix(u, suffix); ok && base != r.base {
		r.base = base
		r.shown = base + "/"
		if r.Warn != nil {
			r.Warn(fmt.Sprintf("warning: redirecting to %s", r.shown))
		}
	} else if !ok {
		return nil, &Error{Kind: Protocol, URL: r.shown, Msg: fmt.Sprintf("unable to update url base from redirection:\n  asked for: %s\n   redirect: %s", r.base+suffix, u)}
	}
	if ct := resp.Get("Content-Type"); ct != "application/x-"+service+"-advertisement" {
		return nil, &Error{Kind: Protocol, URL: r.shown, Msg: fmt.Sprintf("repository '%s' is not a smart HTTP git server (Content-Type %q; dumb HTTP is not supported here)", r.shown, ct)}
	}
	data, err := r.readAll(ctx, resp.Body, MaxAdvertisement, "ref advertisement")
	if err != nil {
		return nil, err
	}
	ar := packp.NewAdvRefs()
	if err := ar.Decode(bytes.NewReader(data)); err != nil {
		if errors.Is(err, packp.ErrEmptyAdvRefs) {
			return ar, nil // an empty repository
		}
		return nil, &Error{Kind: Protocol, URL: r.shown, Msg: fmt.Sprintf("invalid ref advertisement from '%s': %v", r.shown, err), Err: err}
	}
	if len(ar.Prefix) == 0 || !bytes.HasPrefix(ar.Prefix[0], []byte("# service="+service)) {
		return nil, &Error{Kind: Protocol, URL: r.shown, Msg: fmt.Sprintf("invalid server response; got '%s'", firstLine(ar.Prefix))}
	}
	return ar, nil
}

func firstLine(p [][]byte) string {
	if len(p) == 0 {
		return ""
	}
	return strings.TrimSpace(string(p[0]))
}

func drain(resp *commands.HTTPResponse) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// readAll reads body whole, charging it to the budget and capping it.
func (r *Remote) readAll(ctx context.Context, body io.Reader, max int64, what string) ([]byte, error) {
	var buf bytes.Buffer
	_, err := io.Copy(&buf, r.meter(ctx, body, max, what))
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// meter wraps what the remote sends: each read is charged to the budget
// before it is handed on, and more than max bytes, a done context or a
// broken connection end the stream with an error that says so.
func (r *Remote) meter(ctx context.Context, body io.Reader, max int64, what string) io.Reader {
	return &meter{ctx: ctx, r: body, max: max, what: what, rm: r}
}

type meter struct {
	ctx  context.Context
	r    io.Reader
	n    int64
	max  int64
	what string
	rm   *Remote
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.read(p)
	if err != nil && err != io.EOF && m.rm.failed == nil {
		m.rm.failed = err
	}
	return n, err
}

// Failure is the first error a stream from the remote ended with: the
// cause to report when a decoder (go-git's pack parser) flattened it into
// its own text.
func (r *Remote) Failure() error { return r.failed }

func (m *meter) read(p []byte) (int, error) {
	if err := m.ctx.Err(); err != nil {
		return 0, m.rm.netErr(&commands.NetError{Code: commands.NetTimeout, Msg: "Operation timed out"})
	}
	n, err := m.r.Read(p)
	if n > 0 {
		m.n += int64(n)
		if m.n > m.max {
			return 0, &Error{Kind: Limit, URL: m.rm.shown, Msg: fmt.Sprintf("the %s from '%s' is over %d MiB: refusing the rest", m.what, m.rm.shown, m.max>>20)}
		}
		if gerr := m.rm.res.Grow(int64(n)); gerr != nil {
			return 0, gerr
		}
	}
	if err != nil && err != io.EOF {
		if m.ctx.Err() != nil {
			return n, m.rm.netErr(&commands.NetError{Code: commands.NetTimeout, Msg: "Operation timed out"})
		}
		var e *Error
		if errors.As(err, &e) || errors.Is(err, commands.ErrMemoryLimit) {
			return n, err
		}
		return n, &Error{Kind: Network, URL: m.rm.shown, Msg: fmt.Sprintf("error reading the %s from '%s': %v", m.what, m.rm.shown, err), Err: err}
	}
	return n, err
}

// rpc POSTs body to service and returns the response body, metered.
func (r *Remote) rpc(ctx context.Context, service string, body []byte, what string, max int64) (io.ReadCloser, error) {
	resp, err := r.do(ctx, "POST", r.base+"/"+service, []commands.HeaderField{
		{Name: "Content-Type", Value: "application/x-" + service + "-request"},
		{Name: "Accept", Value: "application/x-" + service + "-result"},
	}, body)
	if err != nil {
		return nil, err
	}
	if resp.Status != 200 {
		drain(resp)
		return nil, r.statusErr(resp)
	}
	if ct := resp.Get("Content-Type"); ct != "application/x-"+service+"-result" {
		drain(resp)
		return nil, &Error{Kind: Protocol, URL: r.shown, Msg: fmt.Sprintf("invalid Content-Type %q from '%s'", ct, r.shown)}
	}
	return struct {
		io.Reader
		io.Closer
	}{r.meter(ctx, resp.Body, max, what), resp.Body}, nil
}

// Fetch sends an upload-pack request (wants, haves, done) and returns the
// decoded response and the pack stream (side band removed; band 3 is the
// server's error). The caller closes the pack.
func (r *Remote) Fetch(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, io.ReadCloser, error) {
	var buf bytes.Buffer
	if err := req.UploadRequest.Encode(&buf); err != nil {
		return nil, nil, fmt.Errorf("encoding the upload-pack request: %w", err)
	}
	if err := req.UploadHaves.Encode(&buf, false); err != nil {
		return nil, nil, fmt.Errorf("encoding the haves: %w", err)
	}
	if err := pktline.NewEncoder(&buf).EncodeString("done\n"); err != nil {
		return nil, nil, err
	}
	body, err := r.rpc(ctx, UploadPack, buf.Bytes(), "pack", MaxPack)
	if err != nil {
		return nil, nil, err
	}
	resp := packp.NewUploadPackResponse(req)
	if err := resp.Decode(body); err != nil {
		body.Close()
		return nil, nil, r.protoErr("upload-pack response", err)
	}
	var pack io.Reader = resp
	if t, ok := bandOf(req.Capabilities); ok {
		d := sideband.NewDemuxer(t, resp)
		pack = d
	}
	return resp, struct {
		io.Reader
		io.Closer
	}{pack, body}, nil
}

func (r *Remote) protoErr(what string, err error) error {
	var e *Error
	if errors.As(err, &e) || errors.Is(err, commands.ErrMemoryLimit) {
		return err
	}
	return &Error{Kind: Protocol, URL: r.shown, Msg: fmt.Sprintf("invalid %s from '%s': %v", what, r.shown, err), Err: err}
}

func bandOf(l *capability.List) (sideband.Type, bool) {
	switch {
	case l.Supports(capability.Sideband64k):
		return sideband.Sideband64k, true
	case l.Supports(capability.Sideband):
		return sideband.Sideband, true
	}
	return 0, false
}

// Push sends a receive-pack request (commands, then the pack in
// req.Packfile) and returns the server's report. Remote messages (band 2)
// go to progress.
func (r *Remote) Push(ctx context.Context, req *packp.ReferenceUpdateRequest, progress io.Writer) (*packp.ReportStatus, error) {
	var buf bytes.Buffer
	if err := req.Encode(&buf); err != nil {
		return nil, fmt.Errorf("encoding the receive-pack request: %w", err)
	}
	if err := r.res.Grow(int64(buf.Len())); err != nil {
		return nil, err
	}
	body, err := r.rpc(ctx, ReceivePack, buf.Bytes(), "push report", MaxAdvertisement)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var in io.Reader = body
	if t, ok := bandOf(req.Capabilities); ok {
		d := sideband.NewDemuxer(t, body)
		d.Progress = progress
		in = d
	}
	rs := packp.NewReportStatus()
	if !req.Capabilities.Supports(capability.ReportStatus) {
		io.Copy(io.Discard, in)
		return nil, nil
	}
	if err := rs.Decode(in); err != nil {
		return nil, r.protoErr("push report", err)
	}
	return rs, nil
}
