package fleet_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/fleet"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/sandbox/node"
	"github.com/warren-sandbox/warren/store/dir"
)

// servedMember is a fleet member behind a real HTTP listener.
type servedMember struct {
	n   *node.Node
	url string
}

func serveMember(b *testing.B, url, blobs, id string) servedMember {
	b.Helper()
	ctx := context.Background()
	bs, err := dir.Open(blobs, dir.WithoutSync())
	if err != nil {
		b.Fatal(err)
	}
	d := b.TempDir()
	if err := writeNodeID(d, id); err != nil {
		b.Fatal(err)
	}
	n, err := node.Open(ctx, node.Options{Dir: d, Meta: url, Blobs: bs})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(n.Handler)
	srv.Listener = ln
	srv.Start()
	fl, err := fleet.Start(ctx, fleet.Config{Store: n.Meta.(fleet.Store), Manager: n.Manager, ID: id, Address: srv.URL, Lease: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	n.Handler.SetFleet(fl)
	b.Cleanup(func() {
		srv.Close()
		fl.Stop()
		n.Close(context.Background())
		bs.Close()
	})
	return servedMember{n, srv.URL}
}

// BenchmarkExec_DirectVsForwarded: the round trip of a small exec sent to
// the sandbox's owner, and the same exec sent to another node that
// forwards it (loopback, one PostgreSQL). Reports p50/p95/p99 per op.
func BenchmarkExec_DirectVsForwarded(b *testing.B) {
	url, blobs := pgtest.New(b), b.TempDir()
	a := serveMember(b, url, blobs, "a")
	p := serveMember(b, url, blobs, "b")
	key := "wk_benchmark-admin-key-0123456789"
	if err := a.n.Meta.PutKey(context.Background(), key, "t", false); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ca, _ := client.New(a.url, key)
	sb, err := ca.Create(ctx, api.CreateRequest{NodeSelector: nil})
	if err != nil {
		b.Fatal(err)
	}
	owner := map[string]string{"a": a.url, "b": p.url}[sb.Node]
	other := map[string]string{"a": p.url, "b": a.url}[sb.Node]
	for _, tc := range []struct{ name, url string }{{"direct", owner}, {"forwarded", other}} {
		b.Run(tc.name, func(b *testing.B) {
			c, _ := client.New(tc.url, key)
			req := api.ExecRequest{Script: "echo hi", Durability: api.DurabilityMemory}
			for range 20 { // warm: sessions, routes, connections
				if _, err := c.Exec(ctx, sb.ID, req, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, err := c.Exec(ctx, sb.ID, req, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Microseconds()) }
			b.ReportMetric(q(0.50), "p50-µs")
			b.ReportMetric(q(0.95), "p95-µs")
			b.ReportMetric(q(0.99), "p99-µs")
			b.ReportMetric(float64(len(lat)), "n")
		})
	}
}

// BenchmarkFleet_Throughput: execs/s of clients spread over 1 node vs 3
// nodes of one fleet on the same machine (in one process: the same CPUs),
// 12 sandboxes placed by the fleet, each client picking a random node, so
// 2 of 3 requests are forwarded with 3 nodes.
func BenchmarkFleet_Throughput(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			url, blobs := pgtest.New(b), b.TempDir()
			var ms []servedMember
			for i := range nodes {
				ms = append(ms, serveMember(b, url, blobs, fmt.Sprint("n", i)))
			}
			key := "wk_benchmark-tenant-key-0123456789"
			if err := ms[0].n.Meta.PutKey(context.Background(), key, "t", false); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			time.Sleep(time.Second) // every node sees the others (renewal)
			var ids []string
			for i := range 12 {
				c, _ := client.New(ms[i%nodes].url, key)
				sb, err := c.Create(ctx, api.CreateRequest{})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, sb.ID)
			}
			var next atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			t0 := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1))
				for pb.Next() {
					i++
					c, _ := client.New(ms[rand.IntN(nodes)].url, key)
					if _, err := c.Exec(ctx, ids[i%len(ids)], api.ExecRequest{Script: "echo hi", Durability: api.DurabilityMemory}, io.Discard, io.Discard); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "execs/s")
		})
	}
}
