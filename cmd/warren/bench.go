package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/bench"
)

func init() { verbs = append(verbs, newBenchCmd) }

func newBenchCmd() *cobra.Command {
	var (
		opts             bench.Options
		asJSON, list     bool
		cpuProf, memProf string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "run warren's benchmark suite (peer-bench/v1, comparable with the peer harnesses)",
		Long: `bench measures warren on the peer-bench/v1 workloads (` + "`warren bench --list`" + ` names
them and the metrics each sets) over a base tree embedded in the binary (or
--base-tree FILE), and prints a table, or with --json one peer-bench/v1 object
on stdout (progress goes to stderr). Save two runs' --json output to compare
them metric by metric.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				for _, s := range bench.Registry {
					fmt.Fprintln(cmd.OutOrStdout(), s.Name, strings.Join(s.Keys, " "))
				}
				return nil
			}
			var sel []string
			for _, s := range opts.Scenarios {
				for _, x := range strings.Split(s, ",") {
					if x = strings.TrimSpace(x); x != "" {
						sel = append(sel, x)
					}
				}
			}
			opts.Scenarios = sel
			opts.Version = version
			if cpuProf != "" {
				f, err := os.Create(cpuProf)
				if err != nil {
					return fmt.Errorf("cannot create CPU profile: %w", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("cannot start CPU profile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			if memProf != "" {
				runtime.MemProfileRate = 4096
			}
			rep, err := bench.Run(cmd.Context(), opts, cmd.ErrOrStderr())
			if rep == nil {
				return err
			}
			if memProf != "" {
				if perr := writeAllocProfile(memProf); perr != nil {
					return perr
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, jerr := json.MarshalIndent(rep, "", "  ")
				if jerr != nil {
					return fmt.Errorf("cannot encode the report: %w", jerr)
				}
				if _, werr := out.Write(append(b, '\n')); werr != nil {
					return werr
				}
			} else if terr := bench.WriteTable(out, rep); terr != nil {
				return terr
			}
			if errors.Is(err, bench.ErrFailed) {
				fmt.Fprintln(cmd.ErrOrStderr(), "warren bench:", err)
				return exitStatus(1)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print one peer-bench/v1 JSON object on stdout")
	f.BoolVar(&opts.Quick, "quick", false, "scale sample counts down (whole run under 20 s)")
	f.StringArrayVar(&opts.Scenarios, "scenario", nil, "run only this scenario or metric (repeatable, or comma-separated)")
	f.IntVar(&opts.Agents, "agents", 0, "density: resident sandboxes (default 2000, --quick 200)")
	f.IntVar(&opts.Executors, "executors", 0, "density: goroutines running the due heartbeats (default 2 × GOMAXPROCS)")
	f.Float64Var(&opts.PeriodMS, "period-ms", 0, "density: heartbeat period per agent in ms (default 1000)")
	f.Float64Var(&opts.Seconds, "seconds", 0, "density: measured window in s (default 10, --quick 2)")
	f.Float64Var(&opts.Scale, "scale", 0, "multiply the latency phases' sample counts (default 1, --quick 0.1)")
	f.IntVar(&opts.MemN, "mem-n", 0, "mem_per_*_bytes: sandboxes kept (default 2000, --quick 200)")
	f.StringVar(&opts.BaseTree, "base-tree", "", "base tree (a peer-bench base-tree.json) to measure over (default: $WARREN_SHARED/peers/justbash/base-tree.json if present, else the one embedded in the binary)")
	f.BoolVar(&list, "list", false, "list the scenarios and the metric keys they set")
	f.StringVar(&cpuProf, "cpuprofile", "", "write a pprof CPU profile of the run to this file")
	f.StringVar(&memProf, "memprofile", "", "write a pprof allocation profile of the run to this file")
	return cmd
}

func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create allocation profile: %w", err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return fmt.Errorf("cannot write allocation profile: %w", err)
	}
	return nil
}
