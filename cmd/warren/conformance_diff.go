package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/conformance/differential"
)

func newConformanceDiffCmd() *cobra.Command {
	var (
		opts     differential.Options
		features string
		save     string
		show     int
	)
	c := &cobra.Command{
		Use:   "diff [--per-feature N] [--seed S] [--features a,b] [--minimize] [--save DIR]",
		Short: "differential testing: run generated scripts in warren and in the machine's bash and compare",
		Long: `diff generates scripts from a grammar of bash features (seeded, reproducible),
runs each in warren's resident shell and in the host's bash in directories with the
same path and a fixed environment, and compares stdout, the exit status, whether
anything went to stderr, and the files left behind. It prints a table per feature:
match, loud (warren failed and said so) and silent (a different answer) divergences.
--minimize shrinks each mismatch; --save writes them as regression-corpus cases
(conformance/differential/testdata/corpus is the one CI replays).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			if features != "" {
				opts.Features = strings.Split(features, ",")
			}
			r, err := differential.NewRunner(residentCommands())
			if err != nil {
				return err
			}
			defer r.Close()
			rep, err := differential.Campaign(ctx, r, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, m := range rep.Mismatches {
				if i >= show {
					break
				}
				fmt.Fprintf(out, "--- %s (%s): %s\n%s\n", m.Name, m.Class, m.Why, m.Script)
			}
			rep.WriteTable(out)
			if save != "" {
				// Minimized mismatches often collapse to the same script.
				seen, n := map[string]bool{}, 0
				for _, m := range rep.Mismatches {
					if seen[m.Script] {
						continue
					}
					seen[m.Script] = true
					if err := m.Save(save); err != nil {
						return err
					}
					n++
				}
				fmt.Fprintf(out, "saved %d distinct cases to %s\n", n, save)
			}
			return nil
		},
	}
	f := c.Flags()
	f.Uint64Var(&opts.Seed, "seed", 1, "first seed")
	f.IntVar(&opts.PerFeature, "per-feature", 50, "scripts per feature (and as many mixed ones)")
	f.IntVar(&opts.Jobs, "jobs", 2, "scripts run concurrently")
	f.BoolVar(&opts.Minimize, "minimize", false, "shrink each mismatch by deleting statements while it persists")
	f.StringVar(&features, "features", "", "comma-separated features (default all; see conformance/differential/gen.go)")
	f.StringVar(&save, "save", "", "write each mismatch as a corpus case (JSON) into this directory")
	f.IntVar(&show, "show", 20, "print this many mismatches")
	return c
}
