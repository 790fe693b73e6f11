package main

import (
	"archive/tar"
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}\n$`)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// testRegistryImage serves, on an in-process registry, a one-layer image
// with an /etc/passwd, a file and a config, and returns its reference.
func testRegistryImage(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{
		{"etc/passwd", "root:x:0:0:root:/root:/bin/sh\ndev:x:1500:1500:dev:/home/dev:/bin/sh\n"},
		{"home/dev/", ""},
		{"opt/app/version", "v1 from the registry\n"},
	} {
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg, ModTime: time.Unix(1700000000, 0)}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f.body))
	}
	tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Env: []string{"PATH=/usr/bin:/bin", "FROM_REGISTRY=yes"}, WorkingDir: "/opt/app", User: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/test/app:v1"
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	// An empty docker config: no credentials of the machine are used.
	cfg := t.TempDir()
	os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"auths":{}}`), 0o600)
	t.Setenv("DOCKER_CONFIG", cfg)
	return ref
}

// TestE2E_Images is the image story a user follows against a real warren
// serve: builds through the server and locally, Dockerfile contexts, the
// image config applied the same way by sandboxes and warren run, pulls,
// and errors that say what to do.
func TestE2E_Images(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir, "--no-native")
	admin := p.adminKey(t)
	cli := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return p.cli(t, admin, stdin, args...)
	}
	mustCLI := func(args ...string) string {
		t.Helper()
		out, errs, code := cli("", args...)
		if code != 0 {
			t.Fatalf("warren %s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	create := func(img string) string {
		t.Helper()
		return strings.TrimSpace(mustCLI("sandbox", "create", "--image", img))
	}
	exec := func(id, script string) string {
		t.Helper()
		return mustCLI("sandbox", "exec", id, "-c", script)
	}
	const identity = `echo "$(pwd) $(id -u) $HOME $USER"`

	ctxDir := t.TempDir()
	writeFiles(t, ctxDir, map[string]string{
		"Dockerfile": `FROM scratch AS assets
COPY hello.txt /assets/hello.txt
FROM default
COPY --from=assets /assets/hello.txt /srv/app/hello.txt
ENV GREETING=hi
WORKDIR /srv/app
RUN echo built > /srv/app/built
USER 1000
RUN id -u > /tmp/run-uid
EXPOSE 8080
CMD ["serve"]
`,
		"hello.txt": "hello from the context\n",
	})

	t.Run("DockerfileThroughServer", func(t *testing.T) {
		out, errs, code := cli("", "image", "build", "-t", "app", ctxDir)
		if code != 0 || !digestRE.MatchString(out) || !strings.Contains(errs, "built app") {
			t.Fatalf("image build: %q %q %d", out, errs, code)
		}
		if ls := mustCLI("image", "ls"); !regexp.MustCompile(`(?m)^app\s+sha256:`).MatchString(ls) || !strings.Contains(ls, "default") {
			t.Fatalf("image ls: %q", ls)
		}
		id := create("app")
		got := exec(id, identity+`; echo $GREETING; cat hello.txt built /tmp/run-uid`)
		if want := "/srv/app 1000 /home/user user\nhi\nhello from the context\nbuilt\n1000\n"; got != want {
			t.Fatalf("sandbox of the built image:\n%q\nwant\n%q", got, want)
		}
		// The same image under warren run starts the same way.
		out, errs, code = cli("", "run", "--image", "tenants/admin/app", "-c", identity+`; echo $GREETING`)
		if code != 0 || out != "/srv/app 1000 /home/user user\nhi\n" {
			t.Fatalf("warren run of the image: %q %q %d", out, errs, code)
		}
		if _, errs, code := cli("", "image", "rm", "app"); code != exitConflict || !strings.Contains(errs, "in use") {
			t.Fatalf("image rm while a sandbox uses it: %q %d, want %d", errs, code, exitConflict)
		}
		mustCLI("sandbox", "rm", id)
		mustCLI("image", "rm", "app")
		if ls := mustCLI("image", "ls"); strings.Contains(ls, "app ") {
			t.Fatalf("app still listed after rm: %q", ls)
		}
	})

	t.Run("DefaultImageIdentity", func(t *testing.T) {
		id := create("")
		got := exec(id, identity)
		out, errs, code := cli("", "run", "-c", identity)
		if code != 0 || got != "/home/user 1000 /home/user user\n" || out != got {
			t.Fatalf("default image: server %q, warren run %q (%q %d)", got, out, errs, code)
		}
	})

	t.Run("FileFlagAndPlainDir", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "Other.dockerfile")
		os.WriteFile(other, []byte("FROM default\nCOPY hello.txt /via-f\n"), 0o644)
		mustCLI("image", "build", "-t", "viaf", "-f", other, ctxDir)
		if got := exec(create("viaf"), "cat /via-f"); got != "hello from the context\n" {
			t.Fatalf("-f outside the context: %q", got)
		}
		// A directory without a Dockerfile is the image itself.
		plain := t.TempDir()
		writeFiles(t, plain, map[string]string{"etc/motd": "plain\n", "bin/.keep": ""})
		remote := mustCLI("image", "build", "-t", "plain", plain)
		if got := exec(create("plain"), "cat /etc/motd; pwd"); got != "plain\n/\n" {
			t.Fatalf("plain directory image: %q", got)
		}
		// The same files give the same digest built locally (a directory)
		// and through the server (a tar of it).
		local := mustCLI("image", "build", "--local", plain)
		if local != remote {
			t.Fatalf("local build %q, server build %q", local, remote)
		}
	})

	t.Run("LocalBuildIsShared", func(t *testing.T) {
		shared := t.TempDir()
		writeFiles(t, shared, map[string]string{"Dockerfile": "FROM default\nENV SHARED=1\n"})
		mustCLI("image", "build", "--data", dir, "-t", "tools", shared)
		if got := exec(create("tools"), "echo $SHARED"); got != "1\n" {
			t.Fatalf("a local build on the server's data dir: %q", got)
		}
		if ls := mustCLI("image", "ls"); !regexp.MustCompile(`(?m)^tools\s+sha256:\S+\s+\d+\s+true$`).MatchString(ls) {
			t.Fatalf("image ls does not show tools as shared: %q", ls)
		}
		if _, errs, code := cli("", "image", "rm", "tools"); code != exitNoPerm || !strings.Contains(errs, "--local") {
			t.Fatalf("a tenant removing a shared image: %q %d, want %d naming --local", errs, code, exitNoPerm)
		}
	})

	t.Run("PullAndFromRegistry", func(t *testing.T) {
		ref := testRegistryImage(t)
		out, errs, code := cli("", "image", "pull", ref)
		if code != 0 || !digestRE.MatchString(out) {
			t.Fatalf("image pull: %q %q %d", out, errs, code)
		}
		id := create(ref)
		if got := exec(id, identity+"; cat version; echo $FROM_REGISTRY"); got != "/opt/app 1500 /home/dev dev\nv1 from the registry\nyes\n" {
			t.Fatalf("sandbox of the pulled image: %q", got)
		}
		// A tenant's Dockerfile may start FROM it (it is in the catalog).
		from := t.TempDir()
		writeFiles(t, from, map[string]string{"Dockerfile": "FROM " + ref + "\nENV LAYERED=1\n"})
		mustCLI("image", "build", "-t", "layered", from)
		if got := exec(create("layered"), "echo $LAYERED $FROM_REGISTRY; pwd"); got != "1 yes\n/opt/app\n" {
			t.Fatalf("FROM the pulled image: %q", got)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		cases := []struct {
			name string
			args []string
			code int
			want []string
		}{
			{"unknown image", []string{"sandbox", "create", "--image", "nosuch"}, exitNotFound, []string{`"nosuch" not found for tenant "admin"`, "warren image build -t nosuch", "warren image ls"}},
			{"build without a name", []string{"image", "build", ctxDir}, exitUsage, []string{"-t NAME", "--local"}},
			{"local source on the server", []string{"image", "build", "-t", "x", "oci:/nowhere"}, exitUsage, []string{"--local"}},
			{"missing source", []string{"image", "build", "-t", "x", "/no/such/dir"}, exitUsage, []string{"no such file"}},
			{"bad Dockerfile", []string{"image", "build", "-t", "bad", "-f", "/dev/null", ctxDir}, exitUsage, []string{"no instructions"}},
			{"rm unknown", []string{"image", "rm", "nosuch"}, exitNotFound, []string{`tenant "admin"`}},
			{"local inspect unknown", []string{"image", "inspect", "nosuch"}, exitNotFound, []string{"warren image ls --local"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, errs, code := cli("", tc.args...)
				if code != tc.code {
					t.Fatalf("exit %d, want %d: %s", code, tc.code, errs)
				}
				for _, w := range tc.want {
					if !strings.Contains(errs, w) {
						t.Errorf("stderr %q does not say %q", errs, w)
					}
				}
			})
		}
	})
}
