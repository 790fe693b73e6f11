package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

// beyondRAM sizes one run of TestE2E_BeyondRAM.
type beyondRAM struct {
	total      int64  // bytes written (random, overwrites, zeros, small files)
	cache      string // --chunk-cache-memory
	cacheDisk  string // --chunk-cache-disk
	budget     string // --uncommitted-budget
	memLimit   string // --memory-limit (GOMEMLIMIT): what a node in a container of maxRSS sets
	maxRSS     int64  // bound on the server's peak RSS
	smallFiles int
}

// beyondRAMSize: the figure (2 GiB through a 256 MiB cache and a
// 64 MiB budget, peak RSS under 600 MiB) with WARREN_BEYONDRAM=full (a
// step of scripts/test.sh, outside -race: it moves 2 GiB through versitygw
// three times); otherwise a slice with the same shape and every bound
// scaled down (the server binary is never built with -race; the slice
// keeps the package's CI time).
func beyondRAMSize(t *testing.T) beyondRAM {
	switch v := os.Getenv("WARREN_BEYONDRAM"); v {
	case "full":
		return beyondRAM{total: 2 << 30, cache: "256MiB", cacheDisk: "512MiB", budget: "64MiB", memLimit: "400MiB", maxRSS: 600 << 20, smallFiles: 10000}
	case "":
		return beyondRAM{total: 384 << 20, cache: "32MiB", cacheDisk: "64MiB", budget: "16MiB", memLimit: "180MiB", maxRSS: 256 << 20, smallFiles: 10000}
	default:
		t.Fatalf("WARREN_BEYONDRAM=%q: want full or nothing", v)
	}
	return beyondRAM{}
}

// peakRSS reads a process's peak resident set (VmHWM) from /proc.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}

