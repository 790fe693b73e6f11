package vfs

import (
	"io/fs"
	"testing"
)

// Entries belong to the owner set when they were created; forks keep it.
func TestSetOwner(t *testing.T) {
	f := New(Options{Uid: 7, Gid: 8})
	owner := func(f *FS, p string) (uint32, uint32) {
		t.Helper()
		fi, err := f.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*Stat)
		return st.Uid, st.Gid
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.WriteFile("/a", nil, 0o644))
	f.SetOwner(1000, 1001)
	must(f.MkdirAll("/d/e", 0o755))
	must(f.WriteFile("/d/e/f", []byte("x"), 0o644))
	must(f.Symlink("f", "/d/e/l"))
	g := f.Fork()
	must(g.WriteFile("/g", nil, 0o644))
	f.SetOwner(0, 0)
	must(f.WriteFile("/h", nil, fs.FileMode(0o644)))
	for _, tt := range []struct {
		fs       *FS
		path     string
		uid, gid uint32
	}{
		{f, "/a", 7, 8}, {f, "/d", 1000, 1001}, {f, "/d/e/f", 1000, 1001}, {f, "/d/e/l", 1000, 1001},
		{g, "/g", 1000, 1001}, {f, "/h", 0, 0},
	} {
		if u, g := owner(tt.fs, tt.path); u != tt.uid || g != tt.gid {
			t.Errorf("%s: owner %d:%d, want %d:%d", tt.path, u, g, tt.uid, tt.gid)
		}
	}
}
