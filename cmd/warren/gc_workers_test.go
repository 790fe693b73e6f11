package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

var gcSweptRE = regexp.MustCompile(`msg=gc .*swept=(\d+) swept_bytes=(\d+)`)

// TestE2E_GCWorkers: serve with its default 2 workers collects garbage
// with every worker's roots. A deleted sandbox's data is swept after two
// runs; a running sandbox's, a hibernated one's (on the other worker), a
// snapshot's and a volume's (their sandboxes deleted) read back afterwards
// from the blob store (the chunk cache is off, so every read fetches). While a worker
// killed with SIGKILL restarts, runs fail naming it and sweep nothing.
func TestE2E_GCWorkers(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("worker cgroups need root and CI runs as root")
		}
		t.Skip("worker cgroups need root")
	}
	dir := t.TempDir()
	p := startServe(t, dir, "--no-native", "--workers", "2", "--gc-interval", "250ms", "--gc-grace", "1ns",
		"--chunk-cache-memory", "0", "--chunk-cache-disk", "0")
	ctx := context.Background()
	c, err := client.New(p.url, p.adminKey(t))
	if err != nil {
		t.Fatal(err)
	}
	ok, err := c.CreateKey(ctx, "other") // another tenant: the other worker
	if err != nil {
		t.Fatal(err)
	}
	oc, err := client.New(p.url, ok.Key)
	if err != nil {
		t.Fatal(err)
	}
	// put writes 300 KB of random data to /data and commits it.
	put := func(cl *client.Client) (api.Sandbox, []byte) {
		t.Helper()
		sb, err := cl.Create(ctx, api.CreateRequest{StandbyAfter: -1})
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 300000)
		rand.Read(data)
		if err := cl.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/data", Data: bytes.NewReader(data), Durability: api.DurabilityCommitted}); err != nil {
			t.Fatal(err)
		}
		return sb, data
	}
	live, liveData := put(c)
	doomed, _ := put(c)
	snapSrc, snapData := put(c)
	hib, hibData := put(oc)
	if _, err := c.CreateSnapshot(ctx, snapSrc.ID, "keep"); err != nil {
		t.Fatal(err)
	}
	// A volume of the other tenant (on its worker) whose sandbox is gone:
	// only the volume's record keeps its tree.
	if _, err := oc.CreateVolume(ctx, api.VolumeCreate{Name: "vol", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	volMount := []api.VolumeMount{{Name: "vol", Path: "/vol"}}
	volSb, err := oc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Volumes: volMount})
	if err != nil {
		t.Fatal(err)
	}
	volData := make([]byte, 300000)
	rand.Read(volData)
	if err := oc.WriteFile(ctx, volSb.ID, api.WriteFileRequest{Path: "/vol/data", Data: bytes.NewReader(volData)}); err != nil {
		t.Fatal(err)
	}
	if err := oc.Delete(ctx, volSb.ID); err != nil {
		t.Fatal(err)
	}
	// checkVolume reads the volume back in a new sandbox, deleted after.
	checkVolume := func(what string) {
		t.Helper()
		sb, err := oc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Volumes: volMount})
		if err != nil {
			t.Fatal(err)
		}
		got, err := oc.ReadFile(ctx, sb.ID, "/vol/data", 0, -1)
		if err != nil || !bytes.Equal(got, volData) {
			t.Fatalf("volume %s: %d bytes, %v; want its %d bytes", what, len(got), err, len(volData))
		}
		if err := oc.Delete(ctx, sb.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := oc.Hibernate(ctx, hib.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{doomed.ID, snapSrc.ID} {
		if err := c.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for swept := false; !swept; {
		for _, m := range gcSweptRE.FindAllStringSubmatch(p.logs(), -1) {
			if n, _ := strconv.Atoi(m[2]); n >= 300000 {
				swept = true
			}
		}
		if !swept && time.Now().After(deadline) {
			t.Fatalf("no gc run swept the deleted sandbox's 300 KB:\n%s", p.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	check := func(what string, cl *client.Client, id string, want []byte) {
		t.Helper()
		got, err := cl.ReadFile(ctx, id, "/data", 0, -1)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s after gc: %d bytes, %v; want its %d bytes", what, len(got), err, len(want))
		}
	}
	check("running sandbox", c, live.ID, liveData)
	check("hibernated sandbox (other worker)", oc, hib.ID, hibData)
	fromSnap, err := c.Create(ctx, api.CreateRequest{Snapshot: "keep", StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	check("sandbox from the snapshot", c, fromSnap.ID, snapData)
	checkVolume("after gc")

	// Kill worker 1 until a run meets it down (the restart takes a few
	// hundred ms; each kill doubles its backoff).
	worker := workerPID(t, p.cmd.Process.Pid, 1)
	for attempt := 0; ; attempt++ {
		if attempt == 5 {
			t.Fatalf("no gc run failed while the worker was down:\n%s", p.logs())
		}
		before := len(p.logs())
		if err := syscall.Kill(worker.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Back when a list (which asks every worker) answers again.
		back := time.Now().Add(time.Minute)
		for {
			_, err := c.List(ctx, api.ListOptions{})
			if err == nil {
				break
			}
			if !errdefs.IsUnavailable(err) || time.Now().After(back) {
				t.Fatalf("worker not back: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		window := p.logs()[before:]
		if strings.Contains(window, "gc failed") && strings.Contains(window, "nothing is swept") {
			for _, l := range strings.Split(window, "\n") {
				if strings.Contains(l, "gc failed") {
					t.Logf("kill %d: %s", attempt+1, l)
					break
				}
			}
			for _, m := range gcSweptRE.FindAllStringSubmatch(window, -1) {
				if m[1] != "0" {
					t.Fatalf("a run swept %s objects around the worker's restart:\n%s", m[1], window)
				}
			}
			break
		}
		worker = workerPID(t, p.cmd.Process.Pid, worker.index)
	}
	check("hibernated sandbox after its worker's restart", oc, hib.ID, hibData)

	// Offline: `warren gc` refuses the directory while serve holds it,
	// and on the stopped one collects with every worker's roots (it opens
	// each worker's node): what it keeps reads back in the next serve.
	if _, errs, err := runGC(t, dir, "--grace", "1ns"); err == nil || !strings.Contains(errs, "is warren serve running") {
		t.Fatalf("gc on a served data dir: %v %s", err, errs)
	}
	p.stop(t)
	for range 2 {
		if st, errs, err := runGC(t, dir, "--grace", "1ns"); err != nil {
			t.Fatalf("offline gc: %+v %v %s", st, err, errs)
		}
	}
	p = startServe(t, dir, "--no-native", "--workers", "2", "--gc-interval", "0", "--chunk-cache-memory", "0", "--chunk-cache-disk", "0")
	if c, err = client.New(p.url, p.adminKey(t)); err != nil {
		t.Fatal(err)
	}
	if oc, err = client.New(p.url, ok.Key); err != nil {
		t.Fatal(err)
	}
	check("running sandbox after offline gc", c, live.ID, liveData)
	check("hibernated sandbox after offline gc", oc, hib.ID, hibData)
	check("sandbox from the snapshot after offline gc", c, fromSnap.ID, snapData)
	checkVolume("after offline gc")
	p.stop(t)
}

type workerProc struct{ pid, index int }

// workerPID finds serve's worker process with --index i.
func workerPID(t *testing.T, serve, i int) workerProc {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, pid := range childPIDs(t, serve) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			if strings.Contains(string(cmdline), "\x00--index\x00"+strconv.Itoa(i)+"\x00") {
				return workerProc{pid, i}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve has no worker %d", i)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
