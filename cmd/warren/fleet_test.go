package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/store/s3/s3test"
)

// The fleet's acceptance tests: real PostgreSQL (internal/pgtest), real
// versitygw (store/s3/s3test) and three `warren serve` processes on
// loopback with a 2 s lease (docs/fleet.md).

const fleetLease = 2 * time.Second

type testFleet struct {
	db    string
	nodes []*serveProc
	ids   []string
	key   string
	args  [][]string
}

// startFleet starts n nodes named node0..; node0 starts first and makes
// the admin key.
func startFleet(t *testing.T, n int, extra ...string) *testFleet {
	t.Helper()
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	f := &testFleet{db: pgtest.New(t)}
	for i := range n {
		id := fmt.Sprintf("node%d", i)
		args := append([]string{"--no-native", "--meta", f.db, "--blobs", "s3://" + bucket + "/fleet",
			"--s3-endpoint", srv.Endpoint, "--s3-path-style", "--node-id", id, "--node-label", "name=" + id,
			"--lease", fleetLease.String(), "--standby-after", "1h"}, extra...)
		f.ids = append(f.ids, id)
		f.args = append(f.args, args)
		f.nodes = append(f.nodes, startServe(t, t.TempDir(), args...))
		if i == 0 {
			f.key = f.nodes[0].adminKey(t)
		}
	}
	return f
}

