package native_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/vfs"
)

var (
	iobenchOnce sync.Once
	iobenchImg  string
	iobenchErr  error
)

// requireIOBench returns a busybox image with testdata/iobench.c built
// static at /bin/iobench.
func requireIOBench(b *testing.B) string {
	requireRuntime(b)
	iobenchOnce.Do(func() {
		if _, err := exec.LookPath("gcc"); err != nil {
			iobenchErr = fmt.Errorf("gcc not installed (apt-get install gcc libc6-dev): %w", err)
			return
		}
		dir := filepath.Join(sharedDir, "iobench")
		if iobenchErr = os.MkdirAll(dir, 0o755); iobenchErr != nil {
			return
		}
		bin := filepath.Join(dir, "iobench")
		if out, err := exec.Command("gcc", "-static", "-O2", "-Wall", "-o", bin, "testdata/iobench.c").CombinedOutput(); err != nil {
			iobenchErr = fmt.Errorf("gcc -static testdata/iobench.c: %v\n%s", err, out)
			return
		}
		iobenchImg, iobenchErr = buildBusyboxImageWith(filepath.Join(dir, "img"), map[string]string{"bin/iobench": bin})
	})
	if iobenchErr != nil {
		b.Skip(iobenchErr)
	}
	return iobenchImg
}

// BenchmarkVolumeIO compares I/O from the native tier on a volume (its own
// tmpfs, bind-mounted; harvested into the volume's vfs tree) with the same
// I/O on the sandbox's own overlay (over the workspace's tmpfs; harvested
// into the delta), interleaved per iteration so machine load hits both
// alike. Each iteration is one exec of iobench; reported per target:
//   - p50/p95/p99-ms: the whole exec (sync, the process, harvest), n;
//   - io-MB/s or io-ops/s: the p50 of the loop timed inside the process
//     (what a program sees of the kernel path);
//   - MB/s or ops/s: the same amount over the p50 of the whole exec (what
//     a caller sees, harvest included).
//
// The last case times the other direction: a resident write of the file
// (untimed) and then a native read, which pays for the sync bringing it in.
//
// go test -run '^$' -bench BenchmarkVolumeIO -benchtime 20x ./native/
func BenchmarkVolumeIO(b *testing.B) {
	const (
		fileMiB  = 64
		randOps  = 1000
		smallOps = 1000
	)
	img := requireIOBench(b)
	rt, _ := requireRuntime(b)
	sb := newBenchVFS(b, img)
	vol := vfs.New(vfs.Options{MaxBytes: 1 << 30})
	if err := sb.Mount("/vol", vol, vfs.MountOptions{Name: "volume bench"}); err != nil {
		b.Fatal(err)
	}
	if err := sb.MkdirAll("/own", 0o755); err != nil {
		b.Fatal(err)
	}
	ws, err := rt.Workspace(context.Background(), "volbench", img, sb, native.Limits{Memory: 4 << 30, Disk: 2 << 30})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	targets := []struct{ name, dir string }{{"vol", "/vol"}, {"ovl", "/own"}}
	exec := func(args ...string) (float64, time.Duration) {
		b.Helper()
		var out, errb strings.Builder
		t0 := time.Now()
		res, err := ws.Exec(context.Background(), native.Cmd{Path: args[0], Args: args, Stdout: &out, Stderr: &errb})
		wall := time.Since(t0)
		if err != nil || res.Status != 0 {
			b.Fatalf("%v: status %d err %v stderr %q", args, res.Status, err, errb.String())
		}
		secs, _ := strconv.ParseFloat(strings.TrimSpace(out.String()), 64)
		return secs, wall
	}
	for _, tg := range targets { // the file the read and random benchmarks use
		exec("/bin/iobench", "seqwrite", tg.dir+"/f", strconv.Itoa(fileMiB))
	}
	type op struct {
		name   string
		args   func(dir string) []string
		before func(dir string) // untimed, each iteration
		amount float64          // MB or ops per exec
		unit   string
	}
	mb := float64(fileMiB<<20) / 1e6
	ops := []op{
		{"seq-write-64MiB", func(d string) []string { return []string{"/bin/iobench", "seqwrite", d + "/f", strconv.Itoa(fileMiB)} }, nil, mb, "MB/s"},
		{"seq-read-64MiB", func(d string) []string { return []string{"/bin/iobench", "seqread", d + "/f"} }, nil, mb, "MB/s"},
		{"rand-write-4KiB", func(d string) []string { return []string{"/bin/iobench", "randwrite", d + "/f", strconv.Itoa(randOps)} }, nil, randOps, "ops/s"},
		{"rand-read-4KiB", func(d string) []string { return []string{"/bin/iobench", "randread", d + "/f", strconv.Itoa(randOps)} }, nil, randOps, "ops/s"},
		{"create-100B-files", func(d string) []string {
			return []string{"/bin/iobench", "create", d + "/small", strconv.Itoa(smallOps)}
		},
			func(d string) { exec("/bin/rm", "-rf", d+"/small"); exec("/bin/mkdir", d+"/small") }, smallOps, "ops/s"},
	}
	// The sync's direction: the resident side rewrote the file (untimed),
	// the native read pays for bringing it in.
	data := make([]byte, fileMiB<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	ops = append(ops, op{"resident-write-then-native-read-64MiB",
		func(d string) []string { return []string{"/bin/iobench", "seqread", d + "/r"} },
		func(d string) {
			data[0]++
			if err := sb.WriteFile(d+"/r", data, 0o644); err != nil {
				b.Fatal(err)
			}
		}, mb, "MB/s"})
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			walls, loops := map[string][]time.Duration{}, map[string][]float64{}
			for i := 0; i < b.N; i++ {
				for _, tg := range targets {
					if o.before != nil {
						o.before(tg.dir)
					}
					secs, wall := exec(o.args(tg.dir)...)
					walls[tg.name] = append(walls[tg.name], wall)
					loops[tg.name] = append(loops[tg.name], secs)
				}
			}
			for _, tg := range targets {
				d, l := walls[tg.name], loops[tg.name]
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				sort.Float64s(l)
				at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))]) / float64(time.Millisecond) }
				b.ReportMetric(at(0.50), tg.name+"-p50-ms")
				b.ReportMetric(at(0.95), tg.name+"-p95-ms")
				b.ReportMetric(at(0.99), tg.name+"-p99-ms")
				if p50 := l[(len(l)-1)/2]; p50 > 0 {
					b.ReportMetric(o.amount/p50, tg.name+"-io-"+o.unit)
				}
				b.ReportMetric(o.amount/(at(0.50)/1000), tg.name+"-"+o.unit)
			}
			b.ReportMetric(float64(b.N), "n")
		})
	}
}

