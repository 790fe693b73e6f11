package node_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

func openS3(t *testing.T, srv *s3test.Server, url string) node.S3Options {
	return node.S3Options{URL: url, Endpoint: srv.Endpoint, PathStyle: true, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}
}

func openNode(t *testing.T, dir string, o node.S3Options) *node.Node {
	t.Helper()
	blobs, closeBlobs, err := node.OpenS3(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(context.Background(), node.Options{Dir: dir, Blobs: blobs})
	if err != nil {
		closeBlobs()
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(context.Background()); closeBlobs() })
	return n
}

func exec(t *testing.T, svc api.Service, id, script string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	res, err := svc.Exec(context.Background(), id, api.ExecRequest{Script: script}, &stdout, &stderr)
	if err != nil || res.Exit != 0 {
		t.Fatalf("exec %q: %+v, %v; stderr %q", script, res, err, stderr.String())
	}
	return stdout.String()
}

// TestS3_ResumeElsewhere: a node whose blobs are in S3 (a real versitygw)
// creates a sandbox, writes files and shell state, hibernates and stops.
// A second node with a fresh data directory (no blobs, no image cache; the
// metadata file is copied, as bbolt metadata is per node until PostgreSQL
// lands) resumes it from the bucket alone.
func TestS3_ResumeElsewhere(t *testing.T) {
	srv := s3test.Start(t)
	o := openS3(t, srv, "s3://"+srv.NewBucket(t)+"/warren")
	ctx := context.Background()

	d1 := t.TempDir()
	n1 := openNode(t, d1, o)
	svc := n1.Manager.For("tenant1")
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, svc, sb.ID, `echo hello from node one > /greeting; mkdir -p /work/deep; seq 1 5000 > /work/deep/numbers; export COLOR=teal`)
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if err := n1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d1, "blobs")); !os.IsNotExist(err) {
		t.Fatalf("a node on S3 made a local blob directory: %v", err)
	}
	n := 0
	var stateRefs int
	if err := n1.Blobs.List(ctx, "", func(k string, _ int64) error {
		n++
		if strings.HasPrefix(k, "staterefs/") {
			stateRefs++
		}
		return nil
	}); err != nil || stateRefs == 0 {
		t.Fatalf("bucket holds %d objects, %d StateRefs (%v); want the hibernated sandbox", n, stateRefs, err)
	}

	d2 := t.TempDir()
	meta, err := os.ReadFile(filepath.Join(d1, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d2, "meta.db"), meta, 0o600); err != nil {
		t.Fatal(err)
	}
	n2 := openNode(t, d2, o)
	svc2 := n2.Manager.For("tenant1")
	got, err := svc2.Get(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sandbox %s on the second node: state %s", got.ID, got.State)
	out := exec(t, svc2, sb.ID, `cat /greeting; wc -l < /work/deep/numbers; tail -n1 /work/deep/numbers; echo "$COLOR"`)
	if want := "hello from node one\n5000\n5000\nteal\n"; out != want {
		t.Fatalf("resumed sandbox printed %q, want %q", out, want)
	}
	b, err := svc2.ReadFile(ctx, sb.ID, "/greeting", 0, 0)
	if err != nil || string(b) != "hello from node one\n" {
		t.Fatalf("read file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(d2, "blobs")); !os.IsNotExist(err) {
		t.Fatalf("second node made a local blob directory: %v", err)
	}
}

// TestOpenS3_Errors: bad settings fail at start with an error naming the
// problem.
func TestOpenS3_Errors(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	for _, tc := range []struct {
		name string
		o    node.S3Options
		want string
	}{
		{"not an s3 URL", openS3(t, srv, "http://"+bucket), "want s3://BUCKET"},
		{"bad bucket name", openS3(t, srv, "s3://Bad_Bucket"), "bucket name"},
		{"bad prefix", openS3(t, srv, "s3://"+bucket+"/a//b"), "prefix"},
		{"missing bucket", openS3(t, srv, "s3://no-such-bucket"), "does not exist"},
		{"bad endpoint", node.S3Options{URL: "s3://" + bucket, Endpoint: "ftp://x"}, "s3 endpoint"},
		{"wrong secret", node.S3Options{URL: "s3://" + bucket, Endpoint: srv.Endpoint, PathStyle: true, AccessKey: srv.AccessKey, SecretKey: "wrong-secret"}, "403 AccessDenied"},
		{"half the credentials", node.S3Options{URL: "s3://" + bucket, Endpoint: srv.Endpoint, AccessKey: "x"}, "AWS_SECRET_ACCESS_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := node.OpenS3(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("OpenS3: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
