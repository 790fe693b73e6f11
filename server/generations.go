package server

import (
	"net/http"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// listGenerations: GET /v1/sandboxes/{id}/generations.
func (s *Server) listGenerations(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	g, ok := svc.(api.Generations)
	if !ok {
		return api.Errorf(errdefs.ErrNotImplemented, "this node does not list generations through the API")
	}
	gens, err := g.ListGenerations(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if gens == nil {
		gens = []api.Generation{}
	}
	return writeJSON(w, http.StatusOK, gens)
}
