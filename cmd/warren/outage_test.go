package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

// TestE2E_ObjectStoreOutage: versitygw is stopped (SIGSTOP) mid-write for
// 30 s, the durability issue's figure (WARREN_OUTAGE_SECONDS=N changes
// it). Small writes keep being acknowledged at local (the write log); a large write and a file upload back-pressure with the documented
// errors (the shell's "write budget exhausted", HTTP 507 + Retry-After);
// when the store returns, commits resume, and after a SIGKILL of the
// server every acknowledged write is there.
func TestE2E_ObjectStoreOutage(t *testing.T) {
	outage := 30 * time.Second
	if s := os.Getenv("WARREN_OUTAGE_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("WARREN_OUTAGE_SECONDS=%q: want a positive number", s)
		}
		outage = time.Duration(n) * time.Second
	}
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	dir := t.TempDir()
	flags := []string{"--no-native", "--blobs", "s3://" + bucket + "/node", "--s3-endpoint", srv.Endpoint, "--s3-path-style",
		"--uncommitted-budget", "4MiB", "--budget-wait", "1s", "--commit-delay", "200ms", "--gc-interval", "0"}
	p := startServe(t, dir, flags...)
	key := p.adminKey(t)
	c, err := client.New(p.url, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := c.Create(ctx, api.CreateRequest{StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	appendLine := func() {
		t.Helper()
		res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo %d >> /log", acked+1), Durability: api.DurabilityLocal}, nil, nil)
		if err != nil || res.Exit != 0 || res.Durability != api.DurabilityLocal {
			t.Fatalf("append %d: %+v, %v", acked+1, res, err)
		}
		acked++
	}
	for range 5 {
		appendLine()
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			srv.Continue()
		}
	}()
	// Small writes: still local acks, from the log.
	for range 5 {
		appendLine()
	}
	var stderr bytes.Buffer
	res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: "head -c 8000000 /dev/urandom > /big; echo $?", Durability: api.DurabilityMemory}, nil, &stderr)
	if err != nil || !strings.Contains(stderr.String(), "warren: write budget exhausted (") {
		t.Fatalf("a large write during the outage: %+v, %v, stderr %q; want the budget error", res, err, stderr.String())
	}
	req, _ := http.NewRequest("PUT", p.url+"/v1/sandboxes/"+sb.ID+"/files?path=/up&durability=memory", strings.NewReader("up"))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInsufficientStorage || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a file upload over budget during the outage: %d, Retry-After %q; want 507 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	time.Sleep(time.Until(paused.Add(outage)))
	if err := srv.Continue(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	t0 := time.Now()
	for {
		res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: "rm -f /big; echo back > /back", Durability: api.DurabilityCommitted}, nil, nil)
		if err == nil && res.Durability == api.DurabilityCommitted {
			t.Logf("outage of %v: commits resumed %v after the store came back (generation %d)", outage, time.Since(t0).Round(time.Millisecond), res.Generation)
			break
		}
		if time.Since(t0) > 90*time.Second {
			t.Fatalf("commits did not resume within 90 s of the store's return: %+v, %v\n%s", res, err, p.logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
	appendLine()
	// SIGKILL, restart: every acknowledged line is there.
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p = startServe(t, dir, flags...)
	c, _ = client.New(p.url, key)
	out, st := sh(t, c, sb.ID, "cat /log")
	var want strings.Builder
	for i := 1; i <= acked; i++ {
		fmt.Fprintln(&want, i)
	}
	if st != 0 || out != want.String() {
		t.Fatalf("after the outage and a SIGKILL: %q, want the %d acknowledged lines", out, acked)
	}
	t.Logf("acked %d writes at local across the outage; acked-and-lost: 0", acked)
}
