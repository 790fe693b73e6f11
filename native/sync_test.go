package native_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
	"golang.org/x/sys/unix"
)

// newVFS returns a vfs over the same tree the test image was built from.
func newVFS(t *testing.T) *vfs.FS {
	t.Helper()
	_, img := requireRuntime(t)
	return vfs.New(vfs.Options{Base: os.DirFS(filepath.Join(filepath.Dir(img), "root"))})
}

func TestSync_HarvestBack(t *testing.T) {
	v := newVFS(t)
	ws := newWorkspace(t, "harvest", v, native.Limits{})
	_, errs, res := sh(t, ws, `set -e
		echo hello > /tmp/new.txt; chmod 640 /tmp/new.txt; touch -d '2001-02-03 04:05:06' /tmp/new.txt
		mkdir -p /home/user/a/b; echo deep > /home/user/a/b/c; chown -R 1000:1000 /home/user/a
		ln -s ../etc/motd /tmp/rel-link
		rm /etc/hostname
		echo appended >> /etc/motd
		mkfifo /tmp/fifo
		echo gone > /tmp/short; rm /tmp/short`, native.Limits{})
	if res.Status != 0 {
		t.Fatalf("status %d: %s", res.Status, errs)
	}
	check := func(name, want string) {
		t.Helper()
		got, err := v.ReadFile(name)
		if err != nil || string(got) != want {
			t.Errorf("vfs %s = %q, %v; want %q", name, got, err, want)
		}
	}
	check("/tmp/new.txt", "hello\n")
	check("/home/user/a/b/c", "deep\n")
	check("/etc/motd", "from the base image\nappended\n")
	check("/tmp/rel-link", "from the base image\nappended\n")
	if fi, err := v.Lstat("/tmp/new.txt"); err != nil || fi.Mode().Perm() != 0o640 ||
		fi.ModTime().UTC() != time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC) {
		t.Errorf("new.txt: %v %v", fi, err)
	}
	if fi, err := v.Lstat("/home/user/a/b/c"); err != nil || fi.Sys().(*vfs.Stat).Uid != 1000 {
		t.Errorf("owner of c not 1000: %v", err)
	}
	if target, err := v.Readlink("/tmp/rel-link"); err != nil || target != "../etc/motd" {
		t.Errorf("symlink: %q %v", target, err)
	}
	if fi, err := v.Lstat("/tmp/fifo"); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("fifo: %v %v", fi, err)
	}
	for _, gone := range []string{"/etc/hostname", "/tmp/short"} {
		if _, err := v.Lstat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still in the vfs: %v", gone, err)
		}
	}
	// Deleting a file that exists only in the delta, and replacing a base
	// directory wholesale (opaque).
	_, errs, res = sh(t, ws, `rm /tmp/new.txt && rm -r /home/user && mkdir /home/user && echo fresh > /home/user/only`, native.Limits{})
	if res.Status != 0 {
		t.Fatalf("status %d: %s", res.Status, errs)
	}
	if _, err := v.Lstat("/tmp/new.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("/tmp/new.txt still in the vfs: %v", err)
	}
	ents, err := v.ReadDir("/home/user")
	if err != nil || len(ents) != 1 || ents[0].Name() != "only" {
		t.Errorf("/home/user after rm -r + mkdir: %v %v", ents, err)
	}
}

