// Package pgtest gives tests a throwaway PostgreSQL server from the
// machine's packages (Debian's postgresql): one server per test binary,
// started on first use in a temporary directory with a unix socket only
// (no TCP port to collide) and fsync off, a template database prepared
// once, and one database per test cloned from it. The binary's TestMain
// must call Main (or Run) so the server is stopped when the tests end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m, postgres.Migrate) }
//
// Without PostgreSQL installed a test is skipped with the reason, or
// fails when the CI environment variable is set.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Setup prepares the template database at url (e.g. applies migrations).
type Setup func(ctx context.Context, url string) error

var (
	setup   Setup
	once    sync.Once
	srv     *server
	srvErr  error
	mainRan bool
	missing string // why PostgreSQL is not available ("" = it is)
	seq     atomic.Int64
	createM sync.Mutex // CREATE DATABASE ... TEMPLATE needs the template idle
)

// Main runs the tests of a binary, stops the server if one was started
// and exits. prepare (may be nil) sets up the template database.
func Main(m *testing.M, prepare Setup) { os.Exit(Run(m, prepare)) }

// Run is Main for a TestMain with more to clean up: it returns the exit
// code instead of exiting.
func Run(m *testing.M, prepare Setup) int {
	setup, mainRan = prepare, true
	code := m.Run()
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// New returns the URL of a fresh database cloned from the template.
func New(t testing.TB) string {
	return create(t, "tmpl")
}

// NewEmpty returns the URL of a fresh empty database (nothing applied).
func NewEmpty(t testing.TB) string {
	return create(t, "template0")
}

func create(t testing.TB, template string) string {
	t.Helper()
	s := start(t)
	name := fmt.Sprintf("t%d", seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createM.Lock()
	err := s.exec(ctx, "postgres", fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template))
	createM.Unlock()
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return s.url(name)
}

func start(t testing.TB) *server {
	t.Helper()
	if !mainRan {
		// Without Main nobody would stop the server after the tests.
		t.Fatal("pgtest: the test binary's TestMain must call pgtest.Main or pgtest.Run")
	}
	once.Do(func() {
		var bin string
		if bin, missing = findBin(); missing != "" {
			return
		}
		if srv, srvErr = startServer(bin); srvErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if srvErr = srv.exec(ctx, "postgres", "CREATE DATABASE tmpl"); srvErr != nil {
			return
		}
		if setup != nil {
			if err := setup(ctx, srv.url("tmpl")); err != nil {
				srvErr = fmt.Errorf("template setup: %w", err)
			}
		}
	})
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: %s (CI needs PostgreSQL: scripts/test.sh installs postgresql)", missing)
		}
		t.Skipf("pgtest: %s (apt-get install postgresql)", missing)
	}
	if srvErr != nil {
		t.Fatalf("pgtest: %v", srvErr)
	}
	return srv
}

// findBin returns PostgreSQL's bin directory, newest version first, or
// why there is none.
func findBin() (dir, missing string) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, ""
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), ""
	}
	return "", "no PostgreSQL server binaries (looked in /usr/lib/postgresql/*/bin and PATH)"
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

type server struct {
	bin, dir, sock string
	cred           *syscall.Credential // nil: run as ourselves
	cmd            *exec.Cmd
	exited         chan error
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&sslmode=disable", db, url.QueryEscape(s.sock))
}

func (s *server) exec(ctx context.Context, db, sql string) error {
	c, err := pgx.Connect(ctx, s.url(db))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

func (s *server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.sock
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

func startServer(bin string) (*server, error) {
	removeStale()
	dir, err := os.MkdirTemp(baseDir(), "warren-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &server{bin: bin, dir: dir, sock: filepath.Join(dir, "pg"), exited: make(chan error, 1)}
	fail := func(err error) (*server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	// initdb and postgres refuse to run as root: run them as the postgres
	// user, in a directory it can reach (MkdirTemp makes 0700).
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("running as root and there is no postgres user: %w", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o711); err != nil {
			return fail(err)
		}
	}
	if err := os.Mkdir(s.sock, 0o700); err != nil {
		return fail(err)
	}
	if s.cred != nil {
		if err := os.Chown(s.sock, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(s.sock, "db")
	if out, err := s.command("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, out))
	}
	logf, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	s.cmd = s.command("postgres", "-D", data, "-k", s.sock, "-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if s.cmd.SysProcAttr == nil {
		s.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// If the test binary dies without Main's cleanup, the postmaster dies
	// with it (and its backends follow it). Pdeathsig fires when the
	// thread that forked exits, so that thread stays locked and alive
	// until the server exits.
	s.cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.exited <- s.cmd.Wait()
	}()
	if err := <-started; err != nil {
		return fail(fmt.Errorf("start postgres: %w", err))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.exec(ctx, "postgres", "SELECT 1")
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case werr := <-s.exited:
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			return fail(fmt.Errorf("postgres exited (%v) before it was ready: %s", werr, tail(log)))
		default:
		}
		if time.Now().After(deadline) {
			s.cmd.Process.Kill()
			<-s.exited
			return fail(fmt.Errorf("postgres not ready after 30s: %v", err))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop shuts the server down at once (its data is throwaway) and removes
// its directory.
func (s *server) stop() error {
	var errs []error
	if out, err := s.command("pg_ctl", "-D", filepath.Join(s.sock, "db"), "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		errs = append(errs, fmt.Errorf("pg_ctl stop: %v: %s", err, out))
		s.cmd.Process.Kill()
	}
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}

// baseDir is where server directories go: the temporary directory, unless
// running as root and the postgres user could not reach it (every parent
// must be searchable by others), then /tmp.
func baseDir() string {
	base := os.TempDir()
	if os.Geteuid() != 0 {
		return base
	}
	for d := base; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return base
		}
	}
}

// removeStale deletes the directories of servers whose test binary was
// killed before it could stop them (the server itself died with it:
// Pdeathsig). A directory whose owner is alive, or unknown, stays.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(baseDir(), "warren-pg-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		os.RemoveAll(d)
	}
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}
