package native_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
	"golang.org/x/sys/unix"
)

// volumeVFS returns the sandbox's vfs with a read-write volume at /vol
// (quota bytes, 0: none) and a read-only one at /ro holding /ro/r.txt.
func volumeVFS(t *testing.T, quota int64) (sb, vol, ro *vfs.FS) {
	t.Helper()
	sb = newVFS(t)
	vol = vfs.New(vfs.Options{MaxBytes: quota})
	ro = vfs.New(vfs.Options{})
	if err := ro.WriteFile("/r.txt", []byte("read only\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sb.Mount("/vol", vol, vfs.MountOptions{Name: "volume data"}); err != nil {
		t.Fatal(err)
	}
	if err := sb.Mount("/ro", ro, vfs.MountOptions{Name: "volume ref", ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	return sb, vol, ro
}

func readVFS(t *testing.T, v *vfs.FS, name string) string {
	t.Helper()
	b, err := v.ReadFile(name)
	if err != nil {
		t.Fatalf("vfs %s: %v", name, err)
	}
	return string(b)
}

func absent(t *testing.T, v *vfs.FS, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := v.Lstat(n); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: want absent, got %v", n, err)
		}
	}
}

// TestVolume_BothWays: what the resident side writes in a volume a native
// process reads, and what a native process writes, appends, renames,
// chmods and removes there the volume's tree has after the exec, never the
// sandbox's own delta.
func TestVolume_BothWays(t *testing.T) {
	sb, vol, _ := volumeVFS(t, 0)
	if err := sb.WriteFile("/vol/in.txt", []byte("resident\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := vol.WriteFile("/gone", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := newWorkspace(t, "vol-both", sb, native.Limits{})
	out, errs, res := sh(t, ws, "cat /vol/in.txt /ro/r.txt; stat -c '%a %u' /vol/in.txt", native.Limits{})
	if res.Status != 0 || out != "resident\nread only\n644 0\n" {
		t.Fatalf("native read: %q %q status %d", out, errs, res.Status)
	}
	// A later resident write reaches the next exec (the incremental sync).
	if err := sb.WriteFile("/vol/later", []byte("later\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, res = sh(t, ws, `set -e
		cat /vol/later
		echo native >> /vol/in.txt
		echo new > /vol/a; chmod 640 /vol/a
		mkdir -p /vol/d/e; echo deep > /vol/d/e/f
		echo m > /vol/x; mv /vol/x /vol/y
		rm /vol/gone
		ln -s in.txt /vol/link
		chmod 750 /vol`, native.Limits{})
	if res.Status != 0 {
		t.Fatalf("native writes: %q status %d", errs, res.Status)
	}
	for name, want := range map[string]string{
		"/in.txt": "resident\nnative\n", "/a": "new\n", "/d/e/f": "deep\n", "/y": "m\n", "/link": "resident\nnative\n",
	} {
		if got := readVFS(t, vol, name); got != want {
			t.Errorf("volume %s = %q, want %q", name, got, want)
		}
	}
	if fi, err := vol.Lstat("/a"); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("volume /a mode: %v %v", fi, err)
	}
	absent(t, vol, "/gone", "/x")
	if fi, err := vol.Lstat("/"); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("volume root after chmod 750 /vol: %v %v", fi, err)
	}
	// Through the sandbox's tree the same files show at the mount path ...
	if got := readVFS(t, sb, "/vol/d/e/f"); got != "deep\n" {
		t.Errorf("sandbox /vol/d/e/f = %q", got)
	}
	// ... but its own delta (a fork has no mounts) holds none of them.
	own := sb.Fork()
	absent(t, own, "/vol/in.txt", "/vol/a", "/vol/d", "/vol/y", "/vol/later")
	if ents, err := own.ReadDir("/vol"); err != nil || len(ents) != 0 {
		t.Errorf("the delta's /vol: %v %v, want an empty mount point", ents, err)
	}
	// A resident removal reaches the native side too.
	if err := sb.Remove("/vol/a"); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := sh(t, ws, "ls /vol | tr '\\n' ' '", native.Limits{}); out != "d in.txt later link y " {
		t.Errorf("native ls /vol after a resident rm: %q", out)
	}
}

// TestVolume_ReadOnly: a read-only volume is read-only in the kernel too,
// and the bind cannot be made writable from inside, even with the relaxed
// security mode's mount rights.
func TestVolume_ReadOnly(t *testing.T) {
	for _, mode := range []native.Security{native.SecurityDefault, native.SecurityRelaxed} {
		t.Run(map[native.Security]string{native.SecurityDefault: "default", native.SecurityRelaxed: "relaxed"}[mode], func(t *testing.T) {
			sb, _, ro := volumeVFS(t, 0)
			rt, img := requireRuntime(t)
			ws, err := rt.Workspace(t.Context(), "vol-ro", img, sb, native.Limits{}, native.WithSecurity(mode))
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			out, errs, res := sh(t, ws, "cat /ro/r.txt; echo x > /ro/new; echo status=$?; rm /ro/r.txt; echo status=$?", native.Limits{})
			if !strings.HasPrefix(out, "read only\nstatus=1\nstatus=1") || strings.Count(errs, "Read-only file system") != 2 {
				t.Fatalf("writes in a read-only volume: %q %q status %d", out, errs, res.Status)
			}
			out, errs, _ = sh(t, ws, "mount -o remount,rw /ro; echo x > /ro/new; echo status=$?", native.Limits{})
			if !strings.HasSuffix(out, "status=1\n") {
				t.Fatalf("after remount,rw: %q %q", out, errs)
			}
			absent(t, ro, "/new")
			if got := readVFS(t, ro, "/r.txt"); got != "read only\n" {
				t.Errorf("read-only volume /r.txt = %q", got)
			}
		})
	}
}

// TestVolume_Quota: a native write past the volume's quota is not kept:
// the kernel refuses it outright far past the quota (the tmpfs is the
// quota plus slack), the harvest refuses what the tmpfs took but the vfs
// quota does not, names the volume and the path on stderr, fails the exec
// with status 1 and puts the previous content back on both sides.
func TestVolume_Quota(t *testing.T) {
	const quota = 1 << 20
	sb, vol, _ := volumeVFS(t, quota)
	if err := vol.WriteFile("/keep", []byte("old content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := newWorkspace(t, "vol-quota", sb, native.Limits{})

	out, errs, res := sh(t, ws, "head -c 1500000 /dev/urandom > /vol/big && head -c 600000 /dev/urandom >> /vol/keep && echo small > /vol/ok && echo wrote", native.Limits{})
	if out != "wrote\n" || res.Status != 1 || res.QuotaRefused == nil {
		t.Fatalf("past the quota: %q %q status %d refused %v", out, errs, res.Status, res.QuotaRefused)
	}
	var qe *vfs.QuotaError
	if !errors.As(res.QuotaRefused, &qe) || qe.Name != "volume data" || qe.Max != quota {
		t.Errorf("refusal %v: want a QuotaError of volume data, max %d", res.QuotaRefused, quota)
	}
	if !strings.Contains(errs, "volume data bytes quota exceeded") || !strings.Contains(errs, "/vol/big") {
		t.Errorf("stderr %q: want the volume's quota error naming /vol/big", errs)
	}
	if u := vol.Usage().Bytes; u > quota {
		t.Errorf("volume holds %d bytes, over its quota %d", u, quota)
	}
	// Each path is whole: either all of the write or its previous content.
	big, bigErr := vol.ReadFile("/big")
	keep := readVFS(t, vol, "/keep")
	if !(errors.Is(bigErr, fs.ErrNotExist) && len(keep) == 600012) && !(len(big) == 1500000 && keep == "old content\n") {
		t.Errorf("after the refusal: /big %d bytes (%v), /keep %d bytes", len(big), bigErr, len(keep))
	}
	if got := readVFS(t, vol, "/ok"); got != "small\n" {
		t.Errorf("a write within the quota: %q", got)
	}
	// The native side shows the same as the vfs again.
	out, _, _ = sh(t, ws, "wc -c < /vol/keep; test -e /vol/big && wc -c < /vol/big || echo nobig", native.Limits{})
	want := "12\n1500000\n"
	if errors.Is(bigErr, fs.ErrNotExist) {
		want = "600012\nnobig\n"
	}
	if out != want {
		t.Errorf("native view after the refusal: %q, want %q", out, want)
	}
	// Far past the quota the process itself meets ENOSPC.
	out, errs, _ = sh(t, ws, "dd if=/dev/zero of=/vol/huge bs=1M count=16; echo status=$?; rm -f /vol/huge", native.Limits{})
	if !strings.Contains(out, "status=1") || !strings.Contains(errs, "No space left on device") {
		t.Errorf("16 MB into a 1 MiB volume: %q %q", out, errs)
	}
	absent(t, vol, "/huge")
	// A sparse file: the harvest cannot know its cost in advance, the vfs
	// refuses it partway (it stores the holes as data), and the file gets
	// its previous content back, in the vfs and natively.
	if err := sb.WriteFile("/vol/sparse", []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, res = sh(t, ws, "truncate -s 3000000 /vol/sparse; echo x >> /vol/sparse", native.Limits{})
	if res.Status != 1 || !strings.Contains(errs, "/vol/sparse") {
		t.Fatalf("sparse past the quota: %q %q status %d", out, errs, res.Status)
	}
	if got := readVFS(t, vol, "/sparse"); got != "before\n" {
		t.Errorf("volume /sparse after the refusal: %d bytes, want its previous content", len(got))
	}
	if out, _, _ := sh(t, ws, "cat /vol/sparse", native.Limits{}); out != "before\n" {
		t.Errorf("native /sparse after the refusal: %d bytes", len(out))
	}
	// A resize (ResizeVolume sets the mounted tree's quota) reaches the
	// tmpfs at the next exec.
	vol.SetQuota(32<<20, 0)
	if _, errs, res := sh(t, ws, "dd if=/dev/zero of=/vol/huge bs=1M count=16 2>/dev/null", native.Limits{}); res.Status != 0 {
		t.Fatalf("16 MiB after growing the quota to 32 MiB: %q status %d", errs, res.Status)
	}
	if fi, err := vol.Lstat("/huge"); err != nil || fi.Size() != 16<<20 {
		t.Fatalf("volume /huge after the resize: %v %v", fi, err)
	}
}

// TestVolume_MountsChanged: an Exec after the sandbox's mount table changed
// fails with ErrMountsChanged instead of showing a stale volume.
func TestVolume_MountsChanged(t *testing.T) {
	sb, _, _ := volumeVFS(t, 0)
	ws := newWorkspace(t, "vol-changed", sb, native.Limits{})
	if ws.MountsChanged() {
		t.Fatal("MountsChanged before any change")
	}
	if err := sb.Unmount("/ro"); err != nil {
		t.Fatal(err)
	}
	if !ws.MountsChanged() {
		t.Fatal("MountsChanged after an unmount")
	}
	if _, err := ws.Exec(t.Context(), native.Cmd{Path: "/bin/true"}); !errors.Is(err, native.ErrMountsChanged) {
		t.Fatalf("Exec after an unmount: %v, want ErrMountsChanged", err)
	}
}

// TestVolume_Incremental: a volume unchanged since the last exec is not
// copied into its tmpfs again, and a change copies only what changed (the
// host file's ctime moves only when it is rewritten).
func TestVolume_Incremental(t *testing.T) {
	sb, vol, _ := volumeVFS(t, 0)
	for _, n := range []string{"/a", "/b"} {
		if err := vol.WriteFile(n, []byte(strings.Repeat(n, 100000)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := newWorkspace(t, "vol-incr", sb, native.Limits{})
	_, _, dir := ws.HostState()
	ctime := func(name string) int64 {
		t.Helper()
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(dir, "vol", "1", name), &st); err != nil { // Mounts() sorts by path: /ro is 0, /vol 1
			t.Fatal(err)
		}
		return st.Ctim.Nano()
	}
	a0, b0 := ctime("a"), ctime("b")
	for range 2 {
		if _, _, res := sh(t, ws, "cat /vol/a /vol/b > /dev/null", native.Limits{}); res.Status != 0 {
			t.Fatal(res)
		}
	}
	if a, b := ctime("a"), ctime("b"); a != a0 || b != b0 {
		t.Fatalf("unchanged volume rewritten: ctime a %d->%d, b %d->%d", a0, a, b0, b)
	}
	if err := sb.WriteFile("/vol/b", []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := sh(t, ws, "cat /vol/b", native.Limits{}); out != "changed\n" {
		t.Fatalf("native /vol/b after a resident write: %q", out)
	}
	if a, b := ctime("a"), ctime("b"); a != a0 || b == b0 {
		t.Fatalf("after changing b: a rewritten %v (want false), b rewritten %v (want true)", a != a0, b != b0)
	}
}

// TestVolume_BadMountPoint: a mount under /proc, /dev or /sys cannot be
// bound (those are the init's own mounts): the workspace says so instead
// of hiding the volume.
func TestVolume_BadMountPoint(t *testing.T) {
	sb := newVFS(t)
	if err := sb.Mount("/dev/vol", vfs.New(vfs.Options{}), vfs.MountOptions{Name: "volume d"}); err != nil {
		t.Fatal(err)
	}
	rt, img := requireRuntime(t)
	ws, err := rt.Workspace(t.Context(), "vol-bad", img, sb, native.Limits{})
	if err == nil {
		ws.Close()
		t.Fatal("a workspace with a volume at /dev/vol: no error")
	}
	if !strings.Contains(err.Error(), "volume d at /dev/vol") {
		t.Fatalf("error %v: want it to name the volume and its path", err)
	}
}
