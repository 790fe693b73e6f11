package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

func newExecCmd(c *conn) *cobra.Command {
	var session, script, durability, resultFile, maxOutput string
	var timeout time.Duration
	var isolated, printAck bool
	var execCommands commandsFlags
	cmd := &cobra.Command{
		Use:   "exec ID [-c SCRIPT | -- ARGV...]",
		Short: "run a script or a command in a sandbox; the exit status is the command's",
		Long: `exec runs a script (-c) or a command (after --) in a sandbox and streams its output.
The exit status is the command's (124: a time limit stopped it, 125: another limit).
When warren itself fails it is one of 64-78 or 255 (` + "`warren help exit-codes`" + `);
--result FILE tells the two apart for certain.`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if resultFile != "" {
				// Empty until the script has run: an empty file after the
				// exec means warren failed, whatever the status.
				if err := os.WriteFile(resultFile, nil, 0o644); err != nil {
					return usageError(fmt.Errorf("--result: %w", err))
				}
			}
			req := api.ExecRequest{Session: session, Script: script, Argv: args[1:], Timeout: api.Duration(timeout), Isolated: isolated, Durability: durability}
			if err := api.CheckDurability(durability); err != nil {
				return err
			}
			if timeout < 0 {
				return api.Errorf(errdefs.ErrInvalidArgument, "--timeout %s: must not be negative", timeout)
			}
			var err error
			if req.Commands, err = execCommands.value(); err != nil {
				return err
			}
			if maxOutput != "" {
				n, err := parseSize(maxOutput)
				if err != nil {
					return api.Errorf(errdefs.ErrInvalidArgument, "--output-limit: %v", err)
				}
				req.MaxOutputBytes = n
			}
			if (script == "") == (len(args) == 1) {
				return api.Errorf(errdefs.ErrInvalidArgument, "give either -c SCRIPT or a command after --")
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			if stdinIsPipe() {
				req.StdinReader = os.Stdin
			}
			res, err := cl.Exec(cmd.Context(), args[0], req, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if resultFile != "" {
				data, _ := json.Marshal(res)
				if err := os.WriteFile(resultFile, append(data, '\n'), 0o644); err != nil {
					return fmt.Errorf("--result: %w", err)
				}
			}
			if res.Limit != "" {
				// Printed here, after the output, so the limit it names
				// never cuts it.
				fmt.Fprintf(cmd.ErrOrStderr(), "warren: %s\n", limitNotice(cmd.Context(), cl, args[0], req, res))
			}
			if printAck {
				if res.Generation != 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "warren: durability %s (generation %d)\n", res.Durability, res.Generation)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "warren: durability %s\n", res.Durability)
				}
			}
			if res.Exit != 0 {
				return exitStatus(res.Exit)
			}
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVarP(&script, "command", "c", "", "bash script to run")
	f.StringVar(&session, "session", "", "shell session (default main)")
	f.DurationVar(&timeout, "timeout", 0, "time limit for this exec (at most the sandbox's)")
	f.StringVar(&maxOutput, "output-limit", "", "stdout+stderr limit for this exec, e.g. 1M (at most the sandbox's --max-output)")
	f.BoolVar(&isolated, "isolated", false, "run in a throwaway copy of the session: file writes stay, shell state (variables, cwd, functions, aliases) does not, and it does not wait for the session's other execs")
	f.StringVar(&durability, "durability", "", "wait until the exec's writes are durable at this level: memory, local or committed (default: the sandbox's)")
	f.BoolVar(&printAck, "print-durability", false, "print the level reached (and the generation) on stderr")
	f.StringVar(&resultFile, "result", "", "write the exec's result as JSON to FILE (left empty when warren, not the script, failed)")
	execCommands.register(f)
	return cmd
}

// limitNotice words a limit the way the shell does when it stops a
// script itself (`warren run`), so each limit has one message.
func limitNotice(ctx context.Context, cl *client.Client, id string, req api.ExecRequest, res api.ExecResult) string {
	var lim api.Limits
	if sb, err := cl.Get(ctx, id); err == nil {
		lim = sb.Limits
	}
	switch {
	case res.Limit == "timeout":
		t := lim.Timeout.Std()
		if req.Timeout > 0 && (t == 0 || req.Timeout.Std() < t) {
			t = req.Timeout.Std()
		}
		if t == 0 {
			return "time limit exceeded"
		}
		return fmt.Sprintf("time limit exceeded (%s)", t)
	case res.Limit == "output":
		n := lim.MaxOutputBytes
		if req.MaxOutputBytes > 0 && (n == 0 || req.MaxOutputBytes < n) {
			n = req.MaxOutputBytes
		}
		if n == 0 {
			return "output limit exceeded"
		}
		return fmt.Sprintf("output limit exceeded (%d bytes)", n)
	case res.Limit == "memory":
		if lim.MaxMemoryBytes == 0 {
			return "memory limit exceeded"
		}
		return fmt.Sprintf("memory limit exceeded (%d MiB)", lim.MaxMemoryBytes>>20)
	case strings.HasPrefix(res.Limit, "signal:"):
		return "killed by SIG" + strings.TrimPrefix(res.Limit, "signal:")
	}
	return res.Limit + " limit exceeded"
}
