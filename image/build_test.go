package image

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/vfs"
)

// entry is what the tests compare between the source and each view of an
// image (go-erofs and the kernel).
type entry struct {
	Mode   fs.FileMode
	Uid    uint32
	Gid    uint32
	Size   int64 // regular files
	Sum    string
	Target string
	Mtime  int64 // UnixNano
	Rdev   uint64
	Xattrs string
	Group  string // for hard links: the first path with the same inode
}

func (e entry) String() string {
	return fmt.Sprintf("%v %d:%d size=%d sum=%.12s target=%q mtime=%s rdev=%d xattrs=%q link=%s",
		e.Mode, e.Uid, e.Gid, e.Size, e.Sum, e.Target, time.Unix(0, e.Mtime).UTC().Format(time.RFC3339Nano), e.Rdev, e.Xattrs, e.Group)
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func fmtXattrs(m map[string]string) string {
	var ks []string
	for k, v := range m {
		if strings.HasPrefix(k, "user.") || strings.HasPrefix(k, "trusted.") {
			ks = append(ks, k+"="+v)
		}
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// hostView describes a host directory (the source, or a kernel mount).
func hostView(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	inodes := map[uint64]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		e := entry{Mode: fi.Mode(), Uid: st.Uid, Gid: st.Gid, Mtime: st.Mtim.Sec * 1e9} // images keep whole seconds (tree.put)
		if fi.Mode()&fs.ModeDevice != 0 {
			e.Rdev = st.Rdev
		}
		e.Xattrs = fmtXattrs(hostXattrs(p))
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Size, e.Sum = fi.Size(), sum(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Target, _ = os.Readlink(p)
		}
		if !fi.IsDir() && st.Nlink > 1 {
			if first, ok := inodes[st.Ino]; ok {
				e.Group = first
			} else {
				inodes[st.Ino] = rel
				e.Group = rel
			}
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fsView describes an fs.FS from this package (FileInfo.Sys() *vfs.Stat).
func fsView(t *testing.T, fsys fs.FS) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	inodes := map[uint64]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*vfs.Stat)
		if !ok {
			return fmt.Errorf("%s: Sys() is %T, want *vfs.Stat", p, fi.Sys())
		}
		e := entry{Mode: fi.Mode(), Uid: st.Uid, Gid: st.Gid, Mtime: fi.ModTime().UnixNano()}
		if fi.Mode()&fs.ModeDevice != 0 {
			e.Rdev = st.Rdev
		}
		if xi, ok := fi.(xattrInfo); ok {
			e.Xattrs = fmtXattrs(xi.GetAllXattr())
		}
		switch {
		case fi.Mode().IsRegular():
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			if int64(len(b)) != fi.Size() {
				return fmt.Errorf("%s: read %d bytes, size %d", p, len(b), fi.Size())
			}
			e.Size, e.Sum = fi.Size(), sum(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.Target, err = fs.ReadLink(fsys, p); err != nil {
				return err
			}
		}
		if !fi.IsDir() && st.Nlink > 1 {
			if first, ok := inodes[st.Ino]; ok {
				e.Group = first
			} else {
				inodes[st.Ino] = p
				e.Group = p
			}
		}
		out[p] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compareViews(t *testing.T, what string, want, got map[string]entry) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s: %s missing", what, p)
			continue
		}
		if w != g {
			t.Errorf("%s: %s\n got %#v\nwant %#v", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: unexpected %s", what, p)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// makeKinds fills dir with every kind of entry a rootfs has.
func makeKinds(t *testing.T, dir string) {
	t.Helper()
	w := func(p string, data []byte, mode os.FileMode) {
		must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, p), data, mode))
		must(t, os.Chmod(filepath.Join(dir, p), mode))
	}
	big := make([]byte, 5<<20+123)
	_, _ = rand.Read(big)
	w("hello.txt", []byte("hello, world\n"), 0o644)
	w("empty", nil, 0o600)
	w("large.bin", big, 0o644)
	w("bin/tool", []byte("#!/bin/sh\necho tool\n"), 0o755)
	w("bin/su", []byte("\x7fELF fake"), 0o755|os.ModeSetuid)
	w("a/b/c/d/e/deep.txt", []byte("deep"), 0o640)
	w("日本語/ファイル.txt", []byte("unicode"), 0o644)
	w("emoji-🦀", []byte("crab"), 0o644)
	w("hard1", []byte("linked"), 0o644)
	// Sparse-ish: a hole of 3 MiB then data.
	sp, err := os.Create(filepath.Join(dir, "sparse.bin"))
	must(t, err)
	_, err = sp.WriteAt([]byte("tail"), 3<<20)
	must(t, err)
	must(t, sp.Close())
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(t, os.Link(filepath.Join(dir, "hard1"), filepath.Join(dir, "sub/hard2")))
	must(t, os.Link(filepath.Join(dir, "hard1"), filepath.Join(dir, "hard3")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "abs")))
	must(t, os.Symlink("hello.txt", filepath.Join(dir, "rel")))
	must(t, os.Symlink("../nowhere/at/all", filepath.Join(dir, "sub/dangling")))
	must(t, unix.Mkfifo(filepath.Join(dir, "fifo"), 0o620))
	must(t, os.MkdirAll(filepath.Join(dir, "dev"), 0o755))
	must(t, unix.Mknod(filepath.Join(dir, "dev/null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
	must(t, unix.Mknod(filepath.Join(dir, "dev/loop9"), unix.S_IFBLK|0o660, int(unix.Mkdev(7, 9))))
	must(t, os.Mkdir(filepath.Join(dir, "tmp"), 0o777))
	must(t, os.Chmod(filepath.Join(dir, "tmp"), 0o777|os.ModeSticky))
	must(t, os.Mkdir(filepath.Join(dir, "shared"), 0o775))
	must(t, os.Chmod(filepath.Join(dir, "shared"), 0o775|os.ModeSetgid))
	must(t, os.Lchown(filepath.Join(dir, "hello.txt"), 1000, 1000))
	must(t, os.Lchown(filepath.Join(dir, "large.bin"), 100000, 200000)) // needs extended inodes
	must(t, os.Lchown(filepath.Join(dir, "rel"), 1234, 5678))
	must(t, unix.Lsetxattr(filepath.Join(dir, "hello.txt"), "user.comment", []byte("greeting"), 0))
	must(t, unix.Lsetxattr(filepath.Join(dir, "bin"), "trusted.overlay.opaque", []byte("y"), 0))
	// mtimes with nanoseconds, set last (children change dir mtimes).
	ts := time.Date(2024, 2, 29, 12, 34, 56, 789000000, time.UTC)
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			ts = ts.Add(time.Second + 1234)
			_ = unix.Lutimes(p, []unix.Timeval{unix.NsecToTimeval(ts.UnixNano()), unix.NsecToTimeval(ts.UnixNano())})
			tsp := []unix.Timespec{unix.NsecToTimespec(ts.UnixNano()), unix.NsecToTimespec(ts.UnixNano())}
			_ = unix.UtimesNanoAt(unix.AT_FDCWD, p, tsp, unix.AT_SYMLINK_NOFOLLOW)
		}
		return nil
	})
}

// kernelMount mounts an image file read-only with the kernel's file-backed
// EROFS support and returns the mount point.
func kernelMount(t testing.TB, image string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("kernel mount needs root")
	}
	mnt := t.TempDir()
	if err := unix.Mount(image, mnt, "erofs", unix.MS_RDONLY, ""); err != nil {
		t.Skipf("kernel cannot mount the EROFS file (needs Linux >= 6.12 file-backed mounts): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return mnt
}

// verifyBothWays checks an image with fsck.erofs and that the kernel's
// view of it matches this package's fs.FS entry for entry.
func verifyBothWays(t *testing.T, im *Image) {
	t.Helper()
	fsck(t, im.Path)
	compareViews(t, "kernel vs fs.FS", fsView(t, im.FS()), hostView(t, kernelMount(t, im.Path)))
}

func fsck(t *testing.T, image string) {
	t.Helper()
	if _, err := exec.LookPath("fsck.erofs"); err != nil {
		t.Fatalf("fsck.erofs missing (apt-get install erofs-utils): %v", err)
	}
	out, err := exec.Command("fsck.erofs", "--extract", image).CombinedOutput()
	if err != nil {
		t.Fatalf("fsck.erofs rejects the image: %v\n%s", err, out)
	}
}

func TestBuild_Dir_EveryKind(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			src := t.TempDir()
			makeKinds(t, src)
			want := hostView(t, src)
			c := newTestCatalog(t, s.new(t))
			m, err := c.BuildSource(ctx, src, BuildOptions{})
			must(t, err)
			if m.Files != len(want) {
				t.Errorf("manifest says %d files, source has %d", m.Files, len(want))
			}
			im, err := c.Open(ctx, m)
			must(t, err)
			compareViews(t, "go-erofs", want, fsView(t, im.FS()))

			// Hard links share one inode with the right link count.
			st := func(p string) *vfs.Stat {
				fi, err := im.FS().(fs.ReadLinkFS).Lstat(p)
				must(t, err)
				return fi.Sys().(*vfs.Stat)
			}
			if a, b := st("hard1"), st("sub/hard2"); a.Ino != b.Ino || a.Nlink != 3 {
				t.Errorf("hard links: ino %d vs %d, nlink %d (want same, 3)", a.Ino, b.Ino, a.Nlink)
			}

			fsck(t, im.Path)
			mnt := kernelMount(t, im.Path)
			compareViews(t, "kernel", want, hostView(t, mnt))
			var a, b unix.Stat_t
			must(t, unix.Lstat(filepath.Join(mnt, "hard1"), &a))
			must(t, unix.Lstat(filepath.Join(mnt, "hard3"), &b))
			if a.Ino != b.Ino || a.Nlink != 3 {
				t.Errorf("kernel hard links: ino %d vs %d, nlink %d", a.Ino, b.Ino, a.Nlink)
			}
		})
	}
}

