package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
)

// memStore is a tiny in-memory BlobStore for tests. With ranged set, Get
// returns an io.ReaderAt (as store/dir's *os.File is), so the loader reads
// single blobs out of packs; without it the loader reads whole packs.
type memStore struct {
	mu     sync.Mutex
	m      map[string][]byte
	gets   int
	puts   int
	ranged bool
}

func newMemStore() *memStore { return &memStore{m: map[string][]byte{}} }

func (s *memStore) Put(ctx context.Context, key string, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = b
	s.puts++
	return nil
}

type readerAtCloser struct{ *bytes.Reader }

func (readerAtCloser) Close() error { return nil }

func (s *memStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	b, ok := s.m[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, fs.ErrNotExist)
	}
	if s.ranged {
		return readerAtCloser{bytes.NewReader(b)}, nil
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (s *memStore) Has(ctx context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[key]
	return ok, nil
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErrno(t testing.TB, what string, err error, want syscall.Errno) {
	t.Helper()
	var pe *fs.PathError
	if want == 0 {
		if err != nil {
			t.Errorf("%s: %v, want success", what, err)
		}
		return
	}
	if !errors.As(err, &pe) {
		t.Errorf("%s: %v (%T), want *fs.PathError with %v", what, err, err, want)
		return
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

func testBase() fstest.MapFS {
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7 / 5)
	}
	return fstest.MapFS{
		"etc":          {Mode: fs.ModeDir | 0o755},
		"etc/passwd":   {Mode: 0o644, Data: []byte("root:x:0:0\n")},
		"etc/hosts":    {Mode: 0o644, Data: []byte("127.0.0.1 localhost\n")},
		"usr/bin/sh":   {Mode: 0o755, Data: []byte("\x7fELF")},
		"usr/lib/big":  {Mode: 0o644, Data: big},
		"bin":          {Mode: fs.ModeSymlink | 0o777, Data: []byte("usr/bin")},
		"loop":         {Mode: fs.ModeSymlink | 0o777, Data: []byte("loop")},
		"usr/share/dd": {Mode: fs.ModeDir | 0o755},
	}
}

func TestSemantics(t *testing.T) {
	f := New(Options{Base: testBase()})
	must(t, f.WriteFile("/f", []byte("x"), 0o644))
	must(t, f.Mkdir("/d", 0o755))
	must(t, f.WriteFile("/d/x", nil, 0o644))
	must(t, f.Symlink("/d", "/ld"))
	for _, tc := range []struct {
		what string
		err  error
		want syscall.Errno
	}{
		{"excl", func() error { _, err := f.OpenFile("/f", O_CREATE|O_EXCL|O_WRONLY, 0); return err }(), syscall.EEXIST},
		{"dir for write", func() error { _, err := f.OpenFile("/d", O_WRONLY, 0); return err }(), syscall.EISDIR},
		{"file component", func() error { _, err := f.Stat("/f/x"); return err }(), syscall.ENOTDIR},
		{"rmdir nonempty", f.Remove("/d"), syscall.ENOTEMPTY},
		{"trailing slash on file", func() error { _, err := f.Stat("/f/"); return err }(), syscall.ENOTDIR},
		{"link dir", f.Link("/d", "/d2"), syscall.EPERM},
		{"nofollow", func() error { _, err := f.OpenFile("/ld", O_RDONLY|O_NOFOLLOW, 0); return err }(), syscall.ELOOP},
		{"loop", func() error { _, err := f.Stat("/loop"); return err }(), syscall.ELOOP},
		{"long name", f.Mkdir("/"+strings.Repeat("n", 256), 0o755), syscall.ENAMETOOLONG},
		{"dir into itself", f.Rename("/d", "/d/sub"), syscall.EINVAL},
		{"dir over file", f.Rename("/d", "/f"), syscall.ENOTDIR},
		{"file over dir", f.Rename("/f", "/d"), syscall.EISDIR},
		{"dir over nonempty", func() error { f.Mkdir("/e", 0o755); return f.Rename("/e", "/d") }(), syscall.ENOTEMPTY},
		{"missing", f.Chmod("/nope", 0), syscall.ENOENT},
		{"readlink non-link", func() error { _, err := f.Readlink("/f"); return err }(), syscall.EINVAL},
		{"xattr missing", func() error { _, err := f.GetXattr("/f", "user.x"); return err }(), syscall.ENODATA},
		{"rename root", f.Rename("/", "/x"), syscall.EBUSY},
	} {
		wantErrno(t, tc.what, tc.err, tc.want)
	}
	// ".." at the root stays at the root; absolute symlinks are sandbox-relative.
	if p, err := f.Realpath("/../../ld/./x"); err != nil || p != "/d/x" {
		t.Errorf("realpath = %q, %v", p, err)
	}
	if b, err := f.ReadFile("/bin/sh"); err != nil || string(b) != "\x7fELF" {
		t.Errorf("read through base symlink: %q %v", b, err)
	}
	// 40 hops are fine, 41 are ELOOP.
	for i := 0; i < 41; i++ {
		must(t, f.Symlink(fmt.Sprintf("/h%d", i+1), fmt.Sprintf("/h%d", i)))
	}
	must(t, f.WriteFile("/h41", []byte("end"), 0o644))
	if _, err := f.Stat("/h1"); err != nil {
		t.Errorf("40 hops: %v", err)
	}
	_, err := f.Stat("/h0")
	wantErrno(t, "41 hops", err, syscall.ELOOP)
	// xattrs
	must(t, f.SetXattr("/f", "user.a", []byte("1")))
	if v, err := f.GetXattr("/f", "user.a"); err != nil || string(v) != "1" {
		t.Errorf("xattr = %q %v", v, err)
	}
	if names, _ := f.ListXattr("/f"); len(names) != 1 {
		t.Errorf("listxattr = %v", names)
	}
	must(t, f.RemoveXattr("/f", "user.a"))
	// nlink and parent mtime
	st0, _ := f.Stat("/d")
	must(t, f.Mkdir("/d/sub", 0o755))
	st1, _ := f.Stat("/d")
	if st1.Sys().(*Stat).Nlink != st0.Sys().(*Stat).Nlink+1 {
		t.Errorf("dir nlink %d -> %d", st0.Sys().(*Stat).Nlink, st1.Sys().(*Stat).Nlink)
	}
	must(t, f.Link("/f", "/f2"))
	if st, _ := f.Stat("/f"); st.Sys().(*Stat).Nlink != 2 {
		t.Errorf("nlink after link = %d", st.Sys().(*Stat).Nlink)
	}
	a, _ := f.Stat("/f")
	b, _ := f.Stat("/f2")
	if a.Sys().(*Stat).Ino != b.Sys().(*Stat).Ino {
		t.Error("hard links have different inode numbers")
	}
	must(t, f.Mknod("/fifo", fs.ModeNamedPipe|0o600, 0))
	if st, _ := f.Lstat("/fifo"); st.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("fifo mode %v", st.Mode())
	}
}

func TestBaseLayer(t *testing.T) {
	f := New(Options{Base: testBase()})
	// Whiteout: removing a base file hides it; the base is untouched.
	must(t, f.Remove("/etc/passwd"))
	if _, err := f.Stat("/etc/passwd"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("whiteout: %v", err)
	}
	di, err := f.DeltaEntry("/etc/passwd")
	if err != nil || !di.Whiteout {
		t.Errorf("DeltaEntry whiteout = %+v %v", di, err)
	}
	// Opaque: a directory removed and recreated hides the base one.
	must(t, f.RemoveAll("/usr/share"))
	must(t, f.Mkdir("/usr/share", 0o700))
	if ents, _ := f.ReadDir("/usr/share"); len(ents) != 0 {
		t.Errorf("recreated dir shows %v", ents)
	}
	if di, _ := f.DeltaEntry("/usr/share"); !di.Opaque {
		t.Errorf("DeltaEntry opaque = %+v", di)
	}
	// Rename of a base directory keeps its base content.
	must(t, f.Rename("/etc", "/etc2"))
	if b, err := f.ReadFile("/etc2/hosts"); err != nil || !bytes.HasPrefix(b, []byte("127")) {
		t.Errorf("renamed base dir: %q %v", b, err)
	}
	if ents, _ := f.ReadDir("/etc2"); len(ents) != 1 {
		t.Errorf("renamed base dir lists %v", ents)
	}
	// Copy-up at chunk granularity: a write into the middle of a 3 MiB base
	// file charges only the written bytes.
	h, err := f.OpenFile("/usr/lib/big", O_RDWR, 0)
	must(t, err)
	_, err = h.WriteAt([]byte("HELLO"), 1<<20)
	must(t, err)
	must(t, h.Close())
	if u := f.Usage(); u.Bytes > 64<<10 {
		t.Errorf("usage after a 5-byte write into a base file = %d bytes", u.Bytes)
	}
	b, err := f.ReadFile("/usr/lib/big")
	must(t, err)
	want := append([]byte(nil), testBase()["usr/lib/big"].Data...)
	copy(want[1<<20:], "HELLO")
	if !bytes.Equal(b, want) {
		t.Error("content after mid-file write differs")
	}
	if base, _ := testBase().ReadFile("usr/lib/big"); bytes.Contains(base, []byte("HELLO")) {
		t.Error("base changed")
	}
}

func TestHandles(t *testing.T) {
	f := New(Options{})
	h, err := f.Create("/a")
	must(t, err)
	_, err = h.Write([]byte("hello"))
	must(t, err)
	must(t, f.Rename("/a", "/b"))
	must(t, f.Remove("/b"))
	_, err = h.Write([]byte(" world"))
	must(t, err)
	buf := make([]byte, 64)
	n, _ := h.ReadAt(buf, 0)
	if string(buf[:n]) != "hello world" {
		t.Errorf("unlinked handle reads %q", buf[:n])
	}
	if f.Usage().Inodes != 1 {
		t.Errorf("unlinked open file not charged: %+v", f.Usage())
	}
	must(t, h.Close())
	if f.Usage().Inodes != 0 || f.Usage().Bytes != 0 {
		t.Errorf("closed unlinked file still charged: %+v", f.Usage())
	}
	// O_APPEND, Seek, Truncate
	h, _ = f.OpenFile("/c", O_RDWR|O_CREATE|O_APPEND, 0o600)
	h.Write([]byte("12"))
	h.Seek(0, io.SeekStart)
	h.Write([]byte("34"))
	must(t, h.Truncate(3))
	h.Close()
	if b, _ := f.ReadFile("/c"); string(b) != "123" {
		t.Errorf("append/truncate = %q", b)
	}
}

func TestFork(t *testing.T) {
	f := New(Options{})
	must(t, f.WriteFile("/x", []byte("parent"), 0o644))
	g := f.Fork()
	must(t, g.WriteFile("/x", []byte("child"), 0o644))
	must(t, f.WriteFile("/y", nil, 0o644))
	if b, _ := f.ReadFile("/x"); string(b) != "parent" {
		t.Errorf("parent sees %q", b)
	}
	if _, err := g.Stat("/y"); err == nil {
		t.Error("fork sees a file created in the parent after the fork")
	}
	var got []string
	must(t, Diff(f, g, func(p string, k ChangeKind) error { got = append(got, p+" "+k.String()); return nil }))
	if strings.Join(got, ",") != "/ modified,/x modified,/y deleted" {
		t.Errorf("diff = %v", got)
	}
}

func TestQuota(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		op    func(f *FS) error
		errno syscall.Errno
	}{
		{"bytes", Options{MaxBytes: 1000}, func(f *FS) error { return f.WriteFile("/b", make([]byte, 600), 0o644) }, syscall.ENOSPC},
		{"inodes", Options{MaxInodes: 1}, func(f *FS) error { return f.Mkdir("/d", 0o755) }, syscall.EDQUOT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(tc.opts)
			must(t, f.WriteFile("/a", make([]byte, 500), 0o644))
			err := tc.op(f)
			if !errors.Is(err, tc.errno) {
				t.Fatalf("over quota: %v, want %v", err, tc.errno)
			}
			var qe *QuotaError
			if !errors.As(err, &qe) {
				t.Errorf("error %v does not name the limit", err)
			}
			if b, err := f.ReadFile("/a"); err != nil || len(b) != 500 {
				t.Errorf("earlier data lost: %d %v", len(b), err)
			}
			f.SetQuota(0, 0)
			must(t, tc.op(f))
		})
	}
}

