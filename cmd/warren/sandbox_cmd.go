package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

func init() { verbs = append(verbs, newSandboxCmd) }

// conn holds the client flags shared by the sandbox, fs and shell verbs.
type conn struct {
	server, key string
}

func (c *conn) flags(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&c.server, "server", "", "warren server (default $WARREN_SERVER or http://127.0.0.1:7711)")
	cmd.PersistentFlags().StringVar(&c.key, "api-key", "", "API key (default $WARREN_API_KEY, else the local admin.key)")
}

func (c *conn) client() (*client.Client, error) {
	server, key := c.server, c.key
	if server == "" {
		server = os.Getenv("WARREN_SERVER")
	}
	if server == "" {
		server = "http://127.0.0.1:7711"
	}
	if key == "" {
		key = os.Getenv("WARREN_API_KEY")
	}
	if key == "" {
		// A local `warren serve` with default --data: use its admin key.
		if data, err := os.ReadFile(filepath.Join(defaultDataDir(), "admin.key")); err == nil {
			key = strings.TrimSpace(string(data))
		}
	}
	return client.New(server, key)
}

// statusConnectionLost is the exit status of `warren sandbox exec` when
// the server goes away mid-exec.
const statusConnectionLost = 255

// cliError prints err and maps its class to the CLI's exit status: the one
// place where error classes become exit codes.
func cliError(err error) error {
	if err == nil {
		return nil
	}
	var st exitStatus
	if asExit(err, &st) {
		return err
	}
	fmt.Fprintln(os.Stderr, "warren:", err)
	switch {
	case errors.Is(err, client.ErrConnectionLost):
		// As ssh does: 255 is no status a command of the sandbox gives
		// through warren (exit statuses there are 0-254 in practice), and
		// the exec's own status is unknown.
		return exitStatus(statusConnectionLost)
	case errors.Is(err, errdefs.ErrInvalidArgument), errors.Is(err, api.ErrUnprocessable), errors.Is(err, api.ErrTooLarge):
		return exitStatus(2)
	case errors.Is(err, errdefs.ErrUnauthenticated), errors.Is(err, errdefs.ErrPermissionDenied):
		return exitStatus(3)
	case errors.Is(err, errdefs.ErrNotFound):
		return exitStatus(4)
	case errors.Is(err, errdefs.ErrAlreadyExists), errors.Is(err, errdefs.ErrFailedPrecondition), errors.Is(err, errdefs.ErrConflict):
		return exitStatus(5)
	case errors.Is(err, errdefs.ErrUnavailable), errors.Is(err, api.ErrOverloaded):
		return exitStatus(6)
	case errors.Is(err, errdefs.ErrResourceExhausted), errors.Is(err, api.ErrInsufficientStorage):
		return exitStatus(7)
	}
	return exitStatus(1)
}

// runE wraps a verb body so its errors go through cliError.
func runE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error { return cliError(fn(cmd, args)) }
}

