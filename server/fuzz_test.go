package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/server"
)

type fuzzEnv struct {
	n   *node.Node
	key string
	mu  sync.Mutex
	id  string
	rts []string
	svc api.Service
}

func (e *fuzzEnv) sandbox(t testing.TB) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.svc.Get(context.Background(), e.id); err == nil {
		return e.id
	}
	sb, err := e.svc.Create(context.Background(), api.CreateRequest{Limits: api.Limits{
		Timeout: api.Duration(500 * time.Millisecond), MaxOutputBytes: 64 << 10, DiskBytes: 1 << 20, DiskInodes: 1000,
	}})
	if err != nil {
		t.Fatalf("fuzz sandbox: %v", err)
	}
	e.id = sb.ID
	return e.id
}

// FuzzHandlers sends arbitrary bodies, queries and path values to every
// route. The server must never panic or answer 500 (500 is for bugs), and
// every error must be the JSON error body.
func FuzzHandlers(f *testing.F) {
	n, err := node.Open(context.Background(), node.Options{Dir: f.TempDir(), TickInterval: 50 * time.Millisecond, MaxSandboxesPerTenant: 20, MaxFileBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { n.Close(context.Background()) })
	if err := n.Meta.PutKey(context.Background(), "fuzz-key-0123456789", "fuzz", false); err != nil {
		f.Fatal(err)
	}
	env := &fuzzEnv{n: n, key: "fuzz-key-0123456789", rts: server.RoutesForTest(n.Handler), svc: n.Manager.For("fuzz")}
	bodies := []string{
		"", "{}", `{"script":"echo hi"}`, `{"argv":["echo","x"]}`, `{"count":2}`, `{"name":"s1"}`,
		`{"path":"/d/e"}`, `{"from":"/a","to":"/b"}`, `{"signal":"TERM"}`, `{"tenant":"x"}`,
		`{"labels":{"a":"b"},"env":{"A":"1"},"cwd":"/tmp","standby_after":"1s"}`, "not json", `{"unknown":1}`,
		`{"script":"cat","stdin":"abc","session":"s","isolated":true,"timeout":"100ms"}`,
	}
	queries := []string{"", "path=/x", "path=/tmp&list=true&recursive=true", "path=/x&stat=true", "path=/&format=tar",
		"path=/f&offset=2&length=3", "wait=true", "label=a=b", "path=/f&mode=append&perm=0600", "name=img", "close=true", "path=../x"}
	for i := range env.rts {
		for j, b := range bodies {
			f.Add(uint8(i), "", queries[(i+j)%len(queries)], []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, pathVal, rawQuery string, body []byte) {
		rt := env.rts[int(route)%len(env.rts)]
		method, pattern, _ := strings.Cut(rt, " ")
		id := pathVal
		if id == "" {
			id = env.sandbox(t)
		}
		p := strings.ReplaceAll(pattern, "{id}", escapeSeg(id))
		p = strings.ReplaceAll(p, "{pid}", escapeSeg(pathVal+"1"))
		p = strings.ReplaceAll(p, "{name}", escapeSeg(pathVal+"n"))
		url := p
		if rawQuery != "" {
			url += "?" + rawQuery
		}
		req, err := http.NewRequest(method, "http://warren"+url, bytes.NewReader(body))
		if err != nil {
			return // not a request a client can send
		}
		req.Header.Set("Authorization", "Bearer "+env.key)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req = req.WithContext(ctx)
		rec := httptest.NewRecorder()
		n.Handler.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented && rec.Code != http.StatusInsufficientStorage {
			t.Fatalf("%s %s body %q: status %d: %s", method, url, body, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 {
			var eb api.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error.Code == "" {
				t.Fatalf("%s %s: status %d without an error body: %q", method, url, rec.Code, rec.Body.String())
			}
		}
	})
}

func escapeSeg(s string) string {
	r := strings.NewReplacer("/", "%2F", "?", "%3F", "#", "%23", "%", "%25", " ", "%20")
	return r.Replace(s)
}
