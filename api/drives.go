package api

import (
	"context"
	"time"
)

// Drive is a tenant's shared filesystem: any number of its sandboxes, on
// any node, mount it read-write at once (docs/drive.md has the consistency
// it gives: close-to-open, atomic rename, last writer wins per file).
// Unlike a volume it is attached to running sandboxes and detached at will.
type Drive struct {
	Name string `json:"name"`
	// Size is the quota in bytes (0: none): a close that would pass it
	// fails with ENOSPC.
	Size int64 `json:"size"`
	// Used is the bytes its files hold.
	Used      int64     `json:"used"`
	CreatedAt time.Time `json:"created_at"`
}

// DriveCreate is the body of POST /v1/drives.
type DriveCreate struct {
	Name string `json:"name"`
	Size int64  `json:"size,omitempty"`
}

// DriveMount is the body of POST /v1/sandboxes/{id}/mounts and an entry of
// a sandbox's mount list.
type DriveMount struct {
	Drive    string `json:"drive"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// DriveService is the drive half of the API (a Service that has drives
// implements it too).
type DriveService interface {
	CreateDrive(ctx context.Context, req DriveCreate) (Drive, error)
	ListDrives(ctx context.Context) ([]Drive, error)
	GetDrive(ctx context.Context, name string) (Drive, error)
	DeleteDrive(ctx context.Context, name string) error
	// MountDrive mounts a drive into a running (or standing-by) sandbox;
	// the mount is part of the sandbox's state from then on (it survives
	// hibernate and resume) until UnmountDrive.
	MountDrive(ctx context.Context, id string, m DriveMount) ([]DriveMount, error)
	UnmountDrive(ctx context.Context, id, path string) ([]DriveMount, error)
	ListMounts(ctx context.Context, id string) ([]DriveMount, error)
}