func TestDedup(t *testing.T) {
	f := New(Options{})
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	must(t, f.WriteFile("/a", data, 0o644))
	g := f.Fork()
	must(t, g.WriteFile("/b", data, 0o644))
	ia, _ := f.cur.Load().get(inoOf(t, f, "/a")), 0
	ib := g.cur.Load().get(inoOf(t, g, "/b"))
	if len(ia.ext) == 0 || ia.ext[0].kind != extChunk || ia.ext[0].ch != ib.ext[0].ch {
		t.Error("identical data is not shared as the same chunk")
	}
}

func inoOf(t *testing.T, f *FS, p string) uint64 {
	fi, err := f.Lstat(p)
	must(t, err)
	return fi.Sys().(*Stat).Ino
}

func TestPersist(t *testing.T) {
	for _, mode := range []string{"whole", "readerat", "getrange"} {
		t.Run(mode, func(t *testing.T) { testPersist(t, mode) })
	}
}

// rangeGetStore is a memStore that offers GetRange (and a Get that cannot
// seek), as an S3 backend would.
type rangeGetStore struct{ *memStore }

func (s rangeGetStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	b, ok := s.m[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, fs.ErrNotExist)
	}
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, fmt.Errorf("get %s: range %d+%d beyond %d bytes", key, off, n, len(b))
	}
	return io.NopCloser(bytes.NewReader(b[off : off+n])), nil
}