func TestSync_IntoOverlay(t *testing.T) {
	v := newVFS(t)
	ws := newWorkspace(t, "syncin", v, native.Limits{})
	if out, _, _ := sh(t, ws, "cat /etc/motd", native.Limits{}); out != "from the base image\n" {
		t.Fatalf("base: %q", out)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(v.WriteFile("/tmp/in.txt", []byte("from the vfs\n"), 0o644))
	must(v.MkdirAll("/srv/x/y", 0o755))
	must(v.WriteFile("/srv/x/y/z", []byte("z\n"), 0o600))
	must(v.Lchown("/srv/x/y/z", 1000, 1000))
	must(v.Symlink("/tmp/in.txt", "/srv/link"))
	must(v.Remove("/etc/motd"))
	must(v.WriteFile("/etc/passwd", []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))
	must(v.WriteFile("/bin/hello", []byte("#!/bin/sh\necho hi from a script\n"), 0o755))
	out, errs, res := sh(t, ws, `cat /tmp/in.txt /srv/x/y/z /srv/link; stat -c '%a %u' /srv/x/y/z; test -e /etc/motd || echo no-motd; cat /etc/passwd; /bin/hello`, native.Limits{})
	want := "from the vfs\nz\nfrom the vfs\n600 1000\nno-motd\nroot:x:0:0::/root:/bin/sh\nhi from a script\n"
	if out != want || res.Status != 0 {
		t.Fatalf("got %q (stderr %q), want %q", out, errs, want)
	}
	// A change after that sync arrives incrementally.
	must(v.WriteFile("/tmp/in.txt", []byte("second\n"), 0o644))
	must(v.RemoveAll("/srv/x"))
	if out, _, _ := sh(t, ws, "cat /tmp/in.txt; ls /srv", native.Limits{}); out != "second\nlink\n" {
		t.Fatalf("second sync: %q", out)
	}
	// Same size, mtime put back (as tar -x or cp -p leave it): still synced.
	fi, err := v.Lstat("/tmp/in.txt")
	must(err)
	must(v.WriteFile("/tmp/in.txt", []byte("SECOND\n"), 0o644))
	must(v.Chtimes("/tmp/in.txt", fi.ModTime(), fi.ModTime()))
	if out, _, _ := sh(t, ws, "cat /tmp/in.txt", native.Limits{}); out != "SECOND\n" {
		t.Fatalf("same-size rewrite with restored mtime: %q", out)
	}
}

// TestSecurity_HarvestedSymlinkStaysInside: a symlink the process points at
// a host path stays a symlink in the vfs, and reading through it reads the
// sandbox's own file, never the host's.
func TestSecurity_HarvestedSymlinkStaysInside(t *testing.T) {
	v := newVFS(t)
	ws := newWorkspace(t, "symlinks", v, native.Limits{})
	hostDir := t.TempDir()
	secret := filepath.Join(hostDir, "secret")
	if err := os.WriteFile(secret, []byte("HOST SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, res := sh(t, ws, "ln -s "+secret+" /tmp/to-host; ln -s /etc/hostname /tmp/to-etc; ln -s "+hostDir+" /tmp/dir-link", native.Limits{})
	if res.Status != 0 {
		t.Fatalf("status %d", res.Status)
	}
	if target, err := v.Readlink("/tmp/to-host"); err != nil || target != secret {
		t.Fatalf("symlink not kept: %q %v", target, err)
	}
	if b, err := v.ReadFile("/tmp/to-host"); err == nil || string(b) == "HOST SECRET" {
		t.Fatalf("reading the symlink via the vfs returned %q, %v: want ENOENT inside the sandbox", b, err)
	}
	if b, err := v.ReadFile("/tmp/to-etc"); err != nil || string(b) != "base\n" {
		t.Fatalf("/tmp/to-etc via the vfs = %q, %v; want the image's /etc/hostname", b, err)
	}
	// Hard links: one to a host file cannot be made (no host path is
	// reachable, and upper/ is its own filesystem); one inside the sandbox
	// is harvested as the sandbox's own data.
	out, _, _ := sh(t, ws, "ln "+secret+" /tmp/hl-host 2>/dev/null || echo refused; ln /etc/passwd /tmp/hl", native.Limits{})
	if out != "refused\n" {
		t.Fatalf("hard link to a host path: %q", out)
	}
	if b, err := v.ReadFile("/tmp/hl"); err != nil || !strings.HasPrefix(string(b), "root:x:0:0:root:") {
		t.Fatalf("harvested hard link = %q, %v", b, err)
	}
	// Writing through the directory symlink in the vfs lands inside the
	// sandbox, and the next sync must not follow it on the host either.
	if err := v.MkdirAll(hostDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := v.WriteFile("/tmp/dir-link/planted", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := sh(t, ws, "cat "+hostDir+"/planted", native.Limits{}); out != "x" {
		t.Fatalf("planted file not inside the sandbox: %q", out)
	}
	if _, err := os.Stat(filepath.Join(hostDir, "planted")); err == nil {
		t.Fatal("sync wrote through a sandbox symlink onto the host")
	}

	// A background process swaps a synced directory for a symlink to a host
	// directory just before the next sync writes into it.
	if err := v.MkdirAll("/tmp/d", 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, ws, "true", native.Limits{}) // sync /tmp/d in
	sh(t, ws, "(sleep 0.3; rm -rf /tmp/d; ln -s "+hostDir+" /tmp/d) >/dev/null 2>&1 &", native.Limits{})
	if err := v.WriteFile("/tmp/d/pwned", []byte("pwned"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	sh(t, ws, "true", native.Limits{})
	if _, err := os.Stat(filepath.Join(hostDir, "pwned")); err == nil {
		t.Fatal("sync followed a sandbox symlink onto the host")
	}
}

func dirFS(dir string) fs.FS { return os.DirFS(dir) }

// TestSync_BackgroundWritesOnHarvest: a background process keeps running
// after its exec returns; what it writes reaches the vfs at the next
// Harvest (the sandbox calls it before resident reads) or exec.
func TestSync_BackgroundWritesOnHarvest(t *testing.T) {
	v := newVFS(t)
	ws := newWorkspace(t, "background", v, native.Limits{})
	start := time.Now()
	_, _, res := sh(t, ws, "(sleep 1; echo late > /tmp/late) >/dev/null 2>&1 &", native.Limits{})
	if res.Status != 0 || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("background exec: status %d after %v (must not wait for the child)", res.Status, time.Since(start))
	}
	if _, err := v.Lstat("/tmp/late"); err == nil {
		t.Fatal("file present before it was written")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := ws.Harvest(context.Background()); err != nil {
			t.Fatal(err)
		}
		if b, err := v.ReadFile("/tmp/late"); err == nil {
			if string(b) != "late\n" {
				t.Fatalf("/tmp/late = %q", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background write never reached the vfs")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSync_FirstSyncAndOpaque: changes made before the first exec (whiteouts
// of base files, a base directory replaced wholesale) and a directory
// renamed between execs all reach the overlay.
func TestSync_FirstSyncAndOpaque(t *testing.T) {
	v := newVFS(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(v.Remove("/etc/hostname"))
	must(v.RemoveAll("/home/user"))
	must(v.Mkdir("/home/user", 0o750))
	must(v.WriteFile("/home/user/new", []byte("n\n"), 0o644))
	must(v.MkdirAll("/srv/a/b", 0o755))
	must(v.WriteFile("/srv/a/b/f", []byte("f\n"), 0o644))
	ws := newWorkspace(t, "firstsync", v, native.Limits{})
	out, errs, _ := sh(t, ws, "test -e /etc/hostname && echo hostname; ls -A /home/user; stat -c %a /home/user; cat /srv/a/b/f", native.Limits{})
	if out != "new\n750\nf\n" {
		t.Fatalf("first sync: %q (stderr %q)", out, errs)
	}
	must(v.Rename("/srv/a", "/srv/renamed"))
	must(v.RemoveAll("/usr/bin"))
	must(v.Mkdir("/usr/bin", 0o755))
	out, errs, _ = sh(t, ws, "ls /srv; cat /srv/renamed/b/f; ls /usr/bin | wc -l", native.Limits{})
	if out != "renamed\nf\n0\n" {
		t.Fatalf("after rename and opaque /usr/bin: %q (stderr %q)", out, errs)
	}
	// The overlay holds the replaced directory as one opaque directory, not
	// a whiteout per base entry.
	_, _, dir := ws.HostState()
	buf := make([]byte, 8)
	n, err := unix.Getxattr(filepath.Join(dir, "tmp/upper/usr/bin"), "trusted.overlay.opaque", buf)
	if err != nil || string(buf[:n]) != "y" {
		t.Fatalf("upper/usr/bin opaque xattr: %q %v", buf[:n], err)
	}
}

// TestSync_HarvestedThenRemoved: a file and a directory a native command
// made (harvested into the vfs) and the resident side then removed are gone
// from the native view at the next exec (the sync's diff starts before the
// harvest, so it visits the harvested paths as well).
func TestSync_HarvestedThenRemoved(t *testing.T) {
	v := newVFS(t)
	ws := newWorkspace(t, "harvested-rm", v, native.Limits{})
	if _, errs, res := sh(t, ws, "echo x > /tmp/zz; mkdir -p /tmp/d/e; echo y > /tmp/d/e/f", native.Limits{}); res.Status != 0 {
		t.Fatalf("status %d: %s", res.Status, errs)
	}
	if err := v.Remove("/tmp/zz"); err != nil {
		t.Fatal(err)
	}
	if err := v.RemoveAll("/tmp/d"); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := sh(t, ws, "ls -A /tmp | tr '\\n' ' '", native.Limits{}); out != "" {
		t.Fatalf("native /tmp after the resident removals: %q, want empty", out)
	}
}

// TestSync_QuotaRefusal: a native write the delta's quota refuses is not
// kept: the exec fails with status 1 and the quota error on stderr, the
// file is gone on both sides, a smaller write of the same exec is kept.
func TestSync_QuotaRefusal(t *testing.T) {
	_, img := requireRuntime(t)
	v := vfs.New(vfs.Options{Base: os.DirFS(filepath.Join(filepath.Dir(img), "root")), MaxBytes: 1 << 20})
	ws := newWorkspace(t, "delta-quota", v, native.Limits{})
	out, errs, res := sh(t, ws, "head -c 1500000 /dev/urandom > /tmp/big; echo small > /tmp/ok; echo done", native.Limits{})
	if out != "done\n" || res.Status != 1 || !strings.Contains(errs, "delta bytes quota exceeded") || !strings.Contains(errs, "/tmp/big") {
		t.Fatalf("past the delta quota: %q %q status %d", out, errs, res.Status)
	}
	if _, err := v.Lstat("/tmp/big"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("/tmp/big in the vfs: %v", err)
	}
	if b, err := v.ReadFile("/tmp/ok"); err != nil || string(b) != "small\n" {
		t.Errorf("/tmp/ok: %q %v", b, err)
	}
	if out, _, _ := sh(t, ws, "ls /tmp | tr '\\n' ' '", native.Limits{}); out != "ok " {
		t.Errorf("native /tmp after the refusal: %q", out)
	}
}
