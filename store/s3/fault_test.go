package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/retry"
	"github.com/warren-sandbox/warren/store/s3/s3test"
	"github.com/warren-sandbox/warren/store/storetest"
)

// faultyStore opens a store on a fresh bucket through a proxy with faults,
// wrapped in retries; retries counts them.
func faultyStore(t *testing.T, srv *s3test.Server, f s3test.Faults, retries *atomic.Int64) (store.Store, *s3test.Proxy) {
	t.Helper()
	px := s3test.NewProxy(t, srv.Endpoint, s3test.Faults{})
	cfg := srv.Config(srv.NewBucket(t))
	cfg.Endpoint = px.URL
	cfg.PartSize = 5 << 20
	p := retry.Policy{
		Attempts: 8, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond,
		OnRetry: func(op, key string, attempt int, err error, wait time.Duration) { retries.Add(1) },
	}
	cfg.PartRetry = &p
	st := s3test.OpenStore(t, cfg)
	px.SetFaults(f) // after New: its bucket check is not retried
	return retry.Wrap(st, p), px
}

// TestStore_Faults runs the conformance suite through the retry wrapper and
// a proxy answering 5xx and dropping connections before and after the
// server did the work. (Bodies cut mid-read are resumed only for
// content-addressed keys; TestWorkload_Faults covers them.)
func TestStore_Faults(t *testing.T) {
	srv := s3test.Start(t)
	var retries atomic.Int64
	var proxies []*s3test.Proxy
	f := s3test.Faults{Seed: 1, Error5xx: 0.04, DropBefore: 0.02, DropAfter: 0.02, LatencyRate: 0.1, Latency: 5 * time.Millisecond}
	storetest.RunSuite(t, func(t *testing.T) store.Store {
		s, px := faultyStore(t, srv, f, &retries)
		proxies = append(proxies, px)
		f.Seed++
		return s
	})
	reqs, inj := map[string]int{}, map[string]int{}
	for _, px := range proxies {
		r, i := px.Counts()
		for k, v := range r {
			reqs[k] += v
		}
		for k, v := range i {
			inj[k] += v
		}
	}
	t.Logf("suite through faults: requests %v; injected %v; retries %d", reqs, inj, retries.Load())
	if inj["5xx"] == 0 || inj["drop-before"] == 0 || inj["drop-after"] == 0 || retries.Load() == 0 {
		t.Fatalf("faults were not exercised: injected %v, retries %d", inj, retries.Load())
	}
}

func sha(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// TestWorkload_Faults puts and reads back content-addressed objects (some
// multipart) concurrently through every kind of fault, including bodies
// cut mid-read, and checks every byte.
func TestWorkload_Faults(t *testing.T) {
	srv := s3test.Start(t)
	var retries atomic.Int64
	s, px := faultyStore(t, srv, s3test.Faults{Seed: 7, Error5xx: 0.05, DropBefore: 0.03, DropAfter: 0.03, Truncate: 0.1,
		LatencyRate: 0.2, Latency: 10 * time.Millisecond}, &retries)
	v := store.WithSHA256(s)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	gen := rand.NewChaCha8([32]byte{7})
	var objs [][]byte
	for i := range 60 {
		size := rng.IntN(256 << 10)
		if i%30 == 0 {
			size = 11<<20 + rng.IntN(1<<20) // three 5 MiB parts
		}
		b := make([]byte, size)
		gen.Read(b)
		objs = append(objs, b)
	}
	key := func(b []byte) string { return "packs/" + sha(b) }
	var wg sync.WaitGroup
	errc := make(chan error, len(objs))
	sem := make(chan struct{}, 6)
	for _, b := range objs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			// A stream, not a seeker: the wrapper replays its copy.
			if err := v.Put(ctx, key(b), io.MultiReader(bytes.NewReader(b))); err != nil {
				errc <- err
				return
			}
			got, err := store.ReadAll(ctx, v, key(b))
			if err != nil {
				errc <- err
				return
			}
			if !bytes.Equal(got, b) {
				errc <- fmt.Errorf("%s: read %d bytes, not the %d put", key(b), len(got), len(b))
				return
			}
			if len(b) > 100 {
				rc, err := store.GetRange(ctx, s, key(b), 50, int64(len(b)-100))
				if err != nil {
					errc <- err
					return
				}
				got, err = io.ReadAll(rc)
				rc.Close()
				if err != nil || !bytes.Equal(got, b[50:len(b)-50]) {
					errc <- fmt.Errorf("%s: range read %d bytes, %v", key(b), len(got), err)
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	n := 0
	if err := s.List(ctx, "packs/", func(string, int64) error { n++; return nil }); err != nil || n != len(objs) {
		t.Fatalf("list: %d objects, %v; want %d", n, err, len(objs))
	}
	reqs, inj := px.Counts()
	t.Logf("workload of %d objects through faults: requests %v; injected %v; retries %d", len(objs), reqs, inj, retries.Load())
	if inj["truncate"] == 0 || inj["5xx"] == 0 || retries.Load() == 0 {
		t.Fatalf("faults were not exercised: injected %v, retries %d", inj, retries.Load())
	}
}
