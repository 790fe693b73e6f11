package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/s3"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in, bucket, prefix, err string
	}{
		{"s3://my-bucket", "my-bucket", "", ""},
		{"s3://my-bucket/", "my-bucket", "", ""},
		{"s3://my.bucket/warren/prod", "my.bucket", "warren/prod", ""},
		{"s3://my-bucket/warren/", "my-bucket", "warren", ""},
		{"https://my-bucket", "", "", "want s3://BUCKET"},
		{"s3://", "", "", "3 to 63 characters"},
		{"s3://ab", "", "", "3 to 63 characters"},
		{"s3://My_Bucket", "", "", "only a-z"},
		{"s3://-bucket", "", "", "only a-z"},
		{"s3://bucket/a//b", "", "", "empty segment"},
		{"s3://bucket/a b", "", "", "prefix"},
		{"s3://bucket/" + strings.Repeat("p", s3.MaxPrefixLen+1), "", "", "longer than"},
	} {
		b, p, err := s3.ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURL(%q): %v, want an error containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", tc.in, b, p, err, tc.bucket, tc.prefix)
		}
	}
}

// rawNames lists the object names in a bucket as the server has them.
func rawNames(t *testing.T, srv *s3test.Server, bucket string) []string {
	t.Helper()
	var names []string
	for o := range srv.Client(t).ListObjectsIter(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		names = append(names, o.Key)
	}
	return names
}

// TestLayout: keys become PREFIX/KEY! in the bucket; objects without the
// mark are not the store's and List skips them.
func TestLayout(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	cfg := srv.Config(bucket)
	cfg.Prefix = "node/one"
	s := s3test.OpenStore(t, cfg)
	ctx := context.Background()
	for _, k := range []string{"a", "a/b", "chunks/ab"} {
		if err := store.PutBytes(ctx, s, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.Client(t).PutObject(ctx, bucket, "node/one/foreign", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"node/one/a!", "node/one/a/b!", "node/one/chunks/ab!", "node/one/foreign"}
	if got := rawNames(t, srv, bucket); !slices.Equal(got, want) {
		t.Fatalf("objects in the bucket: %v, want %v", got, want)
	}
	var keys []string
	if err := s.List(ctx, "", func(k string, _ int64) error { keys = append(keys, k); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"a", "a/b", "chunks/ab"}) {
		t.Fatalf("list = %v", keys)
	}
	// A store without the prefix does not see them as its keys.
	other := s3test.OpenStore(t, srv.Config(bucket))
	if ok, err := other.Has(ctx, "a"); ok || err != nil {
		t.Fatalf("unprefixed store has %q: %v, %v", "a", ok, err)
	}
}

// TestMultipart: objects over PartSize go up in parts (S3's multipart
// ETag ends in -N) and read back whole; a failing body aborts the upload.
func TestMultipart(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	cfg := srv.Config(bucket)
	cfg.PartSize = s3.MinPartSize
	s := s3test.OpenStore(t, cfg)
	ctx := context.Background()
	for _, tc := range []struct {
		size  int
		parts string // ETag suffix
	}{
		{s3.MinPartSize - 1, ""},
		{s3.MinPartSize, ""},
		{s3.MinPartSize + 1, "-2"},
		{2*s3.MinPartSize + 7, "-3"},
	} {
		data := make([]byte, tc.size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		key := "obj"
		if err := s.Put(ctx, key, io.MultiReader(bytes.NewReader(data))); err != nil {
			t.Fatal(err)
		}
		got, err := store.ReadAll(ctx, s, key)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read %d, %v", tc.size, len(got), err)
		}
		info, err := srv.Client(t).StatObject(ctx, bucket, key+"!", minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.parts == "" && strings.Contains(info.ETag, "-") || tc.parts != "" && !strings.HasSuffix(info.ETag, tc.parts) {
			t.Fatalf("%d bytes: ETag %q, want parts %q", tc.size, info.ETag, tc.parts)
		}
	}
	errBody := errors.New("body broke")
	err := s.Put(ctx, "broken", io.MultiReader(bytes.NewReader(make([]byte, 2*s3.MinPartSize)), errorReader{errBody}))
	if !errors.Is(err, errBody) {
		t.Fatalf("put with a failing body: %v", err)
	}
	res, err := (minio.Core{Client: srv.Client(t)}).ListMultipartUploads(ctx, bucket, "", "", "", "", 100)
	if err != nil || len(res.Uploads) != 0 {
		t.Fatalf("uploads left after a failed put: %+v, %v", res.Uploads, err)
	}
}

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// TestMissingBucket: a bucket gone under a running store is an error of
// its own, never "object not found" (which callers may act on).
func TestMissingBucket(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	s := s3test.OpenStore(t, srv.Config(bucket))
	if err := os.RemoveAll(filepath.Join(srv.Root, bucket)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(context.Background(), "k")
	if !errors.Is(err, s3.ErrNoSuchBucket) || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get in a removed bucket: %v, want ErrNoSuchBucket and not ErrNotFound", err)
	}
}