func TestBuild_SymlinkedSourceDir(t *testing.T) {
	src := t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644))
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(src, link))
	c := newTestCatalog(t, newMemStore())
	m, err := c.BuildSource(context.Background(), link, BuildOptions{})
	must(t, err)
	if m.Files != 2 {
		t.Errorf("built %d entries through a symlinked source, want 2", m.Files)
	}
}

func TestDefault_StableDigest(t *testing.T) {
	ctx := context.Background()
	var digests []string
	for i := 0; i < 2; i++ {
		c := newTestCatalog(t, newMemStore())
		im, err := Default(ctx, c)
		must(t, err)
		digests = append(digests, im.Manifest.Digest)
		m, err := c.Resolve(ctx, DefaultName)
		must(t, err)
		if m.Digest != im.Manifest.Digest {
			t.Fatalf("tag %s -> %s, built %s", DefaultName, m.Digest, im.Manifest.Digest)
		}
		v := fsView(t, im.FS())
		checks := map[string]func(entry) bool{
			"home/user":      func(e entry) bool { return e.Mode.IsDir() && e.Uid == 1000 && e.Gid == 1000 },
			"tmp":            func(e entry) bool { return e.Mode == fs.ModeDir|fs.ModeSticky|0o777 },
			"var/tmp":        func(e entry) bool { return e.Mode == fs.ModeDir|fs.ModeSticky|0o777 },
			"root":           func(e entry) bool { return e.Mode == fs.ModeDir|0o700 },
			"etc/passwd":     func(e entry) bool { return e.Mode == 0o644 && e.Size > 0 },
			"etc/group":      func(e entry) bool { return e.Size > 0 },
			"etc/hostname":   func(e entry) bool { return e.Size > 0 },
			"etc/os-release": func(e entry) bool { return e.Size > 0 },
			"bin":            func(e entry) bool { return e.Mode.IsDir() },
			"usr/bin":        func(e entry) bool { return e.Mode.IsDir() },
			"usr/local/bin":  func(e entry) bool { return e.Mode.IsDir() },
		}
		for p, ok := range checks {
			if e, found := v[p]; !found || !ok(e) {
				t.Errorf("default image: %s is %v (found %v)", p, e, found)
			}
		}
		if i == 0 {
			verifyBothWays(t, im)
		}
		// Building again in the same catalog is a no-op with the same digest.
		im2, err := Default(ctx, c)
		must(t, err)
		if im2 != im {
			t.Errorf("second Default did not reuse the opened image")
		}
	}
	if digests[0] != digests[1] {
		t.Fatalf("default image digest not stable: %s vs %s", digests[0], digests[1])
	}
	// Golden: a change here means every deployed sandbox's base changes.
	// Update it only with a deliberate change of the default tree (or of
	// the writer), and say so in the change.
	const golden = "sha256:46569f7c96cc3e72ef779bc66f692a0edcdc2383676bc72cd619c66dd00876a1"
	if digests[0] != golden {
		t.Errorf("default image digest %s, golden %s", digests[0], golden)
	}
}

