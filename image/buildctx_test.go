package image

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeContext fills dir with a small context: files with sub-second
// mtimes, a subdirectory, a symlink and a hard link.
func writeContext(t *testing.T, dir, dockerfile string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(dir, "src/sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "src/a.txt"), []byte("alpha\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "src/sub/run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(t, os.Symlink("a.txt", filepath.Join(dir, "src/link")))
	must(t, os.Link(filepath.Join(dir, "src/a.txt"), filepath.Join(dir, "src/hard")))
	if dockerfile != "" {
		must(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644))
	}
	when := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	for _, p := range []string{"src/a.txt", "src/sub/run.sh", "src/sub", "src", "Dockerfile", "."} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			must(t, os.Chtimes(filepath.Join(dir, p), when, when))
		}
	}
}

// gnuTar archives dir with the real tar(1), as a user would upload it.
func gnuTar(t *testing.T, dir string, format string) []byte {
	t.Helper()
	args := []string{"-C", dir, "-cf", "-"}
	if format != "" {
		args = append(args, "--format="+format)
	}
	out, err := exec.Command("tar", append(args, ".")...).Output()
	if err != nil {
		t.Fatalf("tar: %v", err)
	}
	return out
}

// The same files give the same image whether they come from a directory
// or a tar of it: as a plain image and as a Dockerfile context.
func TestBuild_DirAndTarSameDigest(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tar(1) is missing")
		}
		t.Skip("tar(1) is not installed")
	}
	ctx := context.Background()
	cases := []struct {
		name, dockerfile, format string
	}{
		{"plain dir, gnu tar", "", "gnu"},
		{"plain dir, pax tar", "", "pax"},
		{"dockerfile context, gnu tar", "FROM scratch\nCOPY src /app\nCOPY src/a.txt /top\nENV A=1\n", "gnu"},
		{"dockerfile context, pax tar", "FROM scratch\nCOPY src /app\nWORKDIR /app\nCOPY src/sub ./sub2/\n", "pax"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCatalog(t, newMemStore())
			dir := t.TempDir()
			writeContext(t, dir, tc.dockerfile)
			var fromDir Manifest
			var err error
			if tc.dockerfile == "" {
				fromDir, err = c.BuildSource(ctx, dir, BuildOptions{})
			} else {
				fromDir, err = c.BuildDockerfile(ctx, "", dir, BuildOptions{})
			}
			must(t, err)
			// A second catalog: no step cache shared with the first build.
			c2 := newTestCatalog(t, newMemStore())
			fromTar, err := c2.BuildTar(ctx, bytes.NewReader(gnuTar(t, dir, tc.format)), "", BuildOptions{})
			must(t, err)
			if fromDir.Digest != fromTar.Digest {
				t.Errorf("directory gives %s, its tar %s", fromDir.Digest, fromTar.Digest)
			}
			if !reflect.DeepEqual(fromDir.Config, fromTar.Config) {
				t.Errorf("config from the directory %+v, from the tar %+v", fromDir.Config, fromTar.Config)
			}
		})
	}
}

func TestBuildTar_Dockerfile(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		ents       []tarEntry
		dockerfile string
		want       map[string]string // path -> content in the image
		wantErr    string
	}{
		{"no Dockerfile: the files are the image", []tarEntry{{name: "x", body: "x"}}, "", map[string]string{"x": "x"}, ""},
		{"Dockerfile at the root", []tarEntry{{name: "Dockerfile", body: "FROM scratch\nCOPY x /y\n"}, {name: "x", body: "x"}}, "", map[string]string{"y": "x"}, ""},
		{"named Dockerfile", []tarEntry{{name: "build/df", body: "FROM scratch\nCOPY x /z\n"}, {name: "x", body: "x"}}, "build/df", map[string]string{"z": "x"}, ""},
		{"named Dockerfile missing", []tarEntry{{name: "x", body: "x"}}, "nope", nil, "not a file in the build context"},
		{"named Dockerfile escapes", []tarEntry{{name: "x", body: "x"}}, "../etc/passwd", nil, "not a path inside"},
		{"empty Dockerfile", []tarEntry{{name: "Dockerfile", body: ""}}, "", nil, "no instructions"},
		{"COPY and ADD of empty files", []tarEntry{{name: "Dockerfile", body: "FROM scratch\nCOPY e /e\nADD e.tar /t/\n"}, {name: "e", body: ""}, {name: "e.tar", body: ""}}, "", map[string]string{"e": ""}, ""},
		{"COPY through a symlink out", []tarEntry{{name: "Dockerfile", body: "FROM scratch\nCOPY etc /etc\n"}, {name: "etc", typ: '2', link: "/etc"}}, "", nil, "outside the build context"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCatalog(t, newMemStore())
			m, err := c.BuildTar(ctx, bytes.NewReader(makeTar(t, tc.ents...)), tc.dockerfile, BuildOptions{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			must(t, err)
			im, err := c.Open(ctx, m)
			must(t, err)
			v := fsView(t, im.FS())
			for p, body := range tc.want {
				if e, ok := v[p]; !ok || e.Sum != sum([]byte(body)) {
					t.Errorf("%s: %+v (present %v)", p, e, ok)
				}
			}
			if _, ok := v["Dockerfile"]; ok && tc.dockerfile == "" && len(tc.want) == 1 && tc.want["y"] != "" {
				t.Errorf("the Dockerfile itself was copied into the image")
			}
		})
	}
}

