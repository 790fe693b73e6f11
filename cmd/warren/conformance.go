package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/conformance/fixtures"
	"github.com/warren-sandbox/warren/conformance/oils"
	"github.com/warren-sandbox/warren/sandbox/node"
)

func init() { verbs = append(verbs, newConformanceCmd) }

func newConformanceCmd() *cobra.Command {
	c := &cobra.Command{Use: "conformance", Short: "run shell conformance suites"}
	c.AddCommand(newConformanceOilsCmd(), newConformanceCommandsCmd(), newConformanceDiffCmd())
	return c
}

func newConformanceCommandsCmd() *cobra.Command {
	var (
		asJSON  bool
		verbose bool
		timeout time.Duration
		data    string
		imgRef  string
	)
	c := &cobra.Command{
		Use:   "commands [--json] [-v] DIR...",
		Short: "run command fixtures recorded from real bash (DIR/*.fixtures.json) in fresh sandboxes",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			fxs, err := fixtures.Load(args...)
			if err != nil {
				return err
			}
			base, _, closeBase, err := openBase(ctx, data, imgRef)
			if err != nil {
				return err
			}
			defer closeBase()
			outs := fixtures.Run(ctx, fxs, fixtures.ShellRunner(base, residentCommands()), timeout)
			out := cmd.OutOrStdout()
			if asJSON {
				// Only the summary: the table goes to stderr so stdout stays one JSON line.
				sum := fixtures.Report(cmd.ErrOrStderr(), outs, verbose)
				return json.NewEncoder(out).Encode(sum)
			}
			sum := fixtures.Report(out, outs, verbose)
			b, _ := json.Marshal(sum)
			fmt.Fprintln(out, string(b))
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print only the JSON summary on stdout (the table goes to stderr)")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "show every failing fixture")
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "per-fixture timeout")
	c.Flags().StringVar(&data, "data", "", "data directory holding images (default $WARREN_DATA, else ~/.local/share/warren)")
	c.Flags().StringVar(&imgRef, "image", "default", "base image of the sandboxes")
	return c
}

// residentCommands is the command table sandboxes get from this binary,
// the same one warren serve's nodes use.
func residentCommands() commands.Table { return node.Commands() }

func newConformanceOilsCmd() *cobra.Command {
	var (
		asJSON   bool
		refShell string
		timeout  time.Duration
		jobs     int
		match    string
		verbose  bool
	)
	c := &cobra.Command{
		Use:   "oils [--json] [--reference-shell PATH] DIR...",
		Short: "run the Oils spec cases (bash expectations) in fresh sandboxes",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			s, err := oils.Run(ctx, args, oils.Options{
				Commands: residentCommands(), RefShell: refShell,
				Timeout: timeout, Jobs: jobs, Match: match,
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				for _, f := range s.PerFile {
					if err := enc.Encode(f); err != nil {
						return err
					}
				}
			} else {
				s.WriteTable(out)
			}
			if verbose {
				for _, r := range s.Results {
					if !r.Pass {
						fmt.Fprintf(out, "FAIL %s #%d %s: %s\n", r.File, r.Index, r.Name, r.Why)
						if strings.Contains(r.Stderr, "command not found") {
							for _, l := range strings.Split(r.Stderr, "\n") {
								if strings.HasSuffix(l, "command not found") {
									fmt.Fprintf(out, "MISSING %s\n", l)
								}
							}
						}
					}
				}
			}
			fmt.Fprintln(out, s.JSON())
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print per-file results as JSON lines instead of a table")
	c.Flags().StringVar(&refShell, "reference-shell", "", "also run every case with this host shell")
	c.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "per-case timeout")
	c.Flags().IntVar(&jobs, "jobs", 0, "cases run concurrently (default GOMAXPROCS)")
	c.Flags().StringVar(&match, "match", "", "only files whose name contains this")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "list failing cases with the first mismatch")
	return c
}
