package server

import (
	"mime"
	"net/http"

	"github.com/containerd/errdefs"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/mcp"
)

// mcp serves the MCP tools for the authenticated tenant. The route's auth
// has already bound svc to the key's tenant; the handler is stateless, so
// no session id can outlive this request or cross tenants.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	// The SDK answers a wrong content type in plain text; every error of
	// this API is a JSON body.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return api.Errorf(errdefs.ErrInvalidArgument, "POST /v1/mcp: Content-Type must be application/json, not %q", r.Header.Get("Content-Type"))
	}
	mcp.Handler(func(*http.Request) api.Service { return svc }, mcp.Options{}).ServeHTTP(w, r)
	return nil
}
