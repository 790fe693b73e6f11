package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// tarEntry is a compact description of one tar header (+ body).
type tarEntry struct {
	name, body, link string
	typ              byte
	mode             int64
	size             int64 // overrides len(body) in the header when set
}

func makeTar(t *testing.T, ents ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
			if e.size != 0 {
				h.Size = e.size
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg && e.size == 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ents[len(ents)-1].size == 0 {
		must(t, tw.Close())
	}
	return buf.Bytes()
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	must(t, err)
	must(t, zw.Close())
	return buf.Bytes()
}

func TestBuild_Tar(t *testing.T) {
	ctx := context.Background()
	data := makeTar(t,
		tarEntry{name: "./", typ: tar.TypeDir},
		tarEntry{name: "./etc/", typ: tar.TypeDir},
		tarEntry{name: "./etc/motd", body: "hi\n"},
		tarEntry{name: "./etc/motd2", typ: tar.TypeLink, link: "etc/motd"},
		tarEntry{name: "./bin/sh", typ: tar.TypeSymlink, link: "/usr/bin/dash"},
		tarEntry{name: "./usr/bin/dash", body: "\x7fELF", mode: 0o4755},
	)
	for _, compressed := range []bool{false, true} {
		c := newTestCatalog(t, newMemStore())
		in := data
		if compressed {
			in = gz(t, data)
		}
		m, err := c.BuildSource(ctx, "-", BuildOptions{Stdin: bytes.NewReader(in)})
		must(t, err)
		im, err := c.Open(ctx, m)
		must(t, err)
		v := fsView(t, im.FS())
		if v["etc/motd"].Sum != sum([]byte("hi\n")) || v["etc/motd2"].Group != "etc/motd" {
			t.Errorf("motd: %v / %v", v["etc/motd"], v["etc/motd2"])
		}
		if !compressed {
			xm, err := c.BuildSource(ctx, "-", BuildOptions{Stdin: bytes.NewReader(xattrTar(t, "user.k", "v"))})
			must(t, err)
			xim, err := c.Open(ctx, xm)
			must(t, err)
			if x := fsView(t, xim.FS())["f"].Xattrs; x != "user.k=v" {
				t.Errorf("tar xattr: %q", x)
			}
		}
		if v["bin/sh"].Target != "/usr/bin/dash" || v["usr/bin/dash"].Mode != fs.ModeSetuid|0o755 {
			t.Errorf("bin/sh %v usr/bin/dash %v", v["bin/sh"], v["usr/bin/dash"])
		}
		verifyBothWays(t, im)
	}
}

func TestBuild_HostileTar(t *testing.T) {
	ctx := context.Background()
	valid := gz(t, makeTar(t, tarEntry{name: "a", body: strings.Repeat("x", 100000)}, tarEntry{name: "b", body: "y"}))
	cases := []struct {
		name string
		tar  []byte
		want []string // substrings of the error
	}{
		{"dotdot", makeTar(t, tarEntry{name: "ok", body: "1"}, tarEntry{name: "../evil", body: "x"}), []string{`"../evil"`, "escapes"}},
		{"nested dotdot", makeTar(t, tarEntry{name: "a/../../evil", body: "x"}), []string{`"a/../../evil"`, "escapes"}},
		{"absolute", makeTar(t, tarEntry{name: "/etc/passwd", body: "x"}), []string{`"/etc/passwd"`, "absolute"}},
		{"write through symlink", makeTar(t,
			tarEntry{name: "link", typ: tar.TypeSymlink, link: "/etc"},
			tarEntry{name: "link/passwd", body: "root::0:0::/:/bin/sh\n"}), []string{`"link/passwd"`, "symlink"}},
		{"hardlink outside", makeTar(t, tarEntry{name: "h", typ: tar.TypeLink, link: "../../etc/shadow"}), []string{`"h"`, "outside"}},
		{"hardlink absolute", makeTar(t, tarEntry{name: "h", typ: tar.TypeLink, link: "/etc/shadow"}), []string{`"h"`, "outside"}},
		{"hardlink missing", makeTar(t, tarEntry{name: "h", typ: tar.TypeLink, link: "nothere"}), []string{`"h"`, "not in the archive"}},
		{"huge size", makeTar(t, tarEntry{name: "big", size: 1 << 50}), []string{`"big"`, "exceeds"}},
		{"truncated body", makeTar(t, tarEntry{name: "short", size: 1 << 20}), []string{"short"}},
		{"corrupt gzip", append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, bytes.Repeat([]byte{0xff}, 64)...), []string{"tar.gz", "corrupt"}},
		{"truncated gzip", valid[:len(valid)/2], []string{"tar"}},
		{"device number", makeTar(t, tarEntry{name: "dev", typ: tar.TypeChar}), nil},
		{"huge xattr", xattrTar(t, "user.big", strings.Repeat("v", 3000)), []string{`"f"`, "xattrs take"}},
		{"whiteout outside layers is a file", makeTar(t, tarEntry{name: ".wh.x", body: ""}), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			c := newTestCatalog(t, st)
			_, err := c.BuildSource(ctx, "-", BuildOptions{Stdin: bytes.NewReader(tc.tar)})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid input refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("hostile tar accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			// Nothing was written: no image in the store, nothing left in the cache.
			if len(st.blob) != 0 {
				t.Errorf("store has %d blobs after a refused build", len(st.blob))
			}
			left, _ := os.ReadDir(c.cacheDir)
			if len(left) != 0 {
				t.Errorf("cache dir has %d leftovers", len(left))
			}
		})
	}
}

