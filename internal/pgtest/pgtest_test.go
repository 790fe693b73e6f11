package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	Main(m, func(ctx context.Context, url string) error {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "CREATE TABLE marks (v text)")
		return err
	})
}

// TestNew: each database is a fresh clone of the prepared template, and
// writes in one never show in another.
func TestNew(t *testing.T) {
	ctx := context.Background()
	a, b := New(t), New(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "INSERT INTO marks VALUES ('a')"); err != nil {
		t.Fatalf("the template's table is missing: %v", err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM marks").Scan(&n); err != nil || n != 0 {
		t.Fatalf("second database sees %d rows (%v), want 0", n, err)
	}
	var fsync string
	if err := cb.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil || fsync != "off" {
		t.Fatalf("fsync = %q (%v), want off", fsync, err)
	}
	// The socket lives in the server's own directory.
	if _, err := os.Stat(filepath.Join(srv.sock, ".s.PGSQL.5432")); err != nil {
		t.Fatalf("socket: %v", err)
	}
	e := NewEmpty(t)
	ce, err := pgx.Connect(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	defer ce.Close(ctx)
	if _, err := ce.Exec(ctx, "SELECT 1 FROM marks"); err == nil {
		t.Fatal("NewEmpty has the template's table")
	}
}

// TestKilledBinaryLeavesNoServer: a test binary killed with SIGKILL (no
// cleanup runs) takes its server with it, and the next start removes the
// dead binary's directory.
func TestKilledBinaryLeavesNoServer(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") != "" {
		New(t)
		fmt.Println("DIR", srv.dir)
		time.Sleep(time.Minute) // killed long before
		return
	}
	start(t) // skips (or fails in CI) here without PostgreSQL
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledBinaryLeavesNoServer$")
	cmd.Env = append(os.Environ(), "PGTEST_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var dir string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "DIR "); ok {
			dir = d
			break
		}
	}
	if dir == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child printed no server directory")
	}
	pidFile, err := os.ReadFile(filepath.Join(dir, "pg", "db", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("postmaster %d still runs 20s after its test binary was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	removeStale()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the dead binary's directory %s stays (%v)", dir, err)
	}
}
