package vfs

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
	"time"
)

// entryState is everything a walk sees of one path.
type entryState struct {
	mode                fs.FileMode
	size                int64
	ino, rdev           uint64
	uid, gid, nlink     uint32
	atime, mtime, ctime int64
	target              string
	sum                 [32]byte
	xattrs              string
}

// walkState walks f through its public API (base entries included) and
// hashes every file.
func walkState(t *testing.T, f *FS) map[string]entryState {
	t.Helper()
	out := map[string]entryState{}
	var walk func(p string)
	walk = func(p string) {
		fi, err := f.Lstat(p)
		if err != nil {
			t.Fatalf("lstat %s: %v", p, err)
		}
		st := fi.Sys().(*Stat)
		e := entryState{mode: fi.Mode(), size: fi.Size(), ino: st.Ino, rdev: st.Rdev, uid: st.Uid, gid: st.Gid,
			nlink: st.Nlink, atime: st.Atime.UnixNano(), mtime: fi.ModTime().UnixNano(), ctime: st.Ctime.UnixNano()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.target, err = f.Readlink(p); err != nil {
				t.Fatalf("readlink %s: %v", p, err)
			}
		case fi.Mode().IsRegular():
			b, err := f.ReadFile(p)
			if err != nil {
				t.Fatalf("read %s: %v", p, err)
			}
			e.sum = sha256.Sum256(b)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			names, err := f.ListXattr(p)
			if err != nil {
				t.Fatalf("listxattr %s: %v", p, err)
			}
			for _, n := range names {
				v, _ := f.GetXattr(p, n)
				e.xattrs += n + "=" + string(v) + ";"
			}
		}
		out[p] = e
		if fi.IsDir() {
			ents, err := f.ReadDir(p)
			if err != nil {
				t.Fatalf("readdir %s: %v", p, err)
			}
			for _, de := range ents {
				walk(path.Join(p, de.Name()))
			}
		}
	}
	walk("/")
	return out
}