// testPersist runs with whole-pack reads, ranged reads through a Get
// that is an io.ReaderAt, and ranged reads through GetRange.
func testPersist(t *testing.T, mode string) {
	ranged := mode != "whole"
	wrap := func(st *memStore) BlobStore {
		st.ranged = mode == "readerat"
		if mode == "getrange" {
			return rangeGetStore{st}
		}
		return st
	}
	ctx := context.Background()
	f := New(Options{Base: testBase()})
	must(t, f.MkdirAll("/a/b/c", 0o755))
	for i := 0; i < 100; i++ {
		must(t, f.WriteFile(fmt.Sprintf("/a/b/f%d", i), bytes.Repeat([]byte{byte(i)}, i*300), 0o640))
	}
	must(t, f.Symlink("../x", "/a/l"))
	must(t, f.Remove("/etc/hosts"))
	must(t, f.SetXattr("/a", "user.k", []byte("v")))
	h, _ := f.OpenFile("/usr/lib/big", O_RDWR, 0)
	h.WriteAt([]byte("MID"), 2<<20)
	h.Close()
	st := newMemStore()
	bs := wrap(st)
	ref, err := f.Persist(ctx, bs)
	must(t, err)
	r2, err := ParseRef(ref.String())
	if err != nil || r2 != ref {
		t.Fatalf("ParseRef(%s) = %v %v", ref, r2, err)
	}
	clearPackCache()
	g, err := Load(ctx, Options{Base: testBase()}, bs, ref)
	must(t, err)
	if st.gets != 1 {
		t.Errorf("Load read %d blobs, want 1 (lazy)", st.gets)
	}
	compareFS(t, f, g)
	// Persisting again writes nothing new.
	puts := st.puts
	ref2, ps, err := f.PersistStats(ctx, bs)
	must(t, err)
	if ps.Nodes != 0 || ps.Chunks != 0 || st.puts != puts || ref2 != ref {
		t.Errorf("second persist wrote %+v (%d objects), ref %s, want %s", ps, st.puts-puts, ref2, ref)
	}
	// A change persists only the path to it, in one object.
	must(t, g.WriteFile("/a/b/f1", []byte("new"), 0o644))
	puts = st.puts
	gref, ps, err := g.PersistStats(ctx, bs)
	must(t, err)
	if ps.Nodes > 8 || ps.Chunks != 0 || ps.Packs != 1 || st.puts != puts+1 {
		t.Errorf("one-file change wrote %+v in %d objects", ps, st.puts-puts)
	}
	clearPackCache()
	g2, err := Load(ctx, Options{Base: testBase()}, bs, gref)
	must(t, err)
	compareFS(t, g, g2)
	// Corrupt packs are errors, never garbage.
	for k, v := range st.m {
		if k != ref.Key() && k != gref.Key() {
			for i := 0; i < len(v); i += 256 {
				v[i] ^= 1
			}
		}
	}
	clearPackCache()
	h2, err := Load(ctx, Options{Base: testBase()}, bs, ref)
	must(t, err)
	_, err = h2.ReadFile("/a/b/f50")
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, syscall.EIO) {
		t.Errorf("read through corrupt pack: %v", err)
	}
	// A corrupt chunk, read by a fresh process (empty chunk cache).
	st2 := newMemStore()
	bs2 := wrap(st2)
	big := make([]byte, 2400000)
	rand.New(rand.NewSource(1)).Read(big)
	c := New(Options{})
	must(t, c.WriteFile("/big", big, 0o644))
	cref, err := c.Persist(ctx, bs2)
	must(t, err)
	if len(st2.m) < 2 {
		t.Fatalf("2.4 MB delta stored in %d objects, want data packs and a generation", len(st2.m))
	}
	for k, v := range st2.m {
		if k != cref.Key() {
			v[len(v)/2] ^= 1 // in a chunk: nodes are at the ends
		}
	}
	c, h = nil, nil
	clearChunkCache()
	clearPackCache()
	c2, err := Load(ctx, Options{}, bs2, cref)
	must(t, err)
	_, err = c2.ReadFile("/big")
	if !errors.As(err, &ce) || !errors.Is(err, syscall.EIO) {
		t.Errorf("read of corrupt chunk: %v", err)
	} else if ranged && ce.Kind != "chunk" {
		t.Errorf("ranged read of a corrupt chunk blamed %q: %v", ce.Kind, err)
	}
	delete(st.m, ref.Key())
	clearPackCache()
	if _, err := Load(ctx, Options{}, bs, ref); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("load of missing generation: %v", err)
	}
	st.m[gref.Key()][0] ^= 1
	clearPackCache()
	if _, err := Load(ctx, Options{}, bs, gref); !errors.As(err, &ce) {
		t.Errorf("load of corrupt generation: %v", err)
	}
}

