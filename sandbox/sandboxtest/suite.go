// Package sandboxtest is the behaviour suite every api.Service must pass:
// the in-process sandbox manager and the HTTP client (through a real
// server) both run it, so the two cannot drift apart (the containerd
// snapshotter-testsuite idea).
package sandboxtest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Harness gives the suite what it runs against. The backend must tick its
// idle timer often (tens of milliseconds) for the standby test.
type Harness struct {
	// NewTenant returns a Service for a tenant no other call returned.
	NewTenant func(t *testing.T) api.Service
}

// Run runs every test of the suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Lifecycle", testLifecycle},
		{"CreateErrors", testCreateErrors},
		{"Exec", testExec},
		{"ExecLimits", testExecLimits},
		{"Sessions", testSessions},
		{"SessionsParallel", testSessionsParallel},
		{"Files", testFiles},
		{"FileErrors", testFileErrors},
		{"Tar", testTar},
		{"HibernateResume", testHibernateResume},
		{"Standby", testStandby},
		{"Fork", testFork},
		{"Snapshots", testSnapshots},
		{"Processes", testProcesses},
		{"Tenants", testTenants},
		{"ConcurrentTransitions", testConcurrentTransitions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func create(t *testing.T, svc api.Service, req api.CreateRequest) api.Sandbox {
	t.Helper()
	sb, err := svc.Create(ctxT(t), req)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return sb
}

// Sh runs script in the main session and returns stdout, stderr, status.
func Sh(t testing.TB, svc api.Service, id, script string) (string, string, int) {
	t.Helper()
	return ShReq(t, svc, id, api.ExecRequest{Script: script})
}

// ShReq runs req and returns stdout, stderr, status; warren errors fail t.
func ShReq(t testing.TB, svc api.Service, id string, req api.ExecRequest) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := svc.Exec(context.Background(), id, req, &out, &errb)
	if err != nil {
		t.Fatalf("Exec %q: %v", req.Script, err)
	}
	return out.String(), errb.String(), res.Exit
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantClass(t *testing.T, what string, err, class error) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("%s: got error %v, want class %v", what, err, class)
	}
}

func testLifecycle(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{
		Env: map[string]string{"GREETING": "hello"}, Cwd: "/tmp",
		Labels: map[string]string{"team": "a", "run": "1"},
	})
	if sb.ID == "" || sb.State != api.StateRunning {
		t.Fatalf("created %+v: want an id and state running", sb)
	}
	other := create(t, svc, api.CreateRequest{Labels: map[string]string{"team": "b"}})
	got, err := svc.Get(ctx, sb.ID)
	must(t, "Get", err)
	if got.Labels["team"] != "a" || got.Cwd != "/tmp" {
		t.Fatalf("Get = %+v", got)
	}
	out, _, st := Sh(t, svc, sb.ID, `echo "$GREETING from $(pwd)"`)
	if out != "hello from /tmp\n" || st != 0 {
		t.Fatalf("exec: %q status %d", out, st)
	}
	list, err := svc.List(ctx, api.ListOptions{Labels: map[string]string{"team": "a"}})
	must(t, "List", err)
	if len(list) != 1 || list[0].ID != sb.ID {
		t.Fatalf("List team=a = %v, want just %s", ids(list), sb.ID)
	}
	all, err := svc.List(ctx, api.ListOptions{})
	must(t, "List", err)
	if len(all) != 2 {
		t.Fatalf("List = %v, want 2 sandboxes", ids(all))
	}
	must(t, "Delete", svc.Delete(ctx, sb.ID))
	_, err = svc.Get(ctx, sb.ID)
	wantClass(t, "Get after Delete", err, errdefs.ErrNotFound)
	_, err = svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "true"}, nil, nil)
	wantClass(t, "Exec after Delete", err, errdefs.ErrNotFound)
	wantClass(t, "Delete twice", svc.Delete(ctx, sb.ID), errdefs.ErrNotFound)
	must(t, "Delete other", svc.Delete(ctx, other.ID))
}

func ids(sbs []api.Sandbox) []string {
	out := make([]string, len(sbs))
	for i, s := range sbs {
		out[i] = s.ID
	}
	return out
}

