package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/sandbox/node"
)

var (
	nativeOnce sync.Once
	nativeRT   *native.Runtime
	nativeTmp  string
	nativeErr  error
)

// requireNative returns the package's native runtime or skips the test
// with the reason it cannot run here.
func requireNative(t testing.TB) *native.Runtime {
	t.Helper()
	nativeOnce.Do(func() {
		if os.Geteuid() != 0 {
			nativeErr = fmt.Errorf("needs root (mounts, cgroups, namespaces)")
			return
		}
		if _, err := exec.LookPath("busybox"); err != nil {
			nativeErr = fmt.Errorf("busybox not installed (apt-get install busybox-static)")
			return
		}
		// A fixed run dir: a test binary killed midway leaves mounts there,
		// and the next run's runtime cleans them up at start.
		nativeTmp = filepath.Join(os.TempDir(), "warren-server-test-native")
		if nativeErr = os.MkdirAll(nativeTmp, 0o711); nativeErr != nil {
			return
		}
		os.Chmod(nativeTmp, 0o711) // the workspace init must reach its run dir
		nativeRT, nativeErr = native.NewRuntime(context.Background(), native.Config{
			RunDir: filepath.Join(nativeTmp, "run"), CgroupName: "warren-server-test",
		})
		if nativeErr == nil {
			nativeErr = nativeRT.Available()
		}
	})
	if nativeErr != nil {
		t.Skipf("native tier unavailable: %v", nativeErr)
	}
	return nativeRT
}

func closeNativeRuntime() {
	if nativeRT != nil {
		nativeRT.Close()
	}
}

// busyboxImage builds busybox-static and its applet links through the
// node's catalog and names it "busybox" for tenant.
func busyboxImage(t testing.TB, cat *image.Catalog, tenant string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"bin", "usr/bin", "sbin", "usr/sbin", "tmp", "etc", "root", "proc", "dev", "sys"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	bb, _ := exec.LookPath("busybox")
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin/busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bb, "--list-full").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "bin/busybox" {
			dst := filepath.Join(root, p)
			rel, _ := filepath.Rel(filepath.Dir(dst), filepath.Join(root, "bin/busybox"))
			os.Symlink(rel, dst)
		}
	}
	m, err := cat.BuildSource(context.Background(), root, image.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Tag(context.Background(), "tenants/"+tenant+"/busybox", m); err != nil {
		t.Fatal(err)
	}
}

func nativeNode(t testing.TB) (*testNode, *client.Client) {
	rt := requireNative(t)
	tn := startNode(t, node.Options{Native: rt, DefaultStandbyAfter: time.Hour})
	k, err := tn.admin.CreateKey(context.Background(), "native")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(tn.srv.URL, k.Key)
	if err != nil {
		t.Fatal(err)
	}
	busyboxImage(t, tn.n.Catalog, "native")
	return tn, c
}

func TestNativeAPI(t *testing.T) {
	_, c := nativeNode(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{Image: "busybox", Limits: api.Limits{CPUs: 0.5, Pids: 64, MaxMemoryBytes: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Limits.CPUs != 0.5 || sb.Limits.Pids != 64 || sb.Limits.MaxMemoryBytes != 64<<20 || sb.Limits.Native != nil {
		t.Fatalf("limits do not round-trip: %+v", sb.Limits)
	}
	res, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "/bin/busybox echo hi; /bin/busybox seq 1 1000 | grep 7 | wc -l"})
	if err != nil || res.Stdout != "hi\n271\n" || res.Exit != 0 || res.CPUSeconds <= 0 {
		t.Fatalf("native exec through the API: %+v %v", res, err)
	}
	// The pids limit holds: a fork bomb is contained and the exec ends.
	res, err = c.ExecWait(ctx, sb.ID, api.ExecRequest{
		Script:  `/bin/busybox sh -c 'i=0; while [ $i -lt 200 ]; do sleep 2 & i=$((i+1)); done; echo started $i' 2>&1 | grep -c "can't fork"`,
		Timeout: api.Duration(30 * time.Second),
	})
	if err != nil || strings.TrimSpace(res.Stdout) == "0" || res.Stdout == "" {
		t.Fatalf("200 processes under pids=64 (want fork failures): %+v %v", res, err)
	}
	off := false
	sb2, err := c.Create(ctx, api.CreateRequest{Image: "busybox", Limits: api.Limits{Native: &off}})
	if err != nil {
		t.Fatal(err)
	}
	if sb2.Limits.Native == nil || *sb2.Limits.Native {
		t.Fatalf("native: false does not round-trip: %+v", sb2.Limits)
	}
	res, err = c.ExecWait(ctx, sb2.ID, api.ExecRequest{Script: "/bin/busybox echo hi"})
	if err != nil || res.Exit != 126 || !strings.Contains(res.Stderr, "native tier is off for this sandbox") {
		t.Fatalf("ELF with native off: %+v %v", res, err)
	}
	if _, err := c.Create(ctx, api.CreateRequest{Image: "busybox", Limits: api.Limits{CPUs: -1}}); err == nil {
		t.Fatal("negative cpus accepted")
	}
}

// BenchmarkNativeExecAPI times a native /bin/busybox true through the HTTP
// API (buffered exec) on a warm workspace: sync + exec + harvest + HTTP.
func BenchmarkNativeExecAPI(b *testing.B) {
	_, c := nativeNode(b)
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{Image: "busybox"})
	if err != nil {
		b.Fatal(err)
	}
	req := api.ExecRequest{Script: "/bin/busybox true"}
	if res, err := c.ExecWait(ctx, sb.ID, req); err != nil || res.Exit != 0 {
		b.Fatalf("warm-up: %+v %v", res, err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		res, err := c.ExecWait(ctx, sb.ID, req)
		lat = append(lat, time.Since(t0))
		if err != nil || res.Exit != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.95), "p95-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(len(lat)), "n")
}

// BenchmarkNativeColdExecAPI times the first native exec of a fresh
// sandbox through the API (workspace creation: tmpfs, overlay, cgroups,
// namespace init), apart from the warm figure above.
func BenchmarkNativeColdExecAPI(b *testing.B) {
	_, c := nativeNode(b)
	ctx := context.Background()
	req := api.ExecRequest{Script: "/bin/busybox true"}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		sb, err := c.Create(ctx, api.CreateRequest{Image: "busybox"})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		res, err := c.ExecWait(ctx, sb.ID, req)
		lat = append(lat, time.Since(t0))
		if err != nil || res.Exit != 0 {
			b.Fatalf("%+v %v", res, err)
		}
		b.StopTimer()
		if err := c.Delete(ctx, sb.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.95), "p95-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(len(lat)), "n")
}