// clearPackCache forgets every cached pack and open pack reader (tests
// only).
func clearPackCache() {
	packCache.Lock()
	clear(packCache.m)
	packCache.lru.Init()
	packCache.bytes = 0
	packCache.Unlock()
	closeOpenPacks()
}

// compareFS compares two trees by walking them.
func compareFS(t *testing.T, a, b *FS) {
	t.Helper()
	var walk func(p string)
	walk = func(p string) {
		fa, ea := a.Lstat(p)
		fb, eb := b.Lstat(p)
		if (ea == nil) != (eb == nil) {
			t.Errorf("%s: %v vs %v", p, ea, eb)
			return
		}
		if ea != nil {
			return
		}
		if fa.Mode() != fb.Mode() || fa.Size() != fb.Size() && !fa.IsDir() || !fa.ModTime().Equal(fb.ModTime()) {
			t.Errorf("%s: %v %d %v vs %v %d %v", p, fa.Mode(), fa.Size(), fa.ModTime(), fb.Mode(), fb.Size(), fb.ModTime())
		}
		xa, _ := a.ListXattr(p)
		xb, _ := b.ListXattr(p)
		if fmt.Sprint(xa) != fmt.Sprint(xb) {
			t.Errorf("%s: xattrs %v vs %v", p, xa, xb)
		}
		switch {
		case fa.Mode().IsRegular():
			ba, _ := a.ReadFile(p)
			bb, err := b.ReadFile(p)
			if err != nil || !bytes.Equal(ba, bb) {
				t.Errorf("%s: content differs (%v)", p, err)
			}
		case fa.Mode()&fs.ModeSymlink != 0:
			la, _ := a.Readlink(p)
			lb, _ := b.Readlink(p)
			if la != lb {
				t.Errorf("%s: link %q vs %q", p, la, lb)
			}
		case fa.IsDir():
			ea, _ := a.ReadDir(p)
			eb, _ := b.ReadDir(p)
			if len(ea) != len(eb) {
				t.Errorf("%s: %d vs %d entries", p, len(ea), len(eb))
				return
			}
			for _, e := range ea {
				walk(strings.TrimSuffix(p, "/") + "/" + e.Name())
			}
		}
	}
	walk("/")
}

