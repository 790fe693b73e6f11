package server

import (
	"net/http"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/mcp"
)

// mcp serves the MCP tools for the authenticated tenant. The route's auth
// has already bound svc to the key's tenant; the handler is stateless, so
// no session id can outlive this request or cross tenants.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	mcp.Handler(func(*http.Request) api.Service { return svc }, mcp.Options{}).ServeHTTP(w, r)
	return nil
}