func testCreateErrors(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	cases := []struct {
		name  string
		req   api.CreateRequest
		class error
	}{
		{"relative cwd", api.CreateRequest{Cwd: "tmp"}, errdefs.ErrInvalidArgument},
		{"dotdot cwd", api.CreateRequest{Cwd: "/a/../b"}, errdefs.ErrInvalidArgument},
		{"bad env name", api.CreateRequest{Env: map[string]string{"A-B": "1"}}, api.ErrUnprocessable},
		{"bad label", api.CreateRequest{Labels: map[string]string{"": "x"}}, api.ErrUnprocessable},
		{"unknown image", api.CreateRequest{Image: "no-such-image"}, errdefs.ErrNotFound},
		{"unknown snapshot", api.CreateRequest{Snapshot: "nope"}, errdefs.ErrNotFound},
		{"negative ttl", api.CreateRequest{TTL: -1}, api.ErrUnprocessable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.Create(ctx, c.req)
			wantClass(t, "Create", err, c.class)
		})
	}
	_, err := svc.Get(ctx, "sb-doesnotexist")
	wantClass(t, "Get absent", err, errdefs.ErrNotFound)
}

func testExec(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	sb := create(t, svc, api.CreateRequest{})
	// Where a fresh sandbox starts is its image's WORKDIR.
	start, _, _ := Sh(t, svc, sb.ID, "pwd")
	cases := []struct {
		name           string
		req            api.ExecRequest
		stdout, stderr string
		status         int
	}{
		{"echo", api.ExecRequest{Script: "echo hi"}, "hi\n", "", 0},
		{"status", api.ExecRequest{Script: "echo out; echo err >&2; exit 3"}, "out\n", "err\n", 3},
		{"argv quoting", api.ExecRequest{Argv: []string{"echo", "a b", "it's", "$HOME"}}, "a b it's $HOME\n", "", 0},
		{"stdin", api.ExecRequest{Script: "cat; echo", Stdin: "from stdin"}, "from stdin\n", "", 0},
		{"stdin reader", api.ExecRequest{Script: "wc -c", StdinReader: strings.NewReader("12345")}, "5\n", "", 0},
		{"env override", api.ExecRequest{Script: `echo "$A $B"`, Env: map[string]string{"A": "1", "B": "two words"}}, "1 two words\n", "", 0},
		{"cwd override", api.ExecRequest{Script: "pwd", Cwd: "/tmp"}, "/tmp\n", "", 0},
		{"command not found", api.ExecRequest{Script: "no-such-command"}, "", "", 127},
		{"pipeline", api.ExecRequest{Script: "seq 1 5 | tac | head -n 2"}, "5\n4\n", "", 0},
		{"utf8", api.ExecRequest{Script: "echo héllo wörld ✓"}, "héllo wörld ✓\n", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, st := ShReq(t, svc, sb.ID, c.req)
			if out != c.stdout || st != c.status || (c.stderr != "" && errs != c.stderr) {
				t.Fatalf("got stdout %q stderr %q status %d; want %q %q %d", out, errs, st, c.stdout, c.stderr, c.status)
			}
		})
	}
	// The overrides did not leak into the session.
	out, _, _ := Sh(t, svc, sb.ID, `echo "[$A]"; pwd`)
	if out != "[]\n"+start {
		t.Fatalf("overrides leaked into the session: %q", out)
	}
	bad := []struct {
		name  string
		req   api.ExecRequest
		class error
	}{
		{"empty", api.ExecRequest{}, api.ErrUnprocessable},
		{"both", api.ExecRequest{Script: "x", Argv: []string{"x"}}, api.ErrUnprocessable},
		{"bad session", api.ExecRequest{Script: "x", Session: "../x"}, api.ErrUnprocessable},
		{"relative cwd", api.ExecRequest{Script: "x", Cwd: "tmp"}, errdefs.ErrInvalidArgument},
		{"huge script", api.ExecRequest{Script: strings.Repeat("#", 2<<20)}, api.ErrTooLarge},
	}
	for _, c := range bad {
		t.Run("bad/"+c.name, func(t *testing.T) {
			_, err := svc.Exec(context.Background(), sb.ID, c.req, nil, nil)
			wantClass(t, "Exec", err, c.class)
		})
	}
}