func TestConcurrent(t *testing.T) {
	f := New(Options{})
	must(t, f.Mkdir("/d", 0o755))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p := fmt.Sprintf("/d/%d-%d", w, i)
				data := bytes.Repeat([]byte{byte(w)}, 100+i)
				if err := f.WriteFile(p, data, 0o644); err != nil {
					t.Error(err)
					return
				}
				// A reader never sees a torn write: all bytes equal.
				b, err := f.ReadFile(p)
				if err != nil || len(b) != len(data) || bytes.Count(b, []byte{byte(w)}) != len(b) {
					t.Errorf("torn read %s: %d bytes %v", p, len(b), err)
				}
				if i%10 == 0 {
					g := f.Fork()
					g.RemoveAll("/d")
					f.ReadDir("/d")
				}
			}
		}(w)
	}
	wg.Wait()
	if ents, _ := f.ReadDir("/d"); len(ents) != 800 {
		t.Errorf("%d entries, want 800", len(ents))
	}
}

func TestDiffFromNothing(t *testing.T) {
	f := New(Options{Base: testBase()})
	must(t, f.WriteFile("/etc/new", []byte("n"), 0o644))
	must(t, f.Remove("/etc/hosts"))
	must(t, f.Chmod("/usr/bin/sh", 0o700))
	var got []string
	must(t, Diff(nil, f, func(p string, k ChangeKind) error { got = append(got, p+" "+k.String()); return nil }))
	want := "/ modified,/etc modified,/etc/hosts deleted,/etc/new added,/usr modified,/usr/bin modified,/usr/bin/sh modified"
	if strings.Join(got, ",") != want {
		t.Errorf("diff from nil =\n%v\nwant\n%v", strings.Join(got, ","), want)
	}
}

