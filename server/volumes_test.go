package server_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// TestVolumesAPI: the volume calls through the Go client over HTTP: bad
// input named, tenants apart, the lease (409), grow-only resize (422),
// live usage, no delete while attached.
func TestVolumesAPI(t *testing.T) {
	tn := startNode(t, node.Options{})
	ctx := context.Background()
	a, _ := tn.tenant(t)
	b, _ := tn.tenant(t)
	for _, tc := range []struct {
		req  api.VolumeCreate
		want string
	}{
		{api.VolumeCreate{Name: "Bad/Name", Size: 1 << 20}, `bad volume name "Bad/Name"`},
		{api.VolumeCreate{Name: "v", Size: 0}, "size must be positive"},
	} {
		if _, err := a.CreateVolume(ctx, tc.req); !errors.Is(err, api.ErrUnprocessable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create %+v: %v, want 422 saying %q", tc.req, err, tc.want)
		}
	}
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 1 << 20}); !errdefs.IsAlreadyExists(err) {
		t.Errorf("duplicate: %v", err)
	}
	// Another tenant neither sees nor attaches it, and may have its own.
	if vs, err := b.ListVolumes(ctx); err != nil || len(vs) != 0 {
		t.Errorf("tenant b lists %v, %v", vs, err)
	}
	if _, err := b.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/d"}}}); !errdefs.IsNotFound(err) {
		t.Errorf("tenant b attaches a's volume: %v", err)
	}
	if _, err := b.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 1 << 10}); err != nil {
		t.Errorf("tenant b's own volume of the same name: %v", err)
	}
	for _, vs := range [][]api.VolumeMount{
		{{Name: "data", Path: "rel"}},
		{{Name: "data", Path: "/"}},
		{{Name: "data", Path: "/a"}, {Name: "data", Path: "/b"}},
		{{Name: "data", Path: "/a"}, {Name: "other", Path: "/a/b"}},
	} {
		if _, err := a.Create(ctx, api.CreateRequest{Volumes: vs}); !errors.Is(err, api.ErrUnprocessable) {
			t.Errorf("create with %+v: %v, want 422", vs, err)
		}
	}
	if v, _ := a.GetVolume(ctx, "data"); v.AttachedTo != "" {
		t.Errorf("a refused create left a lease: %+v", v)
	}
	sb, err := a.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/data"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/data"}}})
	if !errdefs.IsConflict(err) || !strings.Contains(err.Error(), sb.ID) {
		t.Errorf("second read-write attach: %v, want 409 naming %s", err, sb.ID)
	}
	var out bytes.Buffer
	res, err := a.Exec(ctx, sb.ID, api.ExecRequest{Script: "head -c 5000 /dev/zero > /data/z"}, &out, &out)
	if err != nil || res.Exit != 0 {
		t.Fatalf("write: %+v %v %s", res, err, out.String())
	}
	// A file write through the API lands in the volume and hits its quota.
	err = a.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/data/big", Data: strings.NewReader(strings.Repeat("x", 2<<20))})
	if !errors.Is(err, api.ErrInsufficientStorage) || !strings.Contains(err.Error(), "volume data") {
		t.Errorf("file write past the volume's quota: %v, want 507 naming the volume", err)
	}
	v, err := a.GetVolume(ctx, "data")
	if err != nil || v.AttachedTo != sb.ID || v.Used < 5000 || v.Generation == 0 {
		t.Errorf("get: %+v %v (want attached to %s, used >= 5000, committed)", v, err, sb.ID)
	}
	if _, err := a.ResizeVolume(ctx, "data", 1<<10); !errors.Is(err, api.ErrUnprocessable) || !strings.Contains(err.Error(), "shrinking") {
		t.Errorf("shrink: %v", err)
	}
	if v, err := a.ResizeVolume(ctx, "data", 4<<20); err != nil || v.Size != 4<<20 {
		t.Errorf("grow: %+v %v", v, err)
	}
	if err := a.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/data/big", Data: strings.NewReader(strings.Repeat("x", 2<<20))}); err != nil {
		t.Errorf("the grown quota holds the write: %v", err)
	}
	if err := a.DeleteVolume(ctx, "data"); !errdefs.IsConflict(err) || !strings.Contains(err.Error(), sb.ID) {
		t.Errorf("delete while attached: %v", err)
	}
	if err := a.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if v, _ := a.GetVolume(ctx, "data"); v.AttachedTo != "" || v.Used < 2<<20 {
		t.Errorf("after the sandbox's delete: %+v", v)
	}
	if err := a.DeleteVolume(ctx, "data"); err != nil {
		t.Errorf("delete: %v", err)
	}
	if _, err := a.GetVolume(ctx, "data"); !errdefs.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
}
