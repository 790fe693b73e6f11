package native_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
)

var testEnv = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}

func newWorkspace(t *testing.T, id string, fs *vfs.FS, lim native.Limits) *native.Workspace {
	t.Helper()
	rt, img := requireRuntime(t)
	ws, err := rt.Workspace(context.Background(), id, img, fs, lim)
	if err != nil {
		t.Fatalf("Workspace: %v", err)
	}
	t.Cleanup(func() {
		if err := ws.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ws
}

// sh runs script under busybox sh in ws and returns stdout, stderr, result.
func sh(t *testing.T, ws *native.Workspace, script string, lim native.Limits) (string, string, native.Result) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := ws.Exec(context.Background(), native.Cmd{
		Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: testEnv,
		Stdout: &out, Stderr: &errb, Limits: lim,
	})
	if err != nil {
		t.Fatalf("Exec %q: %v (stderr %q)", script, err, errb.String())
	}
	return out.String(), errb.String(), res
}

func TestExec_Basics(t *testing.T) {
	ws := newWorkspace(t, "basics", nil, native.Limits{})
	tests := []struct {
		name, script, want string
		status             int
	}{
		{"echo", "echo hello", "hello\n", 0},
		{"status", "exit 7", "", 7},
		{"ls root", "ls / | tr '\\n' ' '", "bin dev etc home linuxrc proc root sbin sys tmp usr var ", 0},
		{"base file", "cat /etc/motd", "from the base image\n", 0},
		{"id is root inside", "id -u; id -g", "0\n0\n", 0},
		{"owners shifted back", "stat -c '%u:%g' /home/user /etc/passwd", "1000:1000\n0:0\n", 0},
		{"hostname", "hostname", "basics\n", 0},
		{"pid 1 is the init", "echo $$ > /dev/null; cat /proc/1/cmdline | tr '\\0' ' '", "warren-native-init ", 0},
		{"dev nodes", "echo x > /dev/null && head -c 3 /dev/zero | wc -c && ls /dev | tr '\\n' ' '",
			"3\nfd full null ptmx pts random shm stderr stdin stdout tty urandom zero ", 0},
		{"write and read back", "echo data > /tmp/f && cat /tmp/f", "data\n", 0},
		{"copy-up of base file", "echo more >> /etc/motd && cat /etc/motd", "from the base image\nmore\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, res := sh(t, ws, tc.script, native.Limits{})
			if out != tc.want || res.Status != tc.status {
				t.Errorf("got %q status %d (stderr %q), want %q status %d", out, res.Status, errs, tc.want, tc.status)
			}
		})
	}
}

func TestExec_StdinAndMissing(t *testing.T) {
	ws := newWorkspace(t, "stdin", nil, native.Limits{})
	var out bytes.Buffer
	res, err := ws.Exec(context.Background(), native.Cmd{
		Path: "tr", Args: []string{"tr", "a-z", "A-Z"}, Env: testEnv,
		Stdin: strings.NewReader("streamed input\n"), Stdout: &out,
	})
	if err != nil || res.Status != 0 || out.String() != "STREAMED INPUT\n" {
		t.Fatalf("tr: %q status %d err %v", out.String(), res.Status, err)
	}
	var errb bytes.Buffer
	res, err = ws.Exec(context.Background(), native.Cmd{Path: "/no/such", Env: testEnv, Stderr: &errb})
	if err != nil || res.Status != 127 || !strings.Contains(errb.String(), "/no/such") {
		t.Fatalf("missing: status %d err %v stderr %q", res.Status, err, errb.String())
	}
	res, err = ws.Exec(context.Background(), native.Cmd{Path: "/etc/motd", Env: testEnv, Stderr: &errb})
	if err != nil || res.Status != 126 {
		t.Fatalf("not executable: status %d err %v stderr %q", res.Status, err, errb.String())
	}
	errb.Reset()
	res, err = ws.Exec(context.Background(), native.Cmd{Path: "/bin/true", Dir: "/nowhere", Env: testEnv, Stderr: &errb})
	if err != nil || res.Status != 126 || !strings.Contains(errb.String(), "working directory /nowhere") {
		t.Fatalf("bad dir: status %d err %v stderr %q", res.Status, err, errb.String())
	}
	var out2 bytes.Buffer
	res, err = ws.Exec(context.Background(), native.Cmd{Path: "pwd", Dir: "/etc", Env: testEnv, Stdout: &out2})
	if err != nil || res.Status != 0 || out2.String() != "/etc\n" {
		t.Fatalf("pwd in /etc: %q %d %v", out2.String(), res.Status, err)
	}
}