func (f *testFleet) client(t *testing.T, i int) *client.Client {
	t.Helper()
	c, err := client.New(f.nodes[i].url, f.key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createOn places a sandbox on node i through node via (node_selector).
func (f *testFleet) createOn(t *testing.T, via, i int, req api.CreateRequest) api.Sandbox {
	t.Helper()
	req.NodeSelector = map[string]string{"name": f.ids[i]}
	sb, err := f.client(t, via).Create(context.Background(), req)
	if err != nil {
		t.Fatalf("create on %s via %s: %v", f.ids[i], f.ids[via], err)
	}
	if sb.Node != f.ids[i] || sb.Epoch == 0 {
		t.Fatalf("create with node_selector name=%s: node %q epoch %d", f.ids[i], sb.Node, sb.Epoch)
	}
	return sb
}

// firstWrite records when the first byte of a stream arrived.
type firstWrite struct {
	mu    sync.Mutex
	first time.Time
	buf   bytes.Buffer
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first.IsZero() {
		w.first = time.Now()
	}
	return w.buf.Write(p)
}

// TestE2E_FleetRouting: a sandbox created on node0 is served through
// node1 and node2 (exec streaming, files, fork, hibernate): every reply
// comes from its owner, and streamed output arrives while the exec runs.
func TestE2E_FleetRouting(t *testing.T) {
	f := startFleet(t, 3)
	ctx := context.Background()
	sb := f.createOn(t, 0, 0, api.CreateRequest{})
	b, c := f.client(t, 1), f.client(t, 2)

	// Streaming through a forward: the first line arrives long before
	// the exec ends.
	var out firstWrite
	t0 := time.Now()
	res, err := b.Exec(ctx, sb.ID, api.ExecRequest{Script: "for i in 1 2 3 4; do echo line$i; sleep 0.3; done"}, &out, &bytes.Buffer{})
	if err != nil || res.Exit != 0 {
		t.Fatalf("exec through node1: %+v %v", res, err)
	}
	total := time.Since(t0)
	if got := out.buf.String(); got != "line1\nline2\nline3\nline4\n" {
		t.Fatalf("streamed output through node1: %q", got)
	}
	if first := out.first.Sub(t0); first > total/2 {
		t.Fatalf("first output after %v of %v: the forward buffered the stream", first, total)
	}

	// A background process started through node1, attached through
	// node2: its output streams through the forward as it is made.
	proc, err := b.StartProcess(ctx, sb.ID, api.ExecRequest{Script: "for i in 1 2 3; do echo bg$i; sleep 0.3; done"})
	if err != nil {
		t.Fatalf("start process through node1: %v", err)
	}
	var att firstWrite
	t0 = time.Now()
	if res, err := c.AttachProcess(ctx, sb.ID, proc.PID, &att, &bytes.Buffer{}); err != nil || res.Exit != 0 {
		t.Fatalf("attach through node2: %+v %v", res, err)
	}
	if got := att.buf.String(); got != "bg1\nbg2\nbg3\n" {
		t.Fatalf("attached output through node2: %q", got)
	}
	if first, total := att.first.Sub(t0), time.Since(t0); first > total/2 {
		t.Fatalf("attach: first output after %v of %v: the forward buffered the stream", first, total)
	}

	if err := c.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/work/in.txt", Data: strings.NewReader("via node2")}); err != nil {
		t.Fatalf("write through node2: %v", err)
	}
	if got, err := b.ReadFile(ctx, sb.ID, "/work/in.txt", 0, -1); err != nil || string(got) != "via node2" {
		t.Fatalf("read through node1: %q %v", got, err)
	}
	got, err := c.Get(ctx, sb.ID)
	if err != nil || got.Node != f.ids[0] || got.Epoch != sb.Epoch {
		t.Fatalf("get through node2: node %q epoch %d (want %s, %d), %v", got.Node, got.Epoch, f.ids[0], sb.Epoch, err)
	}
	kids, err := b.Fork(ctx, sb.ID, 2)
	if err != nil || len(kids) != 2 {
		t.Fatalf("fork through node1: %v %v", kids, err)
	}
	for _, k := range kids {
		if k.Node != f.ids[0] {
			t.Fatalf("fork child %s on %q, want its parent's node %s", k.ID, k.Node, f.ids[0])
		}
		if o, st := sh(t, c, k.ID, "cat /work/in.txt"); o != "via node2" || st != 0 {
			t.Fatalf("fork child through node2: %q %d", o, st)
		}
	}
	if h, err := c.Hibernate(ctx, sb.ID); err != nil || h.State != api.StateStandby {
		t.Fatalf("hibernate through node2: %+v %v", h, err)
	}
	if o, _ := sh(t, b, sb.ID, "cat /work/in.txt"); o != "via node2" {
		t.Fatalf("after hibernate, through node1: %q", o)
	}
	// Every node lists it (another node's creations are loaded).
	for i := range f.nodes {
		list, err := f.client(t, i).List(ctx, api.ListOptions{})
		if err != nil || len(list) != 3 {
			t.Fatalf("list on %s: %d sandboxes, %v", f.ids[i], len(list), err)
		}
	}
	if n := metric(t, f.nodes[1].url, "warren_fleet_forwarded_total"); n == 0 {
		t.Fatal("node1 forwarded nothing")
	}
	// node ls through any node shows all three, live, and node0 owning
	// the sandbox and its forks.
	stdout, stderr, code := f.nodes[2].cli(t, f.key, "", "node", "ls", "--json")
	if code != 0 {
		t.Fatalf("node ls: %d %s", code, stderr)
	}
	var nl struct {
		Nodes []struct {
			ID    string `json:"id"`
			Live  bool   `json:"live"`
			Owned int    `json:"owned"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(stdout), &nl); err != nil || len(nl.Nodes) != 3 {
		t.Fatalf("node ls --json: %v\n%s", err, stdout)
	}
	for _, n := range nl.Nodes {
		if !n.Live || (n.ID == f.ids[0]) != (n.Owned == 3) {
			t.Fatalf("node ls: %+v", nl.Nodes)
		}
	}
	// Deleted through node1: every node says 404 (node2 had loaded it
	// for the listing).
	if err := b.Delete(ctx, kids[1].ID); err != nil {
		t.Fatalf("delete through node1: %v", err)
	}
	for i := range f.nodes {
		if _, err := f.client(t, i).Get(ctx, kids[1].ID); !errdefs.IsNotFound(err) {
			t.Fatalf("get of a deleted sandbox on %s: %v", f.ids[i], err)
		}
	}
	// A sandbox id nobody has is a 404 from any node.
	if _, err := c.Get(ctx, "sb-nope"); !errdefs.IsNotFound(err) {
		t.Fatalf("get of an unknown id: %v", err)
	}
}

// retryable: the documented errors a fleet client retries (503 while an
// owner is unreachable or a lease is being taken over).
func retryable(err error) bool { return errdefs.IsUnavailable(err) }

// execRetry runs script via c until it stops failing with a retryable
// error, or the deadline passes. Any other error fails the test.
func execRetry(t *testing.T, c *client.Client, id, script string, deadline time.Duration) (string, time.Time) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		var out bytes.Buffer
		res, err := c.Exec(context.Background(), id, api.ExecRequest{Script: script}, &out, &bytes.Buffer{})
		if err == nil {
			if res.Exit != 0 {
				t.Fatalf("exec %q on %s: exit %d", script, id, res.Exit)
			}
			return out.String(), time.Now()
		}
		if !retryable(err) {
			t.Fatalf("exec %q on %s: a failure that is not retryable: %v", script, id, err)
		}
		if time.Now().After(end) {
			t.Fatalf("exec %q on %s: still failing after %v: %v", script, id, deadline, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2E_FleetKillOwner: kill -9 of the node owning sandboxes; each
// serves again from another node within a bounded time with every
// committed write. Two nodes asked at once take it over once: the epoch
// moves by exactly one.
func TestE2E_FleetKillOwner(t *testing.T) {
	f := startFleet(t, 3)
	ctx := context.Background()
	const n = 4
	var sbs []api.Sandbox
	for i := range n {
		sb := f.createOn(t, i%3, 0, api.CreateRequest{})
		res, err := f.client(t, 1).ExecWait(ctx, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo committed-%d > /c", i), Durability: api.DurabilityCommitted})
		if err != nil || res.Durability != api.DurabilityCommitted {
			t.Fatalf("committed write: %+v %v", res, err)
		}
		sbs = append(sbs, sb)
	}
	killed := time.Now()
	if err := f.nodes[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-f.nodes[0].done
	var took []time.Duration
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, sb := range sbs {
		// Both survivors at once for each sandbox.
		for _, via := range []int{1, 2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, at := execRetry(t, f.client(t, via), sb.ID, "cat /c", 20*time.Second)
				if want := fmt.Sprintf("committed-%d\n", i); out != want {
					t.Errorf("%s after the owner's kill, via %s: %q, want %q", sb.ID, f.ids[via], out, want)
				}
				mu.Lock()
				took = append(took, at.Sub(killed))
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	p50, worst := took[len(took)/2], took[len(took)-1]
	t.Logf("takeover after kill -9 (lease %v, %d sandboxes, 2 clients each): p50 %v max %v (n=%d)", fleetLease, n, p50.Round(time.Millisecond), worst.Round(time.Millisecond), len(took))
	if worst > 3*fleetLease+2*time.Second {
		t.Fatalf("takeover took %v (max), over the bound %v", worst, 3*fleetLease+2*time.Second)
	}
	for _, sb := range sbs {
		got, err := f.client(t, 2).Get(ctx, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Node == f.ids[0] || got.Epoch != sb.Epoch+1 {
			t.Fatalf("%s after takeover: node %q epoch %d; want another node at epoch %d (one claim won)", sb.ID, got.Node, got.Epoch, sb.Epoch+1)
		}
	}
	if a, b := metric(t, f.nodes[1].url, "warren_fleet_takeovers_total"), metric(t, f.nodes[2].url, "warren_fleet_takeovers_total"); a+b != n {
		t.Fatalf("takeovers: node1 %d + node2 %d, want %d (each sandbox claimed once)", a, b, n)
	}
}

// TestE2E_FleetPartition: SIGSTOP the owner past its lease, another node
// takes over, SIGCONT: the old owner is fenced, never publishes, drops the
// sandbox and counts its local-only write as lost; the generations form one
// line (no fork, none lost).
func TestE2E_FleetPartition(t *testing.T) {
	// Commits only when asked, so a local-only write stays uncommitted.
	f := startFleet(t, 2, "--commit-delay", "1h")
	ctx := context.Background()
	sb := f.createOn(t, 0, 0, api.CreateRequest{})
	a, b := f.client(t, 0), f.client(t, 1)
	if res, err := a.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "echo one > /c", Durability: api.DurabilityCommitted}); err != nil || res.Durability != api.DurabilityCommitted {
		t.Fatalf("committed write: %+v %v", res, err)
	}
	if res, err := a.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "echo maybe > /l", Durability: api.DurabilityLocal}); err != nil || res.Durability != api.DurabilityLocal {
		t.Fatalf("local write: %+v %v", res, err)
	}
	old := f.nodes[0]
	if err := old.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			old.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	// At once, while the owner's lease still runs: node1 forwards to the
	// stopped node, gives up when its lease is gone (503), and the retry
	// takes the sandbox over.
	t0 := time.Now()
	out, _ := execRetry(t, b, sb.ID, "cat /c; cat /l 2>/dev/null; echo two >> /c", 20*time.Second)
	t.Logf("served again %v after SIGSTOP of its owner (lease %v)", time.Since(t0).Round(time.Millisecond), fleetLease)
	if out != "one\n" {
		t.Fatalf("after takeover: %q, want the committed state only", out)
	}
	if res, err := b.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "true", Durability: api.DurabilityCommitted}); err != nil || res.Durability != api.DurabilityCommitted {
		t.Fatalf("commit on the new owner: %+v %v", res, err)
	}
	old.cmd.Process.Signal(syscall.SIGCONT)
	stopped = false
	// The old owner refuses writes until it has renewed and found the
	// sandbox gone, then routes to the new owner.
	t1 := time.Now()
	out, _ = execRetry(t, a, sb.ID, "cat /c", 20*time.Second)
	t.Logf("the old owner served through the new one %v after SIGCONT", time.Since(t1).Round(time.Millisecond))
	if out != "one\ntwo\n" {
		t.Fatalf("through the old owner after SIGCONT: %q, want the new owner's state", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for metric(t, old.url, "warren_fleet_dropped_sandboxes_total") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the old owner did not drop the sandbox:\n%s", old.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if lost := metric(t, old.url, "warren_fleet_lost_local_writes_total"); lost < 1 {
		t.Fatalf("lost local writes on the old owner: %d, want >= 1 (the write acked at local)", lost)
	}
	if !strings.Contains(old.logs(), "writes acked only at local are lost") {
		t.Fatalf("the old owner did not log the loss:\n%s", old.logs())
	}
	// One line of generations: numbers 1..N, epochs never going back,
	// none published by the old epoch after the new one began.
	conn, err := pgx.Connect(ctx, f.db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT number, epoch FROM generations WHERE sandbox = $1 ORDER BY number", sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	var nums, epochs []int64
	for rows.Next() {
		var n, e int64
		rows.Scan(&n, &e)
		nums, epochs = append(nums, n), append(epochs, e)
	}
	if rows.Err() != nil || len(nums) < 2 {
		t.Fatalf("generations: %v %v %v", nums, epochs, rows.Err())
	}
	for i := range nums {
		if nums[i] != int64(i+1) || (i > 0 && epochs[i] < epochs[i-1]) {
			t.Fatalf("generations fork or go back: numbers %v epochs %v", nums, epochs)
		}
	}
	if epochs[len(epochs)-1] != int64(sb.Epoch)+1 {
		t.Fatalf("last generation at epoch %d, want the new owner's %d: %v", epochs[len(epochs)-1], sb.Epoch+1, epochs)
	}
}

// TestE2E_FleetDrain: `warren node drain` hands a node's sandboxes off;
// they serve from another node with their data, and the drained node
// places nothing new.
func TestE2E_FleetDrain(t *testing.T) {
	f := startFleet(t, 2)
	ctx := context.Background()
	sb := f.createOn(t, 1, 0, api.CreateRequest{})
	if res, err := f.client(t, 1).ExecWait(ctx, sb.ID, api.ExecRequest{Script: "echo kept > /k", Durability: api.DurabilityLocal}); err != nil || res.Exit != 0 {
		t.Fatalf("write: %+v %v", res, err)
	}
	stdout, stderr, code := f.nodes[1].cli(t, f.key, "", "node", "drain", f.ids[0])
	if code != 0 || !strings.Contains(stdout, "released 1") {
		t.Fatalf("node drain: %d\n%s\n%s", code, stdout, stderr)
	}
	out, _ := execRetry(t, f.client(t, 0), sb.ID, "cat /k", 10*time.Second)
	if out != "kept\n" {
		t.Fatalf("after drain: %q", out)
	}
	got, err := f.client(t, 0).Get(ctx, sb.ID)
	if err != nil || got.Node != f.ids[1] {
		t.Fatalf("after drain the sandbox is on %q (%v), want %s", got.Node, err, f.ids[1])
	}
	for range 4 {
		s, err := f.client(t, 0).Create(ctx, api.CreateRequest{})
		if err != nil || s.Node != f.ids[1] {
			t.Fatalf("create after draining node0: on %q, %v", s.Node, err)
		}
	}
	if _, err := f.client(t, 0).Create(ctx, api.CreateRequest{NodeSelector: map[string]string{"name": "nowhere"}}); !errdefs.IsUnavailable(err) {
		t.Fatalf("create with a selector no node matches: %v", err)
	}
}

// TestServe_FleetFlagErrors: fleet flags that cannot work stop serve at
// start naming the problem.
func TestServe_FleetFlagErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "node-id"), []byte("other\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no postgres", []string{"--node-id", "n1"}, "give --meta postgres://"},
		{"bad id", []string{"--node-id", "a b", "--meta", "postgres://x@127.0.0.1:1/x"}, "--node-id \"a b\""},
		{"bad advertise", []string{"--advertise", "nope", "--meta", "postgres://x@127.0.0.1:1/x"}, "--advertise \"nope\""},
		{"short lease", []string{"--node-id", "n1", "--lease", "10ms", "--meta", "postgres://x@127.0.0.1:1/x"}, "too short"},
		{"other node's data", []string{"--node-id", "n1", "--data", dir, "--meta", "postgres://x@127.0.0.1:1/x"}, "belongs to node other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--no-native", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
			cmd := exec.Command(warrenBinary(t), args...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("serve %v: %v\n%s\nwant an error containing %q", tc.args, err, out, tc.want)
			}
		})
	}
}

// TestE2E_FleetRollingRestart: under load from clients spread over all
// nodes, each node in turn is stopped (SIGTERM drains it) and restarted on
// its volume. Clients retrying on the documented retryable errors see no
// other failure, and every write acked at committed is there at the end.
func TestE2E_FleetRollingRestart(t *testing.T) {
	f := startFleet(t, 3)
	ctx := context.Background()
	var sbs []api.Sandbox
	for i := range 3 {
		sbs = append(sbs, f.createOn(t, i, i, api.CreateRequest{}))
	}
	var mu sync.Mutex
	urls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, p := range f.nodes {
			out = append(out, p.url)
		}
		return out
	}
	stop := make(chan struct{})
	acked := make([][]int, len(sbs))
	retries := make([]int, len(sbs))
	var wg sync.WaitGroup
	for s, sb := range sbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			try := s
			for seq := 1; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				for {
					us := urls()
					c, _ := client.New(us[try%len(us)], f.key)
					try++
					res, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: fmt.Sprintf("echo %d >> /log", seq), Durability: api.DurabilityCommitted})
					if err == nil && res.Exit == 0 && res.Durability == api.DurabilityCommitted {
						acked[s] = append(acked[s], seq)
						break
					}
					if err == nil || !retryable(err) {
						t.Errorf("%s seq %d: a failure that is not retryable: %+v %v", sb.ID, seq, res, err)
						return
					}
					retries[s]++
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	var old []*serveProc
	for i := range f.nodes {
		time.Sleep(500 * time.Millisecond)
		f.nodes[i].stop(t)
		old = append(old, f.nodes[i])
		p := startServe(t, f.nodes[i].dir, f.args[i]...)
		mu.Lock()
		f.nodes[i] = p
		mu.Unlock()
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if t.Failed() {
		for _, p := range old {
			t.Logf("stopped node's log:\n%s", p.logs())
		}
	}
	for s, sb := range sbs {
		out, _ := execRetry(t, f.client(t, s), sb.ID, "cat /log", 20*time.Second)
		have := map[string]bool{}
		for _, l := range strings.Fields(out) {
			have[l] = true
		}
		for _, seq := range acked[s] {
			if !have[fmt.Sprint(seq)] {
				t.Fatalf("%s: committed write %d lost across the rolling restart (have %q)", sb.ID, seq, out)
			}
		}
		if len(acked[s]) < 3 {
			t.Fatalf("%s: only %d writes acked during the restart", sb.ID, len(acked[s]))
		}
		t.Logf("%s: %d committed writes kept, %d retried requests", sb.ID, len(acked[s]), retries[s])
	}
}