func testExecLimits(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	sb := create(t, svc, api.CreateRequest{Limits: api.Limits{MaxOutputBytes: 1000}})
	ctx := ctxT(t)
	t0 := time.Now()
	res, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "while true; do :; done", Timeout: api.Duration(200 * time.Millisecond)}, nil, nil)
	must(t, "Exec timeout", err)
	if res.Exit != 124 || res.Limit != "timeout" {
		t.Fatalf("endless loop: %+v, want exit 124 limit timeout", res)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("timeout of 200ms took %v", d)
	}
	var out bytes.Buffer
	res, err = svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "while true; do echo 0123456789; done"}, &out, nil)
	must(t, "Exec output", err)
	if res.Limit != "output" || !res.Truncated || out.Len() > 1000 || out.Len() < 900 {
		t.Fatalf("endless output: %+v with %d bytes, want limit output, truncated, 900..1000 bytes", res, out.Len())
	}
	// A value over the memory limit stops the script with a clear error.
	mem := create(t, svc, api.CreateRequest{Limits: api.Limits{MaxMemoryBytes: 1 << 20}})
	res, err = svc.Exec(ctx, mem.ID, api.ExecRequest{Script: `x=$(seq 1 1000000); echo ${#x}`}, &out, nil)
	must(t, "Exec memory", err)
	if res.Exit == 0 {
		t.Fatalf("a 6.9 MB value under a 1 MiB memory limit: %+v", res)
	}
	// The sandbox is still usable.
	if o, _, st := Sh(t, svc, sb.ID, "echo ok"); o != "ok\n" || st != 0 {
		t.Fatalf("after limits: %q %d", o, st)
	}
}

func testSessions(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	sb := create(t, svc, api.CreateRequest{})
	start, _, _ := Sh(t, svc, sb.ID, "pwd")
	Sh(t, svc, sb.ID, `cd /tmp; X=42; export Y=exported; f() { echo "f:$1"; }; alias ll='echo alias-ll'; set -o pipefail`)
	out, _, _ := Sh(t, svc, sb.ID, `shopt -s expand_aliases; echo "$(pwd) $X $Y"; f arg; [[ -o pipefail ]] && echo pf`)
	if out != "/tmp 42 exported\nf:arg\npf\n" {
		t.Fatalf("session state did not persist: %q", out)
	}
	out, _, _ = ShReq(t, svc, sb.ID, api.ExecRequest{Script: `echo "$(pwd) [$X]"; type f >/dev/null 2>&1 || echo no-f`, Session: "other"})
	if out != strings.TrimSuffix(start, "\n")+" []\nno-f\n" {
		t.Fatalf("a new session saw main's state: %q", out)
	}
	// Isolated: state changes vanish, file writes stay.
	ShReq(t, svc, sb.ID, api.ExecRequest{Script: `X=changed; cd /; echo iso > /tmp/iso.txt`, Isolated: true})
	out, _, _ = Sh(t, svc, sb.ID, `echo "$X $(pwd)"; cat /tmp/iso.txt`)
	if out != "42 /tmp\niso\n" {
		t.Fatalf("isolated exec: %q", out)
	}
	// Execs in one session are queued: concurrent increments never race.
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Sh(t, svc, sb.ID, `N=$((N+1))`)
		}()
	}
	wg.Wait()
	if out, _, _ := Sh(t, svc, sb.ID, `echo $N`); out != "20\n" {
		t.Fatalf("20 queued increments gave %q", out)
	}
	info, err := svc.Get(ctxT(t), sb.ID)
	must(t, "Get", err)
	if strings.Join(info.Sessions, ",") != "main,other" {
		t.Fatalf("sessions = %v", info.Sessions)
	}
}

func testSessionsParallel(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	sb := create(t, svc, api.CreateRequest{})
	done := make(chan time.Time, 1)
	go func() {
		ShReq(t, svc, sb.ID, api.ExecRequest{Script: "sleep 1", Session: "slow"})
		done <- time.Now()
	}()
	time.Sleep(100 * time.Millisecond)
	out, _, _ := ShReq(t, svc, sb.ID, api.ExecRequest{Script: "echo fast", Session: "fast"})
	fastAt := time.Now()
	slowAt := <-done
	if out != "fast\n" || !fastAt.Before(slowAt) {
		t.Fatalf("an exec in another session waited for the slow one (fast %v, slow %v)", fastAt, slowAt)
	}
}

