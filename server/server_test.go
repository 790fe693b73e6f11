package server_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/sandbox/sandboxtest"
	"github.com/warren-sandbox/warren/server"
)

// testNode is a real node (store/dir, bbolt, real shell and vfs) behind a
// real HTTP server on loopback.
type testNode struct {
	n     *node.Node
	srv   *httptest.Server
	admin *client.Client
	seq   atomic.Int64
}

func startNode(t testing.TB, opts node.Options) *testNode {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.TickInterval == 0 {
		opts.TickInterval = 20 * time.Millisecond
	}
	n, err := node.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(n.Handler)
	admin, err := client.New(srv.URL, n.AdminKey)
	if err != nil {
		t.Fatal(err)
	}
	tn := &testNode{n: n, srv: srv, admin: admin}
	t.Cleanup(func() {
		srv.Close()
		n.Close(context.Background())
	})
	return tn
}

// tenant returns a client with a key of a new tenant.
func (tn *testNode) tenant(t testing.TB) (*client.Client, string) {
	t.Helper()
	name := fmt.Sprintf("tenant%d", tn.seq.Add(1))
	k, err := tn.admin.CreateKey(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(tn.srv.URL, k.Key)
	if err != nil {
		t.Fatal(err)
	}
	return c, k.Key
}

// TestSuite runs the behaviour suite over HTTP with the Go client.
func TestSuite(t *testing.T) {
	tn := startNode(t, node.Options{})
	sandboxtest.Run(t, sandboxtest.Harness{
		NewTenant: func(t *testing.T) api.Service { c, _ := tn.tenant(t); return c },
	})
}

// TestOpenAPI_MatchesRoutes: every route is documented and every
// documented operation is served.
func TestOpenAPI_MatchesRoutes(t *testing.T) {
	tn := startNode(t, node.Options{})
	resp, err := http.Get(tn.srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi = %q, want 3.x", doc.OpenAPI)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if m == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(documented)
	served := server.RoutesForTest(tn.n.Handler)
	sort.Strings(served)
	if strings.Join(documented, "\n") != strings.Join(served, "\n") {
		t.Fatalf("OpenAPI and routes differ.\ndocumented:\n%s\n\nserved:\n%s", strings.Join(documented, "\n"), strings.Join(served, "\n"))
	}
	// Every documented path parameter is a real route wildcard.
	re := regexp.MustCompile(`\{[a-z]+\}`)
	for _, p := range documented {
		for _, w := range re.FindAllString(p, -1) {
			if w != "{id}" && w != "{pid}" && w != "{name}" {
				t.Errorf("%s: unknown wildcard %s", p, w)
			}
		}
	}
}

// TestOpenAPI_RetryAfter: every route the node sheds under pressure
// documents its 503 with the Retry-After header clients back off by, and so
// does every 507 (write budget).
func TestOpenAPI_RetryAfter(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]struct {
				Headers map[string]json.RawMessage `json:"headers"`
			} `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPIForTest(), &doc); err != nil {
		t.Fatal(err)
	}
	retries := func(ref string) bool {
		r, ok := doc.Components.Responses[strings.TrimPrefix(ref, "#/components/responses/")]
		return ok && r.Headers["Retry-After"] != nil
	}
	type op struct {
		Responses map[string]struct {
			Ref string `json:"$ref"`
		} `json:"responses"`
	}
	for _, rt := range server.ShedRoutesForTest() {
		method, path, _ := strings.Cut(rt, " ")
		var o op
		if err := json.Unmarshal(doc.Paths[path][strings.ToLower(method)], &o); err != nil {
			t.Fatalf("%s: %v", rt, err)
		}
		if r, ok := o.Responses["503"]; !ok || !retries(r.Ref) {
			t.Errorf("%s sheds load but documents no 503 with Retry-After", rt)
		}
	}
	for path, ops := range doc.Paths {
		for m, raw := range ops {
			var o op
			if json.Unmarshal(raw, &o) != nil {
				continue
			}
			if r, ok := o.Responses["507"]; ok && !retries(r.Ref) {
				t.Errorf("%s %s: 507 without Retry-After", m, path)
			}
		}
	}
}

type rawCase struct {
	name, method, path, key string
	body                    io.Reader
	status                  int
	code                    string
}

// TestErrors: bad inputs get the right 4xx and the error body.
func TestErrors(t *testing.T) {
	tn := startNode(t, node.Options{MaxFileBytes: 8 << 20, MaxSandboxesPerTenant: 3})
	c, key := tn.tenant(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{Limits: api.Limits{DiskBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	busy, err := c.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "read x", Session: "bg"})
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey := tn.tenant(t)
	id := sb.ID
	big := bytes.NewReader(make([]byte, 100<<20))
	cases := []rawCase{
		{"malformed JSON", "POST", "/v1/sandboxes", key, strings.NewReader(`{"labels":`), 400, "invalid_argument"},
		{"unknown field", "POST", "/v1/sandboxes", key, strings.NewReader(`{"imgae":"x"}`), 400, "invalid_argument"},
		{"trailing data", "POST", "/v1/sandboxes", key, strings.NewReader(`{} {}`), 400, "invalid_argument"},
		{"wrong type", "POST", "/v1/sandboxes/" + id + "/fork", key, strings.NewReader(`{"count":"3"}`), 400, "invalid_argument"},
		{"huge JSON", "POST", "/v1/sandboxes", key, strings.NewReader(`{"labels":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`), 413, "too_large"},
		{"100 MB file", "PUT", "/v1/sandboxes/" + id + "/files?path=/big", key, big, 413, "too_large"},
		{"dotdot path", "GET", "/v1/sandboxes/" + id + "/files?path=/tmp/../../etc/passwd", key, nil, 400, "invalid_argument"},
		{"relative path", "GET", "/v1/sandboxes/" + id + "/files?path=etc/passwd", key, nil, 400, "invalid_argument"},
		{"no path", "GET", "/v1/sandboxes/" + id + "/files", key, nil, 400, "invalid_argument"},
		{"unknown query", "GET", "/v1/sandboxes/" + id + "/files?path=/&bogus=1", key, nil, 400, "invalid_argument"},
		{"absent sandbox", "GET", "/v1/sandboxes/sb-absent", key, nil, 404, "not_found"},
		{"absent file", "GET", "/v1/sandboxes/" + id + "/files?path=/nope", key, nil, 404, "not_found"},
		{"other tenant", "GET", "/v1/sandboxes/" + id, otherKey, nil, 404, "not_found"},
		{"other tenant exec", "POST", "/v1/sandboxes/" + id + "/exec", otherKey, strings.NewReader(`{"script":"true"}`), 404, "not_found"},
		{"wrong key", "GET", "/v1/sandboxes", "wk_wrong", nil, 401, "unauthenticated"},
		{"no key", "GET", "/v1/sandboxes", "", nil, 401, "unauthenticated"},
		{"not admin", "POST", "/v1/keys", key, strings.NewReader(`{"tenant":"x"}`), 403, "permission_denied"},
		{"busy hibernate", "POST", "/v1/sandboxes/" + id + "/hibernate", key, nil, 409, "failed_precondition"},
		{"fork count", "POST", "/v1/sandboxes/" + id + "/fork", key, strings.NewReader(`{"count":-1}`), 422, "unprocessable"},
		{"bad pid", "GET", "/v1/sandboxes/" + id + "/processes/abc", key, nil, 400, "invalid_argument"},
		{"exec nothing", "POST", "/v1/sandboxes/" + id + "/exec", key, strings.NewReader(`{}`), 422, "unprocessable"},
		{"disk quota", "PUT", "/v1/sandboxes/" + id + "/files?path=/q", key, bytes.NewReader(make([]byte, 1<<20)), 507, "insufficient_storage"},
		{"native", "POST", "/v1/sandboxes", key, strings.NewReader(`{"limits":{"native":true}}`), 501, "not_implemented"},
		{"no route", "GET", "/v1/nothing", key, nil, 404, "not_found"},
		{"wrong method", "PATCH", "/v1/sandboxes", key, nil, 405, "method_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { doRaw(t, tn.srv.URL, c) })
	}
	// Tenant quota: 3 sandboxes, the 4th is 429.
	for i := 0; ; i++ {
		_, err := c.Create(ctx, api.CreateRequest{})
		if err != nil {
			doRaw(t, tn.srv.URL, rawCase{"quota", "POST", "/v1/sandboxes", key, strings.NewReader(`{}`), 429, "resource_exhausted"})
			break
		}
		if i > 5 {
			t.Fatal("tenant quota of 3 not enforced")
		}
	}
	c.WriteStdin(ctx, id, busy.PID, nil, true)
}

func doRaw(t *testing.T, base string, c rawCase) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, c.body)
	if err != nil {
		t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != c.status {
		t.Fatalf("%s %s: status %d, want %d; body %s", c.method, c.path, resp.StatusCode, c.status, data)
	}
	if c.code == "" {
		return
	}
	var eb api.ErrorBody
	if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code != c.code || eb.Error.Message == "" {
		t.Fatalf("%s %s: body %s, want code %q and a message", c.method, c.path, data, c.code)
	}
}

// TestStreamingExec: output arrives before the exec ends, as NDJSON.
func TestStreamingExec(t *testing.T) {
	tn := startNode(t, node.Options{})
	c, key := tn.tenant(t)
	sb, err := c.Create(context.Background(), api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", tn.srv.URL+"/v1/sandboxes/"+sb.ID+"/exec", strings.NewReader(`{"script":"echo first; sleep 1; echo second >&2; exit 7"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("Content-Type %q", ct)
	}
	dec := json.NewDecoder(resp.Body)
	var ev api.ExecEvent
	if err := dec.Decode(&ev); err != nil || ev.Stdout == nil || *ev.Stdout != "first\n" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	if d := time.Since(t0); d > 900*time.Millisecond {
		t.Fatalf("first output took %v: not streamed", d)
	}
	var lines []string
	for {
		var ev api.ExecEvent
		if err := dec.Decode(&ev); err != nil {
			break
		}
		b, _ := json.Marshal(ev)
		lines = append(lines, string(b))
	}
	if len(lines) != 2 || !strings.Contains(lines[0], `"stderr":"second\n"`) || !strings.HasPrefix(lines[1], `{"exit":7`) {
		t.Fatalf("events %v", lines)
	}
	// The buffered form.
	res, err := c.ExecWait(context.Background(), sb.ID, api.ExecRequest{Script: "echo a; echo b >&2; exit 2"})
	if err != nil || res.Stdout != "a\n" || res.Stderr != "b\n" || res.Exit != 2 {
		t.Fatalf("ExecWait = %+v, %v", res, err)
	}
}

// TestHealthAndMetrics: /healthz answers and /metrics has the series.
// TestExecOutputCoalesced: a flood of small writes travels as a few
// large events (one per 64 KiB or per outputDelay), in order, with the
// streams' interleaving kept, and the exec's output is exactly the script's.
func TestExecOutputCoalesced(t *testing.T) {
	tn := startNode(t, node.Options{})
	_, key := tn.tenant(t)
	cases := []struct {
		name, script string
		want         string // stdout+stderr in event order, stderr marked with !
		maxEvents    int    // besides one per OutputDelay of the exec's run and one per 64 KiB
	}{
		{"flood", `for i in $(seq 20000); do echo $i; done`, "", 3},
		{"interleaved", `echo a; echo b >&2; echo c; echo d >&2`, "a\n!b\nc\n!d\n", 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := client.New(tn.srv.URL, key)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := cl.Create(context.Background(), api.CreateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(api.ExecRequest{Script: tc.script})
			req, _ := http.NewRequest("POST", tn.srv.URL+"/v1/sandboxes/"+sb.ID+"/exec", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			t0 := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			var got strings.Builder
			events, exit := 0, -1
			for {
				var ev api.ExecEvent
				if err := dec.Decode(&ev); err != nil {
					break
				}
				events++
				switch {
				case ev.Stdout != nil:
					got.WriteString(*ev.Stdout)
				case ev.Stderr != nil:
					got.WriteString("!" + *ev.Stderr)
				case ev.Exit != nil:
					exit = *ev.Exit
				}
			}
			want := tc.want
			if want == "" {
				var b strings.Builder
				for i := 1; i <= 20000; i++ {
					fmt.Fprintf(&b, "%d\n", i)
				}
				want = b.String()
			}
			if exit != 0 || got.String() != want {
				t.Fatalf("exit %d, output %.200q; want exit 0 and %.200q", exit, got.String(), want)
			}
			// 20,000 writes in the flood: uncoalesced, one event each.
			if max := tc.maxEvents + int(time.Since(t0)/server.OutputDelay) + len(want)>>16; events > max {
				t.Fatalf("%d events for %d bytes in %v: output not coalesced (want at most %d)", events, len(want), time.Since(t0), max)
			}
		})
	}
}

func TestHealthAndMetrics(t *testing.T) {
	tn := startNode(t, node.Options{})
	c, _ := tn.tenant(t)
	if err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	sb, _ := c.Create(context.Background(), api.CreateRequest{})
	sandboxtest.Sh(t, c, sb.ID, "true")
	resp, err := http.Get(tn.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`warren_sandboxes{state="running"} 1`, `warren_execs_total 1`, `warren_exec_duration_seconds_count 1`,
		`warren_http_requests_total{route="POST /v1/sandboxes",status="201"} 1`, `warren_memory_bytes{kind="heap_inuse"}`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("metrics lack %q:\n%s", want, data)
		}
	}
}

// TestAdminKeyFile: the first start writes DATA/admin.key with mode 0600.
func TestAdminKeyFile(t *testing.T) {
	d := t.TempDir()
	tn := startNode(t, node.Options{Dir: d})
	fi, err := os.Stat(d + "/admin.key")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin.key mode %o", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(d + "/admin.key")
	if strings.TrimSpace(string(data)) != tn.n.AdminKey || tn.n.AdminKey == "" {
		t.Fatal("admin.key does not hold the admin key")
	}
}

// TestImages: a tenant builds an image from a tar, sees it (others do
// not), and starts a sandbox from it.
func TestImages(t *testing.T) {
	tn := startNode(t, node.Options{})
	a, _ := tn.tenant(t)
	b, _ := tn.tenant(t)
	ctx := context.Background()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "etc/motd", Typeflag: tar.TypeReg, Mode: 0o644, Size: 6})
	tw.Write([]byte("hello\n"))
	tw.Close()
	img, err := a.BuildImage(ctx, "mine", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if img.Name != "mine" || !strings.HasPrefix(img.Digest, "sha256:") {
		t.Fatalf("built %+v", img)
	}
	has := func(c *client.Client, name string) bool {
		imgs, err := c.ListImages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range imgs {
			if i.Name == name {
				return true
			}
		}
		return false
	}
	if !has(a, "mine") || !has(a, "default") || has(b, "mine") || !has(b, "default") {
		t.Fatal("image visibility across tenants is wrong")
	}
	sb, err := a.Create(ctx, api.CreateRequest{Image: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, _ := sandboxtest.Sh(t, a, sb.ID, "cat /etc/motd"); out != "hello\n" {
		t.Fatalf("sandbox of the built image reads %q", out)
	}
	if _, err := b.Create(ctx, api.CreateRequest{Image: "mine"}); err == nil {
		t.Fatal("another tenant used the image")
	}
	if _, err := a.BuildImage(ctx, "bad", strings.NewReader("not a tar")); err == nil {
		t.Fatal("built an image of garbage")
	}
}
