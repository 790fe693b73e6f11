package vfs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store/dir"
)

// The local directory store (package store/dir) satisfies BlobStore.
var _ BlobStore = (*dir.Store)(nil)

// TestPersistDirStore round-trips a delta through the real local store.
func TestPersistDirStore(t *testing.T) {
	ctx := context.Background()
	st, err := dir.Open(t.TempDir())
	must(t, err)
	defer st.Close()
	f := New(Options{Base: testBase()})
	must(t, f.MkdirAll("/x/y", 0o755))
	must(t, f.WriteFile("/x/y/big", make([]byte, 300000), 0o600))
	must(t, f.Remove("/etc/hosts"))
	ref, err := f.Persist(ctx, st)
	must(t, err)
	g, err := Load(ctx, Options{Base: testBase()}, st, ref)
	must(t, err)
	compareFS(t, f, g)
}

// BenchmarkPersist10MBDir persists a fresh 10 MB / 1,000-file delta into
// an empty local directory store (fsync on, as in production) per op.
func BenchmarkPersist10MBDir(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", sync), func(b *testing.B) {
			ctx := context.Background()
			var d []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f := delta10MB(b, int64(i))
				var opts []dir.Option
				if !sync {
					opts = append(opts, dir.WithoutSync())
				}
				st, err := dir.Open(b.TempDir(), opts...)
				must(b, err)
				b.StartTimer()
				t0 := time.Now()
				if _, err := f.Persist(ctx, st); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t0))
				b.StopTimer()
				st.Close()
			}
			reportPercentiles(b, d)
		})
	}
}