func testFiles(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{})
	id := sb.ID
	must(t, "WriteFile", svc.WriteFile(ctx, id, api.WriteFileRequest{Path: "/work/a/b.txt", Data: strings.NewReader("hello world"), Perm: 0o600}))
	data, err := svc.ReadFile(ctx, id, "/work/a/b.txt", 0, 0)
	must(t, "ReadFile", err)
	if string(data) != "hello world" {
		t.Fatalf("ReadFile = %q", data)
	}
	if data, _ := svc.ReadFile(ctx, id, "/work/a/b.txt", 6, 3); string(data) != "wor" {
		t.Fatalf("ReadFile range 6+3 = %q", data)
	}
	if data, _ := svc.ReadFile(ctx, id, "/work/a/b.txt", 100, 0); len(data) != 0 {
		t.Fatalf("ReadFile past the end = %q", data)
	}
	must(t, "append", svc.WriteFile(ctx, id, api.WriteFileRequest{Path: "/work/a/b.txt", Data: strings.NewReader("!"), Mode: api.WriteAppend}))
	if out, _, _ := Sh(t, svc, id, "cat /work/a/b.txt"); out != "hello world!" {
		t.Fatalf("the shell sees %q", out)
	}
	err = svc.WriteFile(ctx, id, api.WriteFileRequest{Path: "/work/a/b.txt", Data: strings.NewReader("x"), Mode: api.WriteCreate})
	wantClass(t, "create over an existing file", err, errdefs.ErrAlreadyExists)
	fi, err := svc.Stat(ctx, id, "/work/a/b.txt")
	must(t, "Stat", err)
	if fi.Type != "file" || fi.Size != 12 || fi.Mode != "0600" {
		t.Fatalf("Stat = %+v", fi)
	}
	must(t, "Mkdir", svc.Mkdir(ctx, id, "/work/x/y/z", 0))
	must(t, "Move", svc.Move(ctx, id, "/work/a/b.txt", "/work/x/moved.txt"))
	list, err := svc.ListFiles(ctx, id, "/work", api.ListFilesOptions{Recursive: true})
	must(t, "ListFiles", err)
	var paths []string
	for _, f := range list {
		paths = append(paths, f.Path+":"+f.Type)
	}
	want := "/work/a:dir /work/x:dir /work/x/moved.txt:file /work/x/y:dir /work/x/y/z:dir"
	if strings.Join(paths, " ") != want {
		t.Fatalf("ListFiles recursive = %v, want %s", paths, want)
	}
	list, err = svc.ListFiles(ctx, id, "/work", api.ListFilesOptions{Depth: 1})
	must(t, "ListFiles depth 1", err)
	if len(list) != 4 {
		t.Fatalf("ListFiles depth 1 = %d entries, want 4", len(list))
	}
	wantClass(t, "Remove non-empty dir", svc.Remove(ctx, id, "/work/x", false), api.ErrUnprocessable)
	must(t, "Remove -r", svc.Remove(ctx, id, "/work/x", true))
	_, err = svc.Stat(ctx, id, "/work/x/moved.txt")
	wantClass(t, "Stat removed", err, errdefs.ErrNotFound)
	// Written by the shell, read through the API.
	Sh(t, svc, id, "printf 'from shell' > /work/s.txt")
	if data, _ := svc.ReadFile(ctx, id, "/work/s.txt", 0, 0); string(data) != "from shell" {
		t.Fatalf("ReadFile of a shell-written file = %q", data)
	}
	// Concurrent writes through the API are atomic per call.
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat(string(rune('a'+i)), 4096)
			if err := svc.WriteFile(ctx, id, api.WriteFileRequest{Path: "/work/race.txt", Data: strings.NewReader(body)}); err != nil {
				t.Errorf("concurrent WriteFile: %v", err)
			}
		}()
	}
	wg.Wait()
	data, err = svc.ReadFile(ctx, id, "/work/race.txt", 0, 0)
	must(t, "ReadFile race", err)
	if len(data) != 4096 || strings.Count(string(data), string(data[:1])) != 4096 {
		t.Fatalf("concurrent writes interleaved: %d bytes, first %q", len(data), data[:1])
	}
}

func testFileErrors(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{})
	cases := []struct {
		name  string
		err   error
		class error
	}{
		{"relative", func() error { _, err := svc.ReadFile(ctx, sb.ID, "etc/passwd", 0, 0); return err }(), errdefs.ErrInvalidArgument},
		{"dotdot", func() error { _, err := svc.ReadFile(ctx, sb.ID, "/tmp/../../etc/passwd", 0, 0); return err }(), errdefs.ErrInvalidArgument},
		{"write dotdot", svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/../x", Data: strings.NewReader("")}), errdefs.ErrInvalidArgument},
		{"missing", func() error { _, err := svc.ReadFile(ctx, sb.ID, "/no/such/file", 0, 0); return err }(), errdefs.ErrNotFound},
		{"read a dir", func() error { _, err := svc.ReadFile(ctx, sb.ID, "/tmp", 0, 0); return err }(), api.ErrUnprocessable},
		{"list a file", func() error {
			svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/f", Data: strings.NewReader("x")})
			_, err := svc.ListFiles(ctx, sb.ID, "/f", api.ListFilesOptions{})
			return err
		}(), api.ErrUnprocessable},
		{"remove /", svc.Remove(ctx, sb.ID, "/", true), api.ErrUnprocessable},
		{"bad mode", svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/m", Data: strings.NewReader(""), Mode: "sideways"}), api.ErrUnprocessable},
		{"absent sandbox", func() error { _, err := svc.ReadFile(ctx, "sb-nope", "/x", 0, 0); return err }(), errdefs.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantClass(t, c.name, c.err, c.class) })
	}
	// A disk quota holds and names itself.
	q := create(t, svc, api.CreateRequest{Limits: api.Limits{DiskBytes: 64 << 10}})
	err := svc.WriteFile(ctx, q.ID, api.WriteFileRequest{Path: "/big", Data: bytes.NewReader(make([]byte, 256<<10))})
	wantClass(t, "write over the disk quota", err, api.ErrInsufficientStorage)
}