func sameState(t *testing.T, live, replayed *FS) {
	t.Helper()
	a, b := walkState(t, live), walkState(t, replayed)
	for p, ea := range a {
		eb, ok := b[p]
		if !ok {
			t.Errorf("%s: missing after apply", p)
		} else if ea != eb {
			t.Errorf("%s: live %+v, after apply %+v", p, ea, eb)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			t.Errorf("%s: present after apply only", p)
		}
	}
	ta, tb := live.cur.Load(), replayed.cur.Load()
	if ta.usage != tb.usage || ta.nextIno != tb.nextIno || ta.root != tb.root {
		t.Errorf("tree head: live %d/%d/%+v, after apply %d/%d/%+v", ta.root, ta.nextIno, ta.usage, tb.root, tb.nextIno, tb.usage)
	}
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func changesSetup(t testing.TB, f *FS) {
	must(t, f.WriteFile("/a", []byte("hello"), 0o644))
	must(t, f.WriteFile("/big", randBytes(1, 600<<10), 0o644))
	must(t, f.MkdirAll("/dir/sub", 0o755))
	must(t, f.WriteFile("/dir/x", []byte("x"), 0o644))
	must(t, f.WriteFile("/dir/sub/y", []byte("y"), 0o644))
	must(t, f.Symlink("a", "/sl"))
}

func appendTo(t testing.TB, f *FS, name string, data []byte) {
	h, err := f.OpenFile(name, O_WRONLY|O_APPEND, 0)
	must(t, err)
	_, err = h.Write(data)
	must(t, err)
	must(t, h.Close())
}

var changeCases = []struct {
	name    string
	ops     func(t *testing.T, f *FS)
	maxSize int // the record's size bound, 0 = none
}{
	{"nothing", func(t *testing.T, f *FS) {}, 64},
	{"new files", func(t *testing.T, f *FS) {
		must(t, f.WriteFile("/n1", []byte("new"), 0o600))
		must(t, f.WriteFile("/dir/n2", randBytes(2, 300<<10), 0o644))
	}, 0},
	// Appending reuses the chunks the file had: the record holds the new
	// bytes (and the re-cut last chunk), not the file.
	{"append to a large file", func(t *testing.T, f *FS) {
		appendTo(t, f, "/big", randBytes(3, 100<<10))
	}, 450 << 10},
	{"overwrite in the middle", func(t *testing.T, f *FS) {
		h, err := f.OpenFile("/big", O_WRONLY, 0)
		must(t, err)
		_, err = h.WriteAt([]byte("overwritten"), 300<<10)
		must(t, err)
		must(t, h.Close())
	}, 0},
	{"truncate", func(t *testing.T, f *FS) {
		must(t, f.Truncate("/big", 1000))
		must(t, f.Truncate("/a", 10000))
	}, 0},
	{"delete", func(t *testing.T, f *FS) {
		must(t, f.Remove("/a"))
		must(t, f.RemoveAll("/dir"))
	}, 0},
	{"delete base entries", func(t *testing.T, f *FS) {
		must(t, f.Remove("/etc/passwd"))
		must(t, f.RemoveAll("/usr/share"))
	}, 0},
	{"rename", func(t *testing.T, f *FS) {
		must(t, f.Rename("/a", "/a2"))
		must(t, f.Rename("/dir", "/dir2"))
		must(t, f.Rename("/dir2/x", "/big"))
		must(t, f.Rename("/etc/hosts", "/hosts"))
	}, 0},
	{"hard links", func(t *testing.T, f *FS) {
		must(t, f.Link("/a", "/l1"))
		must(t, f.Link("/a", "/dir/l2"))
		must(t, f.Remove("/a"))
		appendTo(t, f, "/l1", []byte(" world"))
	}, 0},
	{"symlinks", func(t *testing.T, f *FS) {
		must(t, f.Symlink("/dir", "/s2"))
		must(t, f.Remove("/sl"))
		must(t, f.Symlink("x", "/dir/s3"))
	}, 0},
	{"modes, owners, times, xattrs", func(t *testing.T, f *FS) {
		must(t, f.Chmod("/a", 0o600))
		must(t, f.Chmod("/dir", 0o700))
		must(t, f.Chown("/a", 5, 6))
		must(t, f.Chtimes("/dir/x", time.Unix(1, 2), time.Unix(3, 4)))
		must(t, f.SetXattr("/a", "user.k", []byte("v")))
		must(t, f.Chmod("/usr/bin/sh", 0o700))
	}, 0},
	{"base files copied up and written", func(t *testing.T, f *FS) {
		appendTo(t, f, "/etc/hosts", []byte("::1 localhost\n"))
		h, err := f.OpenFile("/usr/lib/big", O_WRONLY, 0)
		must(t, err)
		_, err = h.WriteAt([]byte("in the middle of a base file"), 1<<20)
		must(t, err)
		must(t, h.Close())
	}, 64 << 10},
	{"directory recreated over a base one", func(t *testing.T, f *FS) {
		must(t, f.RemoveAll("/etc"))
		must(t, f.Mkdir("/etc", 0o755))
		must(t, f.WriteFile("/etc/new", []byte("n"), 0o644))
	}, 0},
	{"a file still open for writing", func(t *testing.T, f *FS) {
		h, err := f.OpenFile("/w", O_WRONLY|O_CREATE, 0o644)
		must(t, err)
		_, err = h.Write(randBytes(4, 100<<10))
		must(t, err)
		t.Cleanup(func() { h.Close() })
	}, 0},
	{"many directory entries", func(t *testing.T, f *FS) {
		for i := 0; i < 300; i++ {
			must(t, f.WriteFile(fmt.Sprintf("/dir/f%03d", i), []byte{byte(i)}, 0o644))
		}
		for i := 0; i < 300; i += 3 {
			must(t, f.Remove(fmt.Sprintf("/dir/f%03d", i)))
		}
	}, 0},
}

// TestChanges_ApplyMatchesLive: a generation persisted at a Mark, loaded
// elsewhere, plus the change record of what happened since, is the live
// tree (walk and hash compare); and a second record on top of the first.
func TestChanges_ApplyMatchesLive(t *testing.T) {
	base := testBase()
	for _, tc := range changeCases {
		for _, resumed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/resumed=%v", tc.name, resumed), func(t *testing.T) {
				testChangesCase(t, base, tc.ops, tc.maxSize, resumed)
			})
		}
	}
}

