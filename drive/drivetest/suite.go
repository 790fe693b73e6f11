// Package drivetest is the suite every drive.Meta backend passes, over a
// real blob store: the filesystem's operations and errors, close-to-open
// between two nodes, whole versions, quota, locks, the registry's
// lifecycle, and the concurrent checker (checker.go).
package drivetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/chunkcache"
	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/vfs"
)

// Fixture is one shared metadata store and blob store seen from two
// nodes: each NewMeta is a separate handle (its own connections or file
// descriptors), as another process or node would have.
type Fixture struct {
	NewMeta func(t testing.TB) drive.Meta
	Store   store.Store
}

// Nodes returns two registries on f, each with its own Meta handle and
// chunk cache, sharing the blob store.
func (f Fixture) Nodes(t testing.TB, o drive.Options) (a, b *drive.Registry) {
	return f.nodes(t, o, true)
}

// NodesWithoutCache is Nodes with no chunk cache: every open reads the
// blob store.
func (f Fixture) NodesWithoutCache(t testing.TB, o drive.Options) (a, b *drive.Registry) {
	return f.nodes(t, o, false)
}

func (f Fixture) nodes(t testing.TB, o drive.Options, cache bool) (a, b *drive.Registry) {
	mk := func() *drive.Registry {
		oo := o
		if cache {
			c, err := chunkcache.Open(chunkcache.Options{Memory: 32 << 20})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			oo.Cache = c
		}
		if oo.SpillDir == "" {
			oo.SpillDir = t.TempDir()
		}
		return drive.NewRegistry(f.NewMeta(t), f.Store, oo)
	}
	return mk(), mk()
}

// Open creates a drive on a and opens it on both registries.
func Open(t testing.TB, a, b *drive.Registry, name string, quota int64) (da, db *drive.Drive) {
	t.Helper()
	ctx := context.Background()
	if _, err := a.Create(ctx, "t", name, quota); err != nil {
		t.Fatalf("Create: %v", err)
	}
	var err error
	if da, err = a.Open(ctx, "t", name); err != nil {
		t.Fatalf("Open on a: %v", err)
	}
	t.Cleanup(func() { da.Close() })
	if db, err = b.Open(ctx, "t", name); err != nil {
		t.Fatalf("Open on b: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return da, db
}

// Run runs the suite.
func Run(t *testing.T, newFixture func(t *testing.T) Fixture) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Fixture)
	}{
		{"Ops", testOps},
		{"Errors", testErrors},
		{"CloseToOpen", testCloseToOpen},
		{"OpenHandleKeepsVersion", testOpenHandleKeepsVersion},
		{"BigFileSpill", testBigFileSpill},
		{"RandomWrites", testRandomWrites},
		{"Quota", testQuota},
		{"RemovedWhileOpen", testRemovedWhileOpen},
		{"Flock", testFlock},
		{"FlockExpiry", testFlockExpiry},
		{"Registry", testRegistry},
		{"Sweep", testSweep},
		{"SweepDoomedCommit", testSweepDoomedCommit},
		{"SweepBetweenUploadAndCommit", testSweepBetweenUploadAndCommit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newFixture(t)) })
	}
}

