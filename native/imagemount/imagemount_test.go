package imagemount

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func buildImage(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("kernel mounts need root")
	}
	if _, err := exec.LookPath("mkfs.erofs"); err != nil {
		t.Skip("mkfs.erofs not installed (apt-get install erofs-utils)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "etc"), 0o755)
	os.WriteFile(filepath.Join(src, "etc/hello"), []byte("hello from erofs\n"), 0o644)
	img := filepath.Join(dir, "test.erofs")
	if out, err := exec.Command("mkfs.erofs", "--quiet", img, src).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.erofs: %v %s", err, out)
	}
	return img
}

func TestTable_Refcount(t *testing.T) {
	for _, loop := range []bool{false, true} {
		name := map[bool]string{false: "file-backed", true: "loop"}[loop]
		t.Run(name, func(t *testing.T) {
			img := buildImage(t)
			forceLoop = loop
			defer func() { forceLoop = false }()
			tab, err := New(filepath.Join(t.TempDir(), "images"))
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			a, err := tab.Acquire(img)
			if err != nil {
				t.Fatal(err)
			}
			b, err := tab.Acquire(img)
			if err != nil {
				t.Fatal(err)
			}
			if a != b || tab.Refs(img) != 2 || a.Loop != loop {
				t.Fatalf("two acquires: same=%v refs=%d loop=%v", a == b, tab.Refs(img), a.Loop)
			}
			if got, _ := os.ReadFile(filepath.Join(a.Dir, "etc/hello")); string(got) != "hello from erofs\n" {
				t.Fatalf("read through mount: %q", got)
			}
			if err := os.WriteFile(filepath.Join(a.Dir, "etc/x"), nil, 0o644); err == nil {
				t.Fatal("the image mount is writable")
			}
			mps, _ := MountsUnder(a.Dir)
			if len(mps) != 1 {
				t.Fatalf("want one mount per image, got %v", mps)
			}
			a.Release()
			if mps, _ := MountsUnder(a.Dir); len(mps) != 1 || tab.Refs(img) != 1 {
				t.Fatal("first release unmounted a shared image")
			}
			b.Release()
			if mps, _ := MountsUnder(a.Dir); len(mps) != 0 || tab.Refs(img) != 0 {
				t.Fatalf("last release left %v", mps)
			}
			if err := b.Release(); err == nil {
				t.Fatal("extra release accepted")
			}
		})
	}
}

func TestNew_CleansStaleMounts(t *testing.T) {
	img := buildImage(t)
	dir := filepath.Join(t.TempDir(), "images")
	tab, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tab.Acquire(img)
	if err != nil {
		t.Fatal(err)
	}
	// Simulate a crash: the table is dropped without Release or Close.
	_ = m
	again, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if mps, _ := MountsUnder(dir); len(mps) != 0 {
		t.Fatalf("stale mounts survive New: %v", mps)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("stale directories survive New: %v", ents)
	}
}

func TestAcquire_BadInput(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("kernel mounts need root")
	}
	tab, err := New(filepath.Join(t.TempDir(), "images"))
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	notErofs := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(notErofs, []byte(strings.Repeat("junk", 2048)), 0o644)
	for _, p := range []string{"/no/such/image", t.TempDir(), notErofs} {
		if _, err := tab.Acquire(p); err == nil {
			t.Errorf("Acquire(%s) succeeded", p)
		}
	}
	if _, err := New("relative/dir"); err == nil {
		t.Error("New accepted a relative dir")
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/x\134y`: `/x\y`, `/bad\09`: `/bad\09`} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}
