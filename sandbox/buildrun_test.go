package sandbox_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// buildDockerfile builds text as a Dockerfile (empty context) with the
// real sandbox runner and returns the resulting image's files.
func buildDockerfile(t *testing.T, cat *image.Catalog, text string) (fs.FS, error) {
	t.Helper()
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	if err := os.WriteFile(df, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	m, err := cat.BuildDockerfile(context.Background(), df, dir, image.BuildOptions{Log: &log})
	if err != nil {
		return nil, fmt.Errorf("%w (build log: %s)", err, log.String())
	}
	im, err := cat.Open(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return im.FS(), nil
}

func TestBuildRunner(t *testing.T) {
	p := openParts(t, t.TempDir())
	defer p.close()
	p.cat.Runner = &sandbox.BuildRunner{Commands: node.Commands(), Catalog: p.cat}

	t.Run("resident RUN becomes the layer", func(t *testing.T) {
		fsys, err := buildDockerfile(t, p.cat, "FROM "+image.DefaultName+"\nRUN mkdir -p /app && echo hi > /app/x\nENV GREETING=hello\nRUN echo $GREETING >> /app/x\n")
		if err != nil {
			t.Fatal(err)
		}
		if data, err := fs.ReadFile(fsys, "app/x"); err != nil || string(data) != "hi\nhello\n" {
			t.Fatalf("/app/x: %q %v", data, err)
		}
	})
	t.Run("failing RUN names its status", func(t *testing.T) {
		_, err := buildDockerfile(t, p.cat, "FROM "+image.DefaultName+"\nRUN exit 3\n")
		if err == nil || !strings.Contains(err.Error(), "exit status 3") {
			t.Fatalf("err %v: want one naming exit status 3", err)
		}
	})
	t.Run("ELF without the native tier names the reason", func(t *testing.T) {
		busyboxImage(t, p.cat, "t1")
		_, err := buildDockerfile(t, p.cat, "FROM tenants/t1/busybox\nRUN /bin/busybox true\n")
		if err == nil || !strings.Contains(err.Error(), "exit status 126") || !strings.Contains(err.Error(), "not enabled for image builds") {
			t.Fatalf("err %v: want exit status 126 and the reason", err)
		}
	})
	t.Run("native RUN", func(t *testing.T) {
		rt := requireNative(t)
		p.cat.Runner = &sandbox.BuildRunner{Commands: node.Commands(), Catalog: p.cat, Native: rt}
		busyboxImage(t, p.cat, "t1")
		fsys, err := buildDockerfile(t, p.cat, "FROM tenants/t1/busybox\nRUN mkdir -p /app && echo hi > /app/x\nRUN /bin/busybox sh -c 'echo native >> /app/x; rm /etc/motd'\n")
		if err != nil {
			t.Fatal(err)
		}
		if data, err := fs.ReadFile(fsys, "app/x"); err != nil || string(data) != "hi\nnative\n" {
			t.Fatalf("/app/x: %q %v", data, err)
		}
		if _, err := fs.Stat(fsys, "etc/motd"); err == nil {
			t.Fatal("/etc/motd removed by the native RUN is still in the image")
		}
		if _, err := fs.Stat(fsys, "bin/busybox"); err != nil {
			t.Fatalf("the base's files are gone: %v", err)
		}
	})
}
