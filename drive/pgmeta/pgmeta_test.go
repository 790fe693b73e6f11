package pgmeta

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/drive/drivetest"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/meta/postgres"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/dir"
	"github.com/warren-sandbox/warren/store/s3"
	"github.com/warren-sandbox/warren/store/s3/s3test"
	"github.com/warren-sandbox/warren/vfs"
)

func TestMain(m *testing.M) { pgtest.Main(m, postgres.Migrate) }

// fixture: one database per test, a pool per node (as two processes),
// over st.
func fixture(t testing.TB, st store.Store) drivetest.Fixture {
	url := pgtest.New(t)
	return drivetest.Fixture{
		Store: st,
		NewMeta: func(t testing.TB) drive.Meta {
			m, err := Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			return m
		},
	}
}

func dirStore(t testing.TB) store.Store {
	st, err := dir.Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSuite_Dir(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) drivetest.Fixture { return fixture(t, dirStore(t)) })
}

func TestSuite_S3(t *testing.T) {
	srv := s3test.Start(t)
	drivetest.Run(t, func(t *testing.T) drivetest.Fixture { return fixture(t, srv.NewStore(t)) })
}

// TestOpen_OldSchema: a database without migration 0004 is refused with
// the way out in the message.
func TestOpen_OldSchema(t *testing.T) {
	_, err := Open(context.Background(), pgtest.NewEmpty(t))
	if err == nil || !strings.Contains(err.Error(), "run warren's migrations") {
		t.Fatalf("Open on an empty database: %v", err)
	}
}

// TestChecker: two nodes (a pool and a chunk cache each) on one
// PostgreSQL and one versitygw, two workers each.
func TestChecker(t *testing.T) {
	srv := s3test.Start(t)
	f := fixture(t, srv.NewStore(t))
	a, b := f.Nodes(t, drive.Options{})
	da, db := drivetest.Open(t, a, b, "check", 0)
	drivetest.RunChecker(t, []vfs.RemoteFS{da, db}, 2, drivetest.Ops())
}

// BenchmarkDrive: PostgreSQL + versitygw.
func BenchmarkDrive(b *testing.B) {
	srv := s3test.Start(b)
	drivetest.Bench(b, fixture(b, srv.NewStore(b)))
}

// TestChecker_Sweeping: the checker while both nodes sweep the drive in a
// loop with a 300 ms grace: a sweep never deletes a chunk a committed
// version refers to (reads would fail), and it does delete replaced ones.
func TestChecker_Sweeping(t *testing.T) {
	srv := s3test.Start(t)
	f := fixture(t, srv.NewStore(t))
	const grace = 300 * time.Millisecond
	a, b := f.NodesWithoutCache(t, drive.Options{Grace: grace})
	da, db := drivetest.Open(t, a, b, "swept", 0)
	var deleted, sweeps int
	drivetest.RunCheckerWith(t, []vfs.RemoteFS{da, db}, 2, drivetest.Ops()/2, func(stop <-chan struct{}) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			st, err := []*drive.Registry{a, b}[i%2].Sweep(context.Background(), "t", "swept")
			if err != nil {
				t.Errorf("sweep: %v", err)
				return
			}
			deleted += st.Deleted
			sweeps++
		}
	})
	t.Logf("%d sweeps deleted %d chunks", sweeps, deleted)
	if deleted == 0 {
		t.Fatal("the sweeps deleted nothing: the test tests nothing")
	}
	// Two more sweeps past the grace; every file left must read whole.
	for range 2 {
		time.Sleep(grace + 50*time.Millisecond)
		if _, err := a.Sweep(context.Background(), "t", "swept"); err != nil {
			t.Fatal(err)
		}
	}
	if n := drivetest.VerifyAll(t, db); n < 8 {
		t.Fatalf("only %d files to verify after the run", n)
	}
}

// TestChecker_Processes: the fleet's shape, two node processes (this test
// binary re-executed) on one PostgreSQL and one versitygw bucket, each
// with its own pool and chunk cache, two workers each.
func TestChecker_Processes(t *testing.T) {
	const nodes, workers = 2, 2
	srv := s3test.Start(t)
	cfg := srv.Config(srv.NewBucket(t))
	st := s3test.OpenStore(t, cfg)
	url := pgtest.New(t)
	m, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	reg := drive.NewRegistry(m, st, drive.Options{})
	ctx := context.Background()
	if _, err := reg.Create(ctx, "t", "check", 0); err != nil {
		t.Fatal(err)
	}
	d, err := reg.Open(ctx, "t", "check")
	if err != nil {
		t.Fatal(err)
	}
	if err := drivetest.Setup(d); err != nil {
		t.Fatal(err)
	}
	d.Close()
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ops := drivetest.Ops()
	start := time.Now()
	cmds := make([]*exec.Cmd, nodes)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckerChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "WARREN_DRIVE_PG="+url, "WARREN_DRIVE_S3="+string(cfgJSON), "WARREN_DRIVE_LOGS="+dir,
			fmt.Sprintf("WARREN_DRIVE_NODE=%d", i), fmt.Sprintf("WARREN_DRIVE_NODE_OPS=%d", ops/nodes), fmt.Sprintf("WARREN_DRIVE_WORKERS=%d", workers))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("node process %d: %v", i, err)
		}
	}
	logs := []drivetest.Log{{Events: drivetest.InitialEvents()}}
	for i := range nodes {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("log-%d.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		var ls []drivetest.Log
		if err := json.Unmarshal(b, &ls); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, ls...)
	}
	drivetest.Report(t, logs, time.Since(start))
}

// TestCheckerChild is one node process of TestChecker_Processes.
func TestCheckerChild(t *testing.T) {
	url := os.Getenv("WARREN_DRIVE_PG")
	if url == "" {
		t.Skip("runs only as a node process of TestChecker_Processes")
	}
	var cfg s3.Config
	if err := json.Unmarshal([]byte(os.Getenv("WARREN_DRIVE_S3")), &cfg); err != nil {
		t.Fatal(err)
	}
	node, _ := strconv.Atoi(os.Getenv("WARREN_DRIVE_NODE"))
	ops, _ := strconv.Atoi(os.Getenv("WARREN_DRIVE_NODE_OPS"))
	workers, _ := strconv.Atoi(os.Getenv("WARREN_DRIVE_WORKERS"))
	f := drivetest.Fixture{
		Store: s3test.OpenStore(t, cfg),
		NewMeta: func(t testing.TB) drive.Meta {
			m, err := Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			return m
		},
	}
	a, _ := f.Nodes(t, drive.Options{})
	d, err := a.Open(context.Background(), "t", "check")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	logs := make([]drivetest.Log, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logs[w] = drivetest.Work(d, fmt.Sprintf("p%dw%d", node, w), ops/workers, uint64(100*node+w+1))
		}()
	}
	wg.Wait()
	b, err := json.Marshal(logs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(os.Getenv("WARREN_DRIVE_LOGS"), fmt.Sprintf("log-%d.json", node)), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
