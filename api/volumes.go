package api

import (
	"context"
	"time"
)

// Volume is durable storage of a tenant that outlives any sandbox: its own
// tree with its own size quota, persisted in the blob store, attached at a
// sandbox's create (CreateRequest.Volumes) read-write to at most one live
// sandbox at a time, read-only to any number.
type Volume struct {
	Name string `json:"name"`
	// Size is the quota in bytes: writes past it fail with ENOSPC.
	Size int64 `json:"size"`
	// Used is what the volume's last committed tree holds (bytes charged
	// against Size), or the live tree's while a sandbox holds it.
	Used int64 `json:"used"`
	// AttachedTo is the sandbox holding it read-write ("" = none).
	AttachedTo string `json:"attached_to,omitempty"`
	// Readers are sandboxes holding it read-only.
	Readers []string `json:"readers,omitempty"`
	// Generation counts its commits (0 = never written).
	Generation uint64    `json:"generation"`
	CreatedAt  time.Time `json:"created_at"`
}

// VolumeCreate is the body of POST /v1/volumes.
type VolumeCreate struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// VolumeResize is the body of PATCH /v1/volumes/{name}: the new size,
// which must not be smaller than the current one.
type VolumeResize struct {
	Size int64 `json:"size"`
}

// VolumeMount attaches a volume to a sandbox at create.
type VolumeMount struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// VolumeService is the volume half of the API (a Service that has volumes
// implements it too).
type VolumeService interface {
	CreateVolume(ctx context.Context, req VolumeCreate) (Volume, error)
	ListVolumes(ctx context.Context) ([]Volume, error)
	GetVolume(ctx context.Context, name string) (Volume, error)
	ResizeVolume(ctx context.Context, name string, size int64) (Volume, error)
	DeleteVolume(ctx context.Context, name string) error
}
