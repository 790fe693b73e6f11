package fileutils

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/vfs"
)

// flock is util-linux's flock(1) (2.38) over the vfs's advisory locks
// (vfs.File.Flock): on the sandbox's own files the lock table is the
// sandbox's, so its shells and background jobs exclude each other; on a
// shared drive the drive holds the lock, across sandboxes.
//
//	flock [-s|-x|-u] [-n|-w SECS] [-E CODE] [-o] [-F] [--verbose] FILE COMMAND [ARG...]
//	flock [options] FILE -c COMMAND-STRING
//	flock [options] FD
//
// FILE is opened (created if missing; a directory is opened read-only)
// and locked, COMMAND runs through the shell's ladder while the lock is
// held, and the lock goes when it ends. The status is COMMAND's; 1 (or -E
// CODE) when -n or -w gives up; util-linux's sysexits codes for the rest
// (64 usage, 65 a lock error, 66/73 the lock file cannot be opened).
//
// The FD form needs the shell's descriptor itself, so that the lock
// outlives flock and goes when the shell closes it; commands reach the
// shell's descriptors only through OpenHook's /dev/fd/N, which hands out
// a stand-in that cannot be locked. flock FD then fails with status 65
// and says so (it takes the lock if the shell ever hands out a lockable
// handle there). A missing COMMAND is the shell's "command not found"
// (127), not util-linux's 69.
func flock(ctx context.Context, inv *commands.Invocation) int {
	spec := getopt.Spec{Short: "sexnoFuw:E:hV", InOrder: true, Long: []getopt.Long{
		{Name: "shared", Key: "s"}, {Name: "exclusive", Key: "x"}, {Name: "unlock", Key: "u"},
		{Name: "nonblocking", Key: "n"}, {Name: "nonblock", Key: "n"}, {Name: "nb", Key: "n"},
		{Name: "timeout", Arg: getopt.Required, Key: "w"}, {Name: "wait", Arg: getopt.Required, Key: "w"},
		{Name: "conflict-exit-code", Arg: getopt.Required, Key: "E"},
		{Name: "close", Key: "o"}, {Name: "no-fork", Key: "F"}, {Name: "verbose"},
		{Name: "help", Key: "h"}, {Name: "version", Key: "V"},
	}}
	if len(inv.Args) < 2 {
		inv.Errorf("not enough arguments")
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", inv.Args[0])
		return exUsage
	}
	opts, args, err := spec.Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, exUsage)
	}
	how, nb, conflict, verbose := vfs.LOCK_EX, false, 1, false
	var wait time.Duration
	for _, o := range opts {
		switch o.Key {
		case "s":
			how = vfs.LOCK_SH
		case "x", "e":
			how = vfs.LOCK_EX
		case "u":
			how = vfs.LOCK_UN
		case "n":
			nb = true
		case "w":
			secs, err := strconv.ParseFloat(o.Arg, 64)
			if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) {
				inv.Errorf("invalid timeout value: '%s'", o.Arg)
				return exUsage
			}
			if secs < 0 {
				inv.Errorf("cannot set up timer: %s", commands.Strerror(syscall.EINVAL))
				return exOSErr
			}
			wait, nb = time.Duration(secs*float64(time.Second)), secs == 0
		case "E":
			n, err := strconv.Atoi(o.Arg)
			if err != nil {
				inv.Errorf("invalid exit code: '%s'", o.Arg)
				return exUsage
			}
			if n < 0 || n > 255 {
				inv.Errorf("exit code out of range (expected 0 to 255)")
				return exUsage
			}
			conflict = n
		case "verbose":
			verbose = true
		case "h":
			io.WriteString(inv.Stdout, flockUsage)
			return 0
		case "V":
			io.WriteString(inv.Stdout, "flock from util-linux 2.38.1\n")
			return 0
		}
		// -o and -F change nothing here: the command never holds the
		// lock file open, flock itself holds the lock while it runs.
	}
	if len(args) == 0 {
		inv.Errorf("requires file descriptor, file or directory")
		return exUsage
	}
	var argv []string
	if len(args) > 1 {
		argv = args[1:]
		if argv[0] == "-c" || argv[0] == "--command" {
			if len(argv) != 2 {
				inv.Errorf("%s requires exactly one command argument", argv[0])
				return exUsage
			}
			argv = []string{"sh", "-c", argv[1]}
		}
	}
	var h locker
	if argv == nil {
		fd, err := strconv.ParseInt(args[0], 10, 32)
		if err != nil {
			inv.Errorf("bad file descriptor: '%s'", args[0])
			return exUsage
		}
		var st int
		if h, st = fdLocker(inv, int(fd)); h == nil {
			return st
		}
	} else {
		f, st := openLockFile(inv, args[0])
		if f == nil {
			return st
		}
		defer f.Close() // releases the lock
		h = f
	}
	start := time.Now()
	lctx, cancel := ctx, context.CancelFunc(func() {})
	if wait > 0 {
		lctx, cancel = context.WithTimeout(ctx, wait)
	}
	op := how
	if nb {
		op |= vfs.LOCK_NB
	}
	err = h.Flock(lctx, op)
	timedOut := lctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return 130
	case errors.Is(err, syscall.EWOULDBLOCK):
		if verbose {
			inv.Errorf("failed to get lock")
		}
		return conflict
	case timedOut:
		if verbose {
			inv.Errorf("timeout while waiting to get lock")
		}
		return conflict
	default:
		inv.Errorf("%s: %s", args[0], commands.Strerror(err))
		if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOMEM) {
			return exOSErr
		}
		return exDataErr
	}
	if verbose {
		inv.Errorf("getting lock took %.6f seconds", time.Since(start).Seconds())
	}
	if argv == nil {
		return 0
	}
	if inv.Exec == nil {
		inv.Errorf("failed to execute %s: %s", argv[0], commands.Strerror(syscall.ENOSYS))
		return 126
	}
	if verbose {
		inv.Errorf("executing %s", argv[0])
	}
	st := inv.Exec(ctx, argv, inv.Stdin, inv.Stdout, inv.Stderr, inv.Env)
	if ctx.Err() != nil {
		return 130
	}
	return st
}

