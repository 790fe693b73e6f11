package image

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeRunner stands in for the sandbox, which does not exist yet (the lead
// wires the real one). It records each RUN and applies the one command the
// tests use, `mkdir -p /app && echo hi > /app/x`, to a copy of the base.
type fakeRunner struct{ calls []RunRequest }

func (r *fakeRunner) Run(ctx context.Context, req RunRequest) (fs.FS, error) {
	r.calls = append(r.calls, req)
	t := newTree(Limits{})
	if err := t.addFS(ctx, req.Base, ""); err != nil {
		return nil, err
	}
	if req.Command == "mkdir -p /app && echo hi > /app/x" {
		if _, err := t.dir("app", true); err != nil {
			return nil, err
		}
		data := []byte("hi\n")
		if err := t.put("app/x", &inode{mode: 0o644, size: 3, data: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}}); err != nil {
			return nil, err
		}
	}
	efs, _, err := newEmitFS(ctx, t, nil)
	return efs, err
}

const testDockerfile = `# a comment
ARG GREETING=hello
FROM default
ENV APP_HOME=/app \
    MODE="test mode"
RUN mkdir -p /app && echo hi > /app/x
COPY hello.txt $APP_HOME/
WORKDIR /app/sub
USER 1000
LABEL org.example.greeting=$GREETING
`