func TestOpen_ReadsLittle(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	for i := 0; i < 200; i++ {
		must(t, os.WriteFile(filepath.Join(src, fmt.Sprintf("f%03d", i)), bytes.Repeat([]byte{byte(i)}, 64<<10), 0o644))
	}
	c := newTestCatalog(t, stores[1].new(t))
	m, err := c.BuildSource(ctx, src, BuildOptions{})
	must(t, err)
	im, err := OpenFile(mustLocal(t, c, m))
	must(t, err)
	defer im.Close()
	calls, n := im.ReadStats()
	t.Logf("open: %d ReadAt calls, %d bytes of a %d-byte image", calls, n, m.Size)
	if n > 8192 {
		t.Errorf("open read %d bytes, want <= 8192", n)
	}
	b, err := fs.ReadFile(im.FS(), "f123")
	must(t, err)
	if len(b) != 64<<10 || b[0] != 123 {
		t.Fatalf("f123: got %d bytes", len(b))
	}
	calls2, n2 := im.ReadStats()
	t.Logf("open+read one 64 KiB file: %d ReadAt calls, %d bytes", calls2, n2)
	if n2-n > 64<<10+16<<10 {
		t.Errorf("reading one 64 KiB file read %d bytes", n2-n)
	}
}

func mustLocal(t *testing.T, c *Catalog, m Manifest) string {
	t.Helper()
	p, ok := c.localPath(m.Hex())
	if !ok {
		t.Fatal("no local path")
	}
	return p
}