func testTar(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := map[string]string{"a.txt": "A", "sub/b.txt": "BB", "sub/deeper/c.txt": "CCC"}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[n]))
	}
	tw.WriteHeader(&tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "a.txt"})
	tw.Close()
	must(t, "UploadTar", svc.UploadTar(ctx, sb.ID, "/up", bytes.NewReader(buf.Bytes())))
	if out, _, _ := Sh(t, svc, sb.ID, "cat /up/a.txt /up/sub/b.txt /up/sub/deeper/c.txt /up/link"); out != "ABBCCCA" {
		t.Fatalf("uploaded tree reads %q", out)
	}
	var down bytes.Buffer
	must(t, "DownloadTar", svc.DownloadTar(ctx, sb.ID, "/up", &down))
	tr := tar.NewReader(&down)
	got := map[string]string{}
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(t, "reading the downloaded tar", err)
		data, _ := io.ReadAll(tr)
		if hd.Typeflag == tar.TypeReg {
			got[hd.Name] = string(data)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(files) {
		t.Fatalf("downloaded %v, want %v", got, files)
	}
	// A tar that climbs out of its directory is refused.
	buf.Reset()
	tw = tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "../escape", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("x"))
	tw.Close()
	wantClass(t, "tar with ..", svc.UploadTar(ctx, sb.ID, "/up", bytes.NewReader(buf.Bytes())), errdefs.ErrInvalidArgument)
}

func testHibernateResume(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{})
	Sh(t, svc, sb.ID, `mkdir -p /data; echo persisted > /data/f; cd /data; V=kept; g() { echo "g here"; }`)
	ShReq(t, svc, sb.ID, api.ExecRequest{Script: "W=second", Session: "two"})
	for range 2 { // idempotent
		got, err := svc.Hibernate(ctx, sb.ID)
		must(t, "Hibernate", err)
		if got.State != api.StateStandby || got.StateRef == "" {
			t.Fatalf("after Hibernate: %+v", got)
		}
	}
	// Any request resumes it transparently.
	out, _, st := Sh(t, svc, sb.ID, `cat f; echo "$V $(pwd)"; g`)
	if out != "persisted\nkept /data\ng here\n" || st != 0 {
		t.Fatalf("after resume: %q (status %d)", out, st)
	}
	out, _, _ = ShReq(t, svc, sb.ID, api.ExecRequest{Script: "echo $W", Session: "two"})
	if out != "second\n" {
		t.Fatalf("session two after resume: %q", out)
	}
	for range 2 {
		got, err := svc.Resume(ctx, sb.ID)
		must(t, "Resume", err)
		if got.State != api.StateRunning {
			t.Fatalf("after Resume: %+v", got)
		}
	}
	// Hibernate, then a file call resumes.
	_, err := svc.Hibernate(ctx, sb.ID)
	must(t, "Hibernate", err)
	data, err := svc.ReadFile(ctx, sb.ID, "/data/f", 0, 0)
	must(t, "ReadFile after hibernate", err)
	if string(data) != "persisted\n" {
		t.Fatalf("ReadFile after hibernate = %q", data)
	}
}

