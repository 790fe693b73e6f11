package fileutils_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands/gnucase"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/vfs/memdrive"
)

// TestFlockArgs: flock's statuses and diagnostics for each argument shape
// (the lock-conflict statuses are tested through the shell in
// commands/std, where another holder can be set up).
func TestFlockArgs(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"f": "x", "d/": ""}, nil)
	for _, tc := range []struct {
		argv   []string
		code   int
		out    string
		errHas string
	}{
		{[]string{"flock"}, 64, "", "flock: not enough arguments\nTry 'flock --help'"},
		{[]string{"flock", "--"}, 64, "", "requires file descriptor, file or directory"},
		{[]string{"flock", "-"}, 64, "", "bad file descriptor: '-'"},
		{[]string{"flock", ""}, 64, "", "bad file descriptor: ''"},
		{[]string{"flock", "-Z", "f", "true"}, 64, "", "invalid option -- 'Z'"},
		{[]string{"flock", "--nope", "f", "true"}, 64, "", "unrecognized option '--nope'"},
		{[]string{"flock", "-w", "1e400", "f", "true"}, 64, "", "invalid timeout value: '1e400'"},
		{[]string{"flock", "-w", "-1", "f", "true"}, 71, "", "cannot set up timer: Invalid argument"},
		{[]string{"flock", "-E", "-1", "f", "true"}, 64, "", "exit code out of range"},
		{[]string{"flock", "-E", "x", "f", "true"}, 64, "", "invalid exit code: 'x'"},
		{[]string{"flock", "3"}, 65, "", "locking a shell file descriptor is not supported"},
		{[]string{"flock", "f", "-c"}, 64, "", "-c requires exactly one command argument"},
		{[]string{"flock", "f", "--command", "a", "b"}, 64, "", "--command requires exactly one command argument"},
		{[]string{"flock", "nodir/f", "true"}, 66, "", "cannot open lock file nodir/f: No such file or directory"},
		{[]string{"flock", "f", "nonexistent-cmd"}, 127, "", "nonexistent-cmd: command not found"},
		// Options after FILE belong to the command; "--" there is the command.
		{[]string{"flock", "f", "echo", "-n", "x"}, 0, "x", ""},
		{[]string{"flock", "-sn", "d", "echo", "dir"}, 0, "dir\n", ""},
		{[]string{"flock", "--shared", "--timeout=1", "new", "echo", "made"}, 0, "made\n", ""},
		{[]string{"flock", "-u", "f", "false"}, 1, "", ""},
		{[]string{"flock", "-V"}, 0, "flock from util-linux 2.38.1\n", ""},
	} {
		out, errs, code := runIn(fsys, std.Table(), tc.argv, "")
		if code != tc.code || out != tc.out && !(tc.out == "" && code != 0) || !strings.Contains(errs, tc.errHas) {
			t.Errorf("%q: status %d, out %q, stderr %q; want %d, %q, stderr with %q", tc.argv, code, out, errs, tc.code, tc.out, tc.errHas)
		}
		if code != 0 && code != 1 && errs == "" {
			t.Errorf("%q: status %d with no diagnostic", tc.argv, code)
		}
	}
	if _, err := fsys.Stat(gnucase.Dir + "/new"); err != nil {
		t.Errorf("the lock file was not created: %v", err)
	}
	out, _, code := runIn(fsys, std.Table(), []string{"flock", "--help"}, "")
	if code != 0 || !strings.Contains(out, "flock [options] <file>|<directory> -c <command>") {
		t.Errorf("--help: %d %q", code, out)
	}
}

// TestDfDrive: a drive is its own df row with the drive's usage and quota
// and no inode counts.
func TestDfDrive(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	d := memdrive.New(4 << 20)
	if err := fsys.MountRemote("/shared", d, vfs.MountOptions{Name: "drive team"}); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/shared/w", []byte(strings.Repeat("x", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"df", "/shared/w"}, "Filesystem 1K-blocks Used Available Use% Mounted on\nteam            4096    5      4091   1% /shared\n"},
		{[]string{"df", "-hT", "/shared"}, "Filesystem Type  Size Used Avail Use% Mounted on\nteam       drive 4.0M 4.9K  4.0M   1% /shared\n"},
		{[]string{"df", "-i", "/shared"}, "Filesystem Inodes IUsed IFree IUse% Mounted on\nteam            -     -     -     - /shared\n"},
	} {
		out, errs, code := runIn(fsys, std.Table(), tc.args, "")
		if out != tc.want || code != 0 {
			t.Errorf("%v: %q %d (%q), want %q", tc.args, out, code, errs, tc.want)
		}
	}
}