func TestImageFS_ReadAtSeek(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	makeKinds(t, src)
	c := newTestCatalog(t, stores[1].new(t))
	m, err := c.BuildSource(ctx, src, BuildOptions{})
	must(t, err)
	im, err := c.Open(ctx, m)
	must(t, err)
	for _, name := range []string{"large.bin", "sparse.bin", "hello.txt", "a/b/c/d/e/deep.txt"} {
		want, err := os.ReadFile(filepath.Join(src, name))
		must(t, err)
		f, err := im.FS().Open(name)
		must(t, err)
		ra, ok := f.(interface {
			ReadAt([]byte, int64) (int, error)
			Seek(int64, int) (int64, error)
		})
		if !ok {
			t.Fatalf("%s: %T is not an io.ReaderAt and io.Seeker", name, f)
		}
		for _, off := range []int64{0, 1, 4095, 4096, 4097, int64(len(want)) / 2, int64(len(want)) - 1} {
			if off < 0 || off >= int64(len(want)) {
				continue
			}
			buf := make([]byte, 10000)
			n, err := ra.ReadAt(buf, off)
			wantN := min(len(buf), len(want)-int(off))
			if n != wantN || !bytes.Equal(buf[:n], want[off:int(off)+n]) || (n < len(buf) && err == nil) {
				t.Errorf("%s: ReadAt(%d) = %d, %v; want %d bytes", name, off, n, err, wantN)
			}
		}
		if _, err := ra.Seek(int64(len(want))/3, 0); err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(rest, want[len(want)/3:]) {
			t.Errorf("%s: read after seek: %d bytes, %v", name, len(rest), err)
		}
		f.Close()
	}
}

// TestImageFS_AsVFSBase checks the contract with the vfs: owners, modes and
// content of the default image seen through a vfs.FS over it.
func TestImageFS_AsVFSBase(t *testing.T) {
	ctx := context.Background()
	c := newTestCatalog(t, stores[1].new(t))
	im, err := Default(ctx, c)
	must(t, err)
	v := vfs.New(vfs.Options{Base: im.FS()})
	fi, err := v.Stat("/home/user")
	must(t, err)
	if st, ok := fi.Sys().(*vfs.Stat); !ok || st.Uid != 1000 || !fi.IsDir() {
		t.Errorf("/home/user through vfs: %v %#v", fi.Mode(), fi.Sys())
	}
	fi, err = v.Stat("/tmp")
	must(t, err)
	if fi.Mode() != fs.ModeDir|fs.ModeSticky|0o777 {
		t.Errorf("/tmp mode %v", fi.Mode())
	}
	b, err := v.ReadFile("/etc/passwd")
	must(t, err)
	if !strings.Contains(string(b), "user:x:1000:1000") {
		t.Errorf("/etc/passwd: %q", b)
	}
}

func TestImageFS_Concurrent(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	makeKinds(t, src)
	c := newTestCatalog(t, stores[1].new(t))
	m, err := c.BuildSource(ctx, src, BuildOptions{})
	must(t, err)
	im, err := c.Open(ctx, m)
	must(t, err)
	want := fsView(t, im.FS())
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			for p, e := range want {
				if !e.Mode.IsRegular() {
					continue
				}
				b, err := fs.ReadFile(im.FS(), p)
				if err != nil || sum(b) != e.Sum {
					errs <- fmt.Errorf("%s: %v", p, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