func TestDockerfile_MultiStageAndConfig(t *testing.T) {
	ctx := context.Background()
	c := newTestCatalog(t, newMemStore())
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "tool"), []byte("built tool"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "junk"), []byte("only in the build stage"), 0o644))
	df := `ARG VERSION=1.2
FROM scratch AS build
COPY tool junk /out/
FROM scratch AS other
COPY junk /junk
FROM default
ARG VERSION
COPY --from=build /out/tool /usr/local/bin/tool
COPY --from=0 /out/junk /copied-by-index
ENV APP_VERSION=$VERSION
WORKDIR /srv/app
USER 1000:1000
EXPOSE 8080 53/udp 8080/tcp
ENTRYPOINT ["/usr/local/bin/tool"]
CMD serve --port 8080
`
	must(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644))
	m, err := c.BuildDockerfile(ctx, "", dir, BuildOptions{})
	must(t, err)
	want := Config{
		Env:          []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/user", "APP_VERSION=1.2"},
		WorkingDir:   "/srv/app",
		User:         "1000:1000",
		Entrypoint:   []string{"/usr/local/bin/tool"},
		Cmd:          []string{"/bin/sh", "-c", "serve --port 8080"},
		ExposedPorts: []string{"53/udp", "8080/tcp"},
	}
	if !reflect.DeepEqual(m.Config, want) {
		t.Errorf("config\n %+v\nwant\n %+v", m.Config, want)
	}
	im, err := c.Open(ctx, m)
	must(t, err)
	v := fsView(t, im.FS())
	if e, ok := v["usr/local/bin/tool"]; !ok || e.Sum != sum([]byte("built tool")) || e.Mode != 0o755 {
		t.Errorf("usr/local/bin/tool from the build stage: %+v %v", e, ok)
	}
	if _, ok := v["copied-by-index"]; !ok {
		t.Errorf("COPY --from=0 did not copy from the first stage")
	}
	if _, ok := v["junk"]; ok {
		t.Errorf("a file of an earlier stage leaked into the final image")
	}
	if _, ok := v["etc/passwd"]; !ok {
		t.Errorf("the final stage is not based on the default image")
	}
	// A later ENTRYPOINT drops an inherited CMD, as in Docker.
	must(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch AS a\nCMD [\"x\"]\nFROM a\nENTRYPOINT [\"y\"]\n"), 0o644))
	m, err = c.BuildDockerfile(ctx, "", dir, BuildOptions{})
	must(t, err)
	if m.Config.Cmd != nil || !reflect.DeepEqual(m.Config.Entrypoint, []string{"y"}) {
		t.Errorf("FROM a stage + ENTRYPOINT: cmd %v entrypoint %v", m.Config.Cmd, m.Config.Entrypoint)
	}
}

// A scoped build (a tenant's, on a server) sees its own tags and shared
// ones, never another tenant's.
func TestDockerfile_Scope(t *testing.T) {
	ctx := context.Background()
	c := newTestCatalog(t, newMemStore())
	base, err := c.BuildTar(ctx, bytes.NewReader(makeTar(t, tarEntry{name: "mine", body: "m"})), "", BuildOptions{})
	must(t, err)
	must(t, c.Tag(ctx, "tenants/acme/base", base))
	must(t, c.Tag(ctx, "tenants/other/secret", base))
	must(t, c.Tag(ctx, "shared", base))
	cases := []struct {
		from    string
		wantErr string
	}{
		{"base", ""},
		{"shared", ""},
		{"tenants/other/secret", "not found"},
		{"tenants/acme/base", "not found"},
		{"secret", "not in the catalog"},
	}
	for _, tc := range cases {
		t.Run(tc.from, func(t *testing.T) {
			df := "FROM " + tc.from + "\n"
			_, err := c.BuildTar(ctx, bytes.NewReader(makeTar(t, tarEntry{name: "Dockerfile", body: df})), "", BuildOptions{Scope: "tenants/acme/"})
			if tc.wantErr == "" {
				must(t, err)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("FROM %s: %v, want an error with %q", tc.from, err, tc.wantErr)
			}
		})
	}
}
