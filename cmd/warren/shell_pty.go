package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"golang.org/x/term"
)

// ptyShell runs an interactive shell on a terminal in sandbox id, with
// the local terminal in raw mode, and returns the shell's exit status.
func ptyShell(ctx context.Context, cl *client.Client, id, session string, in *os.File, out io.Writer) error {
	fd := int(in.Fd())
	cols, rows, err := term.GetSize(fd)
	if err != nil {
		cols, rows = 80, 24
	}
	proc, err := cl.StartPTY(ctx, id, api.ExecRequest{Session: session}, api.PTYSize{Cols: cols, Rows: rows})
	if err != nil {
		return err
	}
	p, err := cl.ConnectPTY(ctx, id, proc.PID)
	if err != nil {
		cl.SignalProcess(context.Background(), id, proc.PID, "HUP")
		return err
	}
	defer p.Close()
	old, err := term.MakeRaw(fd)
	if err != nil {
		return fmt.Errorf("raw mode on the local terminal: %w", err)
	}
	defer term.Restore(fd, old)

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	go func() {
		for range winch {
			if c, r, err := term.GetSize(fd); err == nil {
				p.Resize(api.PTYSize{Cols: c, Rows: r})
			}
		}
	}()
	go func() {
		// Keyboard to the sandbox until the terminal closes.
		b := make([]byte, 4096)
		for {
			n, err := in.Read(b)
			if n > 0 {
				if _, werr := p.Write(b[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	_, err = io.Copy(out, p)
	if errors.Is(err, client.ErrPTYExit) {
		if code, ok := p.ExitCode(); ok && code != 0 {
			return exitStatus(code)
		}
		return nil
	}
	return err
}