func testStandby(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{StandbyAfter: api.Duration(150 * time.Millisecond)})
	Sh(t, svc, sb.ID, "S=still-here")
	// A running exec is activity: no standby while it runs.
	ShReq(t, svc, sb.ID, api.ExecRequest{Script: "sleep 0.5", Session: "busy"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := svc.Get(ctx, sb.ID)
		must(t, "Get", err)
		if got.State == api.StateStandby {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s 10s after standby_after=150ms", got.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, _, _ := Sh(t, svc, sb.ID, "echo $S"); out != "still-here\n" {
		t.Fatalf("after standby: %q", out)
	}
	// A background process is activity too: no standby while it runs.
	bg := create(t, svc, api.CreateRequest{StandbyAfter: api.Duration(150 * time.Millisecond)})
	p, err := svc.StartProcess(ctx, bg.ID, api.ExecRequest{Script: "read x; echo $x"})
	must(t, "StartProcess", err)
	time.Sleep(600 * time.Millisecond)
	if got, _ := svc.Get(ctx, bg.ID); got.State != api.StateRunning {
		t.Fatalf("went to %s while a background process ran", got.State)
	}
	must(t, "WriteStdin", svc.WriteStdin(ctx, bg.ID, p.PID, []byte("done\n"), true))
	if res, err := svc.WaitProcess(ctx, bg.ID, p.PID); err != nil || res.Exit != 0 {
		t.Fatalf("WaitProcess: %+v %v", res, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if got, _ := svc.Get(ctx, bg.ID); got.State == api.StateStandby {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no standby 10s after the background process ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	never := create(t, svc, api.CreateRequest{StandbyAfter: api.Duration(-1)})
	time.Sleep(300 * time.Millisecond)
	if got, _ := svc.Get(ctx, never.ID); got.State != api.StateRunning {
		t.Fatalf("standby_after<0 went to %s", got.State)
	}
}

func testFork(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	parent := create(t, svc, api.CreateRequest{})
	Sh(t, svc, parent.ID, `echo base > /f; P=parent`)
	kids, err := svc.Fork(ctx, parent.ID, 3)
	must(t, "Fork", err)
	if len(kids) != 3 {
		t.Fatalf("Fork 3 gave %d", len(kids))
	}
	for i, k := range kids {
		if k.ID == parent.ID || k.Parent != parent.ID {
			t.Fatalf("child %+v", k)
		}
		Sh(t, svc, k.ID, fmt.Sprintf(`echo child%d >> /f; P=child%d`, i, i))
	}
	Sh(t, svc, parent.ID, `echo parent-after >> /f`)
	for i, k := range kids {
		out, _, _ := Sh(t, svc, k.ID, `cat /f; echo $P`)
		if want := fmt.Sprintf("base\nchild%d\nchild%d\n", i, i); out != want {
			t.Fatalf("child %d: %q, want %q", i, out, want)
		}
	}
	if out, _, _ := Sh(t, svc, parent.ID, `cat /f; echo $P`); out != "base\nparent-after\nparent\n" {
		t.Fatalf("parent: %q", out)
	}
	// From a hibernated parent.
	_, err = svc.Hibernate(ctx, parent.ID)
	must(t, "Hibernate", err)
	kids2, err := svc.Fork(ctx, parent.ID, 2)
	must(t, "Fork from standby", err)
	for _, k := range kids2 {
		if out, _, _ := Sh(t, svc, k.ID, `cat /f; echo $P`); out != "base\nparent-after\nparent\n" {
			t.Fatalf("child of a standby parent: %q", out)
		}
	}
	_, err = svc.Fork(ctx, parent.ID, -1)
	wantClass(t, "Fork -1", err, api.ErrUnprocessable)
	_, err = svc.Fork(ctx, "sb-absent", 1)
	wantClass(t, "Fork absent", err, errdefs.ErrNotFound)
}

func testSnapshots(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{Labels: map[string]string{"k": "v"}})
	Sh(t, svc, sb.ID, `echo v1 > /f; V=one`)
	snap, err := svc.CreateSnapshot(ctx, sb.ID, "s1")
	must(t, "CreateSnapshot", err)
	if snap.Name != "s1" || snap.StateRef == "" {
		t.Fatalf("snapshot %+v", snap)
	}
	_, err = svc.CreateSnapshot(ctx, sb.ID, "s1")
	wantClass(t, "snapshot name reused", err, errdefs.ErrAlreadyExists)
	_, err = svc.CreateSnapshot(ctx, sb.ID, "bad name")
	wantClass(t, "bad snapshot name", err, api.ErrUnprocessable)
	Sh(t, svc, sb.ID, `echo v2 > /f; V=two`)
	from := create(t, svc, api.CreateRequest{Snapshot: "s1"})
	if from.Snapshot != "s1" {
		t.Fatalf("from snapshot: %+v", from)
	}
	if out, _, _ := Sh(t, svc, from.ID, `cat /f; echo $V`); out != "v1\none\n" {
		t.Fatalf("sandbox from snapshot: %q", out)
	}
	// Snapshots are immutable: writes in a sandbox made from one do not
	// change it.
	Sh(t, svc, from.ID, `echo v3 > /f`)
	again := create(t, svc, api.CreateRequest{Snapshot: "s1"})
	if out, _, _ := Sh(t, svc, again.ID, `cat /f`); out != "v1\n" {
		t.Fatalf("second sandbox from snapshot: %q", out)
	}
	list, err := svc.ListSnapshots(ctx)
	must(t, "ListSnapshots", err)
	if len(list) != 1 || list[0].Name != "s1" {
		t.Fatalf("ListSnapshots = %+v", list)
	}
	// Deleting the source sandbox keeps the snapshot usable.
	must(t, "Delete source", svc.Delete(ctx, sb.ID))
	third := create(t, svc, api.CreateRequest{Snapshot: "s1"})
	if out, _, _ := Sh(t, svc, third.ID, `cat /f`); out != "v1\n" {
		t.Fatalf("from snapshot after deleting its source: %q", out)
	}
	must(t, "DeleteSnapshot", svc.DeleteSnapshot(ctx, "s1"))
	_, err = svc.GetSnapshot(ctx, "s1")
	wantClass(t, "GetSnapshot deleted", err, errdefs.ErrNotFound)
}

func testProcesses(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{})
	p, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: `echo started; read line; echo "got $line"; echo bye >&2`, Session: "bg"})
	must(t, "StartProcess", err)
	if p.PID <= 0 || !p.Running {
		t.Fatalf("process %+v", p)
	}
	must(t, "WriteStdin", svc.WriteStdin(ctx, sb.ID, p.PID, []byte("hello\n"), true))
	res, err := svc.WaitProcess(ctx, sb.ID, p.PID)
	must(t, "WaitProcess", err)
	if res.Exit != 0 {
		t.Fatalf("wait: %+v", res)
	}
	// Attach after exit replays everything that was buffered.
	var out, errb bytes.Buffer
	res, err = svc.AttachProcess(ctx, sb.ID, p.PID, &out, &errb)
	must(t, "AttachProcess", err)
	if out.String() != "started\ngot hello\n" || errb.String() != "bye\n" || res.Exit != 0 {
		t.Fatalf("attach: %q %q %+v", out.String(), errb.String(), res)
	}
	// Signal a looping process.
	loop, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: `echo looping; while true; do sleep 0.01; done`, Session: "loop"})
	must(t, "StartProcess loop", err)
	attached := make(chan string, 1)
	first := &firstWrite{ch: make(chan struct{})}
	go func() {
		svc.AttachProcess(ctx, sb.ID, loop.PID, first, nil)
		attached <- first.String()
	}()
	select {
	case <-first.ch: // the loop runs and its output streams live
	case <-time.After(20 * time.Second):
		t.Fatal("no output from the looping process in 20s")
	}
	must(t, "SignalProcess", svc.SignalProcess(ctx, sb.ID, loop.PID, "TERM"))
	res, err = svc.WaitProcess(ctx, sb.ID, loop.PID)
	must(t, "WaitProcess loop", err)
	if res.Exit != 143 || res.Limit != "signal:TERM" {
		t.Fatalf("after SIGTERM: %+v", res)
	}
	if got := <-attached; got != "looping\n" {
		t.Fatalf("live attach got %q", got)
	}
	ps, err := svc.ListProcesses(ctx, sb.ID)
	must(t, "ListProcesses", err)
	if len(ps) != 2 || ps[0].Running || ps[1].Running {
		t.Fatalf("ListProcesses = %+v", ps)
	}
	wantClass(t, "signal an exited process", svc.SignalProcess(ctx, sb.ID, loop.PID, "KILL"), errdefs.ErrFailedPrecondition)
	wantClass(t, "bad signal", svc.SignalProcess(ctx, sb.ID, loop.PID, "SIGFOO"), api.ErrUnprocessable)
	_, err = svc.WaitProcess(ctx, sb.ID, 999)
	wantClass(t, "absent process", err, errdefs.ErrNotFound)
	// A running background process keeps the sandbox busy.
	busy, err := svc.StartProcess(ctx, sb.ID, api.ExecRequest{Script: `read x`, Session: "busy"})
	must(t, "StartProcess busy", err)
	_, err = svc.Hibernate(ctx, sb.ID)
	wantClass(t, "Hibernate while a process runs", err, errdefs.ErrFailedPrecondition)
	must(t, "close stdin", svc.WriteStdin(ctx, sb.ID, busy.PID, nil, true))
	svc.WaitProcess(ctx, sb.ID, busy.PID)
	_, err = svc.Hibernate(ctx, sb.ID)
	must(t, "Hibernate after the process ended", err)
}

