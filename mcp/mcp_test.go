package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/mcp"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// openNode starts a real node (store/dir, bbolt, shell, vfs) in a temp dir.
func openNode(t *testing.T) *node.Node {
	t.Helper()
	n, err := node.Open(context.Background(), node.Options{Dir: t.TempDir(), TickInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(context.Background()) })
	return n
}

// connect serves the tools for svc over the SDK's in-memory transport.
func connect(t *testing.T, svc api.Service, opts mcp.Options) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	if _, err := mcp.NewServer(svc, opts).Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call invokes a tool and decodes its structured result into out (when
// not nil); it returns the result for IsError checks.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if out != nil && !res.IsError {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, data, err)
		}
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func mustOK(t *testing.T, name string, res *sdk.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, text(res))
	}
}

func newSandbox(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	var sb mcp.SandboxInfo
	mustOK(t, "sandbox_create", call(t, cs, "sandbox_create", map[string]any{"labels": map[string]string{"agent": "t"}}, &sb))
	if sb.SandboxID == "" || sb.State == "" {
		t.Fatalf("sandbox_create gave %+v", sb)
	}
	return sb.SandboxID
}

func TestToolsAndSchemas(t *testing.T) {
	n := openNode(t)
	tests := []struct {
		name    string
		opts    mcp.Options
		want    []string
		absent  []string
		idParam bool
	}{
		{"free", mcp.Options{}, []string{"sandbox_create", "sandbox_list", "sandbox_delete", "exec", "file_edit", "fork", "snapshot"}, nil, true},
		{"pinned", mcp.Options{Sandbox: "sb-x"}, []string{"exec", "file_read", "process_start", "hibernate"}, []string{"sandbox_create", "sandbox_list", "sandbox_delete"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := connect(t, n.Manager.For("t1"), tt.opts)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*sdk.Tool{}
			for _, tool := range res.Tools {
				byName[tool.Name] = tool
				if tool.Description == "" {
					t.Errorf("%s has no description", tool.Name)
				}
			}
			for _, w := range tt.want {
				if byName[w] == nil {
					t.Errorf("tool %s missing", w)
				}
			}
			for _, a := range tt.absent {
				if byName[a] != nil {
					t.Errorf("tool %s offered while pinned", a)
				}
			}
			schema, _ := json.Marshal(byName["exec"].InputSchema)
			if got := strings.Contains(string(schema), `"sandbox_id"`); got != tt.idParam {
				t.Errorf("exec schema has sandbox_id = %v, want %v: %s", got, tt.idParam, schema)
			}
			if !strings.Contains(string(schema), `"script"`) || !strings.Contains(string(schema), "bash script") {
				t.Errorf("exec schema lacks a described script: %s", schema)
			}
		})
	}
}