// WriteFile writes data to name through one handle and closes it.
func WriteFile(fsys vfs.RemoteFS, name string, data []byte) error {
	f, err := fsys.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadFile reads name whole.
func ReadFile(fsys vfs.RemoteFS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: got %v, want a *fs.PathError with %v", what, err, want)
	}
	var got syscall.Errno
	if !errors.As(err, &got) || got != want {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

func wantContent(t *testing.T, fsys vfs.RemoteFS, name string, want []byte) {
	t.Helper()
	got, err := ReadFile(fsys, name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %s: %d bytes (%.40q), want %d (%.40q)", name, len(got), got, len(want), want)
	}
}

func names(t *testing.T, fsys vfs.RemoteFS, dir string) string {
	t.Helper()
	es, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatalf("readdir %s: %v", dir, err)
	}
	var out []string
	for _, e := range es {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

func testOps(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{})
	da, db := Open(t, a, b, "ops", 0)
	must(t, da.Mkdir("/src", 0o755))
	must(t, da.Mkdir("/src/sub", 0o700))
	must(t, WriteFile(da, "/src/sub/f", []byte("hello")))
	must(t, WriteFile(da, "/src/a", []byte("a")))
	must(t, WriteFile(da, "/top", []byte("top")))

	steps := []struct {
		name string
		do   func() error
		dir  string
		want string // listing of dir on the other node afterwards
	}{
		{"listing sorted", nil, "/src", "a sub/"},
		{"rename dir", func() error { return da.Rename("/src", "/dst") }, "/", "dst/ top"},
		{"children follow", nil, "/dst/sub", "f"},
		{"rename file over file", func() error { return da.Rename("/top", "/dst/a") }, "/dst", "a sub/"},
		{"rename into other dir", func() error { return da.Rename("/dst/sub/f", "/g") }, "/", "dst/ g"},
		{"remove file", func() error { return da.Remove("/dst/a") }, "/dst", "sub/"},
		{"remove empty dir", func() error { return da.Remove("/dst/sub") }, "/dst", ""},
		{"rename dir over empty dir", func() error {
			if err := da.Mkdir("/e", 0o755); err != nil {
				return err
			}
			return da.Rename("/dst", "/e")
		}, "/", "e/ g"},
	}
	for _, s := range steps {
		if s.do != nil {
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		if got := names(t, db, s.dir); got != s.want {
			t.Fatalf("%s: node b lists %s as %q, want %q", s.name, s.dir, got, s.want)
		}
	}
	wantContent(t, db, "/g", []byte("hello"))

	// Attributes.
	must(t, da.Chmod("/g", 0o600))
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	must(t, da.Chtimes("/g", time.Time{}, mt))
	fi, err := db.Stat("/g")
	must(t, err)
	if fi.Mode() != 0o600 || !fi.ModTime().Equal(mt) || fi.Size() != 5 || fi.IsDir() {
		t.Fatalf("stat /g: mode %v mtime %v size %d", fi.Mode(), fi.ModTime(), fi.Size())
	}
	if st, ok := fi.Sys().(*vfs.Stat); !ok || st.Ino == 0 {
		t.Fatalf("stat /g: Sys() = %#v, want a *vfs.Stat with an inode number", fi.Sys())
	}
	must(t, da.Truncate("/g", 2))
	wantContent(t, db, "/g", []byte("he"))
	must(t, da.Truncate("/g", 4))
	wantContent(t, db, "/g", []byte("he\x00\x00"))

	// Handle operations: seek, append, write at, truncate, directory reads.
	h, err := da.OpenFile("/g", os.O_RDWR|os.O_APPEND, 0)
	must(t, err)
	if _, err := h.Write([]byte("XY")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("Z"), 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if n, err := h.ReadAt(buf, 4); n != 2 || err != io.EOF || string(buf[:2]) != "XY" {
		t.Fatalf("ReadAt past end: %d %v %q", n, err, buf[:n])
	}
	if pos, err := h.Seek(-1, io.SeekEnd); err != nil || pos != 5 {
		t.Fatalf("Seek: %d %v", pos, err)
	}
	if fi, err := h.Stat(); err != nil || fi.Size() != 6 {
		t.Fatalf("handle Stat: %v %v", fi, err)
	}
	wantContent(t, db, "/g", []byte("he\x00\x00")) // not closed yet
	must(t, h.Close())
	wantContent(t, db, "/g", []byte("Ze\x00\x00XY"))
	if err := h.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second Close: %v, want fs.ErrClosed", err)
	}
}

func testErrors(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{})
	da, _ := Open(t, a, b, "errs", 0)
	must(t, da.Mkdir("/d", 0o755))
	must(t, WriteFile(da, "/d/f", []byte("x")))
	ro, err := da.OpenFile("/d/f", os.O_RDONLY, 0)
	must(t, err)
	defer ro.Close()
	dh, err := da.OpenFile("/d", os.O_RDONLY, 0)
	must(t, err)
	defer dh.Close()
	cases := []struct {
		name string
		err  error
		want syscall.Errno
	}{
		{"stat missing", second(da.Stat("/nope")), syscall.ENOENT},
		{"stat through a file", second(da.Stat("/d/f/x")), syscall.ENOTDIR},
		{"relative name", second(da.Stat("d")), syscall.EINVAL},
		{"unclean name", second(da.Stat("/d/../d")), syscall.EINVAL},
		{"long name", second(da.Stat("/" + strings.Repeat("n", 256))), syscall.ENAMETOOLONG},
		{"mkdir existing", da.Mkdir("/d", 0o755), syscall.EEXIST},
		{"mkdir root", da.Mkdir("/", 0o755), syscall.EEXIST},
		{"mkdir no parent", da.Mkdir("/x/y", 0o755), syscall.ENOENT},
		{"remove non-empty", da.Remove("/d"), syscall.ENOTEMPTY},
		{"remove missing", da.Remove("/nope"), syscall.ENOENT},
		{"remove root", da.Remove("/"), syscall.EBUSY},
		{"rename into itself", da.Rename("/d", "/d/in"), syscall.EINVAL},
		{"rename missing", da.Rename("/nope", "/n2"), syscall.ENOENT},
		{"rename a file to a new name", da.Rename("/d/f", "/d2"), 0},
		{"rename dir over non-empty dir", func() error {
			must(t, da.Mkdir("/d3", 0o755))
			must(t, WriteFile(da, "/d3/k", nil))
			return da.Rename("/d", "/d3") // /d is empty: its file moved above
		}(), syscall.ENOTEMPTY},
		{"open missing", second(da.OpenFile("/nope", os.O_RDONLY, 0)), syscall.ENOENT},
		{"create exclusive existing", second(da.OpenFile("/d3/k", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)), syscall.EEXIST},
		{"open dir for write", second(da.OpenFile("/d", os.O_WRONLY, 0)), syscall.EISDIR},
		{"readdir a file", second(da.ReadDir("/d2")), syscall.ENOTDIR},
		{"write read-only handle", second(ro.Write([]byte("y"))), syscall.EBADF},
		{"read a directory", second(dh.Read(make([]byte, 1))), syscall.EISDIR},
		{"truncate a directory", da.Truncate("/d", 0), syscall.EISDIR},
		{"truncate negative", da.Truncate("/d2", -1), syscall.EINVAL},
		{"flock bad how", ro.Flock(context.Background(), 0x40), syscall.EINVAL},
	}
	for _, c := range cases {
		if c.want == 0 {
			if c.err != nil {
				t.Fatalf("%s: %v", c.name, c.err)
			}
			continue
		}
		wantErrno(t, c.name, c.err, c.want)
	}
	must(t, WriteFile(da, "/d/f", []byte("x")))
	wantErrno(t, "rename file over dir", da.Rename("/d/f", "/d3"), syscall.EISDIR)
	wantErrno(t, "rename dir over file", da.Rename("/d3", "/d/f"), syscall.ENOTDIR)
	es, err := dh.ReadDir(-1)
	must(t, err)
	if len(es) != 1 || es[0].Name() != "f" {
		t.Fatalf("dir handle ReadDir: %v", es)
	}
}

func second[T any](_ T, err error) error { return err }

func testCloseToOpen(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{})
	da, db := Open(t, a, b, "cto", 0)
	for i := range 20 {
		data := make([]byte, 1+i*97)
		rand.Read(data)
		must(t, WriteFile(da, "/f", data))
		wantContent(t, db, "/f", data)
		fi, err := db.Stat("/f")
		must(t, err)
		if v, _ := drive.Version(fi); v < uint64(i+1) {
			t.Fatalf("version %d after %d commits", v, i+1)
		}
		da, db = db, da // both directions
	}
}

func testOpenHandleKeepsVersion(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{})
	da, db := Open(t, a, b, "keep", 0)
	old := bytes.Repeat([]byte("old."), 700_000) // several chunks
	must(t, WriteFile(da, "/f", old))
	h, err := db.OpenFile("/f", os.O_RDONLY, 0)
	must(t, err)
	defer h.Close()
	// O_TRUNC's effect is invisible until Close.
	w, err := da.OpenFile("/f", os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	wantContent(t, db, "/f", old)
	if _, err := w.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	must(t, w.Close())
	got, err := io.ReadAll(h)
	must(t, err)
	if !bytes.Equal(got, old) {
		t.Fatalf("the handle opened before the commit read %d bytes, want the old %d", len(got), len(old))
	}
	wantContent(t, db, "/f", []byte("new"))
}

func testBigFileSpill(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{WriteBuffer: 2 * drive.ChunkSize})
	da, db := Open(t, a, b, "big", 0)
	data := make([]byte, 5*drive.ChunkSize+12345)
	rand.Read(data)
	must(t, WriteFile(da, "/big", data))
	wantContent(t, db, "/big", data)
	// A partial overwrite straddling two slots, through the other node.
	h, err := db.OpenFile("/big", os.O_RDWR, 0)
	must(t, err)
	patch := bytes.Repeat([]byte{0xAB}, 3000)
	off := int64(3*drive.ChunkSize - 1000)
	if _, err := h.WriteAt(patch, off); err != nil {
		t.Fatal(err)
	}
	copy(data[off:], patch)
	// Shrink into slot 4, then grow: the cut bytes come back as zeros.
	must(t, h.Truncate(4*drive.ChunkSize+10))
	must(t, h.Truncate(int64(len(data))))
	clear(data[4*drive.ChunkSize+10:])
	must(t, h.Close())
	wantContent(t, da, "/big", data)
	used, _ := da.Usage()
	if used != int64(len(data)) {
		t.Fatalf("Usage: %d bytes, want %d", used, len(data))
	}
}

