package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

// TestServe_WorkerFlags: bad worker flags fail before anything starts,
// naming the flag.
func TestServe_WorkerFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "-1"}, "--workers -1: want 0"},
		{[]string{"--workers", "2", "--worker-memory", "lots"}, "--worker-memory: bad size"},
		{[]string{"--workers", "2", "--worker-memory", "1M"}, "under 64 MiB"},
		{[]string{"--workers", "2", "--blobs", "s3://bucket/prefix"}, "worker processes need local metadata and blobs"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			root := newRoot()
			root.SetArgs(append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--no-native"}, c.args...))
			var out strings.Builder
			root.SetOut(&out)
			root.SetErr(&out)
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("serve %v: %v; want an error saying %q", c.args, err, c.want)
			}
		})
	}
}

// TestServeWorker_NeedsItsFlags: the hidden verb run by hand says what it is.
func TestServeWorker_NeedsItsFlags(t *testing.T) {
	root := newRoot()
	root.SetArgs([]string{"serve-worker"})
	root.SetIn(strings.NewReader(""))
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&out)
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "started by warren serve --workers") {
		t.Fatalf("serve-worker without flags: %v", err)
	}
}

// TestE2E_WorkerOOM: the real binary with its default worker mode. A
// sandbox that grows an awk array without bound takes only its worker
// (killed by the worker's memory cgroup); serve stays up, another
// tenant's sandbox (on the other worker) answers, the CLI says what happened, and
// the hostile sandbox resumes from its last hibernate.
func TestE2E_WorkerOOM(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("worker cgroups need root and CI runs as root")
		}
		t.Skip("worker cgroups need root")
	}
	p := startServe(t, t.TempDir(), "--no-native", "--worker-memory", "192MiB")
	if !strings.Contains(p.header, "(2 workers)") {
		t.Fatalf("serve did not start its default 2 workers:\n%s", p.header)
	}
	key := p.adminKey(t)
	c, err := client.New(p.url, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bad, err := c.Create(ctx, api.CreateRequest{Limits: api.Limits{MaxMemoryBytes: 8 << 30}, StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The neighbour is another tenant: a tenant's sandboxes share its home
	// worker, another tenant's first sandbox goes to the other one.
	nk, err := c.CreateKey(ctx, "neighbour")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := client.New(p.url, nk.Key)
	if err != nil {
		t.Fatal(err)
	}
	good, err := nc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	sh(t, c, bad.ID, "echo durable > /tmp/kept")
	if _, err := c.Hibernate(ctx, bad.ID); err != nil {
		t.Fatal(err)
	}
	_, errs, code := p.cli(t, key, "", "sandbox", "exec", bad.ID, "--", "awk", `BEGIN{while(1) a[i++]=sprintf("%0100d",i)}`)
	if code == 0 || !strings.Contains(errs, "died during the call") {
		t.Fatalf("CLI exec of the memory bomb: status %d, stderr %q; want a failure naming the worker's death", code, errs)
	}
	if out, st := sh(t, nc, good.ID, "echo alive"); out != "alive\n" || st != 0 {
		t.Fatalf("neighbour after the bomb: %q %d", out, st)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var out bytes.Buffer
		_, err := c.Exec(ctx, bad.ID, api.ExecRequest{Script: "cat /tmp/kept"}, &out, nil)
		if err == nil {
			if out.String() != "durable\n" {
				t.Fatalf("hostile sandbox after its worker's restart: %q", out.String())
			}
			break
		}
		if !errdefs.IsUnavailable(err) || time.Now().After(deadline) {
			t.Fatalf("hostile sandbox not back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(p.logs(), "memory cgroup OOM kill") {
		t.Fatalf("serve's log does not record the OOM kill:\n%s", p.logs())
	}
	p.stop(t)
}

// TestE2E_WorkerChunkCache: serve's chunk cache flags reach the worker
// processes: each worker runs with its share of each tier and the fetch
// timeout given, its disk tier in its own directory (the tier is emptied
// at start, so a shared one would be emptied under the other worker).
func TestE2E_WorkerChunkCache(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir, "--no-native", "--workers", "2", "--gc-interval", "0",
		"--chunk-cache-memory", "64MiB", "--chunk-cache-disk", "100MiB", "--chunk-fetch-timeout", "7s")
	logs := p.logs()
	for w := range 2 {
		chunks := filepath.Join(dir, "workers", "w"+strconv.Itoa(w), "chunks")
		want := fmt.Sprintf(`msg="chunk cache" worker=%d memory=%d disk=%d dir=%s fetch_timeout=7s`, w, 32<<20, 50<<20, chunks)
		if !strings.Contains(logs, want) {
			t.Fatalf("worker %d: no log line %q:\n%s", w, want, logs)
		}
		if fi, err := os.Lstat(chunks); err != nil || !fi.IsDir() {
			t.Fatalf("worker %d's disk tier %s: %v", w, chunks, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cache", "chunks")); err == nil {
		t.Fatalf("a worker used the shared %s", filepath.Join(dir, "cache", "chunks"))
	}
	p.stop(t)
}