func TestExec(t *testing.T) {
	cs := connect(t, openNode(t).Manager.For("t1"), mcp.Options{MaxOutputBytes: 1000})
	id := newSandbox(t, cs)
	tests := []struct {
		name                 string
		args                 map[string]any
		exit                 int
		stdout, stderr       string
		stdoutTrunc, isError bool
	}{
		{"ok", map[string]any{"script": "echo hi; echo err >&2"}, 0, "hi\n", "err\n", false, false},
		{"nonzero is a result", map[string]any{"script": "echo partial; exit 3"}, 3, "partial\n", "", false, false},
		{"stdin env cwd", map[string]any{"script": "cat; echo $K; pwd", "stdin": "in\n", "env": map[string]string{"K": "v"}, "cwd": "/tmp"}, 0, "in\nv\n/tmp\n", "", false, false},
		{"state persists", map[string]any{"script": "X=42; cd /etc"}, 0, "", "", false, false},
		{"state seen", map[string]any{"script": "echo $X; pwd"}, 0, "42\n/etc\n", "", false, false},
		{"output capped", map[string]any{"script": "head -c 5000 /dev/zero | tr '\\0' a"}, 0, strings.Repeat("a", 1000), "", true, false},
		{"not utf8", map[string]any{"script": "printf 'a\\377b'"}, 0, "a\uFFFDb", "", false, false},
		{"timeout", map[string]any{"script": "sleep 5", "timeout_ms": 200}, 124, "", "", false, false},
		{"empty script", map[string]any{"script": ""}, 0, "", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.args["sandbox_id"] = id
			var out mcp.ExecOut
			res := call(t, cs, "exec", tt.args, &out)
			if res.IsError != tt.isError {
				t.Fatalf("IsError = %v (%s), want %v", res.IsError, text(res), tt.isError)
			}
			if tt.isError {
				return
			}
			if tt.name == "timeout" {
				if out.ExitCode == 0 || out.Limit != "timeout" {
					t.Fatalf("timeout: %+v", out)
				}
				return
			}
			if out.ExitCode != tt.exit || out.Stdout != tt.stdout || out.Stderr != tt.stderr || out.StdoutTruncated != tt.stdoutTrunc {
				t.Fatalf("got %+v, want exit %d stdout %q stderr %q truncated %v", out, tt.exit, tt.stdout, tt.stderr, tt.stdoutTrunc)
			}
			if !strings.Contains(text(res), `"exit_code"`) {
				t.Fatalf("text content lacks the result: %s", text(res))
			}
		})
	}
}

func TestFiles(t *testing.T) {
	cs := connect(t, openNode(t).Manager.For("t1"), mcp.Options{})
	id := newSandbox(t, cs)
	sid := func(m map[string]any) map[string]any { m["sandbox_id"] = id; return m }

	mustOK(t, "file_write", call(t, cs, "file_write", sid(map[string]any{"path": "/w/a/f.txt", "content": "one\ntwo\none\n"}), nil))
	var rd mcp.FileReadOut
	mustOK(t, "file_read", call(t, cs, "file_read", sid(map[string]any{"path": "/w/a/f.txt"}), &rd))
	if rd.Content != "one\ntwo\none\n" || rd.Encoding != "utf8" || rd.Size != 12 {
		t.Fatalf("read %+v", rd)
	}
	mustOK(t, "file_read range", call(t, cs, "file_read", sid(map[string]any{"path": "/w/a/f.txt", "offset": 4, "length": 3}), &rd))
	if rd.Content != "two" {
		t.Fatalf("ranged read %q", rd.Content)
	}

	// Binary: every byte value round trips through base64.
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	mustOK(t, "file_write b64", call(t, cs, "file_write", sid(map[string]any{"path": "/w/bin", "content": base64.StdEncoding.EncodeToString(all), "encoding": "base64"}), nil))
	mustOK(t, "file_read b64", call(t, cs, "file_read", sid(map[string]any{"path": "/w/bin"}), &rd))
	if got, _ := base64.StdEncoding.DecodeString(rd.Content); rd.Encoding != "base64" || string(got) != string(all) {
		t.Fatalf("binary round trip: encoding %s, %d bytes", rd.Encoding, len(got))
	}
	if res := call(t, cs, "file_write", sid(map[string]any{"path": "/w/x", "content": "!!", "encoding": "base64"}), nil); !res.IsError || !strings.Contains(text(res), "base64") {
		t.Fatalf("bad base64 accepted: %s", text(res))
	}

	edits := []struct {
		name    string
		args    map[string]any
		wantErr string
		want    string
	}{
		{"ambiguous", map[string]any{"old_string": "one", "new_string": "1"}, "occurs 2 times", "one\ntwo\none\n"},
		{"missing", map[string]any{"old_string": "three", "new_string": "3"}, "not found", "one\ntwo\none\n"},
		{"unique", map[string]any{"old_string": "two\n", "new_string": "2\n"}, "", "one\n2\none\n"},
		{"all", map[string]any{"old_string": "one", "new_string": "1", "replace_all": true}, "", "1\n2\n1\n"},
		{"empty old", map[string]any{"old_string": "", "new_string": "x"}, "must not be empty", "1\n2\n1\n"},
	}
	for _, e := range edits {
		t.Run("edit "+e.name, func(t *testing.T) {
			e.args["path"] = "/w/a/f.txt"
			res := call(t, cs, "file_edit", sid(e.args), nil)
			if e.wantErr == "" {
				mustOK(t, "file_edit", res)
			} else if !res.IsError || !strings.Contains(text(res), e.wantErr) {
				t.Fatalf("want error %q, got %v %s", e.wantErr, res.IsError, text(res))
			}
			var rd mcp.FileReadOut
			mustOK(t, "file_read", call(t, cs, "file_read", sid(map[string]any{"path": "/w/a/f.txt"}), &rd))
			if rd.Content != e.want {
				t.Fatalf("content %q, want %q", rd.Content, e.want)
			}
		})
	}

	mustOK(t, "mkdir", call(t, cs, "mkdir", sid(map[string]any{"path": "/w/d/e"}), nil))
	mustOK(t, "file_move", call(t, cs, "file_move", sid(map[string]any{"from": "/w/a/f.txt", "to": "/w/d/e/g.txt"}), nil))
	var ls mcp.FileListOut
	mustOK(t, "file_list", call(t, cs, "file_list", sid(map[string]any{"path": "/w", "recursive": true}), &ls))
	var paths []string
	for _, f := range ls.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Contains(paths, "/w/d/e/g.txt") || slices.Contains(paths, "/w/a/f.txt") {
		t.Fatalf("after move, list %v", paths)
	}
	mustOK(t, "file_delete", call(t, cs, "file_delete", sid(map[string]any{"path": "/w/d", "recursive": true}), nil))
	if res := call(t, cs, "file_read", sid(map[string]any{"path": "/w/d/e/g.txt"}), nil); !res.IsError || !strings.Contains(strings.ToLower(text(res)), "not") {
		t.Fatalf("read after delete: %v %s", res.IsError, text(res))
	}
	if res := call(t, cs, "file_read", sid(map[string]any{"path": "/w"}), nil); !res.IsError || !strings.Contains(text(res), "directory") {
		t.Fatalf("read of a directory: %s", text(res))
	}
}