// sysexits codes, as util-linux's flock exits.
const (
	exUsage     = 64
	exDataErr   = 65
	exNoInput   = 66
	exOSErr     = 71
	exCantCreat = 73
)

type locker interface {
	Flock(ctx context.Context, how int) error
}

// openLockFile opens name for locking as util-linux does: read-only,
// created if missing; a directory (EISDIR) or a file on a read-only mount
// (EROFS) is opened read-only without O_CREAT.
func openLockFile(inv *commands.Invocation, name string) (*vfs.File, int) {
	abs := inv.Abs(name)
	f, err := inv.FS.OpenFile(abs, vfs.O_RDONLY|vfs.O_CREATE, 0o666&^inv.Umask)
	if errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.EROFS) {
		var err2 error
		if f, err2 = inv.FS.OpenFile(abs, vfs.O_RDONLY, 0); err2 == nil || !errors.Is(err2, syscall.ENOENT) {
			err = err2
		}
	}
	if err != nil {
		inv.Errorf("cannot open lock file %s: %s", name, commands.Strerror(err))
		if errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.ENOSPC) {
			return nil, exCantCreat
		}
		return nil, exNoInput
	}
	return f, 0
}

// fdLocker finds the shell's descriptor fd, through OpenHook's /dev/fd/N
// (see flock's comment for why that is usually not lockable).
func fdLocker(inv *commands.Invocation, fd int) (locker, int) {
	if inv.OpenHook != nil {
		f, handled, err := inv.OpenHook("/dev/fd/"+strconv.Itoa(fd), vfs.O_RDONLY, 0)
		if handled && err != nil {
			inv.Errorf("%d: %s", fd, commands.Strerror(syscall.EBADF))
			return nil, exDataErr
		}
		if l, ok := f.(locker); handled && ok {
			return l, 0
		}
	}
	inv.Errorf("%d: locking a shell file descriptor is not supported here; use flock FILE COMMAND or flock FILE -c COMMAND", fd)
	return nil, exDataErr
}

const flockUsage = `
Usage:
 flock [options] <file>|<directory> <command> [<argument>...]
 flock [options] <file>|<directory> -c <command>
 flock [options] <file descriptor number>

Manage file locks from shell scripts.

Options:
 -s, --shared             get a shared lock
 -x, --exclusive          get an exclusive lock (default)
 -u, --unlock             remove a lock
 -n, --nonblock           fail rather than wait
 -w, --timeout <secs>     wait for a limited amount of time
 -E, --conflict-exit-code <number>  exit code after conflict or timeout
 -o, --close              close file descriptor before running command
 -c, --command <command>  run a single command string through the shell
 -F, --no-fork            execute command without forking
     --verbose            increase verbosity

 -h, --help               display this help
 -V, --version            display version

For more details see flock(1).
`