func TestSecurity_SignalsToInitAreHarmless(t *testing.T) {
	ws := newWorkspace(t, "signals", nil, native.Limits{})
	_, _, res := sh(t, ws, "for s in TERM INT HUP QUIT USR1 USR2 PIPE ALRM KILL STOP; do kill -$s 1; done; sleep 0.1; echo sent", native.Limits{})
	if res.Status != 0 {
		t.Fatalf("status %d", res.Status)
	}
	if out, _, res := sh(t, ws, "trap - TERM; sleep 5 & kill -TERM $!; wait $!; echo $?", native.Limits{}); out != "143\n" || res.Status != 0 {
		t.Fatalf("after signalling pid 1: %q %d (children must still die of SIGTERM)", out, res.Status)
	}
}

func TestExec_CPUTime(t *testing.T) {
	ws := newWorkspace(t, "cpu", nil, native.Limits{})
	_, _, res := sh(t, ws, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done", native.Limits{})
	if res.Status != 0 || res.CPU < 50*time.Millisecond || res.CPU > res.Wall+50*time.Millisecond {
		t.Fatalf("status %d CPU %v wall %v: want a busy loop's CPU time", res.Status, res.CPU, res.Wall)
	}
}

func TestRuntime_BadConfigAndUnavailable(t *testing.T) {
	requireRuntime(t)
	for _, cfg := range []native.Config{
		{RunDir: "relative/run"},
		{RunDir: "/tmp/x", CgroupName: "a/b"},
		{RunDir: "/tmp/x", CgroupName: ".."},
	} {
		if _, err := native.NewRuntime(context.Background(), cfg); err == nil {
			t.Errorf("NewRuntime(%+v) accepted a bad config", cfg)
		}
	}
	hidden := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(hidden, 0o700); err != nil {
		t.Fatal(err)
	}
	rt, err := native.NewRuntime(context.Background(), native.Config{RunDir: filepath.Join(hidden, "run"), CgroupName: "warren-native-unavail"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if err := rt.Available(); err == nil || !strings.Contains(err.Error(), "not searchable") {
		t.Fatalf("Available() = %v, want a reason naming the unsearchable directory", err)
	}
	if _, err := rt.Workspace(context.Background(), "x", "/nonexistent", nil, native.Limits{}); err == nil {
		t.Fatal("Workspace on an unavailable runtime succeeded")
	}
	// Bad workspace input on a working runtime.
	good, img := requireRuntime(t)
	for _, tc := range []struct {
		id, img string
		lim     native.Limits
	}{
		{"", img, native.Limits{}},
		{strings.Repeat("x", 65), img, native.Limits{}},
		{"ok", "/no/such/image.erofs", native.Limits{}},
		{"ok", img, native.Limits{Memory: -1}},
	} {
		if ws, err := good.Workspace(context.Background(), tc.id, tc.img, nil, tc.lim); err == nil {
			ws.Close()
			t.Errorf("Workspace(%q, %q, %+v) succeeded", tc.id, tc.img, tc.lim)
		}
	}
}

// TestExec_StreamsWhileRunning: output reaches the caller's writer as the
// process writes it, and stdin is fed as the caller produces it, not
// buffered whole.
func TestExec_StreamsWhileRunning(t *testing.T) {
	ws := newWorkspace(t, "streams", nil, native.Limits{})
	pr, pw := io.Pipe()
	inR, inW := io.Pipe()
	firstAt := make(chan time.Time, 1)
	var got bytes.Buffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 256)
		for {
			n, err := pr.Read(buf)
			if n > 0 && got.Len() == 0 {
				firstAt <- time.Now()
			}
			got.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		// The second line is written only after the first came back.
		inW.Write([]byte("one\n"))
		<-firstAt
		time.Sleep(300 * time.Millisecond)
		inW.Write([]byte("two\n"))
		inW.Close()
	}()
	start := time.Now()
	res, err := ws.Exec(context.Background(), native.Cmd{
		Path: "/bin/sh", Args: []string{"sh", "-c", "while read l; do echo got $l; done"},
		Env: testEnv, Stdin: inR, Stdout: pw,
		Limits: native.Limits{Timeout: 10 * time.Second}, // buffered output would deadlock until this
	})
	end := time.Now()
	pw.Close()
	<-readDone
	if err != nil || res.Status != 0 || got.String() != "got one\ngot two\n" {
		t.Fatalf("status %d err %v output %q", res.Status, err, got.String())
	}
	if end.Sub(start) < 300*time.Millisecond {
		t.Fatalf("exec took %v: the first line was not streamed back before stdin ended", end.Sub(start))
	}
}