// A small write into a large sealed file re-chunks about one chunk.
func TestSealLocal(t *testing.T) {
	f := New(Options{})
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i*31 + i>>9)
	}
	must(t, f.WriteFile("/big", data, 0o644))
	before := map[*chunk]bool{}
	for _, e := range f.cur.Load().get(inoOf(t, f, "/big")).ext {
		before[e.ch] = true
	}
	h, err := f.OpenFile("/big", O_RDWR, 0)
	must(t, err)
	_, err = h.WriteAt([]byte("xyz"), 2<<20)
	must(t, err)
	must(t, h.Close())
	fresh := 0
	for _, e := range f.cur.Load().get(inoOf(t, f, "/big")).ext {
		if e.kind != extChunk {
			t.Fatalf("unsealed extent kind %d after Close", e.kind)
		}
		if !before[e.ch] {
			fresh++
		}
	}
	if fresh > 3 {
		t.Errorf("a 3-byte write made %d new chunks", fresh)
	}
	copy(data[2<<20:], "xyz")
	if b, _ := f.ReadFile("/big"); !bytes.Equal(b, data) {
		t.Error("content differs")
	}
}

// TestReachable checks the GC walk: the keys it lists are exactly what a
// generation needs (a store holding only them loads it completely) and
// nothing a sweeper could delete is needed.
func TestReachable(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	st.ranged = true
	f := New(Options{Base: testBase()})
	rnd := rand.New(rand.NewSource(3))
	write := func(i int, n int) {
		b := make([]byte, n)
		rnd.Read(b)
		must(t, f.WriteFile(fmt.Sprintf("/w/d%d/f%d", i%7, i), b, 0o644))
	}
	must(t, f.MkdirAll("/w/d0", 0o755))
	for d := 1; d < 7; d++ {
		must(t, f.Mkdir(fmt.Sprintf("/w/d%d", d), 0o755))
	}
	for i := 0; i < 300; i++ {
		write(i, 100+i*97%40000)
	}
	ref1, err := f.Persist(ctx, st)
	must(t, err)
	for i := 0; i < 20; i++ {
		write(i*13, 5000)
	}
	must(t, f.RemoveAll("/w/d3"))
	must(t, f.Remove("/etc/passwd"))
	ref2, err := f.Persist(ctx, st)
	must(t, err)
	if len(st.m) < 3 {
		t.Fatalf("%d objects in the store, want several packs", len(st.m))
	}
	for _, ref := range []Ref{ref1, ref2} {
		var keys []string
		must(t, Reachable(ctx, st, ref, func(k string) error { keys = append(keys, k); return nil }))
		if len(keys) == 0 || keys[0] != ref.Key() {
			t.Fatalf("Reachable(%s) = %v, want the generation's pack first", ref, keys)
		}
		only := newMemStore()
		only.ranged = true
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				t.Errorf("Reachable listed %s twice", k)
			}
			seen[k] = true
			b, ok := st.m[k]
			if !ok {
				t.Fatalf("Reachable listed %s, which is not in the store", k)
			}
			only.m[k] = b
		}
		clearPackCache()
		clearChunkCache()
		g, err := Load(ctx, Options{Base: testBase()}, only, ref)
		must(t, err)
		want, err := Load(ctx, Options{Base: testBase()}, st, ref)
		must(t, err)
		compareFS(t, want, g)
	}
	// The second generation reuses packs of the first instead of
	// rewriting them.
	keys1 := map[string]bool{}
	must(t, Reachable(ctx, st, ref1, func(k string) error { keys1[k] = true; return nil }))
	shared, n2 := 0, 0
	must(t, Reachable(ctx, st, ref2, func(k string) error {
		n2++
		if keys1[k] {
			shared++
		}
		return nil
	}))
	if shared == 0 {
		t.Errorf("generation 2 (%d packs) shares no pack with generation 1 (%d packs)", n2, len(keys1))
	}
	// Errors stop the walk: fn's own, a missing pack, a corrupt one.
	stop := errors.New("stop")
	if err := Reachable(ctx, st, ref2, func(string) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Reachable with a failing fn: %v", err)
	}
	var other string
	must(t, Reachable(ctx, st, ref2, func(k string) error {
		if k != ref2.Key() && other == "" {
			other = k
		}
		return nil
	}))
	saved := st.m[other]
	delete(st.m, other)
	clearPackCache()
	if err := Reachable(ctx, st, ref2, func(string) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reachable with a missing pack: %v", err)
	}
	st.m[other] = bytes.Clone(saved)
	for i := 0; i < len(saved); i += 64 {
		st.m[other][i] ^= 0xff
	}
	var ce *CorruptError
	if err := Reachable(ctx, st, ref2, func(string) error { return nil }); !errors.As(err, &ce) {
		t.Errorf("Reachable with a corrupt pack: %v", err)
	}
	if err := Reachable(ctx, st, Ref{Root: [32]byte{1}}, func(string) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reachable of a missing generation: %v", err)
	}
}

