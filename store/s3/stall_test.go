package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/retry"
	"github.com/warren-sandbox/warren/store/s3"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

// TestStalledServer: with versitygw stopped (SIGSTOP), requests and a
// download in progress fail after IdleTimeout with a transient timeout
// instead of hanging; through store/retry an operation started during the
// stall completes once the server continues.
func TestStalledServer(t *testing.T) {
	srv := s3test.Start(t)
	cfg := srv.Config(srv.NewBucket(t))
	ctx := context.Background()
	big := make([]byte, 32<<20) // more than the socket buffers hold
	// Put with the default timeout: storing 32 MiB may keep this loaded
	// machine's server silent for longer than the short one below.
	if err := store.PutBytes(ctx, s3test.OpenStore(t, cfg), "big", big); err != nil {
		t.Fatal(err)
	}
	cfg.IdleTimeout = 300 * time.Millisecond
	s := s3test.OpenStore(t, cfg)
	rc, err := s.Get(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Continue()
	check := func(what string, err error, t0 time.Time) {
		t.Helper()
		var te *s3.TransportError
		if !errors.As(err, &te) || !errors.Is(err, os.ErrDeadlineExceeded) || !retry.Transient(err) {
			t.Fatalf("%s on a stalled server: %v, want a transient timeout", what, err)
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Fatalf("%s took %v to fail", what, d)
		}
	}
	t0 := time.Now()
	_, err = io.Copy(io.Discard, rc)
	check("download", err, t0)
	t0 = time.Now()
	_, err = s.Has(ctx, "big")
	check("has", err, t0)
	t0 = time.Now()
	check("put", store.PutBytes(ctx, s, "small", []byte("x")), t0)

	// A retried put started during the stall lands after it.
	time.AfterFunc(time.Second, func() { srv.Continue() })
	w := retry.Wrap(s, retry.Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: 500 * time.Millisecond, MaxElapsed: 20 * time.Second, Attempts: 20})
	if err := store.PutBytes(ctx, w, "after", []byte("stall")); err != nil {
		t.Fatalf("retried put across a 1 s stall: %v", err)
	}
	if b, err := store.ReadAll(ctx, s, "after"); err != nil || !bytes.Equal(b, []byte("stall")) {
		t.Fatalf("read back %q, %v", b, err)
	}
}
