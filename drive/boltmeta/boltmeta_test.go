package boltmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/drive"
	"github.com/warren-sandbox/warren/drive/drivetest"
	"github.com/warren-sandbox/warren/store/dir"
	"github.com/warren-sandbox/warren/vfs"
	bolt "go.etcd.io/bbolt"
)

// fixture: one bbolt file opened through a separate Meta per node (its own
// lock file descriptor, as another process has), over store/dir.
func fixture(t testing.TB) drivetest.Fixture { return fixtureAt(t, t.TempDir()) }

func fixtureAt(t testing.TB, base string) drivetest.Fixture { return fixtureSync(t, base, true) }

// fixtureSync: with sync false neither the bbolt file nor store/dir fsync.
func fixtureSync(t testing.TB, base string, sync bool) drivetest.Fixture {
	var opts []dir.Option
	if !sync {
		opts = append(opts, dir.WithoutSync())
	}
	st, err := dir.Open(filepath.Join(base, "blobs"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	path := filepath.Join(base, "drives.db")
	return drivetest.Fixture{
		Store: st,
		NewMeta: func(t testing.TB) drive.Meta {
			m, err := Open(path, Options{NoSync: !sync})
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

// TestChecker_FindsStaleReads: the checker's negative control. Node b's
// metadata reads go through an attribute cache (entries kept 100 ms, as
// an NFS client without close-to-open would): the checker must report
// stale reads.
func TestChecker_FindsStaleReads(t *testing.T) {
	f := fixture(t)
	inner := f.NewMeta
	nodes := 0
	f.NewMeta = func(t testing.TB) drive.Meta {
		nodes++
		if nodes == 2 {
			return &staleMeta{Meta: inner(t), ttl: 100 * time.Millisecond, cache: map[string]cached{}}
		}
		return inner(t)
	}
	a, b := f.Nodes(t, drive.Options{})
	da, db := drivetest.Open(t, a, b, "stale", 0)
	logs := drivetest.RunWorkers(t, []vfs.RemoteFS{da, db}, 1, 1000)
	fails, reads := drivetest.Check(logs)
	stale := 0
	for _, f := range fails {
		if strings.Contains(f, "stale read") {
			stale++
		}
	}
	t.Logf("%d of %d reads reported stale, %d failures in all", stale, reads, len(fails))
	if stale == 0 {
		t.Fatalf("the checker found no stale read through a metadata cache (%d failures: %v)", len(fails), fails)
	}
}

type cached struct {
	e  drive.Entry
	at time.Time
}

// staleMeta caches what Views look up (a fault: Open must revalidate).
type staleMeta struct {
	drive.Meta
	ttl   time.Duration
	mu    sync.Mutex
	cache map[string]cached
}

func (s *staleMeta) View(ctx context.Context, id string, fn func(drive.Tx) error) error {
	return s.Meta.View(ctx, id, func(tx drive.Tx) error { return fn(&staleTx{Tx: tx, s: s}) })
}

type staleTx struct {
	drive.Tx
	s *staleMeta
}

func (t *staleTx) get(key string, load func() (drive.Entry, error)) (drive.Entry, error) {
	t.s.mu.Lock()
	c, ok := t.s.cache[key]
	t.s.mu.Unlock()
	if ok && time.Since(c.at) < t.s.ttl {
		return c.e, nil
	}
	e, err := load()
	if err == nil {
		t.s.mu.Lock()
		t.s.cache[key] = cached{e, time.Now()}
		t.s.mu.Unlock()
	}
	return e, err
}

func (t *staleTx) Lookup(parent uint64, name string) (drive.Entry, error) {
	return t.get(fmt.Sprintf("l%d/%s", parent, name), func() (drive.Entry, error) { return t.Tx.Lookup(parent, name) })
}

// BenchmarkDrive: bbolt (fsync per commit) + store/dir.
func BenchmarkDrive(b *testing.B) { drivetest.Bench(b, fixture(b)) }

// BenchmarkDriveNoSync: the same without any fsync (bbolt NoSync,
// store/dir WithoutSync), to show what the fsyncs cost.
func BenchmarkDriveNoSync(b *testing.B) { drivetest.Bench(b, fixtureSync(b, b.TempDir(), false)) }

// BenchmarkTx is the cost of opening the file per transaction: a
// trivial Update (a mount lease; fsynced, or NoSync) and View (the root).
func BenchmarkTx(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("NoSync=%v", noSync), func(b *testing.B) {
			m, err := Open(filepath.Join(b.TempDir(), "d.db"), Options{NoSync: noSync})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			reg := drive.NewRegistry(m, nil, drive.Options{})
			rec, err := reg.Create(context.Background(), "t", "tx", 0)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for _, kind := range []string{"Update", "View"} {
				b.Run(kind, func(b *testing.B) {
					var lat []time.Duration
					for range b.N {
						start := time.Now()
						if kind == "Update" {
							err = m.Update(ctx, rec.ID, func(tx drive.Tx) error { return tx.PutMount(drive.Mount{ID: "m", Expires: time.Now()}) })
						} else {
							err = m.View(ctx, rec.ID, func(tx drive.Tx) error { _, err := tx.Entry(drive.RootID); return err })
						}
						if err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					drivetest.ReportPercentiles(b, lat)
				})
			}
		})
	}
}

// BenchmarkTxHeldOpen is the reference for BenchmarkTx: the same
// transactions on a file kept open (what one process alone could do).
func BenchmarkTxHeldOpen(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("NoSync=%v", noSync), func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "d.db"), 0o600, &bolt.Options{NoSync: noSync})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err })
			for _, kind := range []string{"Update", "View"} {
				b.Run(kind, func(b *testing.B) {
					var lat []time.Duration
					for range b.N {
						start := time.Now()
						if kind == "Update" {
							err = db.Update(func(tx *bolt.Tx) error {
								return tx.Bucket([]byte("b")).Put([]byte("m"), be64(uint64(time.Now().UnixNano())))
							})
						} else {
							err = db.View(func(tx *bolt.Tx) error { tx.Bucket([]byte("b")).Get([]byte("m")); return nil })
						}
						if err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					drivetest.ReportPercentiles(b, lat)
				})
			}
		})
	}
}

