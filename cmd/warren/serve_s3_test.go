package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

// TestE2E_ServeS3: `warren serve --blobs s3://...` against a real
// versitygw keeps no local blobs; after SIGTERM a serve on a second data
// directory (only meta.db copied: metadata is per node until PostgreSQL)
// resumes the sandbox from the bucket.
func TestE2E_ServeS3(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	flags := []string{"--no-native", "--blobs", "s3://" + bucket + "/node", "--s3-endpoint", srv.Endpoint, "--s3-path-style"}
	ctx := context.Background()

	d1 := t.TempDir()
	p := startServe(t, d1, flags...)
	admin := p.adminKey(t)
	c, err := client.New(p.url, admin)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := c.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/work/in.txt", Data: strings.NewReader("payload")}); err != nil {
		t.Fatal(err)
	}
	sh(t, c, sb.ID, "cd /work; tr a-z A-Z < in.txt > out.txt")
	p.stop(t)
	if _, err := os.Stat(filepath.Join(d1, "blobs")); !os.IsNotExist(err) {
		t.Fatalf("serve on S3 made a local blob directory: %v", err)
	}
	objs, err := os.ReadDir(filepath.Join(srv.Root, bucket, "node", "staterefs"))
	if err != nil || len(objs) == 0 {
		t.Fatalf("no StateRefs in the bucket after hibernating: %v", err)
	}

	d2 := t.TempDir()
	meta, err := os.ReadFile(filepath.Join(d1, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d2, "meta.db"), meta, 0o600)
	os.WriteFile(filepath.Join(d2, "admin.key"), []byte(admin+"\n"), 0o600)
	p2 := startServe(t, d2, flags...)
	c2, _ := client.New(p2.url, admin)
	if out, st := sh(t, c2, sb.ID, "cat /work/out.txt"); out != "PAYLOAD" || st != 0 {
		t.Fatalf("resumed on the second serve: %q, status %d", out, st)
	}
	p2.stop(t)
}

// TestServe_S3FlagErrors: S3 settings that cannot work stop serve at start
// with an error naming the problem.
func TestServe_S3FlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no endpoint", []string{"--blobs", "s3://bucket-a"}, "needs --s3-endpoint"},
		{"not s3", []string{"--blobs", "gs://bucket-a", "--s3-endpoint", "http://127.0.0.1:1"}, "want s3://BUCKET"},
		{"bad endpoint", []string{"--blobs", "s3://bucket-a", "--s3-endpoint", "127.0.0.1:7070"}, "s3 endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--no-native", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
			out, err := exec.Command(warrenBinary(t), args...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("serve %v: %v\n%s\nwant an error containing %q", tc.args, err, out, tc.want)
			}
		})
	}
}
