package image

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	storedir "github.com/warren-sandbox/warren/store/dir"
	"github.com/warren-sandbox/warren/vfs"
)

// The figures of issue 5 (run as root, erofs-utils installed):
//
//	go test ./image -run '^$' -bench . -benchtime 5x
//
// The tree is $WARREN_BENCH_TREE, else a copy of $(go env GOROOT)/src
// made once per run under the test's temp dir.

var (
	benchTreeOnce sync.Once
	benchTree     string
	benchTreeErr  error
)

func benchSource(b *testing.B) string {
	b.Helper()
	if d := os.Getenv("WARREN_BENCH_TREE"); d != "" {
		return d
	}
	benchTreeOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			benchTreeErr = err
			return
		}
		dir, err := os.MkdirTemp("", "warren-bench-tree-")
		if err != nil {
			benchTreeErr = err
			return
		}
		benchTree = filepath.Join(dir, "src")
		src := filepath.Join(strings.TrimSpace(string(out)), "src")
		if out, err := exec.Command("cp", "-a", src, benchTree).CombinedOutput(); err != nil {
			benchTreeErr = &exec.ExitError{Stderr: out}
		}
	})
	if benchTreeErr != nil {
		b.Fatalf("cannot prepare the bench tree: %v", benchTreeErr)
	}
	return benchTree
}

// TestMain removes the bench tree copy, if a benchmark made one.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchTree != "" {
		os.RemoveAll(filepath.Dir(benchTree))
	}
	os.Exit(code)
}

// latencies collects one duration per op and reports p50/p95/p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) float64 { return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), prefix+"p50-ms")
	b.ReportMetric(q(0.95), prefix+"p95-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
	b.ReportMetric(float64(len(s)), prefix+"n")
}

// BenchmarkBuild compares this package's builder with mkfs.erofs on the
// same tree in the same run, alternating per iteration.
func BenchmarkBuild(b *testing.B) {
	if _, err := exec.LookPath("mkfs.erofs"); err != nil {
		b.Skip("mkfs.erofs not installed (erofs-utils)")
	}
	src := benchSource(b)
	tmp := b.TempDir()
	ctx := context.Background()
	var ours, theirs latencies
	var ourSize, theirSize int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(tmp, "ours.erofs")
		start := time.Now()
		t := newTree(Limits{})
		if err := t.addHostDir(ctx, src); err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		w, err := writeTree(ctx, t, f, buildEpoch, tmp, nil)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(start))
		ourSize = w.Size

		theirsOut := filepath.Join(tmp, "mkfs.erofs")
		os.Remove(theirsOut)
		start = time.Now()
		if out, err := exec.Command("mkfs.erofs", "--quiet", theirsOut, src).CombinedOutput(); err != nil {
			b.Fatalf("mkfs.erofs: %v\n%s", err, out)
		}
		theirs = append(theirs, time.Since(start))
		fi, _ := os.Stat(theirsOut)
		theirSize = fi.Size()
		os.Remove(out)
	}
	b.StopTimer()
	ours.report(b, "warren-")
	theirs.report(b, "mkfs-")
	sort.Slice(ours, func(i, j int) bool { return ours[i] < ours[j] })
	sort.Slice(theirs, func(i, j int) bool { return theirs[i] < theirs[j] })
	b.ReportMetric(float64(ours[len(ours)/2])/float64(theirs[len(theirs)/2]), "ratio-p50")
	b.ReportMetric(float64(ourSize)/1e6, "warren-MB")
	b.ReportMetric(float64(theirSize)/1e6, "mkfs-MB")
}

// benchImage builds the bench tree once into a store/dir catalog.
func benchImage(b *testing.B) (*Catalog, Manifest) {
	b.Helper()
	src := benchSource(b)
	st, err := storedir.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	c, err := NewCatalog(st, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	m, err := c.BuildSource(context.Background(), src, BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return c, m
}

// BenchmarkOpen measures mapping and opening an image (target <= 1 ms)
// and reports the bytes go-erofs read to open it and to read one file.
func BenchmarkOpen(b *testing.B) {
	c, m := benchImage(b)
	p, ok := c.localPath(m.Hex())
	if !ok {
		b.Fatal("no local path")
	}
	var lat latencies
	var openBytes, oneFileBytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		im, err := OpenFile(p)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		_, openBytes = im.ReadStats()
		if _, err := fs.ReadFile(im.FS(), "net/http/server.go"); err != nil {
			b.Fatal(err)
		}
		_, n := im.ReadStats()
		oneFileBytes = n - openBytes
		im.Close()
	}
	b.StopTimer()
	lat.report(b, "open-")
	b.ReportMetric(float64(openBytes), "open-bytes")
	b.ReportMetric(float64(oneFileBytes), "read-server.go-bytes")
	b.ReportMetric(float64(m.Size)/1e6, "image-MB")
}

// BenchmarkReadAll reads every regular file of the image through this
// package's fs.FS and through a kernel mount of the same file (both warm).
func BenchmarkReadAll(b *testing.B) {
	c, m := benchImage(b)
	im, err := c.Open(context.Background(), m)
	if err != nil {
		b.Fatal(err)
	}
	mnt := kernelMount(b, im.Path)
	buf := make([]byte, 256<<10)
	readFS := func(fsys fs.FS) (int64, int) {
		var total int64
		files := 0
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			f, err := fsys.Open(p)
			if err != nil {
				return err
			}
			n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
			f.Close()
			total += n
			files++
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		return total, files
	}
	var paths []string
	must(&testing.T{}, fs.WalkDir(im.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, "/"+p)
		}
		return err
	}))
	var goLat, kLat, vLat latencies
	var bytes int64
	var files int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		bytes, files = readFS(im.FS())
		goLat = append(goLat, time.Since(start))

		// Through a fresh vfs over the image, as a sandbox sees it.
		start = time.Now()
		v := vfs.New(vfs.Options{Base: im.FS()})
		var vb int64
		for _, p := range paths {
			data, err := v.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			vb += int64(len(data))
		}
		vLat = append(vLat, time.Since(start))
		if vb != bytes {
			b.Fatalf("vfs read %d bytes, go-erofs %d", vb, bytes)
		}

		start = time.Now()
		kb, _ := readFS(os.DirFS(mnt))
		kLat = append(kLat, time.Since(start))
		if kb != bytes {
			b.Fatalf("go-erofs read %d bytes, kernel %d", bytes, kb)
		}
	}
	b.StopTimer()
	goLat.report(b, "goerofs-")
	vLat.report(b, "vfs-")
	kLat.report(b, "kernel-")
	b.ReportMetric(float64(bytes)/1e6, "MB")
	b.ReportMetric(float64(files), "files")
}
