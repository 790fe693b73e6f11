package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
)

func init() { verbs = append(verbs, newVolumeCmd) }

// newVolumeCmd is `warren volume create|ls|get|resize|rm`.
func newVolumeCmd() *cobra.Command {
	var c conn
	cmd := &cobra.Command{Use: "volume", Short: "durable volumes that outlive sandboxes (attach with sandbox create --volume NAME:/path)"}
	c.flags(cmd)

	var size string
	create := &cobra.Command{
		Use: "create NAME --size SIZE", Short: "create a volume with a size quota (e.g. --size 10G)", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if size == "" {
				return usageError(fmt.Errorf("volume create: --size is required (e.g. --size 10G)"))
			}
			n, err := parseSize(size)
			if err != nil {
				return usageError(fmt.Errorf("--size: %w", err))
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			v, err := cl.CreateVolume(cmd.Context(), api.VolumeCreate{Name: args[0], Size: n})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), v.Name)
			return nil
		}),
	}
	create.Flags().StringVar(&size, "size", "", "size quota: bytes with an optional K, M, G or T suffix")

	ls := &cobra.Command{
		Use: "ls", Short: "list volumes", Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			vs, err := cl.ListVolumes(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSIZE\tUSED\tATTACHED\tCREATED")
			for _, v := range vs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, volumeBytes(v.Size), volumeBytes(v.Used), attachedTo(v), v.CreatedAt.Local().Format(time.DateTime))
			}
			return tw.Flush()
		}),
	}

	get := &cobra.Command{
		Use: "get NAME", Short: "show a volume (size, usage, attached sandbox)", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			v, err := cl.GetVolume(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "name:        %s\nsize:        %s (%d bytes)\nused:        %s (%d bytes)\nattached:    %s\ngeneration:  %d\ncreated:     %s\n",
				v.Name, volumeBytes(v.Size), v.Size, volumeBytes(v.Used), v.Used, attachedTo(v), v.Generation, v.CreatedAt.Local().Format(time.DateTime))
			return nil
		}),
	}

	resize := &cobra.Command{
		Use: "resize NAME SIZE", Short: "grow a volume (shrinking is refused)", Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			n, err := parseSize(args[1])
			if err != nil {
				return usageError(err)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			v, err := cl.ResizeVolume(cmd.Context(), args[0], n)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", v.Name, volumeBytes(v.Size))
			return nil
		}),
	}

	rm := &cobra.Command{
		Use: "rm NAME...", Short: "delete volumes and their data (refused while attached)", Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			for _, n := range args {
				if err := cl.DeleteVolume(cmd.Context(), n); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	cmd.AddCommand(create, ls, get, resize, rm)
	return cmd
}

func attachedTo(v api.Volume) string {
	var parts []string
	if v.AttachedTo != "" {
		parts = append(parts, v.AttachedTo)
	}
	for _, r := range v.Readers {
		parts = append(parts, r+"(ro)")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// volumeBytes prints n in the largest power-of-1024 unit that keeps it
// readable (1.5G, 10M, 512).
func volumeBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprint(n)
	}
	f, i := float64(n)/1024, 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d%c", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f%c", f, units[i])
}

// withVolumeFlags adds --volume NAME:/path[:ro] to a create command and
// chains its parsing after next.
func withVolumeFlags(cmd *cobra.Command, next func(*api.CreateRequest) error) func(*api.CreateRequest) error {
	var vols []string
	cmd.Flags().StringArrayVar(&vols, "volume", nil, "attach volume NAME at /path, read-write (one sandbox at a time) or :ro (repeatable)")
	return func(req *api.CreateRequest) error {
		if err := next(req); err != nil {
			return err
		}
		for _, s := range vols {
			m, err := parseVolumeMount(s)
			if err != nil {
				return usageError(err)
			}
			req.Volumes = append(req.Volumes, m)
		}
		return nil
	}
}

func parseVolumeMount(s string) (api.VolumeMount, error) {
	m, err := parseMountSpec("--volume", "NAME", s)
	return api.VolumeMount{Name: m.Drive, Path: m.Path, ReadOnly: m.ReadOnly}, err
}

// parseMountSpec reads NAME:/path[:ro|:rw], the form --volume, --drive and
// sandbox mount take (as a DriveMount: NAME in Drive); what names the
// argument in errors, thing its first part.
func parseMountSpec(what, thing, s string) (api.DriveMount, error) {
	name, rest, ok := strings.Cut(s, ":")
	if !ok || name == "" || !strings.HasPrefix(rest, "/") {
		return api.DriveMount{}, fmt.Errorf("%s %q: want %s:/path or %s:/path:ro", what, s, thing, thing)
	}
	m := api.DriveMount{Drive: name, Path: rest}
	if q, mode, ok := strings.Cut(rest, ":"); ok {
		switch mode {
		case "ro":
			m.Path, m.ReadOnly = q, true
		case "rw":
			m.Path = q
		default:
			return api.DriveMount{}, fmt.Errorf("%s %q: mode %q: want ro or rw", what, s, mode)
		}
	}
	return m, nil
}

// volumeMounts prints a sandbox's volumes as --volume takes them.
func volumeMounts(vs []api.VolumeMount) string {
	var parts []string
	for _, v := range vs {
		s := v.Name + ":" + v.Path
		if v.ReadOnly {
			s += ":ro"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}