func testQuota(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{})
	da, db := Open(t, a, b, "small", 1000)
	must(t, WriteFile(da, "/a", make([]byte, 600)))
	err := WriteFile(db, "/b", make([]byte, 600))
	wantErrno(t, "write past the quota", err, syscall.ENOSPC)
	var qe *vfs.QuotaError
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), "drive small") {
		t.Fatalf("quota error %q does not name the drive", err)
	}
	if used, quota := db.Usage(); used != 600 || quota != 1000 {
		t.Fatalf("Usage after the refusal: %d of %d, want 600 of 1000", used, quota)
	}
	wantErrno(t, "truncate past the quota", da.Truncate("/a", 2000), syscall.ENOSPC)
	// Shrinking is always allowed; then the write fits.
	must(t, WriteFile(da, "/a", make([]byte, 100)))
	must(t, WriteFile(db, "/b", make([]byte, 600)))
	must(t, db.Remove("/a"))
	if used, _ := da.Usage(); used != 600 {
		t.Fatalf("Usage after remove: %d, want 600", used)
	}
	// A new quota applies to mounted drives at their next commit.
	ctx := context.Background()
	if _, err := a.SetQuota(ctx, "t", "small", -1); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("SetQuota(-1): %v", err)
	}
	rec, err := a.SetQuota(ctx, "t", "small", 500)
	must(t, err)
	if rec.Quota != 500 || rec.Used != 600 {
		t.Fatalf("SetQuota: %+v", rec)
	}
	wantErrno(t, "growth over a lowered quota", WriteFile(db, "/c", []byte("x")), syscall.ENOSPC)
	must(t, WriteFile(db, "/b", make([]byte, 400)))
	_, err = b.SetQuota(ctx, "t", "small", 0)
	must(t, err)
	must(t, WriteFile(da, "/c", make([]byte, 5000)))
	if _, q := db.Usage(); q != 0 {
		t.Fatalf("Usage quota after SetQuota(0): %d", q)
	}
}

