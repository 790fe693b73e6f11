package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair from the host's devpts.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

func setSize(t *testing.T, f *os.File, cols, rows int) {
	t.Helper()
	if err := unix.IoctlSetWinsize(int(f.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		t.Fatal(err)
	}
}

// TestShellOnTerminal: `warren shell ID` on a real terminal opens the
// sandbox's PTY: the local size reaches stty, SIGWINCH resizes, ^C
// interrupts with 130, and exit N is warren's own exit status.
func TestShellOnTerminal(t *testing.T) {
	p := startServe(t, t.TempDir(), "--no-native")
	key := p.adminKey(t)
	id, _, code := p.cli(t, key, "", "sandbox", "create")
	if code != 0 {
		t.Fatalf("create: %d", code)
	}
	id = strings.TrimSpace(id)
	master, slave := openPTY(t)
	defer master.Close()
	setSize(t, slave, 100, 30)
	cmd := exec.Command(warrenBinary(t), "shell", id)
	cmd.Env = append(os.Environ(), "WARREN_SERVER="+p.url, "WARREN_API_KEY="+key)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	mark := 0
	expect := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			s := screen.String()
			mu.Unlock()
			if i := strings.Index(s[mark:], want); i >= 0 {
				mark += i + len(want)
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("terminal never showed %q; after offset %d:\n%q", want, mark, screen.String()[mark:])
	}
	send := func(s string) {
		t.Helper()
		if _, err := master.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	expect("$ ")
	send("stty size\r")
	expect("30 100\r\n")
	setSize(t, master, 120, 40)
	cmd.Process.Signal(syscall.SIGWINCH)
	time.Sleep(200 * time.Millisecond)
	send("stty size\r")
	expect("40 120\r\n")
	send("sleep 100\r")
	expect("sleep 100\r\n")
	time.Sleep(100 * time.Millisecond)
	send("\x03")
	expect("^C")
	send("echo status=$?\r")
	expect("status=130\r\n")
	send("exit 3\r")
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("warren shell ended with %v, want exit status 3", err)
	}
}