// BenchmarkVolumeHarvest measures what a volume of n files costs every exec
// that did not touch it: the pre-exec sync (nothing: the tree is the one
// synced last) and the harvest (a stat per entry of its tmpfs), against the
// same exec of /bin/true with no volume.
//
// go test -run '^$' -bench BenchmarkVolumeHarvest ./native/
func BenchmarkVolumeHarvest(b *testing.B) {
	rt, img := requireRuntime(b)
	for _, n := range []int{0, 1000, 10000} {
		b.Run(fmt.Sprintf("files-%d", n), func(b *testing.B) {
			sb := newBenchVFS(b, img)
			if n > 0 {
				vol := vfs.New(vfs.Options{})
				for j := 0; j < 100; j++ {
					if err := vol.Mkdir(fmt.Sprintf("/d%d", j), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				for j := 0; j < n; j++ {
					if err := vol.WriteFile(fmt.Sprintf("/d%d/f%d", j%100, j), []byte("x"), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				if err := sb.Mount("/vol", vol, vfs.MountOptions{Name: "volume bench"}); err != nil {
					b.Fatal(err)
				}
			}
			ws, err := rt.Workspace(context.Background(), "volharvest", img, sb, native.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			cmd := native.Cmd{Path: "/bin/true"}
			if _, err := ws.Exec(context.Background(), cmd); err != nil {
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
}