func testRemovedWhileOpen(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{})
	da, db := Open(t, a, b, "gone", 0)
	must(t, WriteFile(da, "/f", []byte("v1")))
	w, err := da.OpenFile("/f", os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	w.Write([]byte("v2"))
	must(t, db.Remove("/f"))
	must(t, w.Close())
	wantErrno(t, "stat after remove", second(db.Stat("/f")), syscall.ENOENT)
	if used, _ := db.Usage(); used != 0 {
		t.Fatalf("Usage: %d, want 0", used)
	}
}

func testFlock(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{})
	da, db := Open(t, a, b, "locks", 0)
	must(t, WriteFile(da, "/l", nil))
	open := func(d *drive.Drive) vfs.RemoteFile {
		h, err := d.OpenFile("/l", os.O_RDONLY, 0)
		must(t, err)
		t.Cleanup(func() { h.Close() })
		return h
	}
	ctx := context.Background()
	ha, hb, hb2 := open(da), open(db), open(db)
	must(t, ha.Flock(ctx, vfs.LOCK_EX))
	wantErrno(t, "EX|NB against EX", hb.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB), syscall.EWOULDBLOCK)
	wantErrno(t, "SH|NB against EX", hb.Flock(ctx, vfs.LOCK_SH|vfs.LOCK_NB), syscall.EWOULDBLOCK)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	wantErrno(t, "blocking EX until ctx ends", hb.Flock(short, vfs.LOCK_EX), syscall.EINTR)
	cancel()
	got := make(chan error, 1)
	go func() { got <- hb.Flock(ctx, vfs.LOCK_EX) }()
	time.Sleep(30 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("blocking EX returned while held elsewhere: %v", err)
	default:
	}
	must(t, ha.Flock(ctx, vfs.LOCK_UN))
	select {
	case err := <-got:
		must(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("blocking EX not granted 5 s after the release")
	}
	// Shared locks share; an exclusive one waits for all of them.
	must(t, hb.Flock(ctx, vfs.LOCK_SH)) // conversion EX -> SH
	must(t, hb2.Flock(ctx, vfs.LOCK_SH|vfs.LOCK_NB))
	must(t, ha.Flock(ctx, vfs.LOCK_SH|vfs.LOCK_NB))
	wantErrno(t, "EX|NB against SH", ha.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB), syscall.EWOULDBLOCK)
	// Close releases.
	must(t, hb.Close())
	must(t, hb2.Close())
	must(t, ha.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB))
	// So does closing the Drive that holds it (a sandbox unmounting).
	hb3 := open(db)
	wantErrno(t, "EX|NB against a mounted holder", hb3.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB), syscall.EWOULDBLOCK)
	must(t, da.Close())
	must(t, hb3.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB))
	if _, err := da.Stat("/l"); err == nil {
		t.Fatal("Stat on a closed Drive succeeded")
	}
}

