package shell

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// newTestShell returns a shell over a fresh vfs with an FHS skeleton and
// the real resident commands (commands/std).
func newTestShell(t testing.TB, lim Limits) *Shell {
	t.Helper()
	fsys := vfs.New(vfs.Options{})
	for _, d := range []string{"/tmp", "/home/user", "/etc", "/bin", "/usr/bin"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("mkdir %s: %v", d, err)
		}
	}
	if err := MakeDev(fsys); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := New(Config{FS: fsys, Commands: std.Table(), Dir: "/home/user", Uid: 1000, Gid: 1000, User: "user", Limits: lim, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

func runScript(t testing.TB, sh *Shell, script string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	st, err := sh.Run(context.Background(), script, strings.NewReader(""), &out, &errb)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out.String(), errb.String(), st
}

// recorded is a script and what bash 5.2 printed for it.
type recorded struct{ src, out, err string }

// checkRecorded runs each case in a fresh shell and compares stdout, and
// stderr too when withStderr is set.
func checkRecorded(t *testing.T, cases []recorded, withStderr bool) {
	t.Helper()
	for _, tt := range cases {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tt.src)
		if out != tt.out || withStderr && errs != tt.err {
			t.Errorf("%s:\n got %q %q\nwant %q %q", tt.src, out, errs, tt.out, tt.err)
		}
	}
}
