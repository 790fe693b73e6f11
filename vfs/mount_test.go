package vfs

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// mounted is a root FS with a volume at /data (1000 bytes) and a read-only
// one at /data2 (so /data, /data2 and /datax test the prefix match).
func mounted(t *testing.T) (root, vol, ro *FS) {
	t.Helper()
	root = New(Options{})
	vol = New(Options{MaxBytes: 1000})
	ro = New(Options{})
	if err := ro.WriteFile("/seed", []byte("seed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := root.Mount("/data", vol, MountOptions{Name: "volume data"}); err != nil {
		t.Fatal(err)
	}
	if err := root.Mount("/data2", ro, MountOptions{Name: "volume ref", ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	return root, vol, ro
}

func mountErrno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

func TestMountResolution(t *testing.T) {
	root, vol, ro := mounted(t)
	for _, tc := range []struct {
		write string // path written through root
		in    *FS    // tree that must hold it
		at    string // at this path
	}{
		{"/data/a", vol, "/a"},
		{"data/b", vol, "/b"},
		{"/data/../c", root, "/c"},
		{"/data/./sub/../d", vol, "/d"},
		{"/datax", root, "/datax"},
		{"/x/data/e", root, "/x/data/e"},
	} {
		if strings.Contains(tc.write, "/x/") {
			if err := root.MkdirAll("/x/data", 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := root.WriteFile(tc.write, []byte("v"), 0o644); err != nil {
			t.Fatalf("write %s: %v", tc.write, err)
		}
		if _, err := tc.in.Stat(tc.at); err != nil {
			t.Errorf("%s: not at %s in its tree: %v", tc.write, tc.at, err)
		}
		other := root
		if tc.in == root {
			other = vol
		}
		if _, err := other.Stat(tc.at); err == nil && tc.at != "/" {
			t.Errorf("%s: also visible at %s in the other tree", tc.write, tc.at)
		}
	}
	if b, err := root.ReadFile("/data2/seed"); err != nil || string(b) != "seed" {
		t.Errorf("read-only mount: %q %v", b, err)
	}
	// A handle opened through the mount reads and writes the volume.
	h, err := root.OpenFile("/data/h", O_CREATE|O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if b, _ := vol.ReadFile("/h"); string(b) != "hello" {
		t.Errorf("handle write landed elsewhere: %q", b)
	}
	if p, err := root.Realpath("/data/sub/../h"); err != nil || p != "/data/h" {
		t.Errorf("realpath = %q, %v", p, err)
	}
	ents, err := root.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "data ") || !strings.Contains(got, "data2") {
		t.Errorf("root lists %q, want the mount points", got)
	}
	_ = ro
}

func TestMountErrors(t *testing.T) {
	root, _, _ := mounted(t)
	if err := root.WriteFile("/data/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := root.WriteFile("/g", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		op   func() error
		want syscall.Errno
	}{
		{"rename out of a mount", func() error { return root.Rename("/data/f", "/f") }, syscall.EXDEV},
		{"rename into a mount", func() error { return root.Rename("/g", "/data/g") }, syscall.EXDEV},
		{"rename between mounts", func() error { return root.Rename("/data/f", "/data2/f") }, syscall.EXDEV},
		{"link across", func() error { return root.Link("/g", "/data/g") }, syscall.EXDEV},
		{"rename a mount point", func() error { return root.Rename("/data", "/moved") }, syscall.EBUSY},
		{"remove a mount point", func() error { return root.Remove("/data") }, syscall.EBUSY},
		{"removeall a mount point", func() error { return root.RemoveAll("/data") }, syscall.EBUSY},
		{"write read-only", func() error { return root.WriteFile("/data2/n", nil, 0o644) }, syscall.EROFS},
		{"mkdir read-only", func() error { return root.Mkdir("/data2/d", 0o755) }, syscall.EROFS},
		{"remove read-only", func() error { return root.Remove("/data2/seed") }, syscall.EROFS},
		{"chmod read-only", func() error { return root.Chmod("/data2/seed", 0o600) }, syscall.EROFS},
		{"open for write read-only", func() error {
			_, err := root.OpenFile("/data2/seed", O_WRONLY, 0)
			return err
		}, syscall.EROFS},
		{"over the volume quota", func() error { return root.WriteFile("/data/big", make([]byte, 2000), 0o644) }, syscall.ENOSPC},
		{"mount twice", func() error { return root.Mount("/data", New(Options{}), MountOptions{}) }, syscall.EBUSY},
		{"nested mount", func() error { return root.Mount("/data/in", New(Options{}), MountOptions{}) }, syscall.EBUSY},
		{"mount at root", func() error { return root.Mount("/", New(Options{}), MountOptions{}) }, syscall.EINVAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op()
			if got := mountErrno(err); got != tc.want {
				t.Fatalf("err = %v (%v), want %v", err, got, tc.want)
			}
		})
	}
	// Rename inside one mount works.
	if err := root.Rename("/data/f", "/data/f2"); err != nil {
		t.Fatalf("rename inside the mount: %v", err)
	}
}

func TestMountQuotaNamesTheVolume(t *testing.T) {
	root, _, _ := mounted(t)
	// The sandbox's own quota does not limit the volume, nor the volume's
	// the sandbox.
	root.SetQuota(100, 0)
	if err := root.WriteFile("/data/a", make([]byte, 900), 0o644); err != nil {
		t.Fatalf("900 bytes into a 1000-byte volume under a 100-byte root: %v", err)
	}
	err := root.WriteFile("/data/b", make([]byte, 200), 0o644)
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Name != "volume data" || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want a QuotaError of volume data", err)
	}
	if !strings.Contains(err.Error(), "volume data bytes quota exceeded") {
		t.Errorf("message %q does not name the volume", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "/data/b" {
		t.Errorf("path = %v, want the caller's /data/b", err)
	}
	// Through a handle too (charged on Write or at Close).
	h, err := root.OpenFile("/data/c", O_CREATE|O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := h.Write(make([]byte, 300))
	cerr := h.Close()
	if !errors.As(werr, &qe) && !errors.As(cerr, &qe) || qe.Name != "volume data" {
		t.Errorf("handle write: write %v, close %v; want a QuotaError of volume data", werr, cerr)
	}
	if u := root.Usage().Bytes; u != 0 {
		t.Errorf("root charged %d bytes for volume writes", u)
	}
}

func TestMountNotInForkOrChanges(t *testing.T) {
	root, vol, _ := mounted(t)
	mark := root.Mark()
	if err := root.WriteFile("/data/secret", []byte("volume bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, _, err := root.Changes(mark)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ch), "volume bytes") || strings.Contains(string(ch), "secret") {
		t.Errorf("the sandbox's change log carries the volume write")
	}
	fk := root.Fork()
	if len(fk.Mounts()) != 0 {
		t.Errorf("fork has mounts %v", fk.Mounts())
	}
	if _, err := fk.Stat("/data/secret"); err == nil {
		t.Errorf("fork sees the volume's file")
	}
	if err := fk.WriteFile("/data/forked", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := vol.Stat("/forked"); err == nil {
		t.Errorf("a fork's write reached the volume")
	}
	// Persist (hibernate, snapshot, commit) of the root stores none of
	// the volume; the volume persists and loads on its own.
	st := newMemStore()
	ref, err := root.Persist(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range st.m {
		if bytes.Contains(v, []byte("volume bytes")) {
			t.Errorf("the root's persist wrote the volume's data (%s)", k)
		}
	}
	back, err := Load(context.Background(), Options{}, st, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.Stat("/data/secret"); err == nil {
		t.Errorf("the root's generation holds the volume's file")
	}
	vref, err := vol.Persist(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	vback, err := Load(context.Background(), Options{}, st, vref)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := vback.ReadFile("/secret"); err != nil || string(b) != "volume bytes" {
		t.Errorf("the volume's own generation: %q %v", b, err)
	}
	if err := root.Unmount("/data"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Stat("/data/secret"); err == nil {
		t.Errorf("unmounted volume still visible")
	}
	if got := mountErrno(root.Unmount("/data")); got != syscall.EINVAL {
		t.Errorf("second unmount: %v", got)
	}
}

// TestMountInodesDistinct: a tree numbers its inodes from the same start as
// any other, so a mounted tree's are tagged: cp and mv compare them.
func TestMountInodesDistinct(t *testing.T) {
	root := New(Options{})
	vol := New(Options{})
	if err := root.Mount("/data", vol, MountOptions{Name: "volume data"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a", "/data/a"} {
		if err := root.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ino := func(fi fs.FileInfo) uint64 { return fi.Sys().(*Stat).Ino }
	ra, _ := root.Stat("/a")
	rawA, _ := vol.Stat("/a")
	va, err := root.Stat("/data/a")
	if err != nil {
		t.Fatal(err)
	}
	if ino(ra) == ino(va) {
		t.Fatalf("/a and /data/a share inode %d", ino(ra))
	}
	if ino(rawA) != ino(va) {
		t.Errorf("the volume reports %d directly and %d through the mount", ino(rawA), ino(va))
	}
	ents, err := root.ReadDir("/data")
	if err != nil || len(ents) != 1 {
		t.Fatal(ents, err)
	}
	ei, _ := ents[0].Info()
	h, err := root.Open("/data/a")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hi, _ := h.Stat()
	if ino(ei) != ino(va) || ino(hi) != ino(va) {
		t.Errorf("inode via ReadDir %d, via a handle %d, via Stat %d", ino(ei), ino(hi), ino(va))
	}
}
