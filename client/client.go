// Package client is warren's Go SDK: it implements api.Service over the
// HTTP API, so code written against a Service runs in process or remote.
// Errors come back in their classes: errors.Is(err, errdefs.ErrNotFound)
// holds for a 404, and so on (the mapping is api.ToNative).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Client talks to one warren server with one API key (one tenant).
type Client struct {
	base string
	key  string
	hc   *http.Client
}

var _ api.Service = (*Client)(nil)

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the http.Client (default: one with a keep-alive
// transport sized for many concurrent requests).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

var defaultTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 1024
	return t
}()

// New returns a client of the server at base ("http://127.0.0.1:7711"; a
// bare host:port gets http://) using key.
func New(base, key string, opts ...Option) (*Client, error) {
	if base == "" {
		return nil, errors.New("client: no server address")
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: bad server address %q", base)
	}
	c := &Client{base: strings.TrimSuffix(u.String(), "/"), key: key, hc: &http.Client{Transport: defaultTransport}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// do sends a request and turns an error response into a classed error.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body io.Reader, contentType string) (*http.Response, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s %s: %w", errdefs.ErrUnavailable, method, path, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

func decodeError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var eb api.ErrorBody
	if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code == "" {
		msg := strings.TrimSpace(string(data))
		if msg == "" {
			msg = resp.Status
		}
		return api.ToNative(resp.StatusCode, "", msg)
	}
	return api.ToNative(resp.StatusCode, eb.Error.Code, eb.Error.Message)
}

// call sends in as JSON (nil: no body) and decodes the response into out
// (nil: discard).
func (c *Client) call(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	ct := ""
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, ct = bytes.NewReader(data), "application/json"
	}
	resp, err := c.do(ctx, method, path, q, body, ct)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: bad response: %w", method, path, err)
	}
	return nil
}

func sbPath(id string, rest ...string) string {
	return "/v1/sandboxes/" + url.PathEscape(id) + strings.Join(rest, "")
}

// Health checks /healthz.
func (c *Client) Health(ctx context.Context) error {
	return c.call(ctx, "GET", "/healthz", nil, nil, nil)
}

// CreateKey makes an API key for tenant (needs the admin key).
func (c *Client) CreateKey(ctx context.Context, tenant string) (api.Key, error) {
	var k api.Key
	err := c.call(ctx, "POST", "/v1/keys", nil, api.KeyRequest{Tenant: tenant}, &k)
	return k, err
}

func (c *Client) Create(ctx context.Context, req api.CreateRequest) (api.Sandbox, error) {
	var sb api.Sandbox
	err := c.call(ctx, "POST", "/v1/sandboxes", nil, req, &sb)
	return sb, err
}

func (c *Client) Get(ctx context.Context, id string) (api.Sandbox, error) {
	var sb api.Sandbox
	err := c.call(ctx, "GET", sbPath(id), nil, nil, &sb)
	return sb, err
}

func (c *Client) List(ctx context.Context, opts api.ListOptions) ([]api.Sandbox, error) {
	q := url.Values{}
	for k, v := range opts.Labels {
		q.Add("label", k+"="+v)
	}
	var sbs []api.Sandbox
	err := c.call(ctx, "GET", "/v1/sandboxes", q, nil, &sbs)
	return sbs, err
}

func (c *Client) Delete(ctx context.Context, id string) error {
	return c.call(ctx, "DELETE", sbPath(id), nil, nil, nil)
}

// Exec streams the exec's output to stdout and stderr as it arrives. A
// StdinReader is read whole first (streaming stdin over HTTP is done with
// background processes and WriteStdin).
func (c *Client) Exec(ctx context.Context, id string, req api.ExecRequest, stdout, stderr io.Writer) (api.ExecResult, error) {
	if req.StdinReader != nil {
		data, err := io.ReadAll(req.StdinReader)
		if err != nil {
			return api.ExecResult{}, fmt.Errorf("reading stdin: %w", err)
		}
		req.Stdin += string(data)
		req.StdinReader = nil
	}
	data, err := json.Marshal(req)
	if err != nil {
		return api.ExecResult{}, err
	}
	resp, err := c.do(ctx, "POST", sbPath(id, "/exec"), nil, bytes.NewReader(data), "application/json")
	if err != nil {
		if sent(err) {
			return api.ExecResult{}, &lostError{err}
		}
		return api.ExecResult{}, err
	}
	defer resp.Body.Close()
	res, err := readEvents(resp.Body, stdout, stderr)
	var se streamError
	if errors.As(err, &se) && ctx.Err() == nil {
		return res, &lostError{se.err}
	}
	return res, err
}

