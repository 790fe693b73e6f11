package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/native"
	"github.com/warren-sandbox/warren/shell"
	"github.com/warren-sandbox/warren/terminal"
	"golang.org/x/sys/unix"
)

// A native command run from a terminal session gets a real
// pseudo-terminal: a pty pair from the host's devpts whose slave is the
// command's stdin, stdout and/or stderr (those of its streams that are
// the terminal; a redirected one stays as it is). The kernel's line
// discipline then echoes and edits, so isatty, TIOCGWINSZ, raw mode
// (python3's REPL, vi) behave as on any terminal. Keyboard input goes to
// the master unprocessed. The native init makes the pty the command's
// controlling terminal, so the kernel turns ^C into SIGINT and a resize
// into SIGWINCH for it; should it have none, ^C ends the command here
// (status 130) unless the program turned ISIG off.

// nativePTY replaces cmd's terminal streams by a pty slave and returns
// the function that ends the bridge after the command (nil when no
// stream is the terminal or no pty can be had: the command then gets
// pipes, as off a terminal).
func nativePTY(cmd *native.Cmd) (done func()) {
	termOf := func(x any) *terminal.Term { return terminal.TerminalOf(shell.TerminalOf(x)) }
	var term *terminal.Term
	for _, x := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if t := termOf(x); t != nil {
			term = t
		}
	}
	if term == nil {
		return nil
	}
	master, slave, err := openPTY()
	if err != nil {
		return nil
	}
	// ioctls through the poller's descriptor (never master.Fd(), which
	// would race with Close and make reads blocking).
	rc, err := master.SyscallConn()
	if err != nil {
		master.Close()
		slave.Close()
		return nil
	}
	ioctl := func(f func(fd int)) { rc.Control(func(fd uintptr) { f(int(fd)) }) }
	winsize := func(cols, rows int) {
		ioctl(func(fd int) {
			unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
		})
	}
	winsize(term.Size())
	if termOf(cmd.Stdin) == term {
		cmd.Stdin = slave
	}
	if termOf(cmd.Stdout) == term {
		cmd.Stdout = slave
	}
	if termOf(cmd.Stderr) == term {
		cmd.Stderr = slave
	}
	var wmu sync.Mutex
	stop := term.Raw(func(p []byte) bool {
		// Decided before the bytes go in (the kernel may signal and the
		// program exit at once): with a foreground process group (the
		// command took the pty as its controlling terminal) the kernel
		// signals it; else ^C ends the command here, unless the program
		// turned ISIG off.
		intr := false
		if bytes.IndexByte(p, 0x03) >= 0 {
			ioctl(func(fd int) {
				if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil && pg > 0 {
					return
				}
				tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
				intr = err == nil && tio.Lflag&unix.ISIG != 0
			})
		}
		wmu.Lock()
		master.Write(p)
		wmu.Unlock()
		return intr
	}, winsize)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		b := make([]byte, 32<<10)
		for {
			n, err := master.Read(b)
			if n > 0 {
				term.Display(b[:n])
			}
			if err != nil {
				return // EIO once every slave descriptor is closed
			}
		}
	}()
	return func() {
		stop()
		slave.Close()
		// What the command wrote is shown before the next prompt; a
		// child it left behind holding the slave does not hold the shell.
		select {
		case <-drained:
		case <-time.After(200 * time.Millisecond):
		}
		master.Close()
	}
}

func openPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	rc, err := m.SyscallConn()
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	n := 0
	cerr := rc.Control(func(fd uintptr) {
		if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
			n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}
