package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runVerb(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	c := newRunCmd()
	c.SilenceUsage = true // as under the root command (main.go)
	var out, errb bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SetIn(strings.NewReader(stdin))
	c.SetArgs(args)
	err := c.Execute()
	return out.String(), errb.String(), err
}

func TestRunVerb(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("copied\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "s.sh")
	if err := os.WriteFile(script, []byte("echo file $1 $FOO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stdin string
		args        []string
		out         string
		status      int
	}{
		{"c", "", []string{"-c", "echo hello > /tmp/a; cat /tmp/a"}, "hello\n", 0},
		{"status", "", []string{"-c", "exit 3"}, "", 3},
		{"stdin script", "echo from stdin; pwd", nil, "from stdin\n/home/user\n", 0},
		{"file and args", "", []string{"--env", "FOO=bar", script, "arg1"}, "file arg1 bar\n", 0},
		{"no host env", "", []string{"-c", "echo ${GOPATH:-none} ${PATH%%:*}"}, "none /usr/local/bin\n", 0},
		{"cwd", "", []string{"--cwd", "/work/x", "-c", "pwd"}, "/work/x\n", 0},
		{"copy-in", "", []string{"--copy-in", dir + ":/src", "-c", "cat /src/in.txt; stat -c %a /src/in.txt 2>/dev/null || ls /src"}, "copied\n", 0},
		{"timeout", "", []string{"--timeout", "200ms", "-c", "while :; do :; done"}, "", 124},
		// Limits are on by default (issue 12): the disk quota and the
		// output limit hold in `warren run` as in a served sandbox.
		{"disk quota", "", []string{"--disk", "1M", "-c", "head -c 2M /dev/zero > /f; echo $?; [ $(wc -c < /f) -le 1048576 ] && echo bounded"}, "1\nbounded\n", 0},
		{"max-output", "", []string{"--max-output", "1K", "-c", "yes"}, "", 125},
		{"bad size", "", []string{"--memory", "lots", "-c", "true"}, "", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, err := runVerb(t, tt.stdin, tt.args...)
			st := 0
			if err != nil {
				var es exitStatus
				if tt.status == -1 {
					if !strings.Contains(err.Error(), "--memory") {
						t.Fatalf("error %v does not name the flag", err)
					}
					return
				}
				if !asExit(err, &es) {
					t.Fatalf("error %v (stderr %q)", err, errs)
				}
				st = int(es)
			}
			if !strings.HasPrefix(out, tt.out) || st != tt.status {
				t.Errorf("got %q status %d (stderr %q), want %q status %d", out, st, errs, tt.out, tt.status)
			}
		})
	}
}

// TestRunNative runs ELF files of a busybox image through `warren run`:
// natively, mixed with resident commands, refused with --no-native and
// killed over --memory.
func TestRunNative(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the native tier needs root (user namespaces, mounts, cgroups)")
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox not installed (Debian busybox-static): no ELF to run")
	}
	root := t.TempDir()
	for _, d := range []string{"bin", "tmp", "etc", "home/user"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin/busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	img := newImageCmd()
	var out bytes.Buffer
	img.SetOut(&out)
	img.SetErr(&out)
	img.SetArgs([]string{"build", "--local", "-t", "bbtest", root})
	if err := img.Execute(); err != nil {
		t.Fatalf("image build: %v\n%s", err, out.String())
	}
	stdout, stderr, err := runVerb(t, "", "--image", "bbtest", "-c",
		`/bin/busybox echo native; /bin/busybox sh -c 'echo from-native > /tmp/n'; cat /tmp/n; /bin/busybox seq 1 100 | grep 7 | wc -l`)
	if err != nil || stdout != "native\nfrom-native\n19\n" {
		t.Fatalf("native run: err %v stdout %q stderr %q", err, stdout, stderr)
	}
	_, stderr, err = runVerb(t, "", "--image", "bbtest", "--no-native", "-c", "/bin/busybox echo hi")
	if st, ok := err.(exitStatus); !ok || st != 126 || !strings.Contains(stderr, "native tier is off") {
		t.Fatalf("--no-native: err %v stderr %q, want status 126 naming the reason", err, stderr)
	}
	_, stderr, err = runVerb(t, "", "--image", "bbtest", "--memory", "64M", "-c",
		`/bin/busybox sh -c 'x=a; while true; do x=$x$x; done'`)
	if st, ok := err.(exitStatus); !ok || st != 137 || !strings.Contains(stderr, "out of memory") {
		t.Fatalf("--memory: err %v stderr %q, want status 137 and an out-of-memory message", err, stderr)
	}
}

// TestRunFileNamed: `warren run FILE ARGS` runs FILE as `bash FILE ARGS`
// does: $0, BASH_SOURCE and the prefix of its messages are FILE as given,
// and the line numbers are the file's own.
func TestRunFileNamed(t *testing.T) {
	script := filepath.Join(t.TempDir(), "named.sh")
	if err := os.WriteFile(script, []byte("echo \"$0|$#|$2|${BASH_SOURCE[0]}\"\nexit 1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, err := runVerb(t, "", script, "a", "b")
	var es exitStatus
	if err == nil || !asExit(err, &es) || es != 1 {
		t.Errorf("error %v: want exit status 1", err)
	}
	if want := script + "|2|b|" + script + "\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if want := script + ": line 2: exit: too many arguments"; !strings.Contains(errs, want) {
		t.Errorf("stderr %q, want it to hold %q", errs, want)
	}
}

// TestRunCommandArgs: `warren run -c SCRIPT ARGS` gives the script ARGS as
// its parameters without a line of its own, so its line numbers are its.
func TestRunCommandArgs(t *testing.T) {
	out, errs, err := runVerb(t, "", "-c", "echo \"$1 $#\"\nexit 1 2", "a", "b")
	var es exitStatus
	if err == nil || !asExit(err, &es) || es != 1 {
		t.Errorf("error %v: want exit status 1", err)
	}
	if out != "a 2\n" {
		t.Errorf("stdout %q, want %q", out, "a 2\n")
	}
	if want := "line 2: exit: too many arguments"; !strings.Contains(errs, want) {
		t.Errorf("stderr %q, want it to hold %q", errs, want)
	}
}
