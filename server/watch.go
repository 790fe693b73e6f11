package server

import (
	"encoding/json"
	"net/http"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// watchFiles streams file events as NDJSON (api.WatchEvent per line).
// Errors found before the first event (no such sandbox or path, a file)
// are ordinary HTTP errors.
func (s *Server) watchFiles(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	q, err := query(r, "path", "recursive")
	if err != nil {
		return err
	}
	rec, err := parseBool(q, "recursive")
	if err != nil {
		return err
	}
	fw, ok := svc.(api.FileWatcher)
	if !ok {
		return api.Errorf(errdefs.ErrNotImplemented, "this server's backend cannot watch files")
	}
	if q["path"] == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "watch needs ?path=DIR")
	}
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	started := false
	return fw.WatchFiles(r.Context(), r.PathValue("id"), api.WatchRequest{Path: q["path"], Recursive: rec}, func(ev api.WatchEvent) error {
		if !started {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		if err := enc.Encode(ev); err != nil {
			return err
		}
		if fl != nil {
			fl.Flush()
		}
		return nil
	})
}
