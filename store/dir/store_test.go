package dir_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/dir"
	"github.com/warren-sandbox/warren/store/storetest"
)

var ctx = context.Background()

func open(t testing.TB, p string, opts ...dir.Option) *dir.Store {
	t.Helper()
	s, err := dir.Open(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	storetest.RunSuite(t, func(t *testing.T) store.Store { return open(t, t.TempDir()) })
}

func TestStore_WithoutSync(t *testing.T) {
	storetest.RunSuite(t, func(t *testing.T) store.Store { return open(t, t.TempDir(), dir.WithoutSync()) })
}

func BenchmarkStore(b *testing.B) {
	b.Run("sync", func(b *testing.B) {
		storetest.RunBenchmarks(b, func(b *testing.B) store.Store { return open(b, b.TempDir()) })
	})
	b.Run("nosync", func(b *testing.B) {
		storetest.RunBenchmarks(b, func(b *testing.B) store.Store { return open(b, b.TempDir(), dir.WithoutSync()) })
	})
}

func tmpEntries(t *testing.T, root string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(root, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

type failReader struct{ n int }

var errCrash = errors.New("crash")

func (f *failReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errCrash
	}
	p = p[:min(len(p), f.n)]
	f.n -= len(p)
	return len(p), nil
}

// TestPut_NoStrayTemp checks the file system itself: failed and cancelled
// puts leave nothing in tmp/, and successful ones leave only the object.
func TestPut_NoStrayTemp(t *testing.T) {
	root := t.TempDir()
	s := open(t, root)
	if err := s.Put(ctx, "a/b", &failReader{n: 5 << 20}); !errors.Is(err, errCrash) {
		t.Fatalf("put: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Put(cctx, "a/c", strings.NewReader("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("put: %v", err)
	}
	if _, err := s.PutIfAbsent(ctx, "a/d", &failReader{n: 10}); !errors.Is(err, errCrash) {
		t.Fatalf("put-if-absent: %v", err)
	}
	if err := store.PutBytes(ctx, s, "a/ok", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfAbsent(ctx, "a/ok", strings.NewReader("again")); !errors.Is(err, store.ErrExists) {
		t.Fatalf("put-if-absent over existing: %v", err)
	}
	if names := tmpEntries(t, root); len(names) != 0 {
		t.Fatalf("stray temp files: %v", names)
	}
	var files []string
	filepath.WalkDir(filepath.Join(root, "data"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	if want := []string{"data/a/~ok/ok"}; fmt.Sprint(files) != fmt.Sprint(want) {
		t.Fatalf("files under data = %v, want %v", files, want)
	}
}

// TestSymlinkEscape plants symlinks inside the store pointing outside it, at
// every level a key reaches: a key directory, a fan-out directory and an
// object file. No operation may read, report or write outside.
func TestSymlinkEscape(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	s := open(t, root)
	secret := filepath.Join(outside, "~se", "secret")
	os.MkdirAll(filepath.Dir(secret), 0o755)
	os.WriteFile(secret, []byte("host secret"), 0o644)
	os.MkdirAll(filepath.Join(outside, "~ne"), 0o755)
	data := filepath.Join(root, "data")
	os.MkdirAll(filepath.Join(data, "~pw"), 0o755)
	for link, target := range map[string]string{
		filepath.Join(data, "evil"):         outside,
		filepath.Join(data, "~se"):          filepath.Join(outside, "~se"),
		filepath.Join(data, "~pw", "pwned"): secret,
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"evil/secret", "secret", "pwned"} {
		t.Run(key, func(t *testing.T) {
			if b, err := store.ReadAll(ctx, s, key); err == nil || bytes.Contains(b, []byte("host")) {
				t.Fatalf("get %q read outside the root: %q, %v", key, b, err)
			}
			if ok, _ := s.Has(ctx, key); ok {
				t.Fatalf("has %q = true through a symlink out", key)
			}
			if p, ok := s.Path(key); ok {
				t.Fatalf("path %q = %q through a symlink", key, p)
			}
			if f, err := s.File(ctx, key); err == nil {
				f.Close()
				t.Fatalf("file %q opened through a symlink out", key)
			}
			if rc, err := s.GetRange(ctx, key, 0, -1); err == nil {
				b, _ := io.ReadAll(rc)
				rc.Close()
				t.Fatalf("get range %q read through a symlink out: %q", key, b)
			}
		})
	}
	if err := store.PutBytes(ctx, s, "evil/new", []byte("x")); err == nil {
		t.Fatalf("put through a planted symlink succeeded")
	}
	if err := s.Delete(ctx, "secret"); err == nil {
		if _, err := os.Stat(secret); err != nil {
			t.Fatalf("delete removed a file outside the root: %v", err)
		}
	}
	if err := s.List(ctx, "", func(k string, _ int64) error {
		return fmt.Errorf("listed %q, which lives outside the root", k)
	}); err != nil && !strings.Contains(err.Error(), "escape") {
		t.Fatal(err)
	}
	if es, _ := os.ReadDir(filepath.Join(outside, "~ne")); len(es) != 0 {
		t.Fatalf("put wrote outside the root")
	}
	if b, _ := os.ReadFile(secret); string(b) != "host secret" {
		t.Fatalf("outside file changed: %q", b)
	}
}

func TestPath(t *testing.T) {
	root := t.TempDir()
	s := open(t, root)
	if err := store.PutBytes(ctx, s, "images/abc", []byte("erofs")); err != nil {
		t.Fatal(err)
	}
	p, ok := s.Path("images/abc")
	if !ok || !filepath.IsAbs(p) || !strings.HasPrefix(p, s.Root()) {
		t.Fatalf("path = %q, %v", p, ok)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "erofs" {
		t.Fatalf("read %s: %q, %v", p, b, err)
	}
	for _, key := range []string{"images/missing", "../x", "images", ""} {
		if p, ok := s.Path(key); ok {
			t.Fatalf("path %q = %q, want false", key, p)
		}
	}
	f, err := s.File(ctx, "images/abc")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestLarge_Streams checks that a 64 MiB put and get go through bounded
// buffers: the backend must not hold the object in memory.
func TestLarge_Streams(t *testing.T) {
	s := open(t, t.TempDir(), dir.WithoutSync())
	const size = 64 << 20
	src := io.LimitReader(zeros{}, size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := s.Put(ctx, "big", src); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Get(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{rc}, make([]byte, 64<<10))
	rc.Close()
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("get: %d, %v", n, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("put+get of 64 MiB allocated %d MiB: not streaming", alloc>>20)
	}
	zero := sha256.Sum256(make([]byte, size))
	if hex.EncodeToString(h.Sum(nil)) != hex.EncodeToString(zero[:]) {
		t.Fatalf("content differs")
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestOpen_Reopen(t *testing.T) {
	root := t.TempDir()
	s, err := dir.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutBytes(ctx, s, "k/v", []byte("persisted")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A crash leftover (old) and a put in progress elsewhere (young).
	old, young := filepath.Join(root, "tmp", "old.tmp"), filepath.Join(root, "tmp", "young.tmp")
	os.WriteFile(old, []byte("x"), 0o644)
	os.WriteFile(young, []byte("x"), 0o644)
	past := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, past, past)
	s = open(t, root)
	if b, err := store.ReadAll(ctx, s, "k/v"); err != nil || string(b) != "persisted" {
		t.Fatalf("after reopen: %q, %v", b, err)
	}
	if names := tmpEntries(t, root); fmt.Sprint(names) != "[young.tmp]" {
		t.Fatalf("tmp after open = %v, want only young.tmp", names)
	}
}

func TestOpen_Errors(t *testing.T) {
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "warren-store"), []byte("warren-store-dir 99\n"), 0o644)
	if _, err := dir.Open(bad); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Fatalf("open of unknown format: %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := dir.Open(file); err == nil {
		t.Fatalf("open of a regular file succeeded")
	}
	notDir := t.TempDir()
	os.WriteFile(filepath.Join(notDir, "data"), nil, 0o644)
	if _, err := dir.Open(notDir); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("open with data as a file: %v", err)
	}
}

// TestFanOut: a flat namespace of content-addressed keys spreads over
// fan-out directories, and List still returns every key in order.
func TestFanOut(t *testing.T) {
	root := t.TempDir()
	s := open(t, root, dir.WithoutSync())
	n := 3000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		h := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		if err := store.PutBytes(ctx, s, "chunks/"+hex.EncodeToString(h[:]), nil); err != nil {
			t.Fatal(err)
		}
	}
	es, err := os.ReadDir(filepath.Join(root, "data", "chunks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) > 256 || len(es) < 200 {
		t.Fatalf("chunks/ has %d entries, want 200..256 fan-out directories", len(es))
	}
	prev, count := "", 0
	if err := s.List(ctx, "chunks/", func(k string, _ int64) error {
		if k <= prev {
			return fmt.Errorf("%q listed after %q", k, prev)
		}
		prev = k
		count++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("listed %d keys, want %d", count, n)
	}
}

// TestCompareAndSwap_TwoOpens runs the head-update loop through two Stores
// opened on one directory (as two processes would): the flock on ROOT/lock,
// not only the in-process mutex, must keep every swap.
func TestCompareAndSwap_TwoOpens(t *testing.T) {
	root := t.TempDir()
	stores := []*dir.Store{open(t, root, dir.WithoutSync()), open(t, root, dir.WithoutSync())}
	if _, err := stores[0].PutIfAbsent(ctx, "heads/h", strings.NewReader("0")); err != nil {
		t.Fatal(err)
	}
	const per = 30
	errc := make(chan error, len(stores))
	for _, s := range stores {
		go func() {
			for done := 0; done < per; {
				rc, etag, err := s.GetWithETag(ctx, "heads/h")
				if err != nil {
					errc <- err
					return
				}
				b, _ := io.ReadAll(rc)
				rc.Close()
				var n int
				fmt.Sscan(string(b), &n)
				if _, err := s.CompareAndSwap(ctx, "heads/h", etag, strings.NewReader(fmt.Sprint(n+1))); err == nil {
					done++
				} else if !errors.Is(err, store.ErrPreconditionFailed) {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range stores {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := store.ReadAll(ctx, stores[1], "heads/h"); string(b) != fmt.Sprint(2*per) {
		t.Fatalf("counter = %s, want %d", b, 2*per)
	}
}

// TestCrashMidPut kills a real process (SIGKILL) while it is inside Put,
// then reopens the store: the object must be absent and List clean. The
// child is this test binary, re-executed.
func TestCrashMidPut(t *testing.T) {
	if root := os.Getenv("WARREN_STORE_CRASH_CHILD"); root != "" {
		s, err := dir.Open(root)
		if err != nil {
			os.Exit(3)
		}
		store.PutBytes(ctx, s, "done/before", []byte("ok"))
		// Endless input: the parent kills us mid-stream.
		s.Put(ctx, "crashed/object", io.MultiReader(strings.NewReader("started\n"), zeros{}))
		os.Exit(4) // unreachable unless Put returned
	}
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidPut$")
	cmd.Env = append(os.Environ(), "WARREN_STORE_CRASH_CHILD="+root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the temp file holds some data, then kill.
	deadline := time.Now().Add(20 * time.Second)
	for {
		es, _ := os.ReadDir(filepath.Join(root, "tmp"))
		if len(es) > 0 {
			if fi, err := es[0].Info(); err == nil && fi.Size() > 1<<20 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("child never started writing")
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Kill()
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() == 4 {
		t.Fatalf("child was not killed mid-put: %v", err)
	}
	s := open(t, root)
	ok, err := s.Has(ctx, "crashed/object")
	if err != nil || ok {
		t.Fatalf("has crashed object = %v, %v", ok, err)
	}
	var keys []string
	s.List(ctx, "", func(k string, _ int64) error { keys = append(keys, k); return nil })
	if fmt.Sprint(keys) != "[done/before]" {
		t.Fatalf("list after crash = %v, want [done/before]", keys)
	}
	// The leftover is young, so Open keeps it (it could be another
	// process's put); it is never an object.
	if n := len(tmpEntries(t, root)); n != 1 {
		t.Fatalf("tmp holds %d files after the crash, want the 1 leftover", n)
	}
}

// TestDirRemovedUnderStore removes a directory the store holds open (as an
// operator cleaning up by hand might): Put, Get and Has reopen the path
// instead of working in the dead directory.
func TestDirRemovedUnderStore(t *testing.T) {
	root := t.TempDir()
	s := open(t, root, dir.WithoutSync())
	if err := store.PutBytes(ctx, s, "p/abc", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "data", "p")); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Has(ctx, "p/abc"); ok || err != nil {
		t.Fatalf("has after removal = %v, %v", ok, err)
	}
	if _, err := store.ReadAll(ctx, s, "p/abc"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after removal: %v, want ErrNotFound", err)
	}
	if err := store.PutBytes(ctx, s, "p/abc", []byte("two")); err != nil {
		t.Fatalf("put after removal: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "data", "p", "~ab", "abc")); string(b) != "two" {
		t.Fatalf("file after put = %q, %v; want it back in place", b, err)
	}
	// A directory removed and made again by someone else is found again.
	os.RemoveAll(filepath.Join(root, "data", "p"))
	os.MkdirAll(filepath.Join(root, "data", "p", "~ab"), 0o755)
	os.WriteFile(filepath.Join(root, "data", "p", "~ab", "abc"), []byte("three"), 0o644)
	if b, err := store.ReadAll(ctx, s, "p/abc"); string(b) != "three" {
		t.Fatalf("get after re-creation = %q, %v", b, err)
	}
}

// TestManyDirs writes to more directories than the store keeps open, from
// several goroutines, and reads everything back.
func TestManyDirs(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	s := open(t, t.TempDir(), dir.WithoutSync())
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := w; i < n; i += 4 {
				key := fmt.Sprintf("d%d/x%d", i, i)
				if err := store.PutBytes(ctx, s, key, []byte(key)); err != nil {
					errs <- err
					return
				}
				j := (i * 7) % (i + 1) // some earlier key
				if b, err := store.ReadAll(ctx, s, fmt.Sprintf("d%d/x%d", j, j)); err != nil && !errors.Is(err, store.ErrNotFound) || err == nil && string(b) != fmt.Sprintf("d%d/x%d", j, j) {
					errs <- fmt.Errorf("read d%d/x%d = %q, %v", j, j, b, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		key := fmt.Sprintf("d%d/x%d", i, i)
		if b, err := store.ReadAll(ctx, s, key); err != nil || string(b) != key {
			t.Fatalf("get %s = %q, %v", key, b, err)
		}
	}
}

// TestClosed: operations on a closed store fail with an error, no panic.
func TestClosed(t *testing.T) {
	s, err := dir.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutBytes(ctx, s, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := store.PutBytes(ctx, s, "k2", []byte("v")); err == nil {
		t.Fatal("put on a closed store succeeded")
	}
	if _, err := store.ReadAll(ctx, s, "k"); err == nil {
		t.Fatal("get on a closed store succeeded")
	}
	if _, err := s.GetRange(ctx, "k", 0, 1); err == nil {
		t.Fatal("get range on a closed store succeeded")
	}
	if _, err := s.Has(ctx, "k"); err == nil {
		t.Fatal("has on a closed store succeeded")
	}
}

// TestGetRange_ReadsOnlyTheRange: a range of a file is read with pread at
// its offset; the file offset is never moved, so concurrent ranges of one
// object do not disturb each other, and a sparse 1 TiB object costs nothing
// to range-read near its end.
func TestGetRange_ReadsOnlyTheRange(t *testing.T) {
	root := t.TempDir()
	s := open(t, root, dir.WithoutSync())
	if err := store.PutBytes(ctx, s, "big", []byte("head")); err != nil {
		t.Fatal(err)
	}
	// Make it a sparse 1 TiB file with a tail, behind the store's back.
	p, ok := s.Path("big")
	if !ok {
		t.Fatal("no path for big")
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("tail"), 1<<40); err != nil {
		f.Close()
		t.Skip("filesystem cannot hold a sparse 1 TiB file: ", err)
	}
	f.Close()
	start := time.Now()
	rc, err := s.GetRange(ctx, "big", 1<<40, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "tail" {
		t.Fatalf("range at 1 TiB = %q, %v", b, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("range read took %v: it read the file before the offset", d)
	}
	// Interleaved reads of two ranges of one object.
	r1, _ := s.GetRange(ctx, "big", 0, 4)
	r2, _ := s.GetRange(ctx, "big", 1<<40, 4)
	defer r1.Close()
	defer r2.Close()
	var a, c [2]byte
	io.ReadFull(r1, a[:])
	io.ReadFull(r2, c[:])
	io.ReadFull(r1, a[:])
	io.ReadFull(r2, c[:])
	if string(a[:]) != "ad" || string(c[:]) != "il" {
		t.Fatalf("interleaved ranges read %q and %q, want \"ad\" and \"il\"", a, c)
	}
}
