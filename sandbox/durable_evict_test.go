package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/chunkcache"
	"github.com/warren-sandbox/warren/committer"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/store/dir"
	"github.com/warren-sandbox/warren/vfs"
	"github.com/warren-sandbox/warren/wlog"
)

// downBlobs is the real local store behind a switch: down, its reads
// fail (refuse) or block until their context ends (hang), as an S3
// endpoint that went away.
type downBlobs struct {
	*dir.Store
	refuse, hang atomic.Bool
}

func (s *downBlobs) fail(ctx context.Context) error {
	if s.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	if s.refuse.Load() {
		return errors.New("dial tcp 127.0.0.1:9000: connection refused")
	}
	return nil
}

func (s *downBlobs) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := s.fail(ctx); err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, key)
}

func (s *downBlobs) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := s.fail(ctx); err != nil {
		return nil, err
	}
	rc, err := s.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b := make([]byte, n)
	if _, err := rc.(io.ReaderAt).ReadAt(b, off); err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader(string(b))), nil
}

// TestDurable_EvictedReadStoreDown: a committed file's chunks leave
// memory; with the blob store down a script reading it gets EIO with the
// cause (refused at once, or the fetch timeout when the store hangs),
// inside its exec deadline, and the node keeps serving; when the store is
// back the same read works.
func TestDurable_EvictedReadStoreDown(t *testing.T) {
	c, err := chunkcache.Open(chunkcache.Options{Memory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	vfs.SetChunkCache(c)
	defer vfs.SetChunkCache(nil)
	vfs.SetFetchTimeout(500 * time.Millisecond)
	defer vfs.SetFetchTimeout(20 * time.Second)
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	blobs := &downBlobs{Store: p.blobs}
	l, err := wlog.Open(d+"/wlog", wlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m, err := sandbox.New(context.Background(), sandbox.Config{
		Blobs: blobs, Deltas: sandbox.VFSDeltas(blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: p.meta, TickInterval: 20 * time.Millisecond,
		Durable: &sandbox.Durable{Node: "node-a", Log: l, Commit: committer.Options{MaxDelay: time.Hour}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	svc := m.For("t")
	ctx := context.Background()
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "head -c 8000000 /dev/urandom > /big", Durability: api.DurabilityCommitted}); err != nil || res.Exit != 0 {
		t.Fatalf("write: %+v, %v", res, err)
	}
	if st := vfs.ReadChunkStats(); st.Released == 0 {
		t.Fatalf("no chunk left memory after the commit: %+v", st)
	}
	for _, tc := range []struct {
		name string
		set  *atomic.Bool
		want string
	}{
		{"refused", &blobs.refuse, "connection refused"},
		{"hangs", &blobs.hang, "did not answer within"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.set.Store(true)
			defer tc.set.Store(false)
			t0 := time.Now()
			before := vfs.ReadChunkStats().FetchErrors
			var out, errb bytes.Buffer
			_, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "cat /big > /dev/null; echo status=$?", Durability: api.DurabilityMemory, Timeout: api.Duration(10 * time.Second)}, &out, &errb)
			if err != nil {
				t.Fatal(err)
			}
			// The script sees EIO as GNU cat prints it; the cause is in
			// the error value (the file API's message, the vfs test).
			if !strings.Contains(out.String(), "status=1") || !strings.Contains(errb.String(), "cat: /big: Input/output error") {
				t.Fatalf("read with the store down: stdout %q, stderr %q; want status 1 and EIO", out.String(), errb.String())
			}
			if vfs.ReadChunkStats().FetchErrors == before {
				t.Fatal("no failed fetch counted")
			}
			// The file API carries the cause.
			_, err = svc.ReadFile(ctx, sb.ID, "/big", 0, 1<<20)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("file read with the store down: %v; want the cause %q", err, tc.want)
			}
			if d := time.Since(t0); d > 8*time.Second {
				t.Fatalf("the failed read took %v", d)
			}
		})
	}
	out, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "wc -c < /big"})
	if err != nil || out != "8000000\n" {
		t.Fatalf("after the store came back: %q, %v", out, err)
	}
}