func TestProcesses(t *testing.T) {
	cs := connect(t, openNode(t).Manager.For("t1"), mcp.Options{})
	id := newSandbox(t, cs)
	sid := func(m map[string]any) map[string]any { m["sandbox_id"] = id; return m }

	var p mcp.ProcessOut
	mustOK(t, "process_start", call(t, cs, "process_start", sid(map[string]any{"script": "echo started; while read l; do echo got $l; done; echo bye; exit 7"}), &p))
	if p.PID == 0 {
		t.Fatalf("no pid: %+v", p)
	}
	var out mcp.ProcessOutputOut
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.Stdout, "started") && time.Now().Before(deadline) {
		mustOK(t, "process_output", call(t, cs, "process_output", sid(map[string]any{"pid": p.PID}), &out))
	}
	if !out.Running || !strings.Contains(out.Stdout, "started") {
		t.Fatalf("running process output %+v", out)
	}
	mustOK(t, "process_stdin", call(t, cs, "process_stdin", sid(map[string]any{"pid": p.PID, "data": "x\n", "close": true}), nil))
	mustOK(t, "process_output wait", call(t, cs, "process_output", sid(map[string]any{"pid": p.PID, "wait_ms": 5000}), &out))
	if out.Running || out.ExitCode != 7 || !strings.Contains(out.Stdout, "got x\nbye\n") {
		t.Fatalf("exited process output %+v", out)
	}

	mustOK(t, "process_start sleep", call(t, cs, "process_start", sid(map[string]any{"script": "sleep 100"}), &p))
	mustOK(t, "process_signal", call(t, cs, "process_signal", sid(map[string]any{"pid": p.PID, "signal": "KILL"}), nil))
	mustOK(t, "process_output killed", call(t, cs, "process_output", sid(map[string]any{"pid": p.PID, "wait_ms": 5000}), &out))
	if out.Running || out.ExitCode == 0 {
		t.Fatalf("killed process %+v", out)
	}
	if res := call(t, cs, "process_output", sid(map[string]any{"pid": 99999}), nil); !res.IsError || !strings.Contains(text(res), "99999") {
		t.Fatalf("unknown pid: %s", text(res))
	}
}