// TestE2E_BeyondRAM: a sandbox on a node whose chunk cache and
// uncommitted budget are a fraction of its data writes random data,
// overwrites, zeros and 10,000 small files, and reads them back (sha256)
// while they are beyond the node's memory: right after writing, after a
// hibernate, and after a SIGKILL of the first server, in a second `warren
// serve` with its own data directory on the same versitygw and
// PostgreSQL. The servers' peak RSS (/proc VmHWM) stays under the bound,
// which is below the data's size.
func TestE2E_BeyondRAM(t *testing.T) {
	sz := beyondRAMSize(t)
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	meta := pgtest.New(t)
	flags := []string{"--no-native", "--meta", meta, "--blobs", "s3://" + bucket + "/node", "--s3-endpoint", srv.Endpoint, "--s3-path-style",
		"--chunk-cache-memory", sz.cache, "--chunk-cache-disk", sz.cacheDisk, "--uncommitted-budget", sz.budget,
		"--memory-limit", sz.memLimit, "--shed-above", "off", "--gc-interval", "0", "--standby-after", "1h"}
	p1 := startServe(t, t.TempDir(), flags...)
	pid := p1.cmd.Process.Pid // the server run talks to, for its peak RSS
	defer func() {
		if p1 != nil {
			p1.cmd.Process.Kill()
		}
	}()
	key := p1.adminKey(t)
	c1, err := client.New(p1.url, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := c1.Create(ctx, api.CreateRequest{StandbyAfter: -1, Limits: api.Limits{DiskBytes: 2 * sz.total}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(c *client.Client, what, script string) string {
		t.Helper()
		var out, errb bytes.Buffer
		t0 := time.Now()
		res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: script, Durability: api.DurabilityCommitted, Timeout: api.Duration(10 * time.Minute)}, &out, &errb)
		if err != nil || res.Exit != 0 {
			t.Fatalf("%s: %+v, %v\nstderr: %s", what, res, err, errb.String())
		}
		t.Logf("%s: %v (peak RSS so far %d MiB)", what, time.Since(t0).Round(time.Millisecond), peakRSS(t, pid)>>20)
		return out.String()
	}
	const mib = 1 << 20
	zeros := sz.total / 4 / mib * mib
	over := sz.total / 32 / mib // MiB per overwrite, two of them
	small := int64(sz.smallFiles) * 4096
	random := (sz.total - zeros - 2*over*mib - small) / mib * mib
	written := random + zeros + 2*over*mib + small
	streamed := strings.Fields(run(c1, "random", fmt.Sprintf("mkdir /d && head -c %d /dev/urandom | tee /d/rand | sha256sum", random)))[0]
	if got := strings.Fields(run(c1, "read back random", "sha256sum < /d/rand"))[0]; got != streamed {
		t.Fatalf("the random file reads back as %s, was written as %s", got, streamed)
	}
	run(c1, "zeros", fmt.Sprintf("head -c %d /dev/zero > /d/zeros", zeros))
	// Two overwrites of the random file: in place at its start (<> does
	// not truncate), and in its middle by splicing (the resident tier has
	// no dd; the unchanged parts dedupe against the stored chunks); and a
	// byte in place at the start of the zeros.
	mid := random / 2
	run(c1, "overwrites", fmt.Sprintf("head -c %d /dev/urandom 1<> /d/rand && "+
		"{ head -c %d /d/rand; head -c %d /dev/urandom; tail -c +%d /d/rand; } > /d/rand.new && mv /d/rand.new /d/rand && "+
		"printf x 1<> /d/zeros", over*mib, mid, over*mib, mid+over*mib+1))
	run(c1, "small files", fmt.Sprintf("mkdir /d/small && i=0 && while [ $i -lt %d ]; do head -c 4096 /dev/urandom > /d/small/$i; i=$((i+1)); done", sz.smallFiles))
	const sums = "cd /d && sha256sum rand zeros && cat small/* | sha256sum && ls small | wc -l && wc -c < rand && wc -c < zeros"
	want := run(c1, "hashes", sums)
	if !strings.Contains(want, fmt.Sprintf("\n%d\n%d\n%d\n", sz.smallFiles, random, zeros)) {
		t.Fatalf("the files are not all there:\n%s", want)
	}
	if _, err := c1.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if got := run(c1, "hashes after hibernate", sums); got != want {
		t.Fatalf("after hibernate:\n%s\nwant:\n%s", got, want)
	}
	if n := metric(t, p1.url, "warren_chunks_released_total"); n == 0 {
		t.Errorf("/metrics: warren_chunks_released_total is 0 after %d MiB committed through a %s cache", written/mib, sz.cache)
	}
	run(c1, "marker", "echo before-kill > /d/marker")
	rss1 := peakRSS(t, p1.cmd.Process.Pid)
	p1.cmd.Process.Signal(syscall.SIGKILL)
	<-p1.done
	p1 = nil

	p2 := startServe(t, t.TempDir(), flags...)
	pid = p2.cmd.Process.Pid
	defer p2.cmd.Process.Kill()
	c2, err := client.New(p2.url, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := run(c2, "hashes in a second server after SIGKILL of the first", sums+" && cat marker"); got != want+"before-kill\n" {
		t.Fatalf("in the second server:\n%s\nwant:\n%s", got, want+"before-kill\n")
	}
	rss2 := peakRSS(t, p2.cmd.Process.Pid)
	// The second server read everything from the store: its /metrics says
	// so (fetches and their bytes), and it cached some of it.
	if n, b := metric(t, p2.url, "warren_chunk_fetches_total"), metric(t, p2.url, "warren_chunk_fetch_bytes_total"); n == 0 || b < random {
		t.Errorf("/metrics of the second server: %d chunk fetches, %d bytes; want > 0 fetches and >= %d bytes (the random file)", n, b, random)
	}
	t.Logf("second server /metrics: %d chunk fetches, %d MiB fetched, %d cache hits", metric(t, p2.url, "warren_chunk_fetches_total"), metric(t, p2.url, "warren_chunk_fetch_bytes_total")>>20, metric(t, p2.url, "warren_chunk_cache_hits_total"))
	t.Logf("beyond RAM: %d MiB written (random %d MiB, 2 overwrites of %d MiB, zeros %d MiB, %d small files) through a %s chunk cache and a %s uncommitted budget; peak RSS: first server %d MiB, second server %d MiB (bound %d MiB)",
		written/mib, random/mib, over, zeros/mib, sz.smallFiles, sz.cache, sz.budget, rss1/mib, rss2/mib, sz.maxRSS/mib)
	for _, r := range []struct {
		name string
		rss  int64
	}{{"first", rss1}, {"second", rss2}} {
		if r.rss >= sz.maxRSS {
			t.Errorf("the %s server's peak RSS is %d MiB, bound %d MiB", r.name, r.rss/mib, sz.maxRSS/mib)
		}
	}
	if sz.maxRSS >= written {
		t.Fatalf("the RSS bound (%d MiB) is not below the data (%d MiB): the test would prove nothing", sz.maxRSS/mib, written/mib)
	}
}

func TestServe_ChunkCacheFlags(t *testing.T) {
	for _, tc := range []struct {
		mem, disk  string
		wantM      int64
		wantD      int64
		errMention string
	}{
		{"256MiB", "4GiB", 256 << 20, 4 << 30, ""},
		{"0", "off", -1, -1, ""},
		{"1G", "0", 1 << 30, -1, ""},
		{"lots", "1G", 0, 0, "--chunk-cache-memory"},
		{"1G", "-5", 0, 0, "--chunk-cache-disk"},
	} {
		m, d, err := parseChunkCache(tc.mem, tc.disk)
		if tc.errMention != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errMention) {
				t.Errorf("%q %q: %v; want an error naming %s", tc.mem, tc.disk, err, tc.errMention)
			}
			continue
		}
		if err != nil || m != tc.wantM || d != tc.wantD {
			t.Errorf("%q %q: %d %d %v; want %d %d", tc.mem, tc.disk, m, d, err, tc.wantM, tc.wantD)
		}
	}
}
