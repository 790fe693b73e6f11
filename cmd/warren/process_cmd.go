package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
)

// processCmds are the verbs of a sandbox's background processes (the
// processes API): start, ps, attach, logs, kill.
func processCmds(c *conn) []*cobra.Command {
	var session, script string
	start := &cobra.Command{
		Use:   "start ID [-c SCRIPT | -- ARGV...]",
		Short: "start a script or a command in the background and print its pid",
		Long: `start runs a script (-c) or a command (after --) as a background process of the
sandbox and prints its pid at once; its output is kept (the last 1 MiB) for
` + "`warren sandbox logs`" + ` and ` + "`attach`" + `. By default it runs in a throwaway copy of
the main session (as exec --isolated): its file writes stay, and later execs do
not wait for it. With --session NAME it runs in that session, which it holds
until it exits.`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if (script == "") == (len(args) == 1) {
				return api.Errorf(errdefs.ErrInvalidArgument, "give either -c SCRIPT or a command after --")
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			p, err := cl.StartProcess(cmd.Context(), args[0], api.ExecRequest{Script: script, Argv: args[1:], Session: session, Isolated: session == ""})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), p.PID)
			return nil
		}),
	}
	start.Flags().StringVarP(&script, "command", "c", "", "bash script to run")
	start.Flags().StringVar(&session, "session", "", "run in this shell session, holding it until the process exits (default: a throwaway copy of main)")

	ps := &cobra.Command{
		Use: "ps ID", Short: "list a sandbox's background processes: those started with `start` and the jobs scripts started with &", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			procs, err := cl.ListProcesses(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PID\tSTATUS\tSESSION\tJOB\tSTARTED\tCOMMAND")
			for _, p := range procs {
				st := "running"
				if !p.Running && p.Result != nil {
					st = fmt.Sprintf("exited %d", p.Result.Exit)
					if p.Result.Limit != "" {
						st += " (" + p.Result.Limit + ")"
					}
				}
				// A script's background job (`cmd &`): its number and pid
				// in its shell, for kill %N / kill PID in a later exec.
				job := "-"
				if p.Job > 0 {
					job = fmt.Sprintf("%%%d(pid %d)", p.Job, p.ShellPID)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", p.PID, st, p.Session, job, p.StartedAt.Local().Format(time.DateTime), oneLine(p.Command, 60))
			}
			return tw.Flush()
		}),
	}

	attach := &cobra.Command{
		Use:   "attach ID PID",
		Short: "stream a background process's output (from what is kept) until it exits; stdin goes to it; the exit status is its",
		Args:  cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			pid, err := pidArg(args[1])
			if err != nil {
				return err
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			if stdinIsPipe() {
				go func() {
					// Stdin is forwarded as it comes; EOF closes the process's.
					buf := make([]byte, 32<<10)
					for {
						n, rerr := os.Stdin.Read(buf)
						if n > 0 {
							if cl.WriteStdin(cmd.Context(), args[0], pid, buf[:n], false) != nil {
								return
							}
						}
						if rerr != nil {
							cl.WriteStdin(cmd.Context(), args[0], pid, nil, true)
							return
						}
					}
				}()
			}
			res, err := cl.AttachProcess(cmd.Context(), args[0], pid, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if res.Limit != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warren: %s\n", limitNotice(cmd.Context(), cl, args[0], api.ExecRequest{}, res))
			}
			if res.Exit != 0 {
				return exitStatus(res.Exit)
			}
			return nil
		}),
	}

	var follow bool
	logs := &cobra.Command{
		Use:   "logs ID PID",
		Short: "print a background process's or job's output kept so far (the last 1 MiB; at most ~2 s of a process that keeps writing); -f follows it until it exits",
		Args:  cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			pid, err := pidArg(args[1])
			if err != nil {
				return err
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			var quiet *quietCancel
			if !follow {
				// The attach stream replays what is kept at once, then
				// follows: without -f, stop once it goes quiet.
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				quiet = newQuietCancel(300*time.Millisecond, cancel)
				defer quiet.stop()
				// A job that writes all the time (a dev server) is never
				// quiet: stop after what is kept has had time to arrive.
				capT := time.AfterFunc(logsCap, quiet.fire)
				defer capT.Stop()
				stdout, stderr = quiet.wrap(stdout), quiet.wrap(stderr)
			}
			_, err = cl.AttachProcess(ctx, args[0], pid, stdout, stderr)
			if err != nil && quiet != nil && quiet.fired() && errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}),
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the process exits")

	var signal string
	kill := &cobra.Command{
		Use: "kill ID PID", Short: "send a signal to a background process or job (PID as `ps` lists it; default TERM)", Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			pid, err := pidArg(args[1])
			if err != nil {
				return err
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			return cl.SignalProcess(cmd.Context(), args[0], pid, signal)
		}),
	}
	kill.Flags().StringVarP(&signal, "signal", "s", "TERM", "signal: TERM, KILL, INT, HUP, QUIT, USR1 or USR2")
	return []*cobra.Command{start, ps, attach, logs, kill}
}

func pidArg(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, usageError(fmt.Errorf("bad pid %q: want a positive number (see `warren sandbox ps ID`)", s))
	}
	return n, nil
}

func oneLine(s string, max int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' {
			r[i] = ' '
		}
	}
	if len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return string(r)
}

// logsCap bounds `logs` without -f: the kept output arrives in one burst;
// what comes later is the process going on.
const logsCap = 2 * time.Second

// quietCancel calls cancel once no write came for d (or fire is called).
type quietCancel struct {
	mu     sync.Mutex
	t      *time.Timer
	d      time.Duration
	done   bool
	cancel context.CancelFunc
}

func newQuietCancel(d time.Duration, cancel context.CancelFunc) *quietCancel {
	q := &quietCancel{d: d, cancel: cancel}
	q.t = time.AfterFunc(d, q.fire)
	return q
}

// fire cancels now, as if the stream had gone quiet.
func (q *quietCancel) fire() {
	q.mu.Lock()
	q.done = true
	q.mu.Unlock()
	q.cancel()
}

func (q *quietCancel) fired() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.done
}

func (q *quietCancel) stop() { q.t.Stop() }

func (q *quietCancel) wrap(w io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		if q.fired() {
			return len(p), nil // past the end: not printed
		}
		q.t.Reset(q.d)
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