// testFlockExpiry: a holder that stops renewing (its process died) loses
// the lock after LockTTL; one that renews keeps it past the TTL.
func testFlockExpiry(t *testing.T, f Fixture) {
	const ttl = 600 * time.Millisecond
	a, b := f.Nodes(t, drive.Options{LockTTL: ttl})
	da, db := Open(t, a, b, "expiry", 0)
	must(t, WriteFile(da, "/l", nil))
	ctx := context.Background()
	ha, err := da.OpenFile("/l", os.O_RDONLY, 0)
	must(t, err)
	hb, err := db.OpenFile("/l", os.O_RDONLY, 0)
	must(t, err)
	defer hb.Close()
	must(t, ha.Flock(ctx, vfs.LOCK_EX))
	time.Sleep(2 * ttl) // renewed meanwhile
	wantErrno(t, "EX|NB while the holder renews", hb.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB), syscall.EWOULDBLOCK)
	// A dead holder: a row nobody renews.
	fi, err := da.Stat("/l")
	must(t, err)
	ino := fi.Sys().(*vfs.Stat).Ino
	must(t, ha.Close())
	err = a.Meta().Update(ctx, da.ID(), func(tx drive.Tx) error {
		now, err := tx.Now()
		if err != nil {
			return err
		}
		return tx.PutLock(drive.Lock{Inode: ino, Owner: "dead", Exclusive: true, Expires: now.Add(ttl)})
	})
	must(t, err)
	wantErrno(t, "EX|NB against the dead holder's live row", hb.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB), syscall.EWOULDBLOCK)
	start := time.Now()
	must(t, hb.Flock(ctx, vfs.LOCK_EX))
	if waited := time.Since(start); waited > ttl+2*time.Second {
		t.Fatalf("the dead holder's lock lasted %v, TTL %v", waited, ttl)
	}
}

