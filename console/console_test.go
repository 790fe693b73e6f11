package console_test

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/console"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// startServer is a real node (store/dir, bbolt, real shell and vfs) with
// the console mounted, behind an HTTP server on loopback.
func startServer(t testing.TB) (*node.Node, *httptest.Server) {
	return startServerLog(t, nil)
}

func startServerLog(t testing.TB, log *slog.Logger) (*node.Node, *httptest.Server) {
	t.Helper()
	n, err := node.Open(context.Background(), node.Options{Dir: t.TempDir(), TickInterval: 20 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(n.Handler)
	t.Cleanup(func() {
		srv.Close()
		n.Close(context.Background())
	})
	return n, srv
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestRoutes: the console answers / and its assets with a strict CSP,
// and every API path is still the API's.
func TestRoutes(t *testing.T) {
	_, srv := startServer(t)
	cases := []struct {
		path, wantType string
		status         int
		console        bool // a console response (CSP header)
		jsonCode       string
	}{
		{"/", "text/html", 200, true, ""},
		{"/console/app.js", "text/javascript", 200, true, ""},
		{"/console/style.css", "text/css", 200, true, ""},
		{"/console/icon.svg", "image/svg+xml", 200, true, ""},
		{"/console/", "text/plain", 404, true, ""},
		{"/console/nope.js", "text/plain", 404, true, ""},
		{"/console/static/app.js", "text/plain", 404, true, ""},
		{"/healthz", "application/json", 200, false, ""},
		{"/metrics", "text/plain", 200, false, ""},
		{"/v1/openapi.json", "application/json", 200, false, ""},
		{"/v1/nope", "application/json", 404, false, "not_found"},
		{"/v1/sandboxes", "application/json", 401, false, "unauthenticated"},
		{"/index.html", "application/json", 404, false, "not_found"},
		{"/favicon.ico", "application/json", 404, false, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			resp, body := get(t, srv.URL+c.path)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, c.wantType) {
				t.Errorf("Content-Type %q, want %s", ct, c.wantType)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if c.console != (csp != "") {
				t.Errorf("Content-Security-Policy %q; console response: %v", csp, c.console)
			}
			if c.console && resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no X-Content-Type-Options: nosniff")
			}
			if c.jsonCode != "" {
				var e struct {
					Error struct{ Code string } `json:"error"`
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != c.jsonCode {
					t.Errorf("body %q: want a JSON error %s (%v)", body, c.jsonCode, err)
				}
			}
		})
	}
	// Same origin only: no CORS grant to another origin, for the page or
	// the API, so a page elsewhere cannot read either with a user's key.
	for _, path := range []string{"/", "/v1/sandboxes"} {
		for _, method := range []string{"GET", "OPTIONS"} {
			req, _ := http.NewRequest(method, srv.URL+path, nil)
			req.Header.Set("Origin", "http://elsewhere.test")
			req.Header.Set("Access-Control-Request-Method", "GET")
			req.Header.Set("Access-Control-Request-Headers", "authorization")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			for k := range resp.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("%s %s from another origin: %s: %s", method, path, k, resp.Header.Get(k))
				}
			}
		}
	}
	// A POST to / is not the console's: the API answers it as before.
	resp, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Security-Policy") != "" {
		t.Errorf("POST /: status %d, CSP %q; want the API's 404", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
}

// TestCSP: the policy forbids inline code and other origins, and the page
// needs neither: no inline script, no style attribute or element, no
// inline handler, and every asset it names is embedded.
func TestCSP(t *testing.T) {
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(console.CSP, want) {
			t.Errorf("CSP %q lacks %q", console.CSP, want)
		}
	}
	if strings.Contains(console.CSP, "unsafe-") {
		t.Errorf("CSP %q allows unsafe sources", console.CSP)
	}
	static := os.DirFS("static")
	bad := []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), // a script with a body
		regexp.MustCompile(`(?i)<style`),
		regexp.MustCompile(`(?i)\sstyle\s*=`),
		regexp.MustCompile(`(?i)\son[a-z]+\s*=`),
		regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//`),
		regexp.MustCompile(`\.innerHTML\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function\(`),
	}
	err := fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		for _, re := range bad {
			if loc := re.FindIndex(data); loc != nil {
				t.Errorf("%s: %q breaks the CSP rules (%s)", p, data[loc[0]:min(loc[1]+20, len(data))], re)
			}
		}
		// Every local module and asset referenced exists.
		for _, m := range regexp.MustCompile(`(?:from |import\(|src=|href=)"(\./|/console/)([a-z.]+)"`).FindAllSubmatch(data, -1) {
			if _, err := fs.Stat(static, string(m[2])); err != nil {
				t.Errorf("%s names %s%s, which is not embedded", p, m[1], m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
