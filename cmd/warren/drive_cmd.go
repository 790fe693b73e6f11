package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
)

func init() { verbs = append(verbs, newDriveCmd) }

// newDriveCmd is `warren drive create|ls|get|rm`; mounting is a sandbox
// verb (`warren sandbox mount ID DRIVE:/path`, mountCmds).
func newDriveCmd() *cobra.Command {
	var c conn
	cmd := &cobra.Command{Use: "drive", Short: "shared drives many sandboxes mount at once (warren sandbox mount ID DRIVE:/path)"}
	c.flags(cmd)

	var size string
	create := &cobra.Command{
		Use: "create NAME [--size SIZE]", Short: "create a shared drive (optionally with a size quota, e.g. --size 10G)", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			var n int64
			if size != "" {
				var err error
				if n, err = parseSize(size); err != nil {
					return usageError(fmt.Errorf("--size: %w", err))
				}
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			d, err := cl.CreateDrive(cmd.Context(), api.DriveCreate{Name: args[0], Size: n})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), d.Name)
			return nil
		}),
	}
	create.Flags().StringVar(&size, "size", "", "size quota: bytes with an optional K, M, G or T suffix (default: none)")

	ls := &cobra.Command{
		Use: "ls", Short: "list drives", Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			ds, err := cl.ListDrives(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSIZE\tUSED\tCREATED")
			for _, d := range ds {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Name, driveSize(d.Size), volumeBytes(d.Used), d.CreatedAt.Local().Format(time.DateTime))
			}
			return tw.Flush()
		}),
	}

	get := &cobra.Command{
		Use: "get NAME", Short: "show a drive (size, usage)", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			d, err := cl.GetDrive(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "name:     %s\nsize:     %s\nused:     %s (%d bytes)\ncreated:  %s\n",
				d.Name, driveSize(d.Size), volumeBytes(d.Used), d.Used, d.CreatedAt.Local().Format(time.DateTime))
			return nil
		}),
	}

	rm := &cobra.Command{
		Use: "rm NAME...", Short: "delete drives and their files (refused while mounted)", Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			for _, n := range args {
				if err := cl.DeleteDrive(cmd.Context(), n); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	cmd.AddCommand(create, ls, get, rm)
	return cmd
}

func driveSize(n int64) string {
	if n == 0 {
		return "-"
	}
	return volumeBytes(n)
}

// mountCmds are `warren sandbox mount ID DRIVE:/path[:ro]`, `umount ID
// PATH` and `mounts ID`.
func mountCmds(c *conn) []*cobra.Command {
	mount := &cobra.Command{
		Use: "mount ID DRIVE:/path[:ro]", Short: "mount a shared drive into a sandbox at /path", Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			m, err := parseDriveMount(args[1])
			if err != nil {
				return usageError(err)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			if _, err := cl.MountDrive(cmd.Context(), args[0], m); err != nil {
				return err
			}
			return nil
		}),
	}
	umount := &cobra.Command{
		Use: "umount ID PATH", Aliases: []string{"unmount"}, Short: "unmount the drive mounted at PATH", Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			_, err = cl.UnmountDrive(cmd.Context(), args[0], args[1])
			return err
		}),
	}
	mounts := &cobra.Command{
		Use: "mounts ID", Short: "list the drives mounted in a sandbox", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			ms, err := cl.ListMounts(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PATH\tDRIVE\tMODE")
			for _, m := range ms {
				mode := "rw"
				if m.ReadOnly {
					mode = "ro"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Path, m.Drive, mode)
			}
			return tw.Flush()
		}),
	}
	return []*cobra.Command{mount, umount, mounts}
}

func parseDriveMount(s string) (api.DriveMount, error) { return parseMountSpec("mount", "DRIVE", s) }

// withDriveFlags adds --drive NAME:/path[:ro] to a create command and
// chains its parsing after next.
func withDriveFlags(cmd *cobra.Command, next func(*api.CreateRequest) error) func(*api.CreateRequest) error {
	var ds []string
	cmd.Flags().StringArrayVar(&ds, "drive", nil, "mount shared drive NAME at /path (:ro for read-only; repeatable)")
	return func(req *api.CreateRequest) error {
		if err := next(req); err != nil {
			return err
		}
		for _, s := range ds {
			m, err := parseMountSpec("--drive", "DRIVE", s)
			if err != nil {
				return usageError(err)
			}
			req.Drives = append(req.Drives, m)
		}
		return nil
	}
}

// driveMounts prints a sandbox's drives as --drive takes them.
func driveMounts(ds []api.DriveMount) string {
	var parts []string
	for _, d := range ds {
		s := d.Drive + ":" + d.Path
		if d.ReadOnly {
			s += ":ro"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}
