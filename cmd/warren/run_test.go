package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runVerb(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	c := newRunCmd()
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, err := runVerb(t, tt.stdin, tt.args...)
			st := 0
			if err != nil {
				var es exitStatus
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
