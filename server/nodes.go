package server

import (
	"net/http"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/fleet"
)

// NodeList is the body of GET /v1/nodes.
type NodeList struct {
	Self  string         `json:"self"`
	Nodes []fleet.Member `json:"nodes"`
}

func (s *Server) notFleet() error {
	return api.Errorf(errdefs.ErrNotImplemented, "this warren is not a fleet node (warren serve --node-id ID --advertise URL --meta postgres://...)")
}

// listNodes: GET /v1/nodes (admin).
func (s *Server) listNodes(w http.ResponseWriter, r *http.Request, _ api.Service) error {
	if s.fleet == nil {
		return s.notFleet()
	}
	ms, err := s.fleet.Members(r.Context())
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []fleet.Member{}
	}
	return writeJSON(w, http.StatusOK, NodeList{Self: s.fleet.ID(), Nodes: ms})
}

// drainNode: POST /v1/nodes/{id}/drain (admin); another node's drain was
// forwarded to it by routeFleet.
func (s *Server) drainNode(w http.ResponseWriter, r *http.Request, _ api.Service) error {
	if s.fleet == nil {
		return s.notFleet()
	}
	if id := r.PathValue("id"); id != s.fleet.ID() {
		return api.Errorf(errdefs.ErrNotFound, "node %s is not this node (%s)", id, s.fleet.ID())
	}
	res, err := s.fleet.Drain(r.Context())
	if err != nil && res.Node == "" {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