func testTenants(t *testing.T, h Harness) {
	a, b := h.NewTenant(t), h.NewTenant(t)
	ctx := ctxT(t)
	sa := create(t, a, api.CreateRequest{})
	_, err := a.CreateSnapshot(ctx, sa.ID, "mine")
	must(t, "CreateSnapshot", err)
	_, err = b.Get(ctx, sa.ID)
	wantClass(t, "other tenant Get", err, errdefs.ErrNotFound)
	_, err = b.Exec(ctx, sa.ID, api.ExecRequest{Script: "true"}, nil, nil)
	wantClass(t, "other tenant Exec", err, errdefs.ErrNotFound)
	wantClass(t, "other tenant Delete", b.Delete(ctx, sa.ID), errdefs.ErrNotFound)
	_, err = b.GetSnapshot(ctx, "mine")
	wantClass(t, "other tenant GetSnapshot", err, errdefs.ErrNotFound)
	_, err = b.Create(ctx, api.CreateRequest{Snapshot: "mine"})
	wantClass(t, "other tenant's snapshot", err, errdefs.ErrNotFound)
	if l, _ := b.List(ctx, api.ListOptions{}); len(l) != 0 {
		t.Fatalf("tenant b lists %v", ids(l))
	}
	if _, err := a.Get(ctx, sa.ID); err != nil {
		t.Fatalf("owner lost access: %v", err)
	}
}