func TestLifecycle(t *testing.T) {
	n := openNode(t)
	cs := connect(t, n.Manager.For("t1"), mcp.Options{})
	id := newSandbox(t, cs)
	sid := func(m map[string]any) map[string]any { m["sandbox_id"] = id; return m }
	mustOK(t, "exec", call(t, cs, "exec", sid(map[string]any{"script": "echo kept > /tmp/k; V=9"}), nil))

	var sb mcp.SandboxInfo
	mustOK(t, "hibernate", call(t, cs, "hibernate", sid(map[string]any{}), &sb))
	if sb.State != "standby" {
		t.Fatalf("after hibernate state %q", sb.State)
	}
	mustOK(t, "resume", call(t, cs, "resume", sid(map[string]any{}), &sb))
	var ex mcp.ExecOut
	mustOK(t, "exec after resume", call(t, cs, "exec", sid(map[string]any{"script": "cat /tmp/k; echo $V"}), &ex))
	if ex.Stdout != "kept\n9\n" {
		t.Fatalf("after resume %q", ex.Stdout)
	}

	var forks mcp.ListOut
	mustOK(t, "fork", call(t, cs, "fork", sid(map[string]any{"count": 2}), &forks))
	if len(forks.Sandboxes) != 2 || forks.Sandboxes[0].Parent != id {
		t.Fatalf("fork %+v", forks)
	}
	mustOK(t, "exec in fork", call(t, cs, "exec", map[string]any{"sandbox_id": forks.Sandboxes[0].SandboxID, "script": "cat /tmp/k"}, &ex))
	if ex.Stdout != "kept\n" {
		t.Fatalf("fork sees %q", ex.Stdout)
	}

	var snap mcp.SnapshotOut
	mustOK(t, "snapshot", call(t, cs, "snapshot", sid(map[string]any{"name": "s1"}), &snap))
	mustOK(t, "create from snapshot", call(t, cs, "sandbox_create", map[string]any{"snapshot": "s1"}, &sb))
	mustOK(t, "exec in restored", call(t, cs, "exec", map[string]any{"sandbox_id": sb.SandboxID, "script": "cat /tmp/k"}, &ex))
	if ex.Stdout != "kept\n" {
		t.Fatalf("snapshot sandbox sees %q", ex.Stdout)
	}
	if res := call(t, cs, "snapshot", sid(map[string]any{"name": "s1"}), nil); !res.IsError || !strings.Contains(text(res), "exists") {
		t.Fatalf("duplicate snapshot: %s", text(res))
	}

	var other mcp.SandboxInfo
	mustOK(t, "sandbox_create labelled", call(t, cs, "sandbox_create", map[string]any{"labels": map[string]string{"other": "1"}}, &other))
	var list mcp.ListOut
	mustOK(t, "sandbox_list", call(t, cs, "sandbox_list", map[string]any{"labels": map[string]string{"other": "1"}}, &list))
	if len(list.Sandboxes) != 1 || list.Sandboxes[0].SandboxID != other.SandboxID {
		t.Fatalf("list by label %+v", list)
	}
	mustOK(t, "sandbox_list all", call(t, cs, "sandbox_list", map[string]any{}, &list))
	if len(list.Sandboxes) != 5 { // the first, two forks, the restored one, other
		t.Fatalf("list all: %d sandboxes", len(list.Sandboxes))
	}
	mustOK(t, "sandbox_delete", call(t, cs, "sandbox_delete", sid(map[string]any{}), nil))
	if res := call(t, cs, "exec", sid(map[string]any{"script": "true"}), nil); !res.IsError || !strings.Contains(text(res), "not found") {
		t.Fatalf("exec on deleted sandbox: %v %s", res.IsError, text(res))
	}
	if res := call(t, cs, "exec", map[string]any{"script": "true"}, nil); !res.IsError {
		t.Fatal("exec without sandbox_id accepted")
	}
}

