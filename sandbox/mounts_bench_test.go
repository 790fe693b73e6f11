package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/chunkcache"
	"github.com/warren-sandbox/warren/drive"
	driveboltmeta "github.com/warren-sandbox/warren/drive/boltmeta"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// BenchmarkMountIO compares resident I/O on the sandbox's own tree, on a
// volume and on a drive (bbolt metadata + store/dir, as a single node has
// them), each op one exec through the Manager:
//
//	go test -run '^$' -bench BenchmarkMountIO -benchtime 10x ./sandbox/
//
// seq-write writes 32 MiB of random bytes (head -c from /dev/urandom, the
// same cost in every tree), seq-read cats it to /dev/null, small-files
// creates 200 files of a few bytes and removes them. MB/s and files/s are
// from the p50. The drive reads through a chunk cache of the node's size.
func BenchmarkMountIO(b *testing.B) {
	ctx := context.Background()
	d := b.TempDir()
	p := openParts(b, d)
	dm, err := driveboltmeta.Open(d+"/drives.db", driveboltmeta.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	cache, err := chunkcache.Open(chunkcache.Options{Memory: chunkcache.DefaultMemory, Disk: chunkcache.DefaultDisk, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	reg := drive.NewRegistry(dm, p.blobs, drive.Options{Cache: cache, SpillDir: b.TempDir()})
	m, err := sandbox.New(ctx, sandbox.Config{
		Blobs: p.blobs, Deltas: sandbox.VFSDeltas(p.blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: p.meta, Drives: reg,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		m.Close(ctx)
		dm.Close()
		cache.Close()
		p.close()
	})
	svc := m.For("bench")
	if _, err := svc.(api.VolumeService).CreateVolume(ctx, api.VolumeCreate{Name: "vol", Size: 1 << 30}); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.(api.DriveService).CreateDrive(ctx, api.DriveCreate{Name: "drv"}); err != nil {
		b.Fatal(err)
	}
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: api.Duration(-1),
		Limits:  api.Limits{DiskBytes: 1 << 30, Timeout: api.Duration(time.Minute)},
		Volumes: []api.VolumeMount{{Name: "vol", Path: "/vol"}}, Drives: []api.DriveMount{{Drive: "drv", Path: "/drv"}}})
	if err != nil {
		b.Fatal(err)
	}
	exec := func(b *testing.B, script string) time.Duration {
		start := time.Now()
		res, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: script}, nil, nil)
		if err != nil || res.Exit != 0 {
			b.Fatalf("%s: %+v, %v", script, res, err)
		}
		return time.Since(start)
	}
	const size = 32 << 20
	const files = 200
	for _, tree := range []struct{ name, dir string }{{"own", "/own"}, {"volume", "/vol"}, {"drive", "/drv"}} {
		exec(b, "mkdir -p "+tree.dir+"/d")
		for _, op := range []struct {
			name   string
			script string
			per    func(p50 time.Duration) (float64, string)
		}{
			{"seq-write", fmt.Sprintf("head -c %d /dev/urandom > %s/f", size, tree.dir),
				func(p time.Duration) (float64, string) { return size / 1e6 / p.Seconds(), "MB/s" }},
			{"seq-read", fmt.Sprintf("cat %s/f > /dev/null", tree.dir),
				func(p time.Duration) (float64, string) { return size / 1e6 / p.Seconds(), "MB/s" }},
			{"small-files", fmt.Sprintf("cd %s/d && for i in $(seq %d); do echo $i > f$i; done && rm f*", tree.dir, files),
				func(p time.Duration) (float64, string) { return files / p.Seconds(), "files/s" }},
		} {
			b.Run(tree.name+"/"+op.name, func(b *testing.B) {
				ds := make([]time.Duration, 0, b.N)
				for range b.N {
					ds = append(ds, exec(b, op.script))
				}
				percentiles(b, ds) // sorts ds
				v, unit := op.per(ds[(len(ds)-1)/2])
				b.ReportMetric(v, unit)
			})
		}
	}
}
