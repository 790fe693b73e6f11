package image

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCatalog_TagListRemoveExport(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			st := s.new(t)
			c := newTestCatalog(t, st)
			src := t.TempDir()
			must(t, os.WriteFile(filepath.Join(src, "f"), []byte("content"), 0o644))
			m, err := c.BuildSource(ctx, src, BuildOptions{})
			must(t, err)
			must(t, c.Tag(ctx, "app:1", m))
			must(t, c.Tag(ctx, "team/app:latest", m))
			for _, bad := range []string{"", "../x", "a//b", "a/./b", "x y", "sha256:abc", "a/"} {
				if err := c.Tag(ctx, bad, m); err == nil {
					t.Errorf("tag %q accepted", bad)
				}
			}
			list, err := c.List(ctx)
			must(t, err)
			if len(list) != 2 || list[0].Name != "app:1" || list[1].Name != "team/app:latest" || list[0].Digest != m.Digest {
				t.Fatalf("list %+v", list)
			}
			for _, ref := range []string{"app:1", m.Digest, m.Hex()[:12]} {
				got, err := c.Resolve(ctx, ref)
				if err != nil || got.Digest != m.Digest {
					t.Errorf("resolve %q: %v %v", ref, got.Digest, err)
				}
			}
			if _, err := c.Resolve(ctx, "nope"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("resolve missing: %v", err)
			}

			var buf bytes.Buffer
			must(t, c.Export(ctx, "app:1", &buf))
			if int64(buf.Len()) != m.Size || "sha256:"+sum(buf.Bytes()) != m.Digest {
				t.Errorf("export: %d bytes, digest mismatch", buf.Len())
			}

			// A fresh catalog on the same store finds and opens the image
			// (copying it into its own cache when the store has no paths).
			c2 := newTestCatalog(t, st)
			im, err := c2.Open(ctx, m)
			must(t, err)
			b, err := fs.ReadFile(im.FS(), "f")
			if err != nil || string(b) != "content" {
				t.Errorf("reopened image: %q %v", b, err)
			}

			c.InUse = func(d string) bool { return d == m.Digest }
			if err := c.Remove(ctx, "app:1"); !errors.Is(err, ErrInUse) {
				t.Fatalf("remove in use: %v", err)
			}
			c.InUse = nil
			if err := c.Remove(ctx, m.Digest); err == nil || !strings.Contains(err.Error(), "tagged") {
				t.Errorf("remove tagged digest: %v", err)
			}
			must(t, c.Remove(ctx, "app:1"))
			if _, err := c.Resolve(ctx, "team/app:latest"); err != nil {
				t.Errorf("other tag lost: %v", err)
			}
			must(t, c.Remove(ctx, "team/app:latest"))
			rc, err := st.Get(ctx, imageKey(m.Hex()))
			if err == nil {
				rc.Close()
				t.Errorf("image blob kept after its last tag was removed")
			}
			if err := c.Export(ctx, m.Digest, io.Discard); err == nil {
				t.Errorf("export of a removed image succeeded")
			}
		})
	}
}

func TestCatalog_FetchVerifiesDigest(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	c := newTestCatalog(t, st)
	src := t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, "f"), []byte("content"), 0o644))
	m, err := c.BuildSource(ctx, src, BuildOptions{})
	must(t, err)
	b := st.blob[imageKey(m.Hex())]
	b[len(b)-1] ^= 0xff // corrupt the stored copy
	c2 := newTestCatalog(t, st)
	if _, err := c2.Open(ctx, m); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("corrupt image opened: %v", err)
	}
}

func TestOpenFile_NotEROFS(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junk")
	must(t, os.WriteFile(p, bytes.Repeat([]byte("junk"), 4096), 0o644))
	if _, err := OpenFile(p); err == nil || !strings.Contains(err.Error(), "EROFS") {
		t.Fatalf("junk opened: %v", err)
	}
}
