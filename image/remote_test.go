package image

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// testRegistry serves an in-process registry holding ociTestImage as
// HOST/test/app:v1. With user set, every request needs basic auth.
func testRegistry(t *testing.T, user, pass string) string {
	t.Helper()
	reg := registry.New(registry.Logger(nopLogger()))
	var h http.Handler = reg
	if user != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"credentials required"}]}`, http.StatusUnauthorized)
				return
			}
			reg.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := name.ParseReference(host + "/test/app:v1")
	must(t, err)
	opts := []remote.Option{}
	if user != "" {
		opts = append(opts, remote.WithAuth(basicAuth{user, pass}))
	}
	must(t, remote.Write(ref, ociTestImage(t), opts...))
	return host
}

// dockerConfig points the docker keychain at a config with creds for host.
func dockerConfig(t *testing.T, host, user, pass string) {
	dir := t.TempDir()
	cfg := ""
	if user != "" {
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		cfg = fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)
	} else {
		cfg = `{"auths":{}}`
	}
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600))
	t.Setenv("DOCKER_CONFIG", dir)
}

func TestPull(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name               string
		regUser, regPass   string // what the registry wants
		confUser, confPass string // what the docker config has
		wantErr            string
	}{
		{"anonymous", "", "", "", "", ""},
		{"auth from the docker config", "agent", "s3cret", "agent", "s3cret", ""},
		{"no credentials", "agent", "s3cret", "", "", "docker login"},
		{"wrong credentials", "agent", "s3cret", "agent", "nope", "UNAUTHORIZED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host := testRegistry(t, tc.regUser, tc.regPass)
			dockerConfig(t, host, tc.confUser, tc.confPass)
			c := newTestCatalog(t, newMemStore())
			ref := host + "/test/app:v1"
			m, err := c.Pull(ctx, ref, BuildOptions{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), ref) {
					t.Fatalf("pull: %v, want an error naming %s and %q", err, ref, tc.wantErr)
				}
				return
			}
			must(t, err)
			if want := (Config{Env: []string{"PATH=/bin", "FOO=bar"}, WorkingDir: "/work", User: "1000:1000"}); !reflect.DeepEqual(m.Config, want) {
				t.Errorf("config %+v, want %+v", m.Config, want)
			}
			got, err := c.ResolveRef(ctx, ref)
			must(t, err)
			if got.Digest != m.Digest {
				t.Errorf("tag %s -> %s, pulled %s", ref, got.Digest, m.Digest)
			}
			im, err := c.Open(ctx, m)
			must(t, err)
			v := fsView(t, im.FS())
			if v["etc/a"].Sum != sum([]byte("new a")) {
				t.Errorf("etc/a: layers not applied in order")
			}
			if _, ok := v["gone.txt"]; ok {
				t.Errorf("whiteout ignored")
			}
		})
	}
}

// FROM a registry reference pulls when the build may, and says how to
// add the image when it may not (a tenant's build on a server).
func TestDockerfile_FromRegistry(t *testing.T) {
	ctx := context.Background()
	host := testRegistry(t, "", "")
	dockerConfig(t, host, "", "")
	ref := host + "/test/app:v1"
	df := "FROM " + ref + "\nCOPY x /work/x\n"
	tarCtx := func() *bytes.Reader {
		return bytes.NewReader(makeTar(t, tarEntry{name: "Dockerfile", body: df}, tarEntry{name: "x", body: "mine"}))
	}
	c := newTestCatalog(t, newMemStore())
	_, err := c.BuildTar(ctx, tarCtx(), "", BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "warren image pull "+ref) {
		t.Fatalf("FROM a missing image without pulls: %v", err)
	}
	m, err := c.BuildTar(ctx, tarCtx(), "", BuildOptions{Pull: true})
	must(t, err)
	if m.Config.WorkingDir != "/work" || m.Config.User != "1000:1000" {
		t.Errorf("config of the pulled base not inherited: %+v", m.Config)
	}
	im, err := c.Open(ctx, m)
	must(t, err)
	v := fsView(t, im.FS())
	if v["work/x"].Sum != sum([]byte("mine")) || v["etc/a"].Sum != sum([]byte("new a")) {
		t.Errorf("image of FROM %s + COPY: %v", ref, v)
	}
	// Once pulled, the image is in the catalog: builds without pulls use it.
	if _, err := c.BuildTar(ctx, tarCtx(), "", BuildOptions{}); err != nil {
		t.Errorf("FROM a pulled image without pulls: %v", err)
	}
}

type basicAuth struct{ user, pass string }

func (b basicAuth) Authorization() (*authn.AuthConfig, error) {
	return &authn.AuthConfig{Username: b.user, Password: b.pass}, nil
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