func testRegistry(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{MountTTL: 3 * time.Second})
	ctx := context.Background()
	for _, bad := range []struct {
		name  string
		quota int64
	}{{"", 0}, {"Upper", 0}, {"-x", 0}, {strings.Repeat("x", 64), 0}, {"ok", -1}} {
		if _, err := a.Create(ctx, "t", bad.name, bad.quota); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Fatalf("Create(%q, %d): %v, want invalid argument", bad.name, bad.quota, err)
		}
	}
	rec, err := a.Create(ctx, "t", "r1", 5)
	must(t, err)
	if _, err := b.Create(ctx, "t", "r1", 0); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("second Create: %v, want already exists", err)
	}
	_, err = a.Create(ctx, "other", "r1", 0) // names are per tenant
	must(t, err)
	_, err = a.Create(ctx, "t", "r0", 0)
	must(t, err)
	got, err := b.Get(ctx, "t", "r1")
	must(t, err)
	if got.ID != rec.ID || got.Quota != 5 || !got.CreatedAt.Equal(rec.CreatedAt) {
		t.Fatalf("Get: %+v, want %+v", got, rec)
	}
	if _, err := b.Get(ctx, "t", "nope"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	list, err := b.List(ctx, "t")
	must(t, err)
	if len(list) != 2 || list[0].Name != "r0" || list[1].Name != "r1" {
		t.Fatalf("List(t): %+v", list)
	}
	all, err := b.List(ctx, "")
	must(t, err)
	if len(all) != 3 {
		t.Fatalf("List(all): %d drives, want 3", len(all))
	}
	d, err := b.Open(ctx, "t", "r1")
	must(t, err)
	must(t, WriteFile(d, "/x", []byte("hi")))
	if err := a.Delete(ctx, "t", "r1"); !errors.Is(err, drive.ErrMounted) || !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Delete while mounted: %v", err)
	}
	must(t, d.Close())
	must(t, a.Delete(ctx, "t", "r1"))
	if _, err := b.Open(ctx, "t", "r1"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("Open after Delete: %v", err)
	}
	n := 0
	must(t, f.Store.List(ctx, drive.Prefix(rec.ID), func(string, int64) error { n++; return nil }))
	if n != 0 {
		t.Fatalf("%d objects left under %s after Delete", n, drive.Prefix(rec.ID))
	}
	// A mount whose node died lapses after MountTTL.
	d2, err := a.Open(ctx, "t", "r0")
	must(t, err)
	r0, _ := a.Get(ctx, "t", "r0")
	must(t, a.Meta().Update(ctx, r0.ID, func(tx drive.Tx) error {
		now, _ := tx.Now()
		return tx.PutMount(drive.Mount{ID: "dead-node", Expires: now.Add(500 * time.Millisecond)})
	}))
	must(t, d2.Close())
	if err := a.Delete(ctx, "t", "r0"); !errors.Is(err, drive.ErrMounted) {
		t.Fatalf("Delete with a live dead-node lease: %v", err)
	}
	time.Sleep(600 * time.Millisecond)
	must(t, a.Delete(ctx, "t", "r0"))
	// A drive left by a Delete interrupted after its metadata went:
	// objects without a record are swept.
	must(t, store.PutBytes(ctx, f.Store, "drives/0123456789abcdef0123456789abcdef/chunks/x", []byte("orphan")))
	n, err = a.DeleteOrphans(ctx)
	must(t, err)
	if n != 1 {
		t.Fatalf("DeleteOrphans removed %d drives' objects, want 1", n)
	}
	if ok, _ := f.Store.Has(ctx, "drives/0123456789abcdef0123456789abcdef/chunks/x"); ok {
		t.Fatal("orphan object still there")
	}
}