func TestPinned(t *testing.T) {
	n := openNode(t)
	svc := n.Manager.For("t1")
	sb, err := svc.Create(context.Background(), api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, svc, mcp.Options{Sandbox: sb.ID})
	var ex mcp.ExecOut
	mustOK(t, "exec pinned", call(t, cs, "exec", map[string]any{"script": "echo pinned > /p; cat /p"}, &ex))
	if ex.Stdout != "pinned\n" {
		t.Fatalf("pinned exec %q", ex.Stdout)
	}
	data, err := svc.ReadFile(context.Background(), sb.ID, "/p", 0, 0)
	if err != nil || string(data) != "pinned\n" {
		t.Fatalf("the pinned sandbox has %q, %v", data, err)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "sandbox_create", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("sandbox_create while pinned: %v", err)
	}
}

// bearer adds an API key to every request.
type bearer struct {
	key string
	rt  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return b.rt.RoundTrip(r)
}

func httpSession(t *testing.T, url, key string) (*sdk.ClientSession, error) {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: url + "/v1/mcp", HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestHTTP: /v1/mcp is behind the API's keys and bound to the key's tenant.
func TestHTTP(t *testing.T) {
	n := openNode(t)
	srv := httptest.NewServer(n.Handler)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: status %d, want 401", resp.StatusCode)
	}
	if _, err := httpSession(t, srv.URL, "wrong-key"); err == nil {
		t.Fatal("a session with an unknown key connected")
	}

	admin, err := client.New(srv.URL, n.AdminKey)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, tenant := range []string{"a", "b"} {
		k, err := admin.CreateKey(context.Background(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		keys[tenant] = k.Key
	}
	csA, err := httpSession(t, srv.URL, keys["a"])
	if err != nil {
		t.Fatal(err)
	}
	csB, err := httpSession(t, srv.URL, keys["b"])
	if err != nil {
		t.Fatal(err)
	}
	idA := newSandbox(t, csA)
	var ex mcp.ExecOut
	mustOK(t, "exec over http", call(t, csA, "exec", map[string]any{"sandbox_id": idA, "script": "echo secret > /s; echo done"}, &ex))
	if ex.Stdout != "done\n" {
		t.Fatalf("exec over HTTP %q", ex.Stdout)
	}
	for tool, args := range map[string]map[string]any{
		"exec":           {"sandbox_id": idA, "script": "cat /s"},
		"file_read":      {"sandbox_id": idA, "path": "/s"},
		"sandbox_delete": {"sandbox_id": idA},
	} {
		res := call(t, csB, tool, args, nil)
		if !res.IsError || !strings.Contains(text(res), "not found") {
			t.Fatalf("tenant b reached tenant a's sandbox with %s: %v %s", tool, res.IsError, text(res))
		}
	}
	var list mcp.ListOut
	mustOK(t, "list b", call(t, csB, "sandbox_list", map[string]any{}, &list))
	if len(list.Sandboxes) != 0 {
		t.Fatalf("tenant b lists %v", list.Sandboxes)
	}
	if _, err := n.Manager.For("a").Get(context.Background(), idA); err != nil {
		t.Fatalf("tenant a's sandbox after b's attempts: %v", err)
	}
}