// TestPersistLineage checks what a persist may reuse: a fork shares what
// its parent stored; an unrelated FS with the same data writes its own
// copy (its heads, not the other's, keep it from GC).
func TestPersistLineage(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	data := make([]byte, 200000)
	rand.New(rand.NewSource(4)).Read(data)
	f := New(Options{})
	must(t, f.WriteFile("/big", data, 0o644))
	_, ps, err := f.PersistStats(ctx, st)
	must(t, err)
	if ps.Chunks == 0 || ps.Packs != 1 {
		t.Fatalf("first persist: %+v", ps)
	}
	g := f.Fork()
	must(t, g.WriteFile("/small", []byte("s"), 0o644))
	_, ps, err = g.PersistStats(ctx, st)
	must(t, err)
	if ps.Chunks != 0 || ps.Packs != 1 {
		t.Errorf("fork persist rewrote chunks: %+v", ps)
	}
	h := New(Options{})
	must(t, h.WriteFile("/big", data, 0o644))
	_, ps, err = h.PersistStats(ctx, st)
	must(t, err)
	if ps.Chunks == 0 {
		t.Errorf("unrelated FS reused another lineage's chunks: %+v", ps)
	}
	// A loaded generation is its own lineage and reuses what it loaded.
	ref, err := g.Persist(ctx, st)
	must(t, err)
	l, err := Load(ctx, Options{}, st, ref)
	must(t, err)
	must(t, l.WriteFile("/small", []byte("t"), 0o644))
	_, ps, err = l.PersistStats(ctx, st)
	must(t, err)
	if ps.Chunks != 0 || ps.Packs != 1 {
		t.Errorf("persist after load rewrote chunks: %+v", ps)
	}
}

// TestPackCacheBound checks that the shared pack cache stays within its
// byte budget and drops the least recently used pack first.
func TestPackCacheBound(t *testing.T) {
	clearPackCache()
	defer clearPackCache()
	const size = packCacheMax / 8
	id := func(i int) (k [32]byte) { k[0] = byte(i); return k }
	for i := 0; i < 8; i++ {
		cachePut(id(i), make([]byte, size))
	}
	if cacheGet(id(0)) == nil {
		t.Fatal("pack 0 evicted while the cache was within budget")
	}
	cachePut(id(8), make([]byte, size)) // evicts pack 1, the least recently used
	if cacheGet(id(1)) != nil || cacheGet(id(0)) == nil || cacheGet(id(8)) == nil {
		t.Error("eviction did not drop the least recently used pack")
	}
	packCache.Lock()
	n, b := packCache.lru.Len(), packCache.bytes
	packCache.Unlock()
	if b > packCacheMax || n != 8 {
		t.Errorf("cache holds %d packs, %d bytes; budget %d", n, b, packCacheMax)
	}
	cachePut(id(9), make([]byte, packCacheMax)) // too big to cache
	if cacheGet(id(9)) != nil {
		t.Error("a pack larger than a quarter of the budget was cached")
	}
}