func TestDockerfile_BuildAndCache(t *testing.T) {
	ctx := context.Background()
	c := newTestCatalog(t, stores[1].new(t))
	runner := &fakeRunner{}
	c.Runner = runner
	_, err := Default(ctx, c)
	must(t, err)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(testDockerfile), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the context\n"), 0o600))

	var log bytes.Buffer
	m, err := c.BuildDockerfile(ctx, filepath.Join(dir, "Dockerfile"), dir, BuildOptions{Log: &log})
	must(t, err)
	if len(runner.calls) != 1 {
		t.Fatalf("runner called %d times", len(runner.calls))
	}
	call := runner.calls[0]
	if !reflect.DeepEqual(call.Args, []string{"/bin/sh", "-c", "mkdir -p /app && echo hi > /app/x"}) {
		t.Errorf("RUN args %q", call.Args)
	}
	if !containsAll(call.Env, "APP_HOME=/app", "MODE=test mode", "GREETING=hello") || call.WorkingDir != DefaultConfig.WorkingDir {
		t.Errorf("RUN env %q workdir %q", call.Env, call.WorkingDir)
	}
	im, err := c.Open(ctx, m)
	must(t, err)
	v := fsView(t, im.FS())
	if v["app/x"].Sum != sum([]byte("hi\n")) {
		t.Errorf("app/x: %v", v["app/x"])
	}
	if e := v["app/hello.txt"]; e.Sum != sum([]byte("hello from the context\n")) || e.Uid != 0 || e.Mode != 0o600 {
		t.Errorf("app/hello.txt: %v", e)
	}
	if !v["app/sub"].Mode.IsDir() || !v["home/user"].Mode.IsDir() {
		t.Errorf("app/sub %v home/user %v", v["app/sub"], v["home/user"])
	}
	cfg := m.Config
	if !containsAll(cfg.Env, "APP_HOME=/app", "MODE=test mode", "PATH=/usr/local/bin:/usr/bin:/bin") ||
		cfg.WorkingDir != "/app/sub" || cfg.User != "1000" || cfg.Labels["org.example.greeting"] != "hello" {
		t.Errorf("config %+v", cfg)
	}
	verifyBothWays(t, im)

	// Unchanged rebuild: every step from the cache, RUN not executed.
	log.Reset()
	m2, err := c.BuildDockerfile(ctx, filepath.Join(dir, "Dockerfile"), dir, BuildOptions{Log: &log})
	must(t, err)
	if m2.Digest != m.Digest || len(runner.calls) != 1 {
		t.Errorf("rebuild: digest %s vs %s, runner calls %d", m2.Digest, m.Digest, len(runner.calls))
	}
	if n := strings.Count(log.String(), "cached"); n != 3 {
		t.Errorf("rebuild used the cache %d times, want 3 (RUN, COPY, WORKDIR):\n%s", n, log.String())
	}

	// A changed context file invalidates COPY and what follows, not RUN.
	must(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("changed\n"), 0o600))
	m3, err := c.BuildDockerfile(ctx, filepath.Join(dir, "Dockerfile"), dir, BuildOptions{})
	must(t, err)
	if m3.Digest == m.Digest || len(runner.calls) != 1 {
		t.Errorf("changed context: digest %s (old %s), runner calls %d", m3.Digest, m.Digest, len(runner.calls))
	}
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range list {
			if l == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func TestDockerfile_Errors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, dockerfile string
		want             []string
	}{
		{"unknown instruction", "FROM scratch\nFROBNICATE now\n", []string{"Dockerfile:2", `unknown instruction "FROBNICATE"`}},
		{"unsupported instruction", "FROM scratch\nVOLUME /data\n", []string{"Dockerfile:2", "VOLUME", "not supported"}},
		{"bad port", "FROM scratch\nEXPOSE 99999\n", []string{"Dockerfile:2", "bad port"}},
		{"bad stage name", "FROM scratch AS 1x\n", []string{"Dockerfile:1", "bad stage name"}},
		{"from options", "FROM --platform=linux/arm64 scratch\n", []string{"--platform", "not supported"}},
		{"copy from missing stage", "FROM scratch\nCOPY --from=nostage /a /b\n", []string{"Dockerfile:2", "nostage", "not in the catalog"}},
		{"no from", "COPY a b\n", []string{"Dockerfile:1", "must be FROM"}},
		{"missing image", "FROM nosuchimage\n", []string{"Dockerfile:1", "nosuchimage", "not in the catalog", "warren image pull"}},
		{"copy outside context", "FROM scratch\nCOPY ../../etc/passwd /x\n", []string{"Dockerfile:2", "not found"}},
		{"copy url", "FROM scratch\nADD https://example.com/x /x\n", []string{"only local files"}},
		{"run without runner", "FROM scratch\nRUN true\n", []string{"Dockerfile:2", "runner"}},
		{"empty", "# nothing\n", []string{"no instructions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCatalog(t, newMemStore())
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(tc.dockerfile), 0o644))
			_, err := c.BuildDockerfile(ctx, filepath.Join(dir, "Dockerfile"), dir, BuildOptions{})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestDockerfile_CopySymlinkEscape(t *testing.T) {
	ctx := context.Background()
	c := newTestCatalog(t, newMemStore())
	dir := t.TempDir()
	must(t, os.Symlink("/etc", filepath.Join(dir, "etc")))
	must(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY etc /etc\n"), 0o644))
	_, err := c.BuildDockerfile(ctx, filepath.Join(dir, "Dockerfile"), dir, BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "outside the build context") {
		t.Fatalf("COPY through a symlink out of the context: %v", err)
	}
}

func TestDockerfile_AddCopyVariants(t *testing.T) {
	ctx := context.Background()
	c := newTestCatalog(t, stores[1].new(t))
	// A base image with hard links, built from a directory.
	base := t.TempDir()
	must(t, os.WriteFile(filepath.Join(base, "one"), []byte("same inode"), 0o644))
	must(t, os.Link(filepath.Join(base, "one"), filepath.Join(base, "two")))
	bm, err := c.BuildSource(ctx, base, BuildOptions{})
	must(t, err)
	must(t, c.Tag(ctx, "linked", bm))

	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "tree/sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tree/sub/c"), []byte("c"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "layer.tar"), makeTar(t,
		tarEntry{name: "opt/", typ: tar.TypeDir},
		tarEntry{name: "opt/tool", body: "tool", mode: 0o755}), 0o644))
	df := `FROM linked
COPY --chown=1000:1000 a.txt b.txt /dst/
COPY tree /t
ADD layer.tar /
COPY ["a.txt", "/json-form"]
`
	must(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644))
	m, err := c.BuildDockerfile(ctx, filepath.Join(dir, "Dockerfile"), dir, BuildOptions{})
	must(t, err)
	im, err := c.Open(ctx, m)
	must(t, err)
	v := fsView(t, im.FS())
	checks := []struct {
		path string
		ok   func(entry) bool
	}{
		{"dst/a.txt", func(e entry) bool { return e.Uid == 1000 && e.Gid == 1000 && e.Sum == sum([]byte("a")) }},
		{"dst/b.txt", func(e entry) bool { return e.Uid == 1000 && e.Mode == 0o755 }},
		{"t/sub/c", func(e entry) bool { return e.Uid == 0 && e.Sum == sum([]byte("c")) }},
		{"opt/tool", func(e entry) bool { return e.Mode == 0o755 && e.Sum == sum([]byte("tool")) }},
		{"json-form", func(e entry) bool { return e.Sum == sum([]byte("a")) }},
		{"two", func(e entry) bool { return e.Group == "one" }},
	}
	for _, c := range checks {
		if e, ok := v[c.path]; !ok || !c.ok(e) {
			t.Errorf("%s: %v (present %v)", c.path, e, ok)
		}
	}
	if _, ok := v["layer.tar"]; ok {
		t.Errorf("ADD of a local tar copied the archive instead of extracting it")
	}
	verifyBothWays(t, im)
}
