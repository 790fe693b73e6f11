package main

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
)

// newGenerationsCmd is `warren sandbox generations ID`.
func newGenerationsCmd(c *conn) *cobra.Command {
	return &cobra.Command{
		Use: "generations ID", Short: "list a sandbox's retained committed generations (oldest first)", Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			gens, err := cl.ListGenerations(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GENERATION\tCREATED\tEPOCH\tHEAD\tPINNED BY")
			for _, g := range gens {
				head := ""
				if g.Head {
					head = "head"
				}
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", g.Number, g.CreatedAt.Format(time.RFC3339), g.Epoch, head, strings.Join(g.PinnedBy, ","))
			}
			return tw.Flush()
		}),
	}
}

// generationFlags adds create's --from-generation, --keep-last and
// --keep-for; the returned func applies them to a request.
func generationFlags(create *cobra.Command) func(*api.CreateRequest) error {
	var from string
	var keepLast int
	var keepFor time.Duration
	f := create.Flags()
	f.StringVar(&from, "from-generation", "", "ID:N: start from generation N of sandbox ID (see `warren sandbox generations ID`)")
	f.IntVar(&keepLast, "keep-last", 0, fmt.Sprintf("retention: keep the last N generations (default %d)", api.DefaultRetention.KeepLast))
	f.DurationVar(&keepFor, "keep-for", 0, fmt.Sprintf("retention: keep every generation younger than this (default %s; negative: none by age)", api.DefaultRetention.KeepFor.Std()))
	return func(req *api.CreateRequest) error {
		if from != "" {
			ref, err := parseGenerationRef(from)
			if err != nil {
				return err
			}
			req.FromGeneration = &ref
		}
		if keepLast != 0 || keepFor != 0 {
			req.Retention = &api.Retention{KeepLast: keepLast, KeepFor: api.Duration(keepFor)}
		}
		return nil
	}
}

func parseGenerationRef(s string) (api.GenerationRef, error) {
	id, n, ok := strings.Cut(s, ":")
	num, err := strconv.ParseUint(n, 10, 64)
	if !ok || id == "" || err != nil || num == 0 {
		return api.GenerationRef{}, api.Errorf(errdefs.ErrInvalidArgument, "--from-generation %q: want SANDBOX:N (N from 1)", s)
	}
	return api.GenerationRef{Sandbox: id, Generation: num}, nil
}
