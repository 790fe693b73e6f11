package workerpool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// The cost of the backstop: exec round trips in process, through the
// router to a worker, and over HTTP to today's in-process server and to a
// front over workers (the serve path before and after), each as p50/p95/
// p99 with n; and the memory of an idle worker.
//
//	go test -run '^$' -bench . -benchtime 3000x ./sandbox/workerpool/

func BenchmarkExecRTT(b *testing.B) {
	needRoot(b)
	ctx := context.Background()
	n, err := node.Open(ctx, node.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close(context.Background()) })
	o := testOptions(b, 1)
	o.Stderr = io.Discard
	p := openPool(b, o)
	inprocHTTP := httptest.NewServer(n.Handler)
	b.Cleanup(inprocHTTP.Close)
	n.Meta.PutKey(ctx, "bench-key-0123456789", "bench", false)
	f := newFront(b, p)
	cases := []struct {
		name string
		svc  api.Service
	}{
		{"inproc", n.Manager.For("bench")},
		{"router", p.For("bench")},
		{"http-inproc", mustClient(b, inprocHTTP.URL, "bench-key-0123456789")},
		{"http-workers", f.tenant(b, "bench")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			sb, err := c.svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer c.svc.Delete(ctx, sb.ID)
			var out bytes.Buffer
			samples := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			cpu0 := cpuTime(os.Getpid()) + cpuTime(p.Status()[0].PID)
			for b.Loop() {
				out.Reset()
				t0 := time.Now()
				res, err := c.svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "echo hi"}, &out, nil)
				samples = append(samples, time.Since(t0))
				if err != nil || res.Exit != 0 || out.String() != "hi\n" {
					b.Fatalf("exec: %v %d %q", err, res.Exit, out.String())
				}
			}
			// CPU of this process (client, front, in-process node) and the
			// worker together, per exec: the node's cost of one exec.
			cpu := cpuTime(os.Getpid()) + cpuTime(p.Status()[0].PID) - cpu0
			b.ReportMetric(float64(cpu.Microseconds())/float64(len(samples)), "cpu-us/op")
			reportQuantiles(b, samples)
		})
	}
}

// cpuTime is a process's user+system CPU time (all threads), from
// /proc/PID/stat (utime and stime, in USER_HZ ticks: 100 per second on Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut+st) * (time.Second / 100)
}

func mustClient(b *testing.B, url, key string) *client.Client {
	c, err := client.New(url, key)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// reportQuantiles reports nearest-rank p50/p95/p99 in µs and n.
func reportQuantiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	q := func(f float64) float64 {
		i := int(f*float64(len(d))+0.999999) - 1
		return float64(d[max(0, min(len(d)-1, i))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(q(.50), "p50-us")
	b.ReportMetric(q(.95), "p95-us")
	b.ReportMetric(q(.99), "p99-us")
	b.ReportMetric(float64(len(d)), "n")
}

// BenchmarkWorkerIdleMemory reports what one idle worker costs: its RSS
// and its cgroup's charge (RSS + page cache + kernel memory), empty and
// with 100 idle running sandboxes. The loop body is trivial; the figures
// are the metrics.
func BenchmarkWorkerIdleMemory(b *testing.B) {
	needRoot(b)
	ctx := context.Background()
	o := testOptions(b, 1)
	o.Stderr = io.Discard
	p := openPool(b, o)
	measure := func(label string) {
		time.Sleep(500 * time.Millisecond)
		st := p.Status()[0]
		rss := vmRSS(st.PID)
		b.ReportMetric(float64(rss)/(1<<20), label+"-rss-MiB")
		b.ReportMetric(float64(st.Memory)/(1<<20), label+"-cgroup-MiB")
	}
	for b.Loop() {
	}
	measure("empty")
	svc := p.For("bench")
	for range 100 {
		sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1})
		if err != nil {
			b.Fatal(err)
		}
		var out strings.Builder
		if _, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: "echo hi > /tmp/x; cat /tmp/x"}, &out, nil); err != nil {
			b.Fatal(err)
		}
	}
	measure("100sb")
}

func vmRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
			return kb << 10
		}
	}
	return 0
}
