package vfs_test

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/vfs/memdrive"
)

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// remoteMounted is a root FS with a drive at /drive, a read-only drive at
// /drive2 and an FS volume at /vol (so /drive, /drive2 and /drivex test
// the prefix match and /vol the crossing between kinds of mounts).
func remoteMounted(t *testing.T) (root *vfs.FS, d, ro *memdrive.Drive, vol *vfs.FS) {
	t.Helper()
	root = vfs.New(vfs.Options{})
	d = memdrive.New(1000)
	ro = memdrive.New(0)
	if err := ro.Mkdir("/docs", 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := ro.OpenFile("/docs/seed", vfs.O_CREATE|vfs.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	h.Write([]byte("seed"))
	h.Close()
	vol = vfs.New(vfs.Options{})
	for _, m := range []struct {
		dir string
		r   vfs.RemoteFS
		o   vfs.MountOptions
	}{
		{"/drive", d, vfs.MountOptions{Name: "drive team"}},
		{"/drive2", ro, vfs.MountOptions{Name: "drive ref", ReadOnly: true}},
	} {
		if err := root.MountRemote(m.dir, m.r, m.o); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Mount("/vol", vol, vfs.MountOptions{Name: "volume v"}); err != nil {
		t.Fatal(err)
	}
	return root, d, ro, vol
}

// inDrive reads name straight from the drive, bypassing the mount.
func inDrive(d vfs.RemoteFS, name string) (string, error) {
	h, err := d.OpenFile(name, vfs.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer h.Close()
	b, err := io.ReadAll(h)
	return string(b), err
}

func TestRemoteMountRouting(t *testing.T) {
	root, d, _, vol := remoteMounted(t)
	if err := root.MkdirAll("/x/drive", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		write  string // path written through root
		remote string // where the drive must hold it ("" = not in the drive)
	}{
		{"/drive/a", "/a"},
		{"drive/b", "/b"},
		{"/drive/../c", ""},
		{"/drive/./sub/../d", "/d"},
		{"/drivex", ""},
		{"/x/drive/e", ""},
	} {
		if err := root.WriteFile(tc.write, []byte(tc.write), 0o644); err != nil {
			t.Fatalf("write %s: %v", tc.write, err)
		}
		if tc.remote != "" {
			if got, err := inDrive(d, tc.remote); err != nil || got != tc.write {
				t.Errorf("%s: drive has %q, %v at %s", tc.write, got, err, tc.remote)
			}
			continue
		}
		if _, err := root.DeltaEntry(path.Clean("/" + tc.write)); err != nil {
			t.Errorf("%s: not in the sandbox's delta: %v", tc.write, err)
		}
	}
	if u := root.Usage().Bytes; u > int64(len("/drive/../c/drivex/x/drive/e")) {
		t.Errorf("the delta holds %d bytes: drive writes were charged to it", u)
	}
	if used, quota := d.Usage(); used != int64(len("/drive/adrive/b/drive/./sub/../d")) || quota != 1000 {
		t.Errorf("drive usage %d/%d", used, quota)
	}
	// Listing and stat at and across the mount point.
	names := func(dir string) string {
		ents, err := root.ReadDir(dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		var s []string
		for _, e := range ents {
			s = append(s, e.Name())
		}
		return strings.Join(s, " ")
	}
	if got := names("/"); !strings.Contains(got, "drive drive2 drivex") {
		t.Errorf("/ lists %q, want the mount points", got)
	}
	if got := names("/drive"); got != "a b d" {
		t.Errorf("/drive lists %q", got)
	}
	if fi, err := root.Stat("/drive"); err != nil || !fi.IsDir() || fi.Name() != "drive" {
		t.Errorf("stat of the mount point: %v %v", fi, err)
	}
	if fi, err := root.Lstat("/drive/a"); err != nil || fi.Size() != 8 || fi.Name() != "a" || !fi.Mode().IsRegular() {
		t.Errorf("lstat /drive/a: %v %v", fi, err)
	}
	if p, err := root.Realpath("/drive/sub/../a"); err != nil || p != "/drive/a" {
		t.Errorf("realpath = %q, %v", p, err)
	}
	if p, err := root.Realpath("/drive"); err != nil || p != "/drive" {
		t.Errorf("realpath of the mount point = %q, %v", p, err)
	}
	// Mounts lists both kinds, the remote ones with Remote set.
	var got []string
	for _, m := range root.Mounts() {
		kind := "fs"
		if m.Remote != nil && m.FS == nil {
			kind = "remote"
		}
		got = append(got, m.Path+":"+kind+":"+m.Name)
	}
	if s := strings.Join(got, " "); s != "/drive:remote:drive team /drive2:remote:drive ref /vol:fs:volume v" {
		t.Errorf("mounts %s", s)
	}
	_ = vol
}

func TestRemoteMountOps(t *testing.T) {
	root, d, _, _ := remoteMounted(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(root.MkdirAll("/drive/p/q/r", 0o750))
	must(root.MkdirAll("/drive/p/q", 0o750)) // exists: fine
	must(root.WriteFile("/drive/p/q/r/f", []byte("hello"), 0o600))
	must(root.Mkdir("/drive/m", 0o700))
	if fi, err := d.Stat("/p/q/r"); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
		t.Fatalf("mkdirall left %v %v", fi, err)
	}
	must(root.Chmod("/drive/p/q/r/f", 0o640))
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	must(root.Chtimes("/drive/p/q/r/f", mt, mt))
	at2 := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	must(root.Chtimes("/drive/p/q/r/f", at2, time.Time{})) // zero keeps mtime
	fi, err := root.Stat("/drive/p/q/r/f")
	must(err)
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mt) || !fi.Sys().(*vfs.Stat).Atime.Equal(at2) {
		t.Errorf("chmod/chtimes: mode %v mtime %v atime %v", fi.Mode(), fi.ModTime(), fi.Sys().(*vfs.Stat).Atime)
	}
	must(root.Truncate("/drive/p/q/r/f", 2))
	if b, err := root.ReadFile("/drive/p/q/r/f"); err != nil || string(b) != "he" {
		t.Errorf("after truncate: %q %v", b, err)
	}
	// chown is accepted and changes nothing (remotemount.go).
	must(root.Chown("/drive/p/q/r/f", 1000, 1000))
	must(root.Lchown("/drive/p/q/r/f", 1000, 1000))
	if errnoOf(root.Chown("/drive/nope", 0, 0)) != syscall.ENOENT {
		t.Errorf("chown of a missing file is not ENOENT")
	}
	// Rename inside the drive is the drive's.
	must(root.Rename("/drive/p/q/r/f", "/drive/m/g"))
	if got, err := inDrive(d, "/m/g"); err != nil || got != "he" {
		t.Errorf("renamed file: %q %v", got, err)
	}
	must(root.Rename("/drive/p", "/drive/m/p2"))
	if _, err := d.Stat("/m/p2/q/r"); err != nil {
		t.Errorf("renamed directory: %v", err)
	}
	// Remove, RemoveAll.
	if errnoOf(root.Remove("/drive/m")) != syscall.ENOTEMPTY {
		t.Errorf("remove of a full directory is not ENOTEMPTY")
	}
	must(root.Remove("/drive/m/g"))
	must(root.RemoveAll("/drive/m"))
	must(root.RemoveAll("/drive/m")) // missing: fine
	if ents, err := root.ReadDir("/drive"); err != nil || len(ents) != 0 {
		t.Errorf("after removeall: %v %v", ents, err)
	}
	if used, _ := d.Usage(); used != 0 {
		t.Errorf("drive still charges %d bytes", used)
	}
	// Mknod of a plain file makes an empty one.
	must(root.Mknod("/drive/empty", 0o644, 0))
	if fi, err := d.Stat("/empty"); err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		t.Errorf("mknod: %v %v", fi, err)
	}
}

func TestRemoteMountErrors(t *testing.T) {
	root, _, _, _ := remoteMounted(t)
	for _, p := range []string{"/drive/f", "/g", "/vol/v"} {
		if err := root.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Mkdir("/drive/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	open := func(name string, flag int) func() error {
		return func() error {
			h, err := root.OpenFile(name, flag, 0o644)
			if err == nil {
				h.Close()
			}
			return err
		}
	}
	for _, tc := range []struct {
		name string
		op   func() error
		want syscall.Errno
		path string // the PathError's path, when it must be the caller's
	}{
		{"rename out of the drive", func() error { return root.Rename("/drive/f", "/f") }, syscall.EXDEV, ""},
		{"rename into the drive", func() error { return root.Rename("/g", "/drive/g") }, syscall.EXDEV, ""},
		{"rename drive to volume", func() error { return root.Rename("/drive/f", "/vol/f") }, syscall.EXDEV, ""},
		{"rename volume to drive", func() error { return root.Rename("/vol/v", "/drive/v") }, syscall.EXDEV, ""},
		{"rename between drives", func() error { return root.Rename("/drive/f", "/drive2/f") }, syscall.EXDEV, ""},
		{"rename a dir under itself", func() error { return root.Rename("/drive/dir", "/drive/dir/in") }, syscall.EINVAL, ""},
		{"rename the mount point", func() error { return root.Rename("/drive", "/moved") }, syscall.EBUSY, ""},
		{"remove the mount point", func() error { return root.Remove("/drive") }, syscall.EBUSY, ""},
		{"removeall the mount point", func() error { return root.RemoveAll("/drive") }, syscall.EBUSY, ""},
		{"link inside", func() error { return root.Link("/drive/f", "/drive/f2") }, syscall.ENOTSUP, ""},
		{"link across", func() error { return root.Link("/g", "/drive/g") }, syscall.EXDEV, ""},
		{"symlink", func() error { return root.Symlink("f", "/drive/s") }, syscall.ENOTSUP, "/drive/s"},
		{"mkfifo", func() error { return root.Mknod("/drive/p", fs.ModeNamedPipe|0o644, 0) }, syscall.ENOTSUP, ""},
		{"setxattr", func() error { return root.SetXattr("/drive/f", "user.a", []byte("v")) }, syscall.ENOTSUP, ""},
		{"getxattr", func() error { _, err := root.GetXattr("/drive/f", "user.a"); return err }, syscall.ENOTSUP, ""},
		{"listxattr", func() error { _, err := root.ListXattr("/drive/f"); return err }, syscall.ENOTSUP, ""},
		{"removexattr", func() error { return root.RemoveXattr("/drive/f", "user.a") }, syscall.ENOTSUP, ""},
		{"readlink of a file", func() error { _, err := root.Readlink("/drive/f"); return err }, syscall.EINVAL, ""},
		{"missing names the caller's path", func() error { _, err := root.Stat("/drive/no/such"); return err }, syscall.ENOENT, "/drive/no/such"},
		{"missing file read", func() error { _, err := root.ReadFile("drive/nope"); return err }, syscall.ENOENT, "drive/nope"},
		{"file with a slash", func() error { _, err := root.Stat("/drive/f/"); return err }, syscall.ENOTDIR, "/drive/f/"},
		{"remove a file with a slash", func() error { return root.Remove("/drive/f/") }, syscall.ENOTDIR, ""},
		{"mkdir existing", func() error { return root.Mkdir("/drive/dir", 0o755) }, syscall.EEXIST, "/drive/dir"},
		{"mkdirall over a file", func() error { return root.MkdirAll("/drive/f/sub", 0o755) }, syscall.ENOTDIR, ""},
		{"readdir of a file", func() error { _, err := root.ReadDir("/drive/f"); return err }, syscall.ENOTDIR, "/drive/f"},
		{"read a directory", func() error { _, err := root.ReadFile("/drive/dir"); return err }, syscall.EISDIR, ""},
		{"open a dir for writing", open("/drive/dir", vfs.O_WRONLY), syscall.EISDIR, "/drive/dir"},
		{"O_EXCL on existing", open("/drive/f", vfs.O_CREATE|vfs.O_EXCL|vfs.O_WRONLY), syscall.EEXIST, "/drive/f"},
		{"O_DIRECTORY on a file", open("/drive/f", vfs.O_RDONLY|vfs.O_DIRECTORY), syscall.ENOTDIR, ""},
		{"create with a slash", open("/drive/new/", vfs.O_CREATE|vfs.O_WRONLY), syscall.EISDIR, ""},
		{"truncate negative", func() error { return root.Truncate("/drive/f", -1) }, syscall.EINVAL, ""},
		{"over the drive's quota", func() error { return root.WriteFile("/drive/big", make([]byte, 2000), 0o644) }, syscall.ENOSPC, "/drive/big"},
		{"write read-only", func() error { return root.WriteFile("/drive2/n", nil, 0o644) }, syscall.EROFS, ""},
		{"mkdir read-only", func() error { return root.Mkdir("/drive2/d", 0o755) }, syscall.EROFS, ""},
		{"remove read-only", func() error { return root.Remove("/drive2/docs/seed") }, syscall.EROFS, ""},
		{"removeall read-only", func() error { return root.RemoveAll("/drive2/docs") }, syscall.EROFS, ""},
		{"rename read-only", func() error { return root.Rename("/drive2/docs/seed", "/drive2/x") }, syscall.EROFS, ""},
		{"chmod read-only", func() error { return root.Chmod("/drive2/docs/seed", 0o600) }, syscall.EROFS, ""},
		{"chown read-only", func() error { return root.Chown("/drive2/docs/seed", 1, 1) }, syscall.EROFS, ""},
		{"chtimes read-only", func() error { return root.Chtimes("/drive2/docs/seed", time.Now(), time.Now()) }, syscall.EROFS, ""},
		{"truncate read-only", func() error { return root.Truncate("/drive2/docs/seed", 0) }, syscall.EROFS, ""},
		{"open for write read-only", open("/drive2/docs/seed", vfs.O_WRONLY), syscall.EROFS, ""},
		{"mount twice", func() error { return root.MountRemote("/drive", memdrive.New(0), vfs.MountOptions{}) }, syscall.EBUSY, ""},
		{"mount inside a drive", func() error { return root.MountRemote("/drive/in", memdrive.New(0), vfs.MountOptions{}) }, syscall.EBUSY, ""},
		{"FS mount inside a drive", func() error { return root.Mount("/drive/in", vfs.New(vfs.Options{}), vfs.MountOptions{}) }, syscall.EBUSY, ""},
		{"mount at root", func() error { return root.MountRemote("/", memdrive.New(0), vfs.MountOptions{}) }, syscall.EINVAL, ""},
		{"relative mount point", func() error { return root.MountRemote("rel", memdrive.New(0), vfs.MountOptions{}) }, syscall.EINVAL, ""},
		{"nil drive", func() error { return root.MountRemote("/nil", nil, vfs.MountOptions{}) }, syscall.EINVAL, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op()
			if got := errnoOf(err); got != tc.want {
				t.Fatalf("err = %v (%v), want %v", err, got, tc.want)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("%v is not a PathError", err)
			}
			if tc.path != "" && pe.Path != tc.path {
				t.Errorf("path %q, want the caller's %q", pe.Path, tc.path)
			}
		})
	}
	// The quota error names the drive.
	err := root.WriteFile("/drive/big", make([]byte, 2000), 0o644)
	var qe *vfs.QuotaError
	if !errors.As(err, &qe) || qe.Name != "drive team" || !strings.Contains(err.Error(), "drive team bytes quota exceeded") {
		t.Errorf("quota error %v does not name the drive", err)
	}
	// Read-only reads still work.
	if b, err := root.ReadFile("/drive2/docs/seed"); err != nil || string(b) != "seed" {
		t.Errorf("read-only read: %q %v", b, err)
	}
}

func TestRemoteHandles(t *testing.T) {
	root, d, _, _ := remoteMounted(t)
	h, err := root.OpenFile("/drive/h", vfs.O_CREATE|vfs.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if h.Name() != "/drive/h" {
		t.Errorf("name %q", h.Name())
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"write", func() error { _, err := h.Write([]byte("hello world")); return err }},
		{"writeat", func() error { _, err := h.WriteAt([]byte("W"), 6); return err }},
		{"seek", func() error {
			off, err := h.Seek(0, io.SeekStart)
			if err == nil && off != 0 {
				err = errors.New("seek returned " + path.Base("x"))
			}
			return err
		}},
		{"read", func() error {
			b, err := io.ReadAll(h)
			if err == nil && string(b) != "hello World" {
				err = errors.New("read " + string(b))
			}
			return err
		}},
		{"readat", func() error {
			b := make([]byte, 5)
			n, err := h.ReadAt(b, 6)
			if n != 5 || string(b) != "World" || (err != nil && err != io.EOF) {
				return errors.New("readat " + string(b[:n]))
			}
			return nil
		}},
		{"truncate", func() error { return h.Truncate(5) }},
		{"stat", func() error {
			fi, err := h.Stat()
			if err == nil && (fi.Size() != 5 || fi.Name() != "h") {
				err = errors.New("stat " + fi.Name())
			}
			return err
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	// The handle survives a rename and a remove (it holds the file).
	if err := root.Rename("/drive/h", "/drive/h2"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("!"), 5); err != nil {
		t.Errorf("write after rename: %v", err)
	}
	if got, _ := inDrive(d, "/h2"); got != "hello!" {
		t.Errorf("drive holds %q", got)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Read(make([]byte, 1)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
	if err := h.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second close: %v", err)
	}
	// Access modes.
	r, err := root.Open("/drive/h2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Write([]byte("x")); errnoOf(err) != syscall.EBADF {
		t.Errorf("write on O_RDONLY: %v", err)
	}
	r.Close()
	w, err := root.OpenFile("/drive/h2", vfs.O_WRONLY|vfs.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Read(make([]byte, 1)); errnoOf(err) != syscall.EBADF {
		t.Errorf("read on O_WRONLY: %v", err)
	}
	if _, err := w.Write([]byte("+")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("+"), 0); errnoOf(err) != syscall.EINVAL {
		t.Errorf("writeat with O_APPEND: %v", err)
	}
	w.Close()
	if got, _ := inDrive(d, "/h2"); got != "hello!+" {
		t.Errorf("append: drive holds %q", got)
	}
	// Create truncates; a directory handle lists.
	if err := root.WriteFile("/drive/h2", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := inDrive(d, "/h2"); got != "new" {
		t.Errorf("WriteFile over: drive holds %q", got)
	}
	for _, n := range []string{"/drive/dd", "/drive/dd/a", "/drive/dd/b", "/drive/dd/c"} {
		if err := root.Mkdir(n, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dh, err := root.Open("/drive/dd")
	if err != nil {
		t.Fatal(err)
	}
	defer dh.Close()
	var got []string
	for {
		ents, err := dh.ReadDir(2)
		for _, e := range ents {
			got = append(got, e.Name())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, " ") != "a b c" {
		t.Errorf("ReadDir(2) loop: %v", got)
	}
	if _, err := dh.Read(make([]byte, 1)); errnoOf(err) != syscall.EISDIR {
		t.Errorf("read of a directory handle: %v", err)
	}
}

// TestRemoteInodes: inode numbers are tagged per mount, agree between
// Stat, ReadDir and handles, and differ from the sandbox's own, also when
// the drive gives none (they are then made from the path).
func TestRemoteInodes(t *testing.T) {
	for _, noStat := range []bool{false, true} {
		root := vfs.New(vfs.Options{})
		d := memdrive.New(0)
		d.NoStat = noStat
		if err := root.MountRemote("/drive", d, vfs.MountOptions{}); err != nil {
			t.Fatal(err)
		}
		ino := func(fi fs.FileInfo) uint64 { return fi.Sys().(*vfs.Stat).Ino }
		seen := map[uint64]string{}
		for _, p := range []string{"/a", "/b", "/drive/a", "/drive/b"} {
			if err := root.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			fi, err := root.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if o, dup := seen[ino(fi)]; dup {
				t.Errorf("noStat=%v: %s and %s share inode %d", noStat, o, p, ino(fi))
			}
			seen[ino(fi)] = p
		}
		va, _ := root.Stat("/drive/a")
		ents, err := root.ReadDir("/drive")
		if err != nil || len(ents) != 2 {
			t.Fatal(ents, err)
		}
		ei, err := ents[0].Info()
		if err != nil {
			t.Fatal(err)
		}
		h, err := root.Open("/drive/a")
		if err != nil {
			t.Fatal(err)
		}
		hi, _ := h.Stat()
		h.Close()
		if ino(ei) != ino(va) || ino(hi) != ino(va) || ei.Name() != "a" {
			t.Errorf("noStat=%v: inode via ReadDir %d, via a handle %d, via Stat %d", noStat, ino(ei), ino(hi), ino(va))
		}
		if ino(va)>>48 == 0 {
			t.Errorf("noStat=%v: inode %x carries no mount tag", noStat, ino(va))
		}
	}
}

// TestRemoteUnmountKeepsHandles: after Unmount an open handle still works
// on its RemoteFile, and the path shows the mount point's own directory.
func TestRemoteUnmountKeepsHandles(t *testing.T) {
	root, d, _, _ := remoteMounted(t)
	h, err := root.OpenFile("/drive/open", vfs.O_CREATE|vfs.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Unmount("/drive"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte("after")); err != nil {
		t.Fatalf("write after unmount: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := inDrive(d, "/open"); got != "after" {
		t.Errorf("drive holds %q", got)
	}
	if _, err := root.Stat("/drive/open"); errnoOf(err) != syscall.ENOENT {
		t.Errorf("unmounted drive still visible: %v", err)
	}
	for _, m := range root.Mounts() {
		if m.Path == "/drive" {
			t.Errorf("still in the mount table")
		}
	}
	if err := root.Unmount("/drive"); errnoOf(err) != syscall.EINVAL {
		t.Errorf("second unmount: %v", err)
	}
}

// TestRemoteWalkAcross walks the whole tree from "/" the way find, du and
// tar do (ReadDir + Lstat per entry) and finds the drive's files under the
// mount point with the drive's sizes.
func TestRemoteWalkAcross(t *testing.T) {
	root, _, _, _ := remoteMounted(t)
	files := map[string]string{"/top": "1", "/drive/a/b/c": "22", "/drive/z": "333", "/vol/v": "4444"}
	for p, c := range files {
		if err := root.MkdirAll(path.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := root.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found := map[string]int64{}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := root.ReadDir(dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		if !sort.SliceIsSorted(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() }) {
			t.Errorf("%s: entries not sorted", dir)
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			fi, err := root.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.IsDir() != e.IsDir() {
				t.Errorf("%s: ReadDir and Lstat disagree on its type", p)
			}
			if fi.IsDir() {
				walk(p)
			} else {
				found[p] = fi.Size()
			}
		}
	}
	walk("/")
	for p, c := range files {
		if found[p] != int64(len(c)) {
			t.Errorf("walk found %s with %d bytes, want %d", p, found[p], len(c))
		}
	}
	if found["/drive2/docs/seed"] != 4 {
		t.Errorf("walk missed the read-only drive's file: %v", found)
	}
}
