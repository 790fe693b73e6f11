package image

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRaw_AgreesWithGoErofs checks the fast reader against go-erofs on
// every kind of entry, and its path resolution on symlink cases.
func TestRaw_AgreesWithGoErofs(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	makeKinds(t, src)
	links := map[string]string{
		"linkdir":     "a/b",
		"sub/up":      "../hello.txt",
		"sub/rootup":  "../../../../hello.txt",
		"sub/absdir":  "/a/b/c",
		"loop1":       "loop2",
		"loop2":       "loop1",
		"chain":       "rel",
		"notdir-link": "hello.txt/x",
	}
	for l, target := range links {
		must(t, os.Symlink(target, filepath.Join(src, l)))
	}
	c := newTestCatalog(t, stores[1].new(t))
	m, err := c.BuildSource(ctx, src, BuildOptions{})
	must(t, err)
	im, err := c.Open(ctx, m)
	must(t, err)
	fast := im.FS().(*imageFS)
	if fast.raw == nil {
		t.Fatal("fast reader disabled on an image this package wrote")
	}
	slow := &imageFS{fsys: fast.fsys, r: fast.r}
	compareViews(t, "fast vs go-erofs", fsView(t, slow), fsView(t, fast))

	hello, err := os.ReadFile(filepath.Join(src, "hello.txt"))
	must(t, err)
	cases := []struct {
		name    string
		want    []byte // content, when the open succeeds
		wantErr error
	}{
		{"rel", hello, nil},
		{"chain", hello, nil},
		{"sub/up", hello, nil},
		{"sub/rootup", hello, nil},
		{"linkdir/c/d/e/deep.txt", []byte("deep"), nil},
		{"sub/absdir/d/e/deep.txt", []byte("deep"), nil},
		{"abs", nil, syscall.ENOENT},
		{"sub/dangling", nil, syscall.ENOENT},
		{"missing", nil, syscall.ENOENT},
		{"hello.txt/x", nil, syscall.ENOTDIR},
		{"notdir-link", nil, syscall.ENOTDIR},
		{"loop1", nil, syscall.ELOOP},
		{"../x", nil, fs.ErrInvalid},
	}
	for _, tc := range cases {
		b, err := fs.ReadFile(fast, tc.name)
		if tc.wantErr != nil {
			var pe *fs.PathError
			if !errors.Is(err, tc.wantErr) || !errors.As(err, &pe) {
				t.Errorf("%s: err %v, want *fs.PathError with %v", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(b) != string(tc.want) {
			t.Errorf("%s: %q, %v", tc.name, b, err)
		}
	}
	fi, err := fast.Lstat("loop1")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("lstat loop1: %v %v", fi, err)
	}
	if _, err := fast.ReadLink("hello.txt"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("readlink of a file: %v", err)
	}
	if _, err := fast.ReadDir("hello.txt"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("readdir of a file: %v", err)
	}
	ents, err := fast.ReadDir("linkdir")
	if err != nil || len(ents) != 1 || ents[0].Name() != "c" {
		t.Errorf("readdir through a symlink: %v %v", ents, err)
	}
}

// TestRaw_CorruptImage flips bytes in the metadata of an image: the fast
// reader must return errors, never panic.
func TestRaw_CorruptImage(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	for _, d := range []string{"a/b/c", "d/e", "f"} {
		must(t, os.MkdirAll(filepath.Join(src, d), 0o755))
		for i := 0; i < 20; i++ {
			must(t, os.WriteFile(filepath.Join(src, d, "file"+strings.Repeat("x", i)), []byte(d), 0o644))
		}
	}
	must(t, os.Symlink("../a", filepath.Join(src, "d/link")))
	c := newTestCatalog(t, stores[1].new(t))
	m, err := c.BuildSource(ctx, src, BuildOptions{})
	must(t, err)
	im, err := c.Open(ctx, m)
	must(t, err)
	good := im.FS().(*imageFS).raw
	for i := 0; i < 200; i++ {
		data := append([]byte(nil), good.data...)
		// Corrupt the metadata area (inodes and dirents live after meta).
		span := int64(len(data)) - good.meta
		for j := 0; j < 16; j++ {
			data[good.meta+int64((i*7919+j*104729)%int(span))] ^= byte(0x5a + j)
		}
		raw := newRawImage(data)
		if raw == nil {
			continue
		}
		s := &imageFS{fsys: im.FS().(*imageFS).fsys, r: &countingReader{data: data}, raw: raw}
		// A corrupt dirent can point at an ancestor: bound the walk.
		seen := 0
		_ = fs.WalkDir(s, ".", func(p string, d fs.DirEntry, err error) error {
			if seen++; seen > 5000 {
				return fs.SkipAll
			}
			if err != nil {
				return nil
			}
			if d.IsDir() && strings.Count(p, "/") > 16 {
				return fs.SkipDir
			}
			if d.Type().IsRegular() {
				_, _ = fs.ReadFile(s, p)
			}
			_, _ = d.Info()
			return nil
		})
	}
}
