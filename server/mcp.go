package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/mcp"
)

// mcp serves the MCP tools for the authenticated tenant. The route's auth
// has already bound svc to the key's tenant; the handler is stateless, so
// no session id can outlive this request or cross tenants.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ew := &mcpErrors{ResponseWriter: w}
	mcp.Handler(func(*http.Request) api.Service { return svc }, mcp.Options{}).ServeHTTP(ew, r)
	ew.finish()
	return nil
}

// mcpErrors gives the SDK's HTTP-level refusals (wrong Content-Type or
// Accept, bad JSON) the API's error body, as every other route has; what
// MCP itself answers (JSON-RPC results and errors, status 200/202) passes
// through untouched.
type mcpErrors struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (e *mcpErrors) WriteHeader(code int) {
	if code >= 400 && e.status == 0 {
		e.status = code
		return
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *mcpErrors) Write(p []byte) (int, error) {
	if e.status != 0 {
		if e.body.Len() < 4096 {
			e.body.Write(p[:min(len(p), 4096-e.body.Len())])
		}
		return len(p), nil
	}
	return e.ResponseWriter.Write(p)
}

func (e *mcpErrors) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok && e.status == 0 {
		f.Flush()
	}
}

func (e *mcpErrors) finish() {
	if e.status == 0 {
		return
	}
	msg := strings.TrimSpace(e.body.String())
	var rpc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(e.body.Bytes(), &rpc) == nil && rpc.Error.Message != "" {
		msg = rpc.Error.Message
	}
	if msg == "" {
		msg = http.StatusText(e.status)
	}
	code := strings.ReplaceAll(strings.ToLower(http.StatusText(e.status)), " ", "_")
	h := e.ResponseWriter.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	e.ResponseWriter.WriteHeader(e.status)
	json.NewEncoder(e.ResponseWriter).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: "mcp: " + msg}})
}
