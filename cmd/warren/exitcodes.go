package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

// Exit statuses of warren's own failures. A script's status (`sandbox
// exec`, `run`) passes through unchanged; warren's failures take the
// sysexits(3) range, which shells and common tools leave alone (a script
// that exits 64-78 on purpose is rare, and --result tells them apart for
// certain).
const (
	exitUsage       = 64  // EX_USAGE: bad command line, flag value or request
	exitConflict    = 65  // EX_DATAERR: exists already, in use, wrong state
	exitNotFound    = 66  // EX_NOINPUT: no such sandbox, snapshot, image or file
	exitUnavailable = 69  // EX_UNAVAILABLE: server not running, unreachable or shutting down
	exitInternal    = 70  // EX_SOFTWARE: anything else that failed in warren
	exitQuota       = 73  // EX_CANTCREAT: a quota or limit of the server is full
	exitRetry       = 75  // EX_TEMPFAIL: the server sheds load; retry later
	exitNoPerm      = 77  // EX_NOPERM: missing, unknown or insufficient API key
	exitConnLost    = 255 // the connection was lost during an exec (as ssh)
)

const exitCodesHelp = `warren's exit statuses

A script's own status passes through unchanged: ` + "`warren sandbox exec`" + ` and
` + "`warren run`" + ` exit with the status of the script (0-255; 124 when a time
limit stopped it, 125 when another limit did, 128+N when signal N killed it).

When warren itself fails, every verb exits with one of (sysexits(3)):

  64  bad usage: unknown command, wrong arguments, a bad flag value, or a
      request the server refused as invalid
  65  conflict: the name exists already, the thing is in use or in the
      wrong state
  66  not found: no such sandbox, snapshot, image, process or file
  69  unavailable: the server is not running or cannot be reached, or is
      shutting down
  70  any other failure of warren (an internal error)
  73  a quota or limit of the server is full (sandboxes, disk)
  75  the server sheds load under memory pressure: retry later
  77  not allowed: the API key is missing, unknown or not an admin's
  255 the connection to the server was lost during an exec: the script
      may have run in part or whole, and its effects up to the loss persist

A script can exit 64-78 itself; to tell warren's failures from the
script's status for certain, give ` + "`warren sandbox exec --result FILE`" + `:
FILE then holds the exec's result as JSON (exit, limit, duration_ms,
cpu_seconds) exactly when the script ran, and is left empty when warren failed.`

// usageErr marks bad command lines and flag values.
type usageErr struct{ err error }

func (u usageErr) Error() string { return u.err.Error() }
func (u usageErr) Unwrap() error { return u.err }

// usageError marks bad arguments (exit status 64 through cliError).
func usageError(err error) error { return usageErr{err} }

// exitCode maps warren's failure classes to the statuses above: the one
// place where error classes become exit codes.
func exitCode(err error) int {
	var u usageErr
	switch {
	case errors.As(err, &u):
		return exitUsage
	case errors.Is(err, client.ErrConnectionLost):
		return exitConnLost
	case errors.Is(err, errdefs.ErrInvalidArgument), errors.Is(err, api.ErrUnprocessable), errors.Is(err, api.ErrTooLarge):
		return exitUsage
	case errors.Is(err, errdefs.ErrUnauthenticated), errors.Is(err, errdefs.ErrPermissionDenied):
		return exitNoPerm
	case errors.Is(err, errdefs.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return exitNotFound
	case errors.Is(err, errdefs.ErrAlreadyExists), errors.Is(err, errdefs.ErrFailedPrecondition), errors.Is(err, errdefs.ErrConflict):
		return exitConflict
	case errors.Is(err, api.ErrOverloaded):
		return exitRetry
	case errors.Is(err, errdefs.ErrUnavailable):
		return exitUnavailable
	case errors.Is(err, errdefs.ErrResourceExhausted), errors.Is(err, api.ErrInsufficientStorage):
		return exitQuota
	}
	return exitInternal
}

// strictTree makes every command of root refuse what it does not know:
// bad flags and wrong argument counts are usage errors (64), and a group
// (`warren sandbox`) given an unknown subcommand says so instead of
// printing its help and exiting 0.
func strictTree(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath()))
	})
	root.SetHelpCommand(&cobra.Command{
		Use: "help [command]", Short: "help about any command or topic (e.g. warren help exit-codes)",
		RunE: func(_ *cobra.Command, args []string) error {
			c, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usageError(fmt.Errorf("no help topic %q (see `warren --help`)", strings.Join(args, " ")))
			}
			return c.Help()
		},
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
			c.Args = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
					if s := c.SuggestionsFor(args[0]); len(s) > 0 {
						msg += "; did you mean " + strings.Join(s, " or ") + "?"
					}
					return usageError(fmt.Errorf("%s (see `%s --help`)", msg, c.CommandPath()))
				}
				return nil
			}
			c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		} else if c.Args != nil && !c.DisableFlagParsing {
			check := c.Args
			c.Args = func(c *cobra.Command, args []string) error {
				if err := check(c, args); err != nil {
					return usageError(fmt.Errorf("%s: %w (usage: %s)", c.CommandPath(), err, c.UseLine()))
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func newExitCodesTopic() *cobra.Command {
	// A command with neither Run nor subcommands is a help topic:
	// `warren help exit-codes`.
	return &cobra.Command{Use: "exit-codes", Short: "the exit statuses of warren's verbs", Long: exitCodesHelp}
}