// testRandomWrites: random writes, truncations and reopenings of one
// file against a byte-slice model, with a write buffer of two slots so
// that later slots spill to disk.
func testRandomWrites(t *testing.T, f Fixture) {
	a, b := f.Nodes(t, drive.Options{WriteBuffer: 2 * drive.ChunkSize})
	da, db := Open(t, a, b, "random", 0)
	rng := mrand.New(mrand.NewPCG(1, 2))
	var model []byte
	nodes := []*drive.Drive{da, db}
	for round := range 8 {
		h, err := nodes[round%2].OpenFile("/r", os.O_CREATE|os.O_RDWR, 0o644)
		must(t, err)
		for range 12 {
			switch rng.IntN(4) {
			case 0:
				size := rng.Int64N(4 * drive.ChunkSize)
				must(t, h.Truncate(size))
				if size < int64(len(model)) {
					model = model[:size]
				} else {
					model = append(model, make([]byte, size-int64(len(model)))...)
				}
			default:
				off := rng.Int64N(4 * drive.ChunkSize)
				p := make([]byte, 1+rng.IntN(drive.ChunkSize+100))
				rand.Read(p)
				if rng.IntN(3) == 0 {
					clear(p[len(p)/3:]) // zero runs: trimmed from chunks
				}
				if _, err := h.WriteAt(p, off); err != nil {
					t.Fatal(err)
				}
				if end := off + int64(len(p)); end > int64(len(model)) {
					model = append(model, make([]byte, end-int64(len(model)))...)
				}
				copy(model[off:], p)
			}
			// The handle reads its own writes.
			off := rng.Int64N(int64(len(model)) + 1)
			got := make([]byte, min(int64(70000), int64(len(model))-off))
			if _, err := h.ReadAt(got, off); err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if !bytes.Equal(got, model[off:off+int64(len(got))]) {
				t.Fatalf("round %d: the handle reads back other bytes at %d", round, off)
			}
		}
		must(t, h.Close())
		wantContent(t, nodes[(round+1)%2], "/r", model)
	}
}

// chunks counts the objects under a drive's prefix.
func chunks(t *testing.T, st store.Store, d *drive.Drive) int {
	t.Helper()
	n := 0
	must(t, st.List(context.Background(), drive.Prefix(d.ID()), func(string, int64) error { n++; return nil }))
	return n
}