// testChangesCase: the live FS is new (or itself resumed from the
// generation, so its nodes and chunks are lazy) when the Mark is taken.
func testChangesCase(t *testing.T, base fs.FS, ops func(*testing.T, *FS), maxSize int, resumed bool) {
	ctx := context.Background()
	f := New(Options{Base: base})
	changesSetup(t, f)
	st := newMemStore()
	ref, err := f.Persist(ctx, st)
	must(t, err)
	if resumed {
		f, err = Load(ctx, Options{Base: base}, st, ref)
		must(t, err)
	}
	mark := f.Mark()
	ops(t, f)
	rec, next, err := f.Changes(mark)
	must(t, err)
	if maxSize > 0 && len(rec) > maxSize {
		t.Errorf("change record of %d bytes, want at most %d", len(rec), maxSize)
	}
	g, err := Load(ctx, Options{Base: base}, st, ref)
	must(t, err)
	must(t, g.ApplyChanges(rec))
	sameState(t, f, g)
	// A second record applies on top of the first.
	must(t, f.WriteFile("/second", []byte("2"), 0o644))
	must(t, f.RemoveAll("/dir/sub"))
	rec2, _, err := f.Changes(next)
	must(t, err)
	must(t, g.ApplyChanges(rec2))
	sameState(t, f, g)
	// Applying a record twice, or out of order, is refused.
	if err := g.ApplyChanges(rec); !errors.Is(err, ErrChangeBase) {
		t.Fatalf("a stale record applied: %v", err)
	}
}

// TestChanges_Malformed: every truncation of a record and a flipped byte
// are errors, never a panic or a half-applied change.
func TestChanges_Malformed(t *testing.T) {
	base := testBase()
	f := New(Options{Base: base})
	changesSetup(t, f)
	mark := f.Mark()
	g := f.Fork()
	must(t, f.WriteFile("/n", []byte("new file"), 0o644))
	must(t, f.Rename("/dir", "/d2"))
	must(t, f.Remove("/a"))
	rec, _, err := f.Changes(mark)
	must(t, err)
	before := g.cur.Load()
	for n := 0; n < len(rec); n++ {
		if err := g.ApplyChanges(rec[:n]); err == nil {
			t.Fatalf("a record cut at %d of %d bytes applied", n, len(rec))
		}
		if g.cur.Load() != before {
			t.Fatalf("a failed apply (cut at %d) changed the FS", n)
		}
	}
	bad := append([]byte(nil), rec...)
	bad[1] = 9
	if err := g.ApplyChanges(bad); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Fatalf("unknown version: %v", err)
	}
	must(t, g.ApplyChanges(rec))
	sameState(t, f, g)
}

// FuzzApplyChanges: no record makes ApplyChanges panic, and a refused one
// leaves the FS as it was. Seeds are real records.
func FuzzApplyChanges(f *testing.F) {
	base := testBase()
	fsys := New(Options{Base: base})
	changesSetup(f, fsys)
	mark := fsys.Mark()
	at := fsys.Fork() // the mark's version; each run applies to a fork of it
	for _, step := range []func(){
		func() { must(f, fsys.WriteFile("/n", []byte("new"), 0o644)) },
		func() { must(f, fsys.Rename("/dir", "/d2")) },
		func() { must(f, fsys.Link("/a", "/l")); must(f, fsys.Remove("/a")) },
		func() { must(f, fsys.Truncate("/big", 70000)) },
	} {
		step()
		rec, _, err := fsys.Changes(mark)
		must(f, err)
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		g := at.Fork()
		before := g.cur.Load()
		if err := g.ApplyChanges(rec); err != nil {
			if g.cur.Load() != before {
				t.Fatalf("a refused record changed the FS: %v", err)
			}
			return
		}
		if _, err := g.Stat("/"); err != nil {
			t.Fatalf("an accepted record left no root: %v", err)
		}
	})
}
