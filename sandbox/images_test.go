package sandbox_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/sandbox"
)

func tarOf(t *testing.T, files map[string]string) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1700000000, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	return bytes.NewReader(buf.Bytes())
}

// The server's catalog: a tenant's own images first, then the node's
// shared ones; another tenant's never.
func TestCatalogImages_Tenants(t *testing.T) {
	ctx := context.Background()
	p := openParts(t, t.TempDir())
	defer p.close()
	imgs := sandbox.CatalogImages(p.cat)
	local, err := p.cat.BuildTar(ctx, tarOf(t, map[string]string{"who": "shared"}), "", image.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cat.Tag(ctx, "tools", local); err != nil {
		t.Fatal(err)
	}
	acme, err := imgs.Build(ctx, "acme", "tools", tarOf(t, map[string]string{"who": "acme"}), api.ImageBuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imgs.Build(ctx, "other", "secret", tarOf(t, map[string]string{"who": "other"}), api.ImageBuildOptions{}); err != nil {
		t.Fatal(err)
	}
	// A tenant's Dockerfile build sees its own and shared images only.
	if _, err := imgs.Build(ctx, "acme", "df", tarOf(t, map[string]string{"Dockerfile": "FROM tools\nENV X=1\n"}), api.ImageBuildOptions{}); err != nil {
		t.Fatalf("FROM the tenant's own image: %v", err)
	}
	if _, err := imgs.Build(ctx, "acme", "steal", tarOf(t, map[string]string{"Dockerfile": "FROM tenants/other/secret\n"}), api.ImageBuildOptions{}); err == nil {
		t.Fatal("a tenant built FROM another tenant's image")
	}

	cases := []struct {
		tenant, name string
		want         string // the file "who", or "" for an error
		errIs        error
		errText      string
	}{
		{"acme", "tools", "acme", nil, ""},   // its own shadows the shared one
		{"beta", "tools", "shared", nil, ""}, // the shared one
		{"beta", "secret", "", errdefs.ErrNotFound, `not found for tenant "beta"`},
		{"beta", "tenants/other/secret", "", api.ErrUnprocessable, "without the tenants/ prefix"},
		{"other", "secret", "other", nil, ""},
		{"beta", "", "", nil, ""}, // the default image
	}
	for _, tc := range cases {
		t.Run(tc.tenant+"/"+tc.name, func(t *testing.T) {
			im, err := imgs.Lookup(ctx, tc.tenant, tc.name)
			if tc.errIs != nil {
				if !errors.Is(err, tc.errIs) || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("Lookup: %v, want %v naming %q", err, tc.errIs, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if im.Config.User != image.DefaultConfig.User {
					t.Fatalf("default image config %+v", im.Config)
				}
				return
			}
			if data, err := fs.ReadFile(im.FS, "who"); err != nil || string(data) != tc.want {
				t.Fatalf("who = %q %v, want %q", data, err, tc.want)
			}
		})
	}

	list, err := imgs.List(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]api.Image{}
	for _, im := range list {
		got[im.Name] = im
	}
	if im := got["tools"]; im.Digest != acme.Digest || im.Shared {
		t.Errorf("acme's tools: %+v, want its own %s", im, acme.Digest)
	}
	if !got["default"].Shared || got["secret"].Digest != "" || len(got) != 3 {
		t.Errorf("acme's list: %+v", list)
	}

	rm := []struct {
		tenant, name string
		errIs        error
	}{
		{"beta", "tools", errdefs.ErrPermissionDenied},
		{"beta", "secret", errdefs.ErrNotFound},
		{"acme", "tools", nil},
		{"acme", "tools", errdefs.ErrPermissionDenied}, // now only the shared one is left
	}
	for _, tc := range rm {
		if err := imgs.Remove(ctx, tc.tenant, tc.name); !errors.Is(err, tc.errIs) && !(tc.errIs == nil && err == nil) {
			t.Errorf("Remove(%s, %s) = %v, want %v", tc.tenant, tc.name, err, tc.errIs)
		}
	}
	if im, err := imgs.Lookup(ctx, "acme", "tools"); err != nil || im.Digest != local.Digest {
		t.Errorf("after removing acme's tools, acme sees %+v %v, want the shared %s", im, err, local.Digest)
	}
}
