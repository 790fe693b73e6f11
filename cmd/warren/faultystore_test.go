package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

// TestE2E_FaultyStore runs `warren serve` on a real versitygw through a
// proxy that answers 5xx, drops connections (before and after the server
// did the work), cuts GET bodies and adds latency: committed writes and a
// hibernate in one serve, then a cold resume in a second serve (its own
// data dir, the same bucket and PostgreSQL), each through the faults.
// Every write acked at committed must read back.
func TestE2E_FaultyStore(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	// Cut GET bodies included: store/retry resumes content-addressed
	// objects and reads small mutable ones (tags/default) again whole
	// (it once reported a cut tag as corrupt). The proxy draws its faults
	// from a source seeded once, here.
	px := s3test.NewProxy(t, srv.Endpoint, s3test.Faults{Seed: uint64(time.Now().UnixNano())})
	faults := s3test.Faults{Error5xx: 0.05, DropBefore: 0.02, DropAfter: 0.02, Truncate: 0.03,
		LatencyRate: 0.2, Latency: 20 * time.Millisecond}
	flags := []string{"--no-native", "--commit-delay", "50ms", "--meta", pgtest.New(t), "--gc-interval", "0",
		"--blobs", "s3://" + bucket + "/node", "--s3-endpoint", px.URL, "--s3-path-style"}
	ctx := context.Background()
	// Serve's start-up bucket check is not retried (a store opens or
	// says why not): the faults begin once it is up.
	p1 := startServe(t, t.TempDir(), flags...)
	px.SetFaults(faults)
	key := p1.adminKey(t)
	c1, err := client.New(p1.url, key)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := c1.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	run := func(c *client.Client, script string) string {
		t.Helper()
		var out, errb bytes.Buffer
		res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: script, Durability: api.DurabilityCommitted}, &out, &errb)
		if err != nil || res.Exit != 0 || (res.Durability != api.DurabilityCommitted) {
			t.Fatalf("%q: %+v, %v\nstderr: %s", script, res, err, errb.String())
		}
		return out.String()
	}
	// Commits of small appends, of files uploaded, and of a few MiB of
	// random data (several packs), each acked only once in the bucket.
	run(c1, "mkdir /d")
	const n = 30
	for i := 1; i <= n; i++ {
		run(c1, fmt.Sprintf("echo %d >> /d/log", i))
		if i%5 == 0 {
			if err := c1.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: fmt.Sprintf("/d/up%d", i),
				Data: strings.NewReader(strings.Repeat(fmt.Sprintf("upload %d\n", i), 1000)), Durability: api.DurabilityCommitted}); err != nil {
				t.Fatalf("upload %d: %v", i, err)
			}
		}
		if i%10 == 0 {
			run(c1, fmt.Sprintf("head -c %d /dev/urandom > /d/rand%d", 3<<20, i))
		}
	}
	const sums = "cd /d && sha256sum * && wc -l < log"
	want := run(c1, sums)
	if !strings.HasSuffix(want, fmt.Sprintf("\n%d\n", n)) {
		t.Fatalf("the log does not hold %d lines:\n%s", n, want)
	}
	if _, err := c1.Hibernate(ctx, sb.ID); err != nil {
		t.Fatalf("hibernate through the faults: %v", err)
	}
	writeReq, writeInj := px.Counts()
	px.SetFaults(s3test.Faults{})
	p1.stop(t)

	p2 := startServe(t, t.TempDir(), flags...)
	// The resume is a few dozen GETs: heavier faults so that it meets
	// some, still few enough that six tries of a request do not all fail.
	px.SetFaults(s3test.Faults{Error5xx: 0.08, DropBefore: 0.03, DropAfter: 0.03, Truncate: 0.06,
		LatencyRate: 0.3, Latency: 20 * time.Millisecond})
	c2, err := client.New(p2.url, key)
	if err != nil {
		t.Fatal(err)
	}
	before, beforeInj := px.Counts()
	got := run(c2, sums) // the cold resume: the head, then every chunk read
	after, afterInj := px.Counts()
	if got != want {
		t.Fatalf("cold resume in a second serve through the faults:\n%s\nwant:\n%s", got, want)
	}
	resumeInj := map[string]int{}
	for k, v := range afterInj {
		resumeInj[k] = v - beforeInj[k]
	}
	t.Logf("faulty store: writes, commits and hibernate: requests %v, injected %v; cold resume in the second serve: GET %d, PUT %d, injected %v; %d committed writes, acked-and-lost: 0",
		writeReq, writeInj, after["GET"]-before["GET"], after["PUT"]-before["PUT"], resumeInj, n+n/5+n/10)
	if writeInj["5xx"]+writeInj["drop-before"]+writeInj["drop-after"] == 0 || after["GET"] == before["GET"] {
		t.Fatalf("the faults were not exercised: injected %v while writing, %d GETs in the resume", writeInj, after["GET"]-before["GET"])
	}
	p2.stop(t)
}
