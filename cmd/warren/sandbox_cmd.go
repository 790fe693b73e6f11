package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
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

// cliError prints err and turns it into the exit status of its class
// (exitCode): the script's own status passes through untouched.
func cliError(err error) error {
	if err == nil {
		return nil
	}
	var st exitStatus
	if asExit(err, &st) {
		return err
	}
	fmt.Fprintln(os.Stderr, "warren:", hint(err))
	return exitStatus(exitCode(err))
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
	var standbyWithJobs bool
	var lf limitFlags
	var createDurability, createSecurity string
	var nf networkFlags
	var createCommands commandsFlags
	var genOpts func(*api.CreateRequest) error
	create := &cobra.Command{
		Use: "create", Short: "create a sandbox and print its id", Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			req := api.CreateRequest{Image: image, Snapshot: snapshot, StandbyAfter: api.Duration(standby), StandbyWithJobs: standbyWithJobs, TTL: api.Duration(ttl), Durability: createDurability, Security: createSecurity}
			if req.Commands, err = createCommands.value(); err != nil {
				return err
			}
			if req.Labels, err = keyValues("--label", labels); err != nil {
				return err
			}
			if req.Env, err = keyValues("--env", env); err != nil {
				return err
			}
			if req.Limits, err = lf.limits(); err != nil {
				return err
			}
			if req.Network, req.Secrets, err = nf.request(); err != nil {
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
	genOpts = withVolumeFlags(create, genOpts) // --volume NAME:/path[:ro] (volume_cmd.go)
	genOpts = withDriveFlags(create, genOpts)  // --drive NAME:/path[:ro] (drive_cmd.go)
	create.Flags().StringArrayVar(&labels, "label", nil, "k=v label (repeatable)")
	create.Flags().StringArrayVar(&env, "env", nil, "K=V environment variable (repeatable)")
	create.Flags().DurationVar(&standby, "standby-after", 0, "idle time before hibernation (default: the server's)")
	create.Flags().BoolVar(&standbyWithJobs, "standby-with-jobs", false, "let the idle timer hibernate the sandbox while background jobs run (standby ends them); by default a live job keeps it running")
	create.Flags().DurationVar(&ttl, "ttl", 0, "delete the sandbox this long after creation")
	lf.register(create.Flags()) // the same limit flags as `warren run`
	create.Flags().StringVar(&createSecurity, "security", "", "native tier confinement: default or relaxed (no seccomp filter, capabilities or /proc masks; trusted images only)")
	nf.register(create)
	createCommands.register(create.Flags())
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
			names := map[string]string{} // digest -> a name it has
			if imgs, err := cl.ListImages(cmd.Context()); err == nil {
				for _, im := range imgs {
					if _, ok := names[im.Digest]; !ok {
						names[im.Digest] = im.Name
					}
				}
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tIMAGE\tCREATED\tLABELS")
			for _, sb := range sbs {
				img := names[sb.Image]
				if img == "" {
					img = shortImage(sb.Image)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sb.ID, sb.State, img, sb.CreatedAt.Local().Format(time.DateTime), joinLabels(sb.Labels))
			}
			return tw.Flush()
		}),
	}
	ls.Flags().StringArrayVar(&lsLabels, "label", nil, "only sandboxes with label k=v (repeatable)")

	execCmd := newExecCmd(&c)

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
				if sb.StateRef != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s %s\n", sb.ID, sb.State, sb.StateRef)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", sb.ID, sb.State)
				}
				return nil
			}),
		}
	}
	hibernate := simple("hibernate", "hibernate a sandbox: prints its id, state (standby) and StateRef, the digest of its saved state", func(ctx context.Context, cl *client.Client, id string) (api.Sandbox, error) {
		return cl.Hibernate(ctx, id)
	})
	resume := simple("resume", "resume a hibernated sandbox: prints its id and state", func(ctx context.Context, cl *client.Client, id string) (api.Sandbox, error) {
		return cl.Resume(ctx, id)
	})
	rm := &cobra.Command{
		Use: "rm ID...", Short: "delete sandboxes", Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			// Every id is tried; the first failure sets the status, as rm(1).
			var first error
			for _, id := range args {
				if err := cl.Delete(cmd.Context(), id); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "warren:", hint(err))
					if first == nil {
						first = exitStatus(exitCode(err))
					}
					continue
				}
				fmt.Fprintln(cmd.OutOrStdout(), id)
			}
			return first
		}),
	}
	var asJSON bool
	get := &cobra.Command{
		Use: "get ID", Aliases: []string{"inspect"}, Short: "show a sandbox (state, image, limits, sessions, disk use); --json for all of it", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			sb, err := cl.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON || cmd.CalledAs() == "inspect" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(sb)
			}
			printSandbox(cmd.OutOrStdout(), sb)
			return nil
		}),
	}
	get.Flags().BoolVar(&asJSON, "json", false, "print the sandbox as JSON (what `inspect` prints)")

	var count int
	var forkLabels []string
	fork := &cobra.Command{
		Use: "fork ID", Short: "fork a sandbox and print the children's ids", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			req := api.ForkRequest{Count: count}
			if req.Labels, err = keyValues("--label", forkLabels); err != nil {
				return err
			}
			kids, err := cl.ForkWith(cmd.Context(), args[0], req)
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
	fork.Flags().StringArrayVar(&forkLabels, "label", nil, "k=v label of the children, over the parent's (repeatable)")

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
	cmd.AddCommand(create, ls, get, execCmd, hibernate, resume, rm, fork, snapshotCmd, newGenerationsCmd(&c))
	cmd.AddCommand(processCmds(&c)...)
	cmd.AddCommand(mountCmds(&c)...) // drive_cmd.go
	return cmd
}

// shortImage shows a digest as docker does (sha256: and 12 hex digits);
// names stay as they are.
func shortImage(s string) string {
	if d, ok := strings.CutPrefix(s, "sha256:"); ok && len(d) > 12 {
		return d[:12]
	}
	return s
}

func printSandbox(w io.Writer, sb api.Sandbox) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	row("id", sb.ID)
	row("state", sb.State)
	row("image", sb.Image)
	row("labels", joinLabels(sb.Labels))
	row("user", sb.User)
	row("cwd", sb.Cwd)
	row("created", sb.CreatedAt.Local().Format(time.DateTime))
	row("last active", sb.LastActive.Local().Format(time.DateTime))
	row("standby after", sb.StandbyAfter.Std().String())
	if sb.TTL > 0 {
		row("ttl", sb.TTL.Std().String())
	}
	row("parent", sb.Parent)
	row("snapshot", sb.Snapshot)
	row("state ref", sb.StateRef)
	row("sessions", strings.Join(sb.Sessions, ","))
	row("volumes", volumeMounts(sb.Volumes)) // volume_cmd.go
	row("drives", driveMounts(sb.Drives))    // drive_cmd.go
	l := sb.Limits
	row("limits", fmt.Sprintf("timeout %s, output %s, memory %s, disk %s", l.Timeout.Std(), sizeString(l.MaxOutputBytes), sizeString(l.MaxMemoryBytes), sizeString(l.DiskBytes)))
	if sb.State == api.StateRunning {
		row("disk use", fmt.Sprintf("%d bytes, %d inodes", sb.DiskBytes, sb.DiskInodes))
	}
	tw.Flush()
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
