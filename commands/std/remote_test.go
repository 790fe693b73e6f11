package std_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/vfs/memdrive"
)

// driveShell is warren's shell over a sandbox FS with a drive (an
// in-memory RemoteFS) mounted at /drive.
func driveShell(t *testing.T) (*shell.Shell, *vfs.FS, *memdrive.Drive) {
	t.Helper()
	fsys := vfs.New(vfs.Options{})
	if err := shell.MakeDev(fsys); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/tmp", "/work"} {
		if err := fsys.MkdirAll(d, 0o1777); err != nil {
			t.Fatal(err)
		}
	}
	d := memdrive.New(1 << 20)
	if err := fsys.MountRemote("/drive", d, vfs.MountOptions{Name: "drive team"}); err != nil {
		t.Fatal(err)
	}
	sh, err := shell.New(shell.Config{FS: fsys, Commands: std.Table(), Dir: "/work",
		Env: []string{"HOME=/root", "PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}})
	if err != nil {
		t.Fatal(err)
	}
	return sh, fsys, d
}

func run(t *testing.T, sh *shell.Shell, script string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	st, err := sh.Run(ctx, script, strings.NewReader(""), &out, &errb)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out.String(), errb.String(), st
}

// TestDriveCommands runs the commands scripts use over the mount
// boundary: each step's output is checked, and the steps build on one
// another (one shell, one drive).
func TestDriveCommands(t *testing.T) {
	sh, fsys, d := driveShell(t)
	steps := []struct {
		script string
		want   string // stdout, exactly
		code   int
	}{
		{`mkdir -p /work/src/sub && printf 'one\n' > /work/src/a.txt && printf 'two\n' > /work/src/sub/b.txt && echo ok`, "ok\n", 0},
		{`cp -r /work/src /drive/copy && cat /drive/copy/a.txt /drive/copy/sub/b.txt`, "one\ntwo\n", 0},
		{`ls /drive/copy`, "a.txt\nsub\n", 0},
		{`ls -l /drive/copy/a.txt | awk '{print $1, $5, $NF}'`, "-rw-r--r-- 4 /drive/copy/a.txt\n", 0},
		{`cd /drive/copy && echo *.txt sub/* && pwd`, "a.txt sub/b.txt\n/drive/copy\n", 0},
		{`find /drive -type f | sort`, "/drive/copy/a.txt\n/drive/copy/sub/b.txt\n", 0},
		{`find / -path /proc -prune -o -name b.txt -print | sort`, "/drive/copy/sub/b.txt\n/work/src/sub/b.txt\n", 0},
		{`du -a /drive/copy | awk '{print $2}' | sort`, "/drive/copy\n/drive/copy/a.txt\n/drive/copy/sub\n/drive/copy/sub/b.txt\n", 0},
		{`cp -p /work/src/a.txt /drive/kept && cat /drive/kept`, "one\n", 0},
		{`cp -a /work/src /drive/archived && cat /drive/archived/sub/b.txt`, "two\n", 0},
		// mv across the boundary copies and removes (EXDEV); inside the drive it renames.
		{`mv /drive/copy/a.txt /work/moved && cat /work/moved && test ! -e /drive/copy/a.txt && echo gone`, "one\ngone\n", 0},
		{`mv /work/moved /drive/back && cat /drive/back && test ! -e /work/moved && echo gone`, "one\ngone\n", 0},
		{`mv /drive/copy /drive/renamed && ls /drive/renamed/sub`, "b.txt\n", 0},
		{`mv /drive/renamed /work/fromdrive && find /work/fromdrive | sort`, "/work/fromdrive\n/work/fromdrive/sub\n/work/fromdrive/sub/b.txt\n", 0},
		{`tar -C /work -cf /drive/t.tar src && tar -tf /drive/t.tar | sort`, "src/\nsrc/a.txt\nsrc/sub/\nsrc/sub/b.txt\n", 0},
		{`mkdir /drive/x && tar -C /drive/x -xf /drive/t.tar && cat /drive/x/src/sub/b.txt`, "two\n", 0},
		{`tar -C /drive -cf /work/d.tar x && tar -tf /work/d.tar | sort`, "x/\nx/src/\nx/src/a.txt\nx/src/sub/\nx/src/sub/b.txt\n", 0},
		{`echo appended >> /drive/back && wc -l < /drive/back`, "2\n", 0},
		{`grep -r two /drive/x | sort`, "/drive/x/src/sub/b.txt:two\n", 0},
		{`touch -d 2020-01-02 /drive/back && stat -c '%y' /drive/back | cut -c1-10`, "2020-01-02\n", 0},
		{`chmod 600 /drive/back && stat -c '%a' /drive/back`, "600\n", 0},
		{`chown 1000:1000 /drive/back && echo accepted`, "accepted\n", 0},
		{`ln -s back /drive/link 2>/dev/null || echo refused`, "refused\n", 0},
		{`df /drive | awk 'NR==2 {print $1, $NF}'`, "team /drive\n", 0},
		{`realpath /drive/x/../back`, "/drive/back\n", 0},
		{`rm -r /drive/x /drive/archived && ls /drive | sort`, "back\nkept\nt.tar\n", 0},
		{`rm -rf /drive/* && ls -A /drive | wc -l`, "0\n", 0},
		{`cat /drive/nope`, "", 1},
	}
	for _, s := range steps {
		out, errs, code := run(t, sh, s.script)
		if out != s.want || code != s.code {
			t.Errorf("%s\n got %q (status %d, stderr %q)\nwant %q (status %d)", s.script, out, code, errs, s.want, s.code)
		}
	}
	if used, _ := d.Usage(); used != 0 {
		t.Errorf("the drive still holds %d bytes after rm -rf", used)
	}
	if _, err := fsys.Stat("/work/fromdrive/sub/b.txt"); err != nil {
		t.Errorf("mv out of the drive left no sandbox file: %v", err)
	}
}

// TestFlockCommand runs flock(1) in the shell against locks held by the
// test (the sandbox's own table, and a drive's from another sandbox), a
// background job of the same shell, and its usage errors; statuses are
// util-linux's.
func TestFlockCommand(t *testing.T) {
	sh, fsys, d := driveShell(t)
	other := vfs.New(vfs.Options{}) // a second sandbox on the same drive
	if err := other.MountRemote("/drive", d, vfs.MountOptions{Name: "drive team"}); err != nil {
		t.Fatal(err)
	}
	ro := memdrive.New(0)
	if err := ro.Mkdir("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if h, err := ro.OpenFile("/seed", vfs.O_CREATE|vfs.O_WRONLY, 0o644); err != nil {
		t.Fatal(err)
	} else {
		h.Close()
	}
	if err := fsys.MountRemote("/ro", ro, vfs.MountOptions{Name: "drive ref", ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	hold := func(fs *vfs.FS, name string, how int) *vfs.File {
		t.Helper()
		h, err := fs.OpenFile(name, vfs.O_CREATE|vfs.O_RDONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Flock(context.Background(), how); err != nil {
			t.Fatal(err)
		}
		return h
	}
	held := hold(fsys, "/work/lk", vfs.LOCK_EX)
	remote := hold(other, "/drive/lk", vfs.LOCK_SH)
	for _, tc := range []struct {
		script string
		want   string
		errHas string
	}{
		{`flock -n /work/lk echo no; echo $?`, "1\n", ""},
		{`flock -n -E 7 /work/lk echo no; echo $?`, "7\n", ""},
		{`flock --nb --conflict-exit-code=9 /work/lk echo no; echo $?`, "9\n", ""},
		{`flock -w 0.05 /work/lk echo no; echo $?`, "1\n", ""},
		{`flock -w 0 -E 3 /work/lk echo no; echo $?`, "3\n", ""},
		{`flock --verbose -n /work/lk true; echo $?`, "1\n", "flock: failed to get lock"},
		{`flock -s -n /work/lk echo no; echo $?`, "1\n", ""},
		{`flock -n /work/other echo free; echo $?`, "free\n0\n", ""},
		// Another sandbox's shared lock on the drive: shared passes, exclusive waits.
		{`flock -s -n /drive/lk echo shared; echo $?`, "shared\n0\n", ""},
		{`flock -x -n /drive/lk echo no; echo $?`, "1\n", ""},
		{`flock /work/free -c 'echo $((1+2)); exit 4'; echo $?`, "3\n4\n", ""},
		{`flock /work/free false; echo $?`, "1\n", ""},
		{`flock /work echo dir; echo $?`, "dir\n0\n", ""},
		{`flock /ro/seed echo ro; echo $?`, "ro\n0\n", ""},
		{`flock /ro/missing echo no; echo $?`, "73\n", "cannot open lock file /ro/missing: Read-only file system"},
		{`flock /nonexist/x true; echo $?`, "66\n", "flock: cannot open lock file /nonexist/x: No such file or directory"},
		{`flock; echo $?`, "64\n", "flock: not enough arguments"},
		{`flock -n; echo $?`, "64\n", "flock: requires file descriptor, file or directory"},
		{`flock -E 300 x true; echo $?`, "64\n", "exit code out of range (expected 0 to 255)"},
		{`flock -w abc x true; echo $?`, "64\n", "flock: invalid timeout value: 'abc'"},
		{`flock abc; echo $?`, "64\n", "flock: bad file descriptor: 'abc'"},
		{`flock x -c; echo $?`, "64\n", "flock: -c requires exactly one command argument"},
		{`flock x -c a b; echo $?`, "64\n", "flock: -c requires exactly one command argument"},
		{`flock 99; echo $?`, "65\n", "flock: 99: Bad file descriptor"},
		{`exec 9>/work/fd9; flock -n 9; echo $?`, "65\n", "locking a shell file descriptor is not supported"},
		{`flock --verbose /work/free true; echo $?`, "0\n", "flock: executing true"},
	} {
		out, errs, _ := run(t, sh, tc.script)
		if out != tc.want || !strings.Contains(errs, tc.errHas) {
			t.Errorf("%s\n got %q, stderr %q\nwant %q, stderr with %q", tc.script, out, errs, tc.want, tc.errHas)
		}
	}
	// A blocking flock waits for the holder and runs once it lets go.
	done := make(chan string, 1)
	go func() {
		out, _, _ := run(t, sh, `flock /work/lk echo got; flock -x /drive/lk echo drive`)
		done <- out
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case out := <-done:
		t.Fatalf("flock did not wait for the held lock: %q", out)
	default:
	}
	held.Close()
	remote.Close()
	select {
	case out := <-done:
		if out != "got\ndrive\n" {
			t.Errorf("after the release: %q", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("flock still waiting after the holders closed")
	}
	// A background job of the same shell holds the lock against the
	// foreground.
	out, errs, _ := run(t, sh, `flock /work/lk sleep 0.5 & sleep 0.1; flock -n /work/lk echo no; echo $?; wait; flock -n /work/lk echo after`)
	if out != "1\nafter\n" {
		t.Errorf("background holder: %q (stderr %q)", out, errs)
	}
}

// TestDriveDupClose: a file dup'ed to a command's stdout (>&3) is closed,
// so committed, when its last descriptor goes; the dup's reference used to
// keep it open, and a drive (which commits at close) lost the writes.
func TestDriveDupClose(t *testing.T) {
	sh, fsys, _ := driveShell(t)
	out, errs, st := run(t, sh, "exec 3>/drive/x; echo a >&3; { echo b; echo c; } >&3; exec 3>&-; cat /drive/x")
	if out != "a\nb\nc\n" || errs != "" || st != 0 {
		t.Fatalf("got %q %q %d", out, errs, st)
	}
	// The sandbox's own tree: a removed file's inode lives until its last
	// close, so its bytes stay charged while a leaked reference holds it.
	before := fsys.Usage().Bytes
	if _, errs, st := run(t, sh, "exec 3>/tmp/big; head -c 100000 /dev/zero >&3; exec 3>&-; rm /tmp/big"); errs != "" || st != 0 {
		t.Fatalf("big: %q %d", errs, st)
	}
	if after := fsys.Usage().Bytes; after != before {
		t.Fatalf("usage %d after the file was closed and removed, %d before: the dup kept it open", after, before)
	}
}
