// Package s3test runs a real S3 server for tests: versitygw
// (github.com/versity/versitygw, v1.8.0) with its posix backend on a
// temporary directory, on a loopback port, stopped at the test's cleanup.
// It also has a fault-injecting HTTP proxy to put in front of it (proxy.go).
//
// The binary is looked up on PATH, then in $(go env GOPATH)/bin. When it
// is missing the test is skipped with the install command as the reason,
// except in CI (CI set in the environment), where it fails: CI installs it
// (scripts/test.sh).
package s3test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/warren-sandbox/warren/store/s3"
)

// Install is the command that installs the versitygw this package expects.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Server is one running versitygw.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	Addr      string // 127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Root      string // the posix backend's directory (a bucket is a directory)

	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	buckets atomic.Int64
}

// Binary returns the versitygw path, or an error saying how to install it.
func Binary() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("versitygw not found on PATH or in GOPATH/bin; install it with: %s", Install)
}

// Start runs versitygw for the rest of tb; see the package doc for what
// happens when it is not installed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal(err)
		}
		tb.Skip(err.Error())
	}
	dir := tb.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	var lastErr error
	for range 3 { // a free port may be taken between picking and binding it
		s := &Server{AccessKey: "warrentestaccess", SecretKey: "warren-test-secret-key", Root: root}
		if lastErr = s.start(bin, dir); lastErr == nil {
			tb.Cleanup(s.stop)
			return s
		}
	}
	tb.Fatalf("versitygw: %v", lastErr)
	return nil
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (s *Server) start(bin, dir string) error {
	addr, err := freePort()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "versitygw.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--access", s.AccessKey, "--secret", s.SecretKey,
		"--port", addr, "--keep-alive", "--quiet", "posix", s.Root)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(done) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("exited before listening on %s (%v): %s", addr, werr, tail(log))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("not listening on %s after 15 s", addr)
		}
	}
	s.cmd, s.done, s.Addr, s.Endpoint = cmd, done, addr, "http://"+addr
	return nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

func (s *Server) stop() {
	s.cmd.Process.Signal(syscall.SIGCONT) // in case a test paused it
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// Pause stops the server's process (SIGSTOP): connections hang, as in an
// outage; Continue resumes it. Cleanup resumes a paused server.
func (s *Server) Pause() error    { return s.cmd.Process.Signal(syscall.SIGSTOP) }
func (s *Server) Continue() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Client returns a minio-go client for the server (to make buckets, look
// at raw objects).
func (s *Server) Client(tb testing.TB) *minio.Client {
	tb.Helper()
	c, err := minio.New(s.Addr, &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath, Region: "us-east-1",
	})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// NewBucket creates an empty bucket with a fresh name and returns the name.
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("bucket-%04d", s.buckets.Add(1))
	if err := s.Client(tb).MakeBucket(context.Background(), name, minio.MakeBucketOptions{}); err != nil {
		tb.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

// Config is an s3.Config for bucket on this server (path-style, the
// server's credentials).
func (s *Server) Config(bucket string) s3.Config {
	return s3.Config{
		Endpoint: s.Endpoint, Bucket: bucket, PathStyle: true, Region: "us-east-1",
		AccessKey: s.AccessKey, SecretKey: s.SecretKey,
	}
}

// NewStore opens a store on a fresh bucket, closed at cleanup.
func (s *Server) NewStore(tb testing.TB) *s3.Store {
	tb.Helper()
	return OpenStore(tb, s.Config(s.NewBucket(tb)))
}

// OpenStore opens cfg, closed at cleanup.
func OpenStore(tb testing.TB, cfg s3.Config) *s3.Store {
	tb.Helper()
	st, err := s3.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
