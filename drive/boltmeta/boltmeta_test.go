package boltmeta

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/drive/drivetest"
	"github.com/warren-sandbox/warren/store/dir"
)

// fixture: one bbolt file opened through a separate Meta per node (its own
// lock file descriptor, as another process has), over store/dir.
func fixture(t testing.TB) drivetest.Fixture { return fixtureAt(t, t.TempDir()) }

func fixtureAt(t testing.TB, base string) drivetest.Fixture {
	st, err := dir.Open(filepath.Join(base, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	path := filepath.Join(base, "drives.db")
	return drivetest.Fixture{
		Store: st,
		NewMeta: func(t testing.TB) drive.Meta {
			m, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			return m
		},
	}
}

func TestSuite(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) drivetest.Fixture { return fixture(t) })
}

// TestChecker_Processes: the checker with each node a process of its own
// (this test binary re-executed), as warren serve's workers share one
// bbolt file and one store/dir.
func TestChecker_Processes(t *testing.T) {
	const nodes, workers = 2, 2
	base := t.TempDir()
	f := fixtureAt(t, base)
	reg := drive.NewRegistry(f.NewMeta(t), f.Store, drive.Options{})
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
	ops := drivetest.Ops()
	start := time.Now()
	cmds := make([]*exec.Cmd, nodes)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckerChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "WARREN_DRIVE_CHILD="+base, fmt.Sprintf("WARREN_DRIVE_NODE=%d", i),
			fmt.Sprintf("WARREN_DRIVE_NODE_OPS=%d", ops/nodes), fmt.Sprintf("WARREN_DRIVE_WORKERS=%d", workers))
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
		b, err := os.ReadFile(filepath.Join(base, fmt.Sprintf("log-%d.json", i)))
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
	base := os.Getenv("WARREN_DRIVE_CHILD")
	if base == "" {
		t.Skip("runs only as a node process of TestChecker_Processes")
	}
	node, _ := strconv.Atoi(os.Getenv("WARREN_DRIVE_NODE"))
	ops, _ := strconv.Atoi(os.Getenv("WARREN_DRIVE_NODE_OPS"))
	workers, _ := strconv.Atoi(os.Getenv("WARREN_DRIVE_WORKERS"))
	f := fixtureAt(t, base)
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
	if err := os.WriteFile(filepath.Join(base, fmt.Sprintf("log-%d.json", node)), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
