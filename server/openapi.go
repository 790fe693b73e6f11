package server

import (
	_ "embed"
	"net/http"

	"github.com/warren-sandbox/warren/api"
)

// openapiDoc is the OpenAPI 3 description of every route; the test
// TestOpenAPI_MatchesRoutes fails when it and routes() disagree.
//
//go:embed openapi.json
var openapiDoc []byte

func (s *Server) openapi(w http.ResponseWriter, r *http.Request, _ api.Service) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openapiDoc)
	return err
}
