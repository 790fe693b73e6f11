package server

import (
	"net/http"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Volumes (api.VolumeService): /v1/volumes. The in-process manager and the
// worker pool (which routes each volume to the worker holding its record)
// have them; a backend without them answers 501 saying so.

func volumeService(svc api.Service) (api.VolumeService, error) {
	v, ok := svc.(api.VolumeService)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this server's sandbox backend (%T) has no volumes", svc)
	}
	return v, nil
}

// createVolume: POST /v1/volumes {name, size}.
func (s *Server) createVolume(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	vs, err := volumeService(svc)
	if err != nil {
		return err
	}
	var req api.VolumeCreate
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	v, err := vs.CreateVolume(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, v)
}

func (s *Server) listVolumes(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	vs, err := volumeService(svc)
	if err != nil {
		return err
	}
	out, err := vs.ListVolumes(r.Context())
	if err != nil {
		return err
	}
	if out == nil {
		out = []api.Volume{}
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) getVolume(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	vs, err := volumeService(svc)
	if err != nil {
		return err
	}
	v, err := vs.GetVolume(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// resizeVolume: PATCH /v1/volumes/{name} {size}; grow only.
func (s *Server) resizeVolume(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	vs, err := volumeService(svc)
	if err != nil {
		return err
	}
	var req api.VolumeResize
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	v, err := vs.ResizeVolume(r.Context(), r.PathValue("name"), req.Size)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

func (s *Server) deleteVolume(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	vs, err := volumeService(svc)
	if err != nil {
		return err
	}
	if err := vs.DeleteVolume(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
