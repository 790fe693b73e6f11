package pgmeta

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/drive/drivetest"
	"github.com/warren-sandbox/warren/internal/pgtest"
	"github.com/warren-sandbox/warren/meta/postgres"
	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/dir"
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