// testConcurrentTransitions hammers one sandbox with hibernate, resume,
// exec, file writes, fork and finally delete from many goroutines, then
// checks nothing was corrupted.
func testConcurrentTransitions(t *testing.T, h Harness) {
	svc := h.NewTenant(t)
	ctx := ctxT(t)
	sb := create(t, svc, api.CreateRequest{})
	Sh(t, svc, sb.ID, "echo 0 > /counter; X=base")
	workers := 16
	iters := 15
	if testing.Short() {
		iters = 5
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var forks []string
	errs := make(chan error, workers*iters)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				var err error
				switch (w + i) % 5 {
				case 0:
					_, err = svc.Hibernate(ctx, sb.ID)
					if errdefs.IsFailedPrecondition(err) || errors.Is(err, errdefs.ErrFailedPrecondition) {
						err = nil // busy: a legal answer
					}
				case 1:
					_, err = svc.Resume(ctx, sb.ID)
				case 2:
					var res api.ExecResult
					res, err = svc.Exec(ctx, sb.ID, api.ExecRequest{Script: `c=$(cat /counter); echo $((c + 1)) > /counter; [ "$X" = base ]`}, nil, nil)
					if err == nil && res.Exit != 0 {
						err = fmt.Errorf("session state lost: exit %d", res.Exit)
					}
				case 3:
					err = svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: fmt.Sprintf("/w/%d-%d", w, i), Data: strings.NewReader("x")})
				case 4:
					var kids []api.Sandbox
					kids, err = svc.Fork(ctx, sb.ID, 1)
					if err == nil {
						mu.Lock()
						forks = append(forks, kids[0].ID)
						mu.Unlock()
					}
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d op %d: %w", w, (w+i)%5, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	execs := 0
	for w := range workers {
		for i := range iters {
			if (w+i)%5 == 2 {
				execs++
			}
		}
	}
	out, _, _ := Sh(t, svc, sb.ID, "cat /counter; ls /w | wc -l")
	writes := 0
	for w := range workers {
		for i := range iters {
			if (w+i)%5 == 3 {
				writes++
			}
		}
	}
	if want := fmt.Sprintf("%d\n%d\n", execs, writes); out != want {
		t.Fatalf("after the storm: %q, want %q (counter, files)", out, want)
	}
	for _, id := range forks {
		if _, _, st := Sh(t, svc, id, `[ "$X" = base ] && test -f /counter`); st != 0 {
			t.Fatalf("fork %s lost state", id)
		}
	}
	// Concurrent deletes: exactly one wins.
	var wins sync.WaitGroup
	var okCount, nfCount int
	for range 8 {
		wins.Add(1)
		go func() {
			defer wins.Done()
			err := svc.Delete(ctx, sb.ID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				okCount++
			case errors.Is(err, errdefs.ErrNotFound):
				nfCount++
			default:
				t.Errorf("Delete: %v", err)
			}
		}()
	}
	wins.Wait()
	if okCount != 1 || nfCount != 7 {
		t.Fatalf("8 concurrent deletes: %d ok, %d not found", okCount, nfCount)
	}
}

// firstWrite is a buffer that closes ch on its first write.
type firstWrite struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	ch   chan struct{}
	once sync.Once
}

func (f *firstWrite) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.once.Do(func() { close(f.ch) })
	return f.buf.Write(p)
}

func (f *firstWrite) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf.String()
}
