package native_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
)

// percentiles reports p50/p95/p99 (ms) and n of the per-op durations.
func percentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 {
		i := int(q * float64(len(d)-1))
		return float64(d[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(len(d)), "n")
}

// BenchmarkTrue compares, in one run, /bin/true through warren's full
// native path on a warm workspace (sync + exec in the namespaces + harvest)
// with bubblewrap building its namespaces over the same rootfs.
func BenchmarkTrue(b *testing.B) {
	rt, img := requireRuntime(b)
	rootfs := filepath.Join(filepath.Dir(img), "root")
	for _, withVFS := range []bool{true, false} {
		name := map[bool]string{true: "native-warm", false: "native-warm-novfs"}[withVFS]
		b.Run(name, func(b *testing.B) {
			var v *vfs.FS
			if withVFS {
				v = newBenchVFS(b, img)
			}
			ws, err := rt.Workspace(context.Background(), "bench", img, v, native.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			cmd := native.Cmd{Path: "/bin/true"}
			if _, err := ws.Exec(context.Background(), cmd); err != nil { // warm up
				b.Fatal(err)
			}
			d := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				res, err := ws.Exec(context.Background(), cmd)
				d = append(d, time.Since(t0))
				if err != nil || res.Status != 0 {
					b.Fatalf("status %d err %v", res.Status, err)
				}
			}
			b.StopTimer()
			percentiles(b, d)
		})
	}
	// Cold: a new workspace (tmpfs, overlay, cgroups, namespace init) and
	// its first exec; Close is outside the timer.
	b.Run("native-cold", func(b *testing.B) {
		d := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			ws, err := rt.Workspace(context.Background(), "cold", img, newBenchVFS(b, img), native.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			res, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/true"})
			d = append(d, time.Since(t0))
			if err != nil || res.Status != 0 {
				b.Fatalf("status %d err %v", res.Status, err)
			}
			b.StopTimer()
			ws.Close()
			b.StartTimer()
		}
		b.StopTimer()
		percentiles(b, d)
	})
	b.Run("bwrap", func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("bwrap not installed (apt-get install bubblewrap)")
		}
		args := []string{"--unshare-all", "--ro-bind", rootfs, "/", "--proc", "/proc", "--dev", "/dev", "/bin/true"}
		if out, err := exec.Command(bwrap, args...).CombinedOutput(); err != nil {
			b.Fatalf("bwrap: %v %s", err, out)
		}
		d := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			err := exec.Command(bwrap, args...).Run()
			d = append(d, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		percentiles(b, d)
	})
}

// newBenchVFS returns a vfs over the image as production has it: the same
// EROFS file read in-process (image.OpenFile, go-erofs over mmap).
func newBenchVFS(b *testing.B, img string) *vfs.FS {
	im, err := image.OpenFile(img)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { im.Close() })
	return vfs.New(vfs.Options{Base: im.FS()})
}

// BenchmarkSync measures bringing a vfs change of n files into a warm
// workspace's overlay (the pre-exec sync alone).
func BenchmarkSync(b *testing.B) {
	rt, img := requireRuntime(b)
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("files-%d", n), func(b *testing.B) {
			v := newBenchVFS(b, img)
			ws, err := rt.Workspace(context.Background(), "sync", img, v, native.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			if err := v.MkdirAll("/data", 0o755); err != nil {
				b.Fatal(err)
			}
			if err := ws.SyncIn(); err != nil {
				b.Fatal(err)
			}
			d := make([]time.Duration, 0, b.N)
			payload := make([]byte, 100)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := 0; j < n; j++ {
					payload[0] = byte(i)
					if err := v.WriteFile(fmt.Sprintf("/data/f%d", j), payload, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				t0 := time.Now()
				if err := ws.SyncIn(); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t0))
			}
			b.StopTimer()
			percentiles(b, d)
		})
	}
}

// BenchmarkHarvest measures the after-exec harvest when nothing changed but
// upper/ holds n files (the walk is O(upper): it stats every entry).
func BenchmarkHarvest(b *testing.B) {
	rt, img := requireRuntime(b)
	for _, n := range []int{0, 1000} {
		b.Run(fmt.Sprintf("unchanged-%d", n), func(b *testing.B) {
			v := newBenchVFS(b, img)
			if err := v.MkdirAll("/data", 0o755); err != nil {
				b.Fatal(err)
			}
			for j := 0; j < n; j++ {
				if err := v.WriteFile(fmt.Sprintf("/data/f%d", j), []byte("x"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			ws, err := rt.Workspace(context.Background(), "harvest", img, v, native.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			if _, err := ws.Exec(context.Background(), native.Cmd{Path: "/bin/true"}); err != nil {
				b.Fatal(err)
			}
			d := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := ws.Harvest(context.Background()); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t0))
			}
			b.StopTimer()
			percentiles(b, d)
		})
	}
}

// BenchmarkSeccomp measures what the default confinement (seccomp filter,
// dropped capabilities, masked /proc, Landlock) costs against a relaxed workspace, in
// one run with the two interleaved per iteration so machine load hits both
// alike: warm native exec of /bin/true, and a syscall-heavy program (the
// probe's getppid loop, where the filter runs on every call; 100k calls
// keep an iteration near 0.1 s, so the default -benchtime gets a few
// samples; getppid-ns-per-call is the p50 difference per call).
func BenchmarkSeccomp(b *testing.B) {
	const getppidCalls = 100000
	_, img := requireProbe(b)
	rt, _ := requireRuntime(b)
	open := func(id string, opts ...native.WorkspaceOption) *native.Workspace {
		ws, err := rt.Workspace(context.Background(), id, img, nil, native.Limits{}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ws.Close() })
		return ws
	}
	spaces := map[string]*native.Workspace{
		"default": open("bench-default"),
		"relaxed": open("bench-relaxed", native.WithSecurity(native.SecurityRelaxed)),
	}
	for _, bc := range []struct {
		name string
		cmd  native.Cmd
	}{
		{"exec-true", native.Cmd{Path: "/bin/true"}},
		{"getppid-100k", native.Cmd{Path: "/bin/probe", Args: []string{"probe", "getppid", strconv.Itoa(getppidCalls)}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := map[string][]time.Duration{}
			for _, ws := range spaces { // warm up
				if _, err := ws.Exec(context.Background(), bc.cmd); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, mode := range []string{"default", "relaxed"} {
					t0 := time.Now()
					res, err := spaces[mode].Exec(context.Background(), bc.cmd)
					d[mode] = append(d[mode], time.Since(t0))
					if err != nil || res.Status != 0 {
						b.Fatalf("%s: status %d err %v", mode, res.Status, err)
					}
				}
			}
			b.StopTimer()
			p50 := map[string]float64{}
			for mode, ds := range d {
				sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
				at := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / float64(time.Millisecond) }
				p50[mode] = at(0.50)
				b.ReportMetric(at(0.50), mode+"-p50-ms")
				b.ReportMetric(at(0.95), mode+"-p95-ms")
				b.ReportMetric(at(0.99), mode+"-p99-ms")
			}
			if strings.HasPrefix(bc.name, "getppid") {
				b.ReportMetric((p50["default"]-p50["relaxed"])*1e6/getppidCalls, "getppid-ns-per-call")
			}
			b.ReportMetric(float64(b.N), "n")
		})
	}
}
