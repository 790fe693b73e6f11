package fileutils_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// TestDf reports the sandbox delta, never the host's disks.
func TestDf(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"a": strings.Repeat("x", 3000)}, nil)
	out, _, code := runIn(fsys, std.Table(), []string{"df"}, "")
	want := "Filesystem 1K-blocks Used Available Use% Mounted on\nwarren             -    3         -    - /\n"
	if code != 0 || out != want {
		t.Errorf("df: %q %d, want %q", out, code, want)
	}
	fsys.SetQuota(1<<20, 0)
	out, _, _ = runIn(fsys, std.Table(), []string{"df", "-h"}, "")
	if !strings.Contains(out, "Size") || !strings.Contains(out, " 1.0M ") || !strings.Contains(out, "% /\n") {
		t.Errorf("df -h with a 1 MiB quota: %q", out)
	}
}

// TestDfMounts: a volume mounted in the vfs is its own row, and an operand
// picks the filesystem holding it.
func TestDfMounts(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	vol := vfs.New(vfs.Options{MaxBytes: 2 << 20})
	if err := vol.WriteFile("/w", []byte(strings.Repeat("x", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Mount("/models", vol, vfs.MountOptions{Name: "volume weights"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"df", "-h"}, "Filesystem Size Used Avail Use% Mounted on\nwarren        -    0     -    - /\nweights    2.0M 4.9K  2.0M   1% /models\n", 0},
		{[]string{"df", "/models/w"}, "Filesystem 1K-blocks Used Available Use% Mounted on\nweights         2048    5      2043   1% /models\n", 0},
		{[]string{"df", "/"}, "Filesystem 1K-blocks Used Available Use% Mounted on\nwarren             -    0         -    - /\n", 0},
		{[]string{"df", "/nope"}, "Filesystem 1K-blocks Used Available Use% Mounted on\n", 1},
	} {
		out, _, code := runIn(fsys, std.Table(), tc.args, "")
		if out != tc.want || code != tc.code {
			t.Errorf("%v: %q %d, want %q %d", tc.args, out, code, tc.want, tc.code)
		}
	}
}

func TestMktemp(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"tmp/": ""}, nil)
	tab := std.Table()
	out, _, code := runIn(fsys, tab, []string{"mktemp"}, "")
	if code != 0 || !regexp.MustCompile(`^/tmp/tmp\.[A-Za-z0-9]{10}\n$`).MatchString(out) {
		t.Fatalf("mktemp: %q %d", out, code)
	}
	if fi, err := fsys.Stat(strings.TrimSpace(out)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mktemp file: %v %v", fi, err)
	}
	out, _, code = runIn(fsys, tab, []string{"mktemp", "-d", "-p", caseDir, "work.XXXX"}, "")
	if code != 0 || !strings.HasPrefix(out, caseDir+"/work.") {
		t.Fatalf("mktemp -d: %q %d", out, code)
	}
	if fi, err := fsys.Stat(strings.TrimSpace(out)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("mktemp -d dir: %v %v", fi, err)
	}
	_, errs, code := runIn(fsys, tab, []string{"mktemp", "fooXX"}, "")
	if code != 1 || errs != "mktemp: too few X's in template 'fooXX'\n" {
		t.Errorf("too few X: %q %d", errs, code)
	}
}

// TestSplitMemoryLimit checks split -n refuses input beyond the sandbox
// memory limit instead of buffering it.
func TestSplitMemoryLimit(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	var out, errb bytes.Buffer
	inv := &commands.Invocation{Args: []string{"split", "-n", "2"}, Stdin: strings.NewReader(strings.Repeat("x", 4096)),
		Stdout: &out, Stderr: &errb, Dir: caseDir, FS: fsys, Sys: &commands.System{MaxMemoryBytes: 1024}}
	if code := std.Table()["split"](context.Background(), inv); code != commands.StatusLimit || !strings.Contains(errb.String(), "warren: memory limit exceeded") {
		t.Errorf("split -n over the limit: %d %q", code, errb.String())
	}
}

// TestQuotaError checks that a write beyond the delta quota fails with the
// vfs's error, named GNU-style.
func TestQuotaError(t *testing.T) {
	fsys := newSandbox(t, map[string]string{"big": strings.Repeat("x", 10000)}, nil)
	fsys.SetQuota(fsys.Usage().Bytes+100, 0)
	_, errs, code := runIn(fsys, std.Table(), []string{"cp", "big", "copy"}, "")
	if code != 1 || !strings.HasPrefix(errs, "cp: ") || !strings.Contains(errs, "copy") {
		t.Errorf("cp over quota: %q %d", errs, code)
	}
}
