package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// A database written by one run is a file in the vfs: the next run reads
// it back, other commands see SQLite's bytes, no journal is left behind,
// and a fork of the filesystem carries it while diverging from it.
func TestDatabasePersistsInVFS(t *testing.T) {
	fsys := newFS(t)
	if r := run(t, fsys, nil, "", "data/app.db", "select 1"); r.code != 1 || !strings.Contains(r.stderr, "unable to open database") {
		t.Fatalf("missing directory: %d %q", r.code, r.stderr)
	}
	if err := fsys.MkdirAll("/work/data", 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, fsys, nil, "", "data/app.db", "create table kv(k text primary key, v)", "insert into kv values('a', 1), ('b', 2)"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	head, err := fsys.ReadFile("/work/data/app.db")
	if err != nil || !strings.HasPrefix(string(head), "SQLite format 3\x00") {
		t.Fatalf("database file: %q %v", head[:min(len(head), 16)], err)
	}
	if _, err := fsys.Stat("/work/data/app.db-journal"); err == nil {
		t.Fatal("the rollback journal was left behind")
	}
	if r := run(t, fsys, nil, "", "/work/data/app.db", "select group_concat(k||'='||v, ',') from kv"); r.stdout != "a=1,b=2\n" {
		t.Fatalf("read back: %+v", r)
	}
	fork := fsys.Fork()
	if r := run(t, fork, nil, "", "data/app.db", "insert into kv values('c', 3)"); r.code != 0 {
		t.Fatalf("fork write: %+v", r)
	}
	if r := run(t, fork, nil, "", "data/app.db", "select count(*) from kv"); r.stdout != "3\n" {
		t.Fatalf("fork: %+v", r)
	}
	if r := run(t, fsys, nil, "", "data/app.db", "select count(*) from kv"); r.stdout != "2\n" {
		t.Fatalf("original after the fork wrote: %+v", r)
	}
}

// The rollback journal is a vfs file next to the database: kept (and
// visible to other commands) with journal_mode=persist, deleted by default.
func TestJournalInVFS(t *testing.T) {
	fsys := newFS(t)
	r := run(t, fsys, nil, "", "j.db", "pragma journal_mode=persist", "create table t(x)", "insert into t values(1)")
	if r.code != 0 || r.stdout != "persist\n" {
		t.Fatalf("%+v", r)
	}
	if fi, err := fsys.Stat("/work/j.db-journal"); err != nil || fi.Size() == 0 {
		t.Fatalf("persistent journal: %v %v", fi, err)
	}
	if r := run(t, fsys, nil, "", "d.db", "create table t(x)", "insert into t values(1)"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if _, err := fsys.Stat("/work/d.db-journal"); err == nil {
		t.Fatal("journal_mode=delete left its journal")
	}
	// Journal mode WAL needs shared memory unless the lock is exclusive;
	// with it, the -wal file lives in the vfs while the connection is open.
	r = run(t, fsys, nil, "", "w.db", "pragma locking_mode=exclusive", "pragma journal_mode=wal", "create table t(x)", "insert into t values(1)", "select count(*) from t")
	if r.code != 0 || r.stdout != "exclusive\nwal\n1\n" {
		t.Fatalf("wal: %+v", r)
	}
	if r := run(t, fsys, nil, "", "w.db", "pragma locking_mode=exclusive", "select * from t"); r.code != 0 || r.stdout != "exclusive\n1\n" {
		t.Fatalf("wal read back: %+v", r)
	}
}

// ATTACH and VACUUM INTO with URI filenames could pick ncruces's "os" VFS
// (the host's files); they are refused. Plain names stay in the vfs.
func TestHostUnreachable(t *testing.T) {
	fsys := newFS(t)
	host := t.TempDir()
	for _, sql := range []string{
		fmt.Sprintf("attach 'file:%s/a.db?vfs=os' as h; create table h.x(y)", host),
		fmt.Sprintf("attach 'FILE:%s/b.db?vfs=os' as h", host),
		fmt.Sprintf("create table t(x); vacuum into 'file:%s/c.db?vfs=os'", host),
	} {
		r := run(t, fsys, nil, "", "db", sql)
		if r.code == 0 || !strings.Contains(r.stderr, "not authorized") && !strings.Contains(r.stderr, "authorization denied") {
			t.Errorf("%s: %+v", sql, r)
		}
	}
	// A URI as the database name is a path in the vfs, never a URI.
	if r := run(t, fsys, nil, "", fmt.Sprintf("file:%s/f.db?vfs=os", host), "create table x(y)"); r.code != 1 || !strings.Contains(r.stderr, "unable to open database") {
		t.Errorf("a URI as the file name: %+v", r)
	}
	if ents, _ := os.ReadDir(host); len(ents) != 0 {
		t.Fatalf("host files created: %v", ents)
	}
	r := run(t, fsys, nil, "", "db", fmt.Sprintf("attach '%s/d.db' as h; create table h.x(y)", host), fmt.Sprintf("vacuum into '%s/e.db'", host))
	if r.code != 14 || !strings.Contains(r.stderr, "unable to open database") {
		t.Fatalf("attach of a path the vfs lacks: %+v", r)
	}
	if err := fsys.MkdirAll(host, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, fsys, nil, "", "db", fmt.Sprintf("attach '%s/d.db' as h; create table h.x(y)", host), fmt.Sprintf("vacuum into '%s/e.db'", host)); r.code != 0 {
		t.Fatalf("attach in the vfs: %+v", r)
	}
	for _, n := range []string{"d.db", "e.db"} {
		if _, err := fsys.Stat(filepath.Join(host, n)); err != nil {
			t.Errorf("%s not in the vfs: %v", n, err)
		}
		if _, err := os.Stat(filepath.Join(host, n)); err == nil {
			t.Errorf("%s reached the host", n)
		}
	}
}

// SQLite's memory is charged to the sandbox's budget while the database
// is open and given back after; a query that needs more than it was
// granted ends with the memory limit, status 125, not a crash.
func TestMemoryBudget(t *testing.T) {
	fsys := newFS(t)
	mem := commands.NewMemory(256 << 20)
	r := run(t, fsys, mem, "", ":memory:", "select 1")
	if r.code != 0 || mem.Used() != 0 {
		t.Fatalf("%+v, %d bytes still charged", r, mem.Used())
	}
	big := "select length(randomblob(80000000))"
	r = run(t, fsys, mem, "", ":memory:", big)
	if r.code != commands.StatusLimit || !strings.Contains(r.stderr, "memory limit (64 MiB)") {
		t.Fatalf("big query: %+v", r)
	}
	if mem.Used() != 0 {
		t.Fatalf("%d bytes still charged", mem.Used())
	}
	// A budget mostly used by others leaves sqlite3 half of what is left.
	small := commands.NewMemory(40 << 20)
	if err := small.Charge(16 << 20); err != nil {
		t.Fatal(err)
	}
	r = run(t, fsys, small, "", ":memory:", "select 1", "select length(randomblob(3000000))", "select length(randomblob(12000000))")
	if r.code != commands.StatusLimit || r.stdout != "1\n3000000\n" || !strings.Contains(r.stderr, "memory limit (12 MiB)") {
		t.Fatalf("small budget: %+v", r)
	}
	// Nothing left: refused before SQLite runs.
	full := commands.NewMemory(8 << 20)
	if err := full.Charge(6 << 20); err != nil {
		t.Fatal(err)
	}
	r = run(t, fsys, full, "", ":memory:", "select 1")
	if r.code != commands.StatusLimit || !strings.Contains(r.stderr, "memory limit exceeded") {
		t.Fatalf("full budget: %+v", r)
	}
}

// The exec's deadline interrupts a statement that would run forever.
func TestDeadline(t *testing.T) {
	fsys := newFS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := runCtx(ctx, fsys, nil, "", ":memory:", "with recursive n(i) as (select 1 union all select i+1 from n) select count(*) from n")
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
	if r.code == 0 || !strings.Contains(r.stderr, "interrupt") {
		t.Fatalf("%+v", r)
	}
}

// A delta quota reached by the database reports SQLite's "database or
// disk is full" and leaves the database as it was.
func TestQuota(t *testing.T) {
	fsys := newFS(t)
	if r := run(t, fsys, nil, "", "q.db", "create table t(x)", "insert into t values('small')"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	fsys.SetQuota(fsys.Usage().Bytes+256<<10, 0)
	r := run(t, fsys, nil, "", "q.db", "insert into t select hex(randomblob(1000)) from generate_series(1, 2000)")
	if r.code != 13 || !strings.Contains(r.stderr, "database or disk is full") {
		t.Fatalf("%+v", r)
	}
	fsys.SetQuota(0, 0)
	if r := run(t, fsys, nil, "", "q.db", "select count(*) from t", "pragma integrity_check"); r.stdout != "1\nok\n" {
		t.Fatalf("after the failed insert: %+v", r)
	}
}

// Concurrent sqlite3 runs of one sandbox (background jobs) lock the
// database against each other: with a busy timeout every insert lands.
func TestConcurrentWriters(t *testing.T) {
	fsys := newFS(t)
	if r := run(t, fsys, nil, "", "c.db", "create table t(w, i)"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	const writers, each = 4, 20
	var wg sync.WaitGroup
	errs := make(chan string, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var script strings.Builder
			script.WriteString(".timeout 10000\n")
			for i := range each {
				fmt.Fprintf(&script, "begin immediate; insert into t values(%d, %d); commit;\n", w, i)
			}
			if r := run(t, fsys, nil, script.String(), "c.db"); r.code != 0 {
				errs <- fmt.Sprintf("writer %d: %+v", w, r)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if r := run(t, fsys, nil, "", "c.db", "select count(*), count(distinct w) from t"); r.stdout != fmt.Sprintf("%d|%d\n", writers*each, writers) {
		t.Fatalf("%+v", r)
	}
}
