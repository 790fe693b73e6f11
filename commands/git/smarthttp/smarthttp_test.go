package smarthttp_test

import (
	"context"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/git/smarthttp"
)

// replies is a fault injector in front of nothing: each request gets the
// next canned response, and the requests are kept to look at.
type replies struct {
	resps []*commands.HTTPResponse
	seen  []*commands.HTTPRequest
}

func (r *replies) Do(ctx context.Context, req *commands.HTTPRequest) (*commands.HTTPResponse, error) {
	r.seen = append(r.seen, req)
	if len(r.resps) == 0 {
		return nil, &commands.NetError{Code: commands.NetConnect, Msg: "no more replies"}
	}
	resp := r.resps[0]
	r.resps = r.resps[1:]
	return resp, nil
}

func reply(status int, ctype, body string, hdr ...commands.HeaderField) *commands.HTTPResponse {
	if ctype != "" {
		hdr = append(hdr, commands.HeaderField{Name: "Content-Type", Value: ctype})
	}
	return &commands.HTTPResponse{Status: status, Header: hdr, Body: io.NopCloser(strings.NewReader(body))}
}

func TestAdvertiseFailures(t *testing.T) {
	loc := func(u string) commands.HeaderField { return commands.HeaderField{Name: "Location", Value: u} }
	redirects := make([]*commands.HTTPResponse, 7)
	for i := range redirects {
		redirects[i] = reply(302, "", "", loc("/again/info/refs?service=git-upload-pack"))
	}
	for _, c := range []struct {
		name  string
		url   string
		resps []*commands.HTTPResponse
		err   string
	}{
		{"forbidden", "https://h.test/r.git", []*commands.HTTPResponse{reply(403, "text/plain", "no")}, "unable to access 'https://h.test/r.git/': The requested URL returned error: 403"},
		{"no credentials", "https://h.test/r.git", []*commands.HTTPResponse{reply(401, "text/plain", "")}, "could not read Username for 'https://h.test': terminal prompts disabled"},
		{"bad credentials", "https://u:p@h.test/r.git", []*commands.HTTPResponse{reply(401, "text/plain", "")}, "Authentication failed for 'https://h.test/r.git/'"},
		{"dumb server", "https://h.test/r.git", []*commands.HTTPResponse{reply(200, "text/plain", "abc refs/heads/main\n")}, "is not a smart HTTP git server"},
		{"downgrade", "https://h.test/r.git", []*commands.HTTPResponse{reply(301, "", "", loc("http://h.test/r.git/info/refs?service=git-upload-pack"))}, "redirect from https to http refused"},
		{"redirect loop", "https://h.test/r.git", redirects, "Maximum (5) redirects followed"},
		{"garbage", "https://h.test/r.git", []*commands.HTTPResponse{reply(200, "application/x-git-upload-pack-advertisement", "zzzz")}, "invalid"},
		{"bad scheme", "ftp://h.test/r.git", nil, "URL using bad/illegal format"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := &replies{resps: c.resps}
			r, err := smarthttp.Open(cl, c.url, smarthttp.Options{})
			if err == nil {
				_, err = r.Advertise(context.Background(), smarthttp.UploadPack)
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %v, want %q", err, c.err)
			}
			if strings.Contains(err.Error(), "u:p@") {
				t.Errorf("credentials in the message: %v", err)
			}
		})
	}
}

// TestCredentials: URL userinfo becomes Basic credentials (never part of
// the URL asked for), and they do not follow a redirect to another host.
func TestCredentials(t *testing.T) {
	cl := &replies{resps: []*commands.HTTPResponse{
		reply(302, "", "", commands.HeaderField{Name: "Location", Value: "https://other.test/r.git/info/refs?service=git-upload-pack"}),
		reply(404, "text/plain", ""),
	}}
	r, err := smarthttp.Open(cl, "https://me:secret@h.test/r.git/", smarthttp.Options{Header: []commands.HeaderField{{Name: "X-Extra", Value: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL() != "https://h.test/r.git" {
		t.Errorf("URL() = %q", r.URL())
	}
	_, err = r.Advertise(context.Background(), smarthttp.UploadPack)
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("got %v", err)
	}
	auth := func(req *commands.HTTPRequest) string {
		for _, h := range req.Header {
			if h.Name == "Authorization" {
				return h.Value
			}
		}
		return ""
	}
	if got, want := auth(cl.seen[0]), "Basic "+base64.StdEncoding.EncodeToString([]byte("me:secret")); got != want || strings.Contains(cl.seen[0].URL, "secret") {
		t.Errorf("first request: auth %q url %q", got, cl.seen[0].URL)
	}
	if got := auth(cl.seen[1]); got != "" {
		t.Errorf("credentials followed to another host: %q", got)
	}
}
