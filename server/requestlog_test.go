package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/server"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestRequestLog: every response carries a request id (the client's when
// well formed), and an exec's log line says how it ended.
func TestRequestLog(t *testing.T) {
	var logs syncBuffer
	tn := startNode(t, node.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	c, key := tn.tenant(t)
	tenant := "tenant" + fmt.Sprint(tn.seq.Load())
	sb, err := c.Create(context.Background(), api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, sent, script string
		echoed             bool
		outcome            string
		exit               float64
	}{
		{"client id kept", "agent-7.step:3", "true", true, "ok", 0},
		{"no id", "", "exit 3", false, "exit", 3},
		{"malformed id replaced", "has space", "true", false, "ok", 0},
		{"too long replaced", strings.Repeat("a", 65), "true", false, "ok", 0},
		{"timeout", "t-1", "sleep 5", true, "timeout", 124},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"script":%q,"timeout":"300ms"}`, tc.script)
			req, _ := http.NewRequest("POST", tn.srv.URL+"/v1/sandboxes/"+sb.ID+"/exec?wait=true", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			if tc.sent != "" {
				req.Header.Set("X-Request-Id", tc.sent)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			rid := resp.Header.Get(server.RequestIDHeader)
			if tc.echoed && rid != tc.sent || !tc.echoed && (rid == "" || rid == tc.sent) {
				t.Fatalf("X-Request-Id %q for a client's %q", rid, tc.sent)
			}
			var line map[string]any
			for _, l := range logs.lines() {
				if l["request_id"] == rid {
					line = l
				}
			}
			if line == nil || line["exec_outcome"] != tc.outcome || line["exit"] != tc.exit || line["tenant"] != tenant {
				t.Fatalf("log line of %s: %v", rid, line)
			}
			if tc.outcome == "timeout" && line["limit"] != "timeout" {
				t.Fatalf("timeout without limit=timeout: %v", line)
			}
		})
	}
	var create map[string]any
	for _, l := range logs.lines() {
		if l["msg"] == "sandbox event" && l["event"] == "create" && l["sandbox"] == sb.ID {
			create = l
		}
	}
	if create == nil || create["tenant"] != tenant {
		t.Fatalf("no create event for %s:\n%v", sb.ID, logs.lines())
	}
}

// TestMetricsFront: --metrics-key guards /metrics and nothing else; extra
// series follow the server's.
func TestMetricsFront(t *testing.T) {
	tn := startNode(t, node.Options{})
	h := server.MetricsFront(tn.n.Handler, "mk_secret", func(w io.Writer) { fmt.Fprintln(w, "extra_series 1") })
	cases := []struct {
		path, key string
		status    int
		want      string
	}{
		{"/metrics", "", 401, "metrics key"},
		{"/metrics", "wrong", 401, "metrics key"},
		{"/metrics", "mk_secret", 200, "go_goroutines"},
		{"/healthz", "", 200, ""},
	}
	for _, tc := range cases {
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.key != "" {
			req.Header.Set("Authorization", "Bearer "+tc.key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != tc.status || !strings.Contains(body, tc.want) {
			t.Fatalf("%s with key %q: %d %q", tc.path, tc.key, rec.Code, body)
		}
		if tc.status == 200 && tc.path == "/metrics" && !strings.HasSuffix(body, "extra_series 1\n") {
			t.Fatalf("the extra series are not appended: %q", body[max(0, len(body)-200):])
		}
	}
}
