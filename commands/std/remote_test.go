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
