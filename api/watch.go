package api

import "context"

// WatchRequest is the query of GET .../files/watch.
type WatchRequest struct {
	Path      string
	Recursive bool
}

// Watch event types (WatchEvent.Type).
const (
	WatchReady    = "ready" // the first event: changes after it are reported
	WatchCreate   = "create"
	WatchWrite    = "write"
	WatchRemove   = "remove"
	WatchRename   = "rename" // Name is the new name, OldName the old one
	WatchChmod    = "chmod"  // mode or owner changed, content did not
	WatchOverflow = "overflow"
	WatchClosed   = "closed" // the last event: Reason says why
)

// WatchEvent is one line of GET .../files/watch (NDJSON). Names are
// relative to the watched path ("." is the path itself).
type WatchEvent struct {
	Type    string `json:"type"`
	Name    string `json:"name,omitempty"`
	OldName string `json:"old_name,omitempty"`
	// FileType is file, dir, symlink or other (not on remove).
	FileType string `json:"file_type,omitempty"`
	// Dropped counts the events an overflow lost.
	Dropped int `json:"dropped,omitempty"`
	// Reason (closed): hibernated, deleted, removed (the watched path),
	// shutdown.
	Reason string `json:"reason,omitempty"`
}

// FileWatcher is implemented by Services that watch files (the manager
// and the client). WatchFiles validates req (a missing path is not
// found, a file is invalid), then calls fn with a WatchReady event and
// every later change until ctx ends, fn fails, or the sandbox hibernates
// or is deleted (a WatchClosed event, then a nil error).
type FileWatcher interface {
	WatchFiles(ctx context.Context, id string, req WatchRequest, fn func(WatchEvent) error) error
}
