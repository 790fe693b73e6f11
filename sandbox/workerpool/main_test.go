package workerpool

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/server"
)

// workerEnv makes this test binary a worker: the tests start real worker
// processes from it, as warren serve starts `warren serve-worker`.
const workerEnv = "WARREN_WORKERPOOL_TEST_WORKER"

func TestMain(m *testing.M) {
	native.MaybeInit()
	if os.Getenv(workerEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		err := RunWorker(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if d := os.Getenv(frontEnv); d != "" {
		// A front for TestFrontDeath: one worker, its pid on stdout, then
		// wait to be killed.
		o := Options{Workers: 1, Data: d, MemoryLimit: 256 << 20, Command: []string{os.Args[0]}, Env: []string{workerEnv + "=1"}}
		p, err := Open(context.Background(), o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "front:", err)
			os.Exit(1)
		}
		fmt.Println(p.Status()[0].PID)
		select {}
	}
	os.Exit(m.Run())
}

// frontEnv makes this test binary a front holding a pool over the
// directory it names.
const frontEnv = "WARREN_WORKERPOOL_TEST_FRONT"

// needRoot: cgroups need root; CI runs as root, so there it is a failure.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("worker cgroups need root and CI runs as root")
		}
		t.Skip("worker cgroups need root")
	}
}

// testOptions are pool options for tests: this binary as the worker,
// a fast idle tick for the standby test, resident tier only.
func testOptions(t testing.TB, workers int) Options {
	return Options{
		Workers:      workers,
		Data:         t.TempDir(),
		MemoryLimit:  256 << 20,
		Command:      []string{os.Args[0]},
		Env:          []string{workerEnv + "=1"},
		TickInterval: 20 * time.Millisecond,
		MaxFileBytes: 64 << 20,
		Stderr:       os.Stderr,
	}
}

func openPool(t testing.TB, o Options) *Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := Open(ctx, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// front serves p over HTTP as warren serve does; it returns a client per
// tenant.
type front struct {
	srv   *httptest.Server
	keys  *server.MemKeys
	names sync.Map // tenant -> key
}

func newFront(t testing.TB, p *Pool) *front {
	t.Helper()
	keys := server.NewMemKeys()
	s, err := server.New(server.Config{Backend: p, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	f := &front{srv: httptest.NewServer(p.Handler(s)), keys: keys}
	t.Cleanup(f.srv.Close)
	return f
}

func (f *front) tenant(t testing.TB, name string) *client.Client {
	t.Helper()
	key := server.NewKey()
	f.keys.PutKey(context.Background(), key, name, false)
	f.names.Store(name, key)
	c, err := client.New(f.srv.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sh(t testing.TB, svc api.Service, id, script string) (string, int) {
	t.Helper()
	var out strings.Builder
	res, err := svc.Exec(context.Background(), id, api.ExecRequest{Script: script}, &out, nil)
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return out.String(), res.Exit
}
