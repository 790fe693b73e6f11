package server

import (
	"net/http"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Drives (api.DriveService): /v1/drives and a sandbox's mounts,
// /v1/sandboxes/{id}/mounts. docs/drive.md has the semantics.

func driveService(svc api.Service) (api.DriveService, error) {
	d, ok := svc.(api.DriveService)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this server has no drives")
	}
	return d, nil
}

// createDrive: POST /v1/drives {name, size}.
func (s *Server) createDrive(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ds, err := driveService(svc)
	if err != nil {
		return err
	}
	var req api.DriveCreate
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	d, err := ds.CreateDrive(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, d)
}

func (s *Server) listDrives(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ds, err := driveService(svc)
	if err != nil {
		return err
	}
	out, err := ds.ListDrives(r.Context())
	if err != nil {
		return err
	}
	if out == nil {
		out = []api.Drive{}
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) getDrive(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ds, err := driveService(svc)
	if err != nil {
		return err
	}
	d, err := ds.GetDrive(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}

func (s *Server) deleteDrive(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ds, err := driveService(svc)
	if err != nil {
		return err
	}
	if err := ds.DeleteDrive(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mountDrive: POST /v1/sandboxes/{id}/mounts {drive, path, read_only}; the
// answer is the sandbox's mount list.
func (s *Server) mountDrive(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ds, err := driveService(svc)
	if err != nil {
		return err
	}
	var req api.DriveMount
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	out, err := ds.MountDrive(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mountList(out))
}

// unmountDrive: DELETE /v1/sandboxes/{id}/mounts?path=/shared.
func (s *Server) unmountDrive(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ds, err := driveService(svc)
	if err != nil {
		return err
	}
	p := r.URL.Query().Get("path")
	if p == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "unmount: the path query parameter is required (the mount point)")
	}
	out, err := ds.UnmountDrive(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mountList(out))
}

func (s *Server) listMounts(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ds, err := driveService(svc)
	if err != nil {
		return err
	}
	out, err := ds.ListMounts(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mountList(out))
}

func mountList(ms []api.DriveMount) []api.DriveMount {
	if ms == nil {
		return []api.DriveMount{}
	}
	return ms
}
