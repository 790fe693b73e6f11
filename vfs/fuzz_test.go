package vfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func fuzzFS(t testing.TB) *FS {
	f := New(Options{Base: testBase()})
	must(t, f.MkdirAll("/a/b/c", 0o755))
	must(t, f.WriteFile("/a/b/file", []byte("data"), 0o644))
	must(t, f.Symlink("../..", "/a/b/up"))
	must(t, f.Symlink("/a/b", "/abs"))
	must(t, f.Symlink("self", "/self"))
	must(t, f.Symlink("/etc/../usr/./bin", "/a/bin"))
	return f
}

// FuzzResolve checks the path resolver: no panic, errors are *fs.PathError
// with an errno, and a path that resolves has a canonical Realpath inside
// the sandbox that names the same inode.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/", "", ".", "..", "/a/b/up/a/b/file", "/abs/c/../file", "/self",
		"/a/bin/sh", "a//b///c/", "/etc/passwd/", strings.Repeat("../", 50) + "a", "/a/b/file/."} {
		f.Add(s)
	}
	fsys := fuzzFS(f)
	f.Fuzz(func(t *testing.T, p string) {
		fi, err := fsys.Stat(p)
		if err != nil {
			var pe *fs.PathError
			var en syscall.Errno
			if !errors.As(err, &pe) || !errors.As(err, &en) {
				t.Fatalf("Stat(%q): %v is not a PathError with an errno", p, err)
			}
			return
		}
		rp, err := fsys.Realpath(p)
		if err != nil {
			t.Fatalf("Stat(%q) ok but Realpath: %v", p, err)
		}
		if !strings.HasPrefix(rp, "/") || strings.Contains(rp+"/", "/../") || strings.Contains(rp+"/", "/./") || strings.Contains(rp, "//") {
			t.Fatalf("Realpath(%q) = %q is not canonical", p, rp)
		}
		fi2, err := fsys.Stat(rp)
		if err != nil {
			t.Fatalf("Stat(Realpath(%q) = %q): %v", p, rp, err)
		}
		if fi.Sys().(*Stat).Ino != fi2.Sys().(*Stat).Ino {
			t.Fatalf("%q and its realpath %q are different inodes", p, rp)
		}
	})
}

// FuzzDecodeNode feeds arbitrary bytes to the node decoders: they must
// return an error or a node that can be walked, never panic.
func FuzzDecodeNode(f *testing.F) {
	st := newMemStore()
	fsys := fuzzFS(f)
	must(f, fsys.WriteFile("/a/big", make([]byte, 100000), 0o644))
	ref, err := fsys.Persist(context.Background(), st)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range nodeBlobs(f, st, ref) {
		f.Add(b)
	}
	gen, err := genRecord(st.m[ref.Key()])
	must(f, err)
	f.Add(gen)
	f.Add([]byte{blobTable, FormatVersion, 0, 0, 1, 0})
	f.Add([]byte{blobDir, FormatVersion, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ld := &loader{ctx: context.Background(), src: newMemStore(), lin: &lineage{}}
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(*loadError); !ok {
					panic(r)
				}
			}
		}()
		var self [32]byte
		if tn, err := decodeTable(ld, self, b); err == nil {
			tn.each(func(ino uint64, in *inode) bool {
				_ = in.info(fmt.Sprint(ino))
				if in.isDir() && in.entries != nil && in.entries.lz == nil {
					t.Fatal("decoded directory entries are not lazy")
				}
				return true
			})
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatalf("decodeTable error %v does not wrap ErrMalformed", err)
		}
		if dn, err := decodeDir(ld, self, b); err == nil {
			dn.each(func(string, dirent) bool { return true })
		}
		decodeGeneration(ld, self, b)
		genRecord(b)
	})
}

// nodeBlobs returns the bytes of every node of generation ref.
func nodeBlobs(t testing.TB, st BlobStore, ref Ref) [][]byte {
	ctx := context.Background()
	ld := &loader{ctx: ctx, src: st, lin: &lineage{}}
	tr, err := loadGeneration(ctx, ld, ref)
	must(t, err)
	var out [][]byte
	grab := func(at blobLoc, sum [32]byte) {
		b, err := ld.read(at, sum, "node")
		must(t, err)
		out = append(out, b)
	}
	var walkDir func(n *hnode[string, dirent])
	walkDir = func(n *hnode[string, dirent]) {
		if n == nil {
			return
		}
		if n.lz != nil {
			grab(n.lz.at, n.lz.sum)
		}
		n = n.load()
		for _, c := range n.kids {
			walkDir(c)
		}
	}
	var walkTable func(n *hnode[uint64, *inode])
	walkTable = func(n *hnode[uint64, *inode]) {
		if n == nil {
			return
		}
		if n.lz != nil {
			grab(n.lz.at, n.lz.sum)
		}
		n = n.load()
		for _, c := range n.kids {
			walkTable(c)
		}
		for _, e := range n.entries {
			if e.val.entries != nil {
				walkDir(e.val.entries)
			}
		}
	}
	walkTable(tr.inodes)
	return out
}