// TestFlock_ProcessDies: a lock held by another process that is killed
// (SIGKILL: no Close, no unlock) is free at most LockTTL after its last
// renewal, and not before it stops renewing.
func TestFlock_ProcessDies(t *testing.T) {
	const ttl = time.Second
	base := t.TempDir()
	f := fixtureAt(t, base)
	reg := drive.NewRegistry(f.NewMeta(t), f.Store, drive.Options{LockTTL: ttl})
	ctx := context.Background()
	if _, err := reg.Create(ctx, "t", "locks", 0); err != nil {
		t.Fatal(err)
	}
	d, err := reg.Open(ctx, "t", "locks")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := drivetest.WriteFile(d, "/l", nil); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFlockChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WARREN_DRIVE_LOCKCHILD="+base)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	marker := filepath.Join(base, "locked")
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("the child never took its lock")
		}
	}
	h, err := d.OpenFile("/l", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	time.Sleep(2 * ttl) // the child renews meanwhile
	var errno syscall.Errno
	if err := h.Flock(ctx, vfs.LOCK_EX|vfs.LOCK_NB); !errors.As(err, &errno) || errno != syscall.EWOULDBLOCK {
		t.Fatalf("EX|NB against a live process's lock: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	if err := h.Flock(ctx, vfs.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(killed)
	t.Logf("lock free %v after the holder was killed (TTL %v)", waited.Round(time.Millisecond), ttl)
	if waited > ttl+time.Second {
		t.Fatalf("the dead process's lock lasted %v, TTL %v", waited, ttl)
	}
}

// TestFlockChild is the lock holder of TestFlock_ProcessDies.
func TestFlockChild(t *testing.T) {
	base := os.Getenv("WARREN_DRIVE_LOCKCHILD")
	if base == "" {
		t.Skip("runs only as the child of TestFlock_ProcessDies")
	}
	f := fixtureAt(t, base)
	reg := drive.NewRegistry(f.NewMeta(t), f.Store, drive.Options{LockTTL: time.Second})
	d, err := reg.Open(context.Background(), "t", "locks")
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.OpenFile("/l", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Flock(context.Background(), vfs.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "locked"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Hour) // until killed
}