func TestBuild_Limits(t *testing.T) {
	ctx := context.Background()
	c := newTestCatalog(t, newMemStore())
	c.Limits = Limits{MaxEntries: 3}
	_, err := c.BuildSource(ctx, "-", BuildOptions{Stdin: bytes.NewReader(makeTar(t,
		tarEntry{name: "1", body: "1"}, tarEntry{name: "2", body: "2"}, tarEntry{name: "3", body: "3"}, tarEntry{name: "4", body: "4"}))})
	if err == nil || !strings.Contains(err.Error(), "more than 3 entries") {
		t.Fatalf("entry limit: %v", err)
	}
	c.Limits = Limits{MaxBytes: 10}
	_, err = c.BuildSource(ctx, "-", BuildOptions{Stdin: bytes.NewReader(makeTar(t,
		tarEntry{name: "1", body: "123456"}, tarEntry{name: "2", body: "123456"}))})
	if err == nil || !strings.Contains(err.Error(), `"2"`) || !strings.Contains(err.Error(), "exceed 10 bytes") {
		t.Fatalf("byte limit: %v", err)
	}
}

// ociTestImage is two layers: the second deletes a file, a file in a kept
// directory, and makes a directory opaque.
func ociTestImage(t *testing.T) v1.Image {
	t.Helper()
	l1 := makeTar(t,
		tarEntry{name: "etc/", typ: tar.TypeDir},
		tarEntry{name: "etc/a", body: "old a"},
		tarEntry{name: "gone.txt", body: "delete me"},
		tarEntry{name: "keep/", typ: tar.TypeDir},
		tarEntry{name: "keep/x", body: "x"},
		tarEntry{name: "keep/y", body: "y"},
		tarEntry{name: "opq/", typ: tar.TypeDir},
		tarEntry{name: "opq/old1", body: "1"},
		tarEntry{name: "opq/sub/old2", body: "2"},
	)
	l2 := makeTar(t,
		tarEntry{name: ".wh.gone.txt", body: ""},
		tarEntry{name: "keep/.wh.x", body: ""},
		tarEntry{name: "opq/", typ: tar.TypeDir},
		tarEntry{name: "opq/new", body: "new"},
		tarEntry{name: "opq/.wh..wh..opq", body: ""},
		tarEntry{name: "etc/a", body: "new a"},
	)
	var layers []v1.Layer
	for _, l := range [][]byte{l1, l2} {
		b := l
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
		must(t, err)
		layers = append(layers, layer)
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	must(t, err)
	cf, err := img.ConfigFile()
	must(t, err)
	cf = cf.DeepCopy()
	cf.Config.Env = []string{"PATH=/bin", "FOO=bar"}
	cf.Config.WorkingDir = "/work"
	cf.Config.User = "1000:1000"
	img, err = mutate.ConfigFile(img, cf)
	must(t, err)
	return img
}

func TestBuild_OCI(t *testing.T) {
	ctx := context.Background()
	img := ociTestImage(t)
	dir := t.TempDir()
	p, err := layout.Write(filepath.Join(dir, "layout"), empty.Index)
	must(t, err)
	must(t, p.AppendImage(img))
	archive := filepath.Join(dir, "image.tar")
	tag, err := name.NewTag("example/test:latest")
	must(t, err)
	must(t, tarball.WriteToFile(archive, tag, img))

	for _, src := range []string{"oci:" + filepath.Join(dir, "layout"), "docker-archive:" + archive} {
		t.Run(strings.SplitN(src, ":", 2)[0], func(t *testing.T) {
			c := newTestCatalog(t, newMemStore())
			m, err := c.BuildSource(ctx, src, BuildOptions{})
			must(t, err)
			want := Config{Env: []string{"PATH=/bin", "FOO=bar"}, WorkingDir: "/work", User: "1000:1000"}
			if !reflect.DeepEqual(m.Config, want) {
				t.Errorf("config %+v, want %+v", m.Config, want)
			}
			im, err := c.Open(ctx, m)
			must(t, err)
			v := fsView(t, im.FS())
			var got []string
			for p, e := range v {
				if !e.Mode.IsDir() {
					got = append(got, p)
				}
			}
			wantFiles := []string{"etc/a", "keep/y", "opq/new"}
			if !sameSet(got, wantFiles) {
				t.Errorf("files %v, want %v", got, wantFiles)
			}
			if _, ok := v["opq/sub"]; ok {
				t.Errorf("opaque directory kept a lower subdirectory")
			}
			if v["etc/a"].Sum != sum([]byte("new a")) {
				t.Errorf("etc/a not replaced by the upper layer")
			}
			verifyBothWays(t, im)
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

func TestBuild_WhiteoutOfParent(t *testing.T) {
	c := newTestCatalog(t, newMemStore())
	sp, err := newSpool(c.cacheDir)
	must(t, err)
	defer sp.Close()
	tr := newTree(Limits{})
	must(t, tr.addTar(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: "a/b/c", body: "x"})), sp, true))
	err = tr.addTar(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: "a/b/.wh...", body: ""})), sp, true)
	if err == nil || !strings.Contains(err.Error(), "whiteout") {
		t.Fatalf("whiteout of ..: %v", err)
	}
	if _, err := tr.lookup("a/b/c"); err != nil {
		t.Errorf("a/b/c removed by a hostile whiteout: %v", err)
	}
}

func xattrTar(t *testing.T, name, value string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Name: "f", Typeflag: tar.TypeReg, Mode: 0o644, Format: tar.FormatPAX,
		PAXRecords: map[string]string{"SCHILY.xattr." + name: value}}))
	must(t, tw.Close())
	return buf.Bytes()
}
