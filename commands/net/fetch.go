package net

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// request is one transfer as curl and wget describe it; fetch sends it
// through the sandbox's commands.HTTPClient and follows redirects itself, so
// every hop passes the egress policy on its own.
type request struct {
	method   string
	header   []commands.HeaderField
	body     []byte
	hasBody  bool
	follow   bool
	maxRedir int
	insecure bool
	trusted  bool // --location-trusted: credentials follow to other hosts
}

// result is how a transfer ended.
type result struct {
	resp      *commands.HTTPResponse
	url       string // the last URL asked for
	redirects int
	redirect  string // the Location not followed
}

// errTooManyRedirects is curl's status 47.
var errTooManyRedirects = errors.New("too many redirects")

func fetch(ctx context.Context, client commands.HTTPClient, raw string, rq request) (result, error) {
	res := result{url: raw}
	method, body, hasBody := rq.method, rq.body, rq.hasBody
	header := rq.header
	first, _ := url.Parse(raw)
	for {
		hr := &commands.HTTPRequest{Method: method, URL: res.url, Header: header, Insecure: rq.insecure, Length: -1}
		if hasBody {
			hr.Body, hr.Length = bytes.NewReader(body), int64(len(body))
		}
		resp, err := client.Do(ctx, hr)
		if err != nil {
			return res, err
		}
		res.resp = resp
		loc := resp.Get("Location")
		if resp.Status < 300 || resp.Status > 399 || resp.Status == 304 || loc == "" {
			return res, nil
		}
		cur, _ := url.Parse(res.url)
		next, err := cur.Parse(loc)
		if err != nil {
			return res, nil
		}
		res.redirect = next.String()
		if !rq.follow {
			return res, nil
		}
		if res.redirects >= rq.maxRedir {
			resp.Body.Close()
			return res, errTooManyRedirects
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		res.redirects++
		res.url, res.redirect = next.String(), ""
		// 301/302/303 turn a POST into a GET, as curl and browsers do;
		// 307/308 keep the method and body.
		if resp.Status == 303 || (resp.Status == 301 || resp.Status == 302) && method == "POST" {
			if method != "HEAD" {
				method = "GET"
			}
			hasBody, body = false, nil
		}
		// Credentials do not follow to another host (curl since 7.58).
		if !rq.trusted && first != nil && !strings.EqualFold(next.Host, first.Host) {
			var kept []commands.HeaderField
			for _, h := range header {
				if !strings.EqualFold(h.Name, "Authorization") && !strings.EqualFold(h.Name, "Cookie") {
					kept = append(kept, h)
				}
			}
			header = kept
		}
	}
}

// retryable reports whether --retry tries again after err / status:
// timeouts and the transient HTTP statuses curl retries (a policy refusal
// is not transient).
func retryable(err error, status int) bool {
	if err != nil {
		var ne *commands.NetError
		return errors.As(err, &ne) && ne.Code == commands.NetTimeout
	}
	switch status {
	case 408, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// netCode returns err's curl status and message.
func netCode(err error) (int, string) {
	var ne *commands.NetError
	if errors.As(err, &ne) {
		return ne.Code, ne.Msg
	}
	if errors.Is(err, errTooManyRedirects) {
		return 47, "Maximum redirects followed"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return commands.NetTimeout, "Operation timed out"
	}
	return 56, err.Error()
}

// hostPort names u's host and port as curl's messages do.
func hostPort(u *url.URL) (string, string) {
	return u.Hostname(), portOf(u)
}

// readData reads curl's @file / wget's --post-file from the sandbox ("-"
// is stdin), charging what it holds to the sandbox's memory budget (the
// command runs under commands.Reserving).
func readData(ctx context.Context, inv *commands.Invocation, name string) ([]byte, error) {
	f, err := inv.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := commands.ReservationFrom(ctx)
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	for {
		n, err := f.Read(chunk)
		if n > 0 {
			if res != nil {
				if gerr := res.Grow(int64(n)); gerr != nil {
					return nil, gerr
				}
			}
			buf.Write(chunk[:n])
		}
		if err == io.EOF {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func statusLine(resp *commands.HTTPResponse) string {
	proto := resp.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	return fmt.Sprintf("%s %d %s", proto, resp.Status, resp.Reason)
}