// ErrConnectionLost: the connection to the server broke after an exec was
// sent and before its exit status came back. The exec may have run, in
// part or whole, and its effects up to the loss may persist; its status is
// unknown. errors.Is(err, errdefs.ErrUnavailable) holds for it too.
var ErrConnectionLost = errors.New("connection lost during exec")

type lostError struct{ cause error }

func (e *lostError) Error() string {
	return fmt.Sprintf("connection lost during exec; its effects up to the loss may persist (%v)", e.cause)
}

func (e *lostError) Is(target error) bool {
	return target == ErrConnectionLost || errors.Is(target, errdefs.ErrUnavailable)
}

func (e *lostError) Unwrap() error { return e.cause }

// sent reports whether a transport error from do happened after the
// request may have reached the server (anything but a failed dial, a
// cancelled context or an error response).
func sent(err error) bool {
	var ue *url.Error
	if !errors.As(err, &ue) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}

// streamError is a broken exec stream (as opposed to an error the server
// reported in it, or one writing the output locally).
type streamError struct{ err error }

func (e streamError) Error() string { return e.err.Error() }
func (e streamError) Unwrap() error { return e.err }

// ExecWait runs req and returns the whole output in the result (the
// server buffers it; ?wait=true).
func (c *Client) ExecWait(ctx context.Context, id string, req api.ExecRequest) (api.ExecResult, error) {
	var res api.ExecResult
	err := c.call(ctx, "POST", sbPath(id, "/exec"), url.Values{"wait": {"true"}}, req, &res)
	return res, err
}

// readEvents decodes an NDJSON exec stream.
func readEvents(r io.Reader, stdout, stderr io.Writer) (api.ExecResult, error) {
	dec := json.NewDecoder(r)
	for {
		var ev api.ExecEvent
		if err := dec.Decode(&ev); err != nil {
			if err == io.EOF {
				return api.ExecResult{}, streamError{fmt.Errorf("%w: exec stream ended without an exit event", errdefs.ErrUnavailable)}
			}
			return api.ExecResult{}, streamError{fmt.Errorf("%w: bad exec stream: %w", errdefs.ErrUnavailable, err)}
		}
		switch {
		case ev.Error != nil:
			return api.ExecResult{}, api.ToNative(0, ev.Error.Code, ev.Error.Message)
		case ev.Exit != nil:
			return api.ExecResult{Exit: *ev.Exit, DurationMS: ev.DurationMS, CPUSeconds: ev.CPUSeconds, Limit: ev.Limit, Truncated: ev.Truncated,
				Durability: ev.Durability, Generation: ev.Generation, Rungs: ev.Rungs, Fallbacks: ev.Fallbacks}, nil
		}
		write := func(w io.Writer, s *string, b []byte) error {
			if w == nil {
				return nil
			}
			var err error
			if s != nil {
				_, err = io.WriteString(w, *s)
			} else if len(b) > 0 {
				_, err = w.Write(b)
			}
			return err
		}
		if err := write(stdout, ev.Stdout, ev.StdoutB64); err != nil {
			return api.ExecResult{}, err
		}
		if err := write(stderr, ev.Stderr, ev.StderrB64); err != nil {
			return api.ExecResult{}, err
		}
	}
}

func (c *Client) StartProcess(ctx context.Context, id string, req api.ExecRequest) (api.Process, error) {
	if req.StdinReader != nil {
		return api.Process{}, api.Errorf(errdefs.ErrInvalidArgument, "StdinReader does not travel over HTTP; use WriteStdin")
	}
	var p api.Process
	err := c.call(ctx, "POST", sbPath(id, "/processes"), nil, req, &p)
	return p, err
}

func (c *Client) ListProcesses(ctx context.Context, id string) ([]api.Process, error) {
	var ps []api.Process
	err := c.call(ctx, "GET", sbPath(id, "/processes"), nil, nil, &ps)
	return ps, err
}

func procPath(id string, pid int, rest string) string {
	return sbPath(id, "/processes/", strconv.Itoa(pid), rest)
}

