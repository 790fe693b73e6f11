package server

import (
	"net/http"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// The network routes: a sandbox's egress policy, secrets and audit list
// (README "Network").

func networkOf(svc api.Service) (api.NetworkManager, error) {
	nm, ok := svc.(api.NetworkManager)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this server has no egress layer")
	}
	return nm, nil
}

func (s *Server) getNetwork(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	nm, err := networkOf(svc)
	if err != nil {
		return err
	}
	st, err := nm.GetNetwork(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

func (s *Server) putNetwork(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	nm, err := networkOf(svc)
	if err != nil {
		return err
	}
	var up api.NetworkUpdate
	if err := s.decode(w, r, &up, false); err != nil {
		return err
	}
	st, err := nm.SetNetwork(r.Context(), r.PathValue("id"), up)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}