// fresh is a third node without a chunk cache: it reads from the store.
func fresh(t *testing.T, f Fixture, o drive.Options, name string) *drive.Drive {
	t.Helper()
	r := drive.NewRegistry(f.NewMeta(t), f.Store, o)
	d, err := r.Open(context.Background(), "t", name)
	must(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

func testSweep(t *testing.T, f Fixture) {
	const grace = 300 * time.Millisecond
	o := drive.Options{Grace: grace}
	a, b := f.Nodes(t, o)
	da, db := Open(t, a, b, "sweep", 0)
	ctx := context.Background()
	versions := make([][]byte, 4)
	for i := range versions {
		versions[i] = make([]byte, drive.ChunkSize+1000) // two chunks each
		rand.Read(versions[i])
		// A slot's trailing zeros are not stored: end both slots with a
		// non-zero byte so the stored bytes are the lengths (a random
		// zero there failed the byte count about one run in 40).
		versions[i][drive.ChunkSize-1] |= 1
		versions[i][len(versions[i])-1] |= 1
	}
	must(t, WriteFile(da, "/f", versions[0]))
	must(t, WriteFile(da, "/gone", versions[1]))
	old, err := db.OpenFile("/f", os.O_RDONLY, 0) // reads version 0 throughout
	must(t, err)
	defer old.Close()
	must(t, WriteFile(da, "/f", versions[2]))
	must(t, da.Remove("/gone"))
	must(t, WriteFile(da, "/f", versions[3]))
	if n := chunks(t, f.Store, da); n != 8 {
		t.Fatalf("%d chunks stored before the sweep, want 8", n)
	}
	st, err := a.Sweep(ctx, "t", "sweep")
	must(t, err)
	if st.Stored != 8 || st.Pending != 6 || st.Deleted != 0 {
		t.Fatalf("first sweep: %+v, want 8 stored, 6 pending, none deleted", st)
	}
	// Within the grace the old handle still reads its version whole,
	// even from a node that caches nothing.
	st, err = b.Sweep(ctx, "t", "sweep")
	must(t, err)
	if st.Deleted != 0 {
		t.Fatalf("a sweep within the grace deleted %d chunks", st.Deleted)
	}
	got, err := io.ReadAll(old)
	must(t, err)
	if !bytes.Equal(got, versions[0]) {
		t.Fatal("the handle on the old version read other bytes")
	}
	time.Sleep(grace + 50*time.Millisecond)
	st, err = b.Sweep(ctx, "t", "sweep")
	must(t, err)
	if st.Deleted != 6 || st.DeletedBytes != 3*int64(len(versions[0])) {
		t.Fatalf("sweep after the grace: %+v, want 6 chunks (%d bytes) deleted", st, 3*len(versions[0]))
	}
	if n := chunks(t, f.Store, da); n != 2 {
		t.Fatalf("%d chunks stored after the sweep, want the current version's 2", n)
	}
	wantContent(t, fresh(t, f, o, "sweep"), "/f", versions[3])
	// Nothing left to do.
	st, err = a.Sweep(ctx, "t", "sweep")
	must(t, err)
	if st.Deleted != 0 || st.Pending != 0 || st.Stored != 2 {
		t.Fatalf("a sweep with nothing to do: %+v", st)
	}
}

// testSweepDoomedCommit: a commit whose chunk a sweep is deleting (marked
// doomed, object gone) waits for the sweep to finish and uploads it again.
func testSweepDoomedCommit(t *testing.T, f Fixture) {
	o := drive.Options{Grace: time.Hour}
	a, b := f.Nodes(t, o)
	da, _ := Open(t, a, b, "doomed", 0)
	ctx := context.Background()
	data := bytes.Repeat([]byte("doomed chunk "), 1000)
	sum := sha256.Sum256(data)
	// The sweep between its steps 3 and 4: mark doomed, object deleted.
	must(t, a.Meta().Update(ctx, da.ID(), func(tx drive.Tx) error {
		now, _ := tx.Now()
		return tx.PutGarbage(drive.Garbage{Sum: sum, FirstSeen: now.Add(-2 * time.Hour), Doomed: true})
	}))
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		err := a.Meta().Update(ctx, da.ID(), func(tx drive.Tx) error { return tx.DeleteGarbage(sum) })
		released <- time.Now()
		if err != nil {
			t.Error(err)
		}
	}()
	must(t, WriteFile(da, "/f", data))
	closed := time.Now()
	if at := <-released; closed.Before(at) {
		t.Fatalf("Close returned %v before the sweep released its chunk", at.Sub(closed))
	}
	wantContent(t, fresh(t, f, o, "doomed"), "/f", data)
}

// putHook runs after each successful Put.
type putHook struct {
	store.Store
	after func(key string)
}

func (h *putHook) Put(ctx context.Context, key string, r io.Reader) error {
	if err := h.Store.Put(ctx, key, r); err != nil {
		return err
	}
	h.after(key)
	return nil
}

// testSweepBetweenUploadAndCommit: a whole sweep runs between a Close's
// upload and its metadata transaction and deletes the chunk just uploaded
// (it had the content of a long-unreferenced one): the commit sees the
// sweep count move, finds the chunk missing and uploads it again.
func testSweepBetweenUploadAndCommit(t *testing.T, f Fixture) {
	o := drive.Options{Grace: time.Hour}
	ctx := context.Background()
	var hooked *drive.Registry
	var id string
	fired := 0
	hook := &putHook{Store: f.Store}
	hook.after = func(key string) {
		if fired > 0 || id == "" || !strings.HasPrefix(key, drive.Prefix(id)) {
			return
		}
		fired++
		must(t, f.Store.Delete(ctx, key))
		must(t, hooked.Meta().Update(ctx, id, func(tx drive.Tx) error {
			r, err := tx.Record()
			if err != nil {
				return err
			}
			return tx.SetSweeps(r.Sweeps + 1)
		}))
	}
	hooked = drive.NewRegistry(f.NewMeta(t), hook, o)
	rec, err := hooked.Create(ctx, "t", "between", 0)
	must(t, err)
	d, err := hooked.Open(ctx, "t", "between")
	must(t, err)
	defer d.Close()
	data := bytes.Repeat([]byte("between "), 5000)
	id = rec.ID
	must(t, WriteFile(d, "/f", data))
	if fired != 1 {
		t.Fatalf("the hook fired %d times", fired)
	}
	wantContent(t, fresh(t, f, o, "between"), "/f", data)
}