func newSandboxCmd() *cobra.Command {
	var c conn
	cmd := &cobra.Command{Use: "sandbox", Short: "create, list, run and manage sandboxes on a warren server"}
	c.flags(cmd)

	var image, snapshot string
	var labels, env []string
	var standby, ttl time.Duration
	var lf limitFlags
	var createDurability, createSecurity string
	var genOpts func(*api.CreateRequest) error
	create := &cobra.Command{
		Use: "create", Short: "create a sandbox and print its id", Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			req := api.CreateRequest{Image: image, Snapshot: snapshot, StandbyAfter: api.Duration(standby), TTL: api.Duration(ttl), Durability: createDurability, Security: createSecurity}
			if req.Labels, err = keyValues("--label", labels); err != nil {
				return err
			}
			if req.Env, err = keyValues("--env", env); err != nil {
				return err
			}
			if req.Limits, err = lf.limits(); err != nil {
				return err
			}
			if err := genOpts(&req); err != nil {
				return err
			}
			sb, err := cl.Create(cmd.Context(), req)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), sb.ID)
			return nil
		}),
	}
	create.Flags().StringVar(&image, "image", "", "base image (default: the embedded one)")
	create.Flags().StringVar(&snapshot, "snapshot", "", "start from this snapshot")
	genOpts = generationFlags(create)
	create.Flags().StringArrayVar(&labels, "label", nil, "k=v label (repeatable)")
	create.Flags().StringArrayVar(&env, "env", nil, "K=V environment variable (repeatable)")
	create.Flags().DurationVar(&standby, "standby-after", 0, "idle time before hibernation (default: the server's)")
	create.Flags().DurationVar(&ttl, "ttl", 0, "delete the sandbox this long after creation")
	lf.register(create.Flags()) // the same limit flags as `warren run`
	create.Flags().StringVar(&createSecurity, "security", "", "native tier confinement: default or relaxed (no seccomp filter, capabilities or /proc masks; trusted images only)")
	create.Flags().StringVar(&createDurability, "durability", "", "default ack level of the sandbox's writes: memory, local or committed (default: the server's)")

	var lsLabels []string
	ls := &cobra.Command{
		Use: "ls", Short: "list sandboxes", Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			f, err := keyValues("--label", lsLabels)
			if err != nil {
				return err
			}
			sbs, err := cl.List(cmd.Context(), api.ListOptions{Labels: f})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tCREATED\tLABELS")
			for _, sb := range sbs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sb.ID, sb.State, sb.CreatedAt.Local().Format(time.DateTime), joinLabels(sb.Labels))
			}
			return tw.Flush()
		}),
	}
	ls.Flags().StringArrayVar(&lsLabels, "label", nil, "only sandboxes with label k=v (repeatable)")

	var session, script string
	var timeout time.Duration
	var isolated, printAck bool
	var durability string
	execCmd := &cobra.Command{
		Use:   "exec ID [-c SCRIPT | -- ARGV...]",
		Short: "run a script or a command in a sandbox; the exit status is the command's",
		Long: `exec runs a script (-c) or a command (after --) in a sandbox and streams its output.
The exit status is the command's. When warren itself fails it is one of:
  2 bad request, 3 not allowed, 4 no such sandbox, 5 conflict, 6 server unavailable
  (or shedding load: retry later), 7 a quota or limit is full, 1 anything else;
  255 the connection to the server was lost during the exec: it may have run in part
  or whole and its effects up to the loss may persist.`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			req := api.ExecRequest{Session: session, Script: script, Argv: args[1:], Timeout: api.Duration(timeout), Isolated: isolated, Durability: durability}
			if err := api.CheckDurability(durability); err != nil {
				return err
			}
			if (script == "") == (len(args) == 1) {
				return api.Errorf(errdefs.ErrInvalidArgument, "give either -c SCRIPT or a command after --")
			}
			if stdinIsPipe() {
				req.StdinReader = os.Stdin
			}
			res, err := cl.Exec(cmd.Context(), args[0], req, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if res.Limit != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warren: stopped by %s limit\n", res.Limit)
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
	execCmd.Flags().StringVarP(&script, "command", "c", "", "bash script to run")
	execCmd.Flags().StringVar(&session, "session", "", "shell session (default main)")
	execCmd.Flags().DurationVar(&timeout, "timeout", 0, "time limit for this exec")
	execCmd.Flags().BoolVar(&isolated, "isolated", false, "run in a throwaway copy of the session")
	execCmd.Flags().StringVar(&durability, "durability", "", "wait until the exec's writes are durable at this level: memory, local or committed (default: the sandbox's)")
	execCmd.Flags().BoolVar(&printAck, "print-durability", false, "print the level reached (and the generation) on stderr")

	simple := func(use, short string, fn func(ctx context.Context, cl *client.Client, id string) (api.Sandbox, error)) *cobra.Command {
		return &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: runE(func(cmd *cobra.Command, args []string) error {
				cl, err := c.client()
				if err != nil {
					return err
				}
				sb, err := fn(cmd.Context(), cl, args[0])
				if err != nil {
					return err
				}
				if sb.ID != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", sb.ID, sb.State)
				}
				return nil
			}),
		}
	}
	hibernate := simple("hibernate", "hibernate a sandbox to a StateRef", func(ctx context.Context, cl *client.Client, id string) (api.Sandbox, error) {
		return cl.Hibernate(ctx, id)
	})
	resume := simple("resume", "resume a hibernated sandbox", func(ctx context.Context, cl *client.Client, id string) (api.Sandbox, error) {
		return cl.Resume(ctx, id)
	})
	rm := simple("rm", "delete a sandbox", func(ctx context.Context, cl *client.Client, id string) (api.Sandbox, error) {
		return api.Sandbox{}, cl.Delete(ctx, id)
	})

	var count int
	fork := &cobra.Command{
		Use: "fork ID", Short: "fork a sandbox and print the children's ids", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			kids, err := cl.Fork(cmd.Context(), args[0], count)
			if err != nil {
				return err
			}
			for _, k := range kids {
				fmt.Fprintln(cmd.OutOrStdout(), k.ID)
			}
			return nil
		}),
	}
	fork.Flags().IntVar(&count, "count", 1, "number of children")

	snapshotCmd := &cobra.Command{
		Use: "snapshot ID NAME", Short: "save a sandbox's state as a named, immutable snapshot", Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			s, err := cl.CreateSnapshot(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", s.Name, s.StateRef)
			return nil
		}),
	}
	cmd.AddCommand(create, ls, execCmd, hibernate, resume, rm, fork, snapshotCmd, newGenerationsCmd(&c))
	return cmd
}

func keyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, api.Errorf(errdefs.ErrInvalidArgument, "%s %q: want k=v", flag, kv)
		}
		out[k] = v
	}
	return out, nil
}

func joinLabels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ",")
}

// stdinIsPipe: exec forwards stdin when it is a pipe or a file, never a
// terminal (an interactive session is `warren shell`).
func stdinIsPipe() bool {
	fi, err := os.Stdin.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice == 0
}

// parseSize reads a byte count: digits with an optional K, M, G or T
// suffix (powers of 1024; a trailing "B" or "iB" is allowed).
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q: want a positive number with an optional K, M, G or T suffix", s)
	}
	return v * mult, nil
}