func (c *Client) AttachProcess(ctx context.Context, id string, pid int, stdout, stderr io.Writer) (api.ExecResult, error) {
	resp, err := c.do(ctx, "GET", procPath(id, pid, "/attach"), nil, nil, "")
	if err != nil {
		return api.ExecResult{}, err
	}
	defer resp.Body.Close()
	return readEvents(resp.Body, stdout, stderr)
}

func (c *Client) WriteStdin(ctx context.Context, id string, pid int, data []byte, closeStdin bool) error {
	q := url.Values{}
	if closeStdin {
		q.Set("close", "true")
	}
	resp, err := c.do(ctx, "POST", procPath(id, pid, "/stdin"), q, bytes.NewReader(data), "application/octet-stream")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func (c *Client) SignalProcess(ctx context.Context, id string, pid int, signal string) error {
	return c.call(ctx, "POST", procPath(id, pid, "/signal"), nil, api.SignalRequest{Signal: signal}, nil)
}

func (c *Client) WaitProcess(ctx context.Context, id string, pid int) (api.ExecResult, error) {
	var res api.ExecResult
	err := c.call(ctx, "GET", procPath(id, pid, "/wait"), nil, nil, &res)
	return res, err
}

func (c *Client) ReadFile(ctx context.Context, id, p string, offset, length int64) ([]byte, error) {
	q := url.Values{"path": {p}}
	if offset > 0 {
		q.Set("offset", strconv.FormatInt(offset, 10))
	}
	if length > 0 {
		q.Set("length", strconv.FormatInt(length, 10))
	}
	resp, err := c.do(ctx, "GET", sbPath(id, "/files"), q, nil, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func (c *Client) WriteFile(ctx context.Context, id string, req api.WriteFileRequest) error {
	q := url.Values{"path": {req.Path}}
	if req.Mode != "" {
		q.Set("mode", req.Mode)
	}
	if req.Perm != 0 {
		q.Set("perm", strconv.FormatUint(uint64(req.Perm), 8))
	}
	if req.Durability != "" {
		q.Set("durability", req.Durability)
	}
	body := req.Data
	if body == nil {
		body = bytes.NewReader(nil)
	}
	resp, err := c.do(ctx, "PUT", sbPath(id, "/files"), q, body, "application/octet-stream")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if req.Ack != nil {
		req.Ack.Durability = resp.Header.Get("Warren-Durability")
		req.Ack.Generation, _ = strconv.ParseUint(resp.Header.Get("Warren-Generation"), 10, 64)
	}
	return nil
}

func (c *Client) ListFiles(ctx context.Context, id, p string, opts api.ListFilesOptions) ([]api.FileInfo, error) {
	q := url.Values{"path": {p}, "list": {"true"}}
	if opts.Recursive {
		q.Set("recursive", "true")
	}
	if opts.Depth != 0 {
		q.Set("depth", strconv.Itoa(opts.Depth))
	}
	var fis []api.FileInfo
	err := c.call(ctx, "GET", sbPath(id, "/files"), q, nil, &fis)
	return fis, err
}

func (c *Client) Stat(ctx context.Context, id, p string) (api.FileInfo, error) {
	var fi api.FileInfo
	err := c.call(ctx, "GET", sbPath(id, "/files"), url.Values{"path": {p}, "stat": {"true"}}, nil, &fi)
	return fi, err
}

func (c *Client) Mkdir(ctx context.Context, id, p string, perm uint32) error {
	return c.call(ctx, "POST", sbPath(id, "/files/mkdir"), nil, api.MkdirRequest{Path: p, Perm: perm}, nil)
}

func (c *Client) Move(ctx context.Context, id, from, to string) error {
	return c.call(ctx, "POST", sbPath(id, "/files/move"), nil, api.MoveRequest{From: from, To: to}, nil)
}

func (c *Client) Remove(ctx context.Context, id, p string, recursive bool) error {
	q := url.Values{"path": {p}}
	if recursive {
		q.Set("recursive", "true")
	}
	return c.call(ctx, "DELETE", sbPath(id, "/files"), q, nil, nil)
}

func (c *Client) UploadTar(ctx context.Context, id, dir string, tar io.Reader) error {
	resp, err := c.do(ctx, "PUT", sbPath(id, "/files"), url.Values{"path": {dir}, "format": {"tar"}}, tar, "application/x-tar")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func (c *Client) DownloadTar(ctx context.Context, id, dir string, w io.Writer) error {
	resp, err := c.do(ctx, "GET", sbPath(id, "/files"), url.Values{"path": {dir}, "format": {"tar"}}, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

func (c *Client) Hibernate(ctx context.Context, id string) (api.Sandbox, error) {
	var sb api.Sandbox
	err := c.call(ctx, "POST", sbPath(id, "/hibernate"), nil, nil, &sb)
	return sb, err
}

func (c *Client) Resume(ctx context.Context, id string) (api.Sandbox, error) {
	var sb api.Sandbox
	err := c.call(ctx, "POST", sbPath(id, "/resume"), nil, nil, &sb)
	return sb, err
}

func (c *Client) Fork(ctx context.Context, id string, count int) ([]api.Sandbox, error) {
	return c.ForkWith(ctx, id, api.ForkRequest{Count: count})
}

func (c *Client) ForkWith(ctx context.Context, id string, req api.ForkRequest) ([]api.Sandbox, error) {
	var res api.ForkResult
	err := c.call(ctx, "POST", sbPath(id, "/fork"), nil, req, &res)
	return res.Sandboxes, err
}

func (c *Client) CreateSnapshot(ctx context.Context, id, name string) (api.Snapshot, error) {
	var s api.Snapshot
	err := c.call(ctx, "POST", sbPath(id, "/snapshots"), nil, api.SnapshotRequest{Name: name}, &s)
	return s, err
}

func (c *Client) ListSnapshots(ctx context.Context) ([]api.Snapshot, error) {
	var ss []api.Snapshot
	err := c.call(ctx, "GET", "/v1/snapshots", nil, nil, &ss)
	return ss, err
}

func (c *Client) GetSnapshot(ctx context.Context, name string) (api.Snapshot, error) {
	var s api.Snapshot
	err := c.call(ctx, "GET", "/v1/snapshots/"+url.PathEscape(name), nil, nil, &s)
	return s, err
}

func (c *Client) DeleteSnapshot(ctx context.Context, name string) error {
	return c.call(ctx, "DELETE", "/v1/snapshots/"+url.PathEscape(name), nil, nil, nil)
}

// DeleteImage removes one of the tenant's images.
func (c *Client) DeleteImage(ctx context.Context, name string) error {
	return c.call(ctx, "DELETE", "/v1/images/"+url.PathEscape(name), nil, nil, nil)
}

func (c *Client) ListImages(ctx context.Context) ([]api.Image, error) {
	var imgs []api.Image
	err := c.call(ctx, "GET", "/v1/images", nil, nil, &imgs)
	return imgs, err
}

var _ api.ImageManager = (*Client)(nil)

// ListGenerations lists sandbox id's retained generations, oldest first.
func (c *Client) ListGenerations(ctx context.Context, id string) ([]api.Generation, error) {
	var gens []api.Generation
	err := c.call(ctx, "GET", "/v1/sandboxes/"+url.PathEscape(id)+"/generations", nil, nil, &gens)
	return gens, err
}

var _ api.Generations = (*Client)(nil)

// BuildImage uploads tar (a directory's files, or a Dockerfile's build
// context with its Dockerfile at the root) and builds it as the image name.
func (c *Client) BuildImage(ctx context.Context, name string, tar io.Reader) (api.Image, error) {
	return c.BuildImageWith(ctx, name, tar, api.ImageBuildOptions{})
}

// BuildImageWith is BuildImage with a named Dockerfile and ARG values.
func (c *Client) BuildImageWith(ctx context.Context, name string, tar io.Reader, opts api.ImageBuildOptions) (api.Image, error) {
	q := url.Values{"name": {name}}
	if opts.Dockerfile != "" {
		q.Set("dockerfile", opts.Dockerfile)
	}
	for k, v := range opts.BuildArgs {
		q.Add("build_arg", k+"="+v)
	}
	resp, err := c.do(ctx, "POST", "/v1/images", q, tar, "application/x-tar")
	if err != nil {
		return api.Image{}, err
	}
	defer resp.Body.Close()
	var img api.Image
	if err := json.NewDecoder(resp.Body).Decode(&img); err != nil {
		return api.Image{}, fmt.Errorf("POST /v1/images: bad response: %w", err)
	}
	return img, nil
}
