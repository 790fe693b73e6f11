package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func init() { verbs = append(verbs, newSnapshotCmd) }

// newSnapshotCmd lists and removes a tenant's snapshots; `warren sandbox
// snapshot ID NAME` (and `snapshot create`) makes them.
func newSnapshotCmd() *cobra.Command {
	var c conn
	cmd := &cobra.Command{Use: "snapshot", Short: "list, create and remove named snapshots (start sandboxes from them with `sandbox create --snapshot NAME`)"}
	c.flags(cmd)
	ls := &cobra.Command{
		Use: "ls", Short: "list snapshots", Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			snaps, err := cl.ListSnapshots(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSANDBOX\tIMAGE\tCREATED\tSTATE")
			for _, s := range snaps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Sandbox, shortImage(s.Image), s.CreatedAt.Local().Format(time.DateTime), shortImage(s.StateRef))
			}
			return tw.Flush()
		}),
	}
	rm := &cobra.Command{
		Use: "rm NAME...", Short: "delete snapshots (sandboxes started from them keep their state)", Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			var first error
			for _, name := range args {
				if err := cl.DeleteSnapshot(cmd.Context(), name); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "warren:", hint(err))
					if first == nil {
						first = exitStatus(exitCode(err))
					}
					continue
				}
				fmt.Fprintln(cmd.OutOrStdout(), name)
			}
			return first
		}),
	}
	create := &cobra.Command{
		Use: "create ID NAME", Short: "save a sandbox's state as a named, immutable snapshot (as `sandbox snapshot`)", Args: cobra.ExactArgs(2),
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
	cmd.AddCommand(ls, create, rm)
	return cmd
}
