package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/image"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/shell"
)

func init() { verbs = append(verbs, newClassifyCmd) }

// classifyRecord is one line of a JSONL input: a script ("command", as
// the just-bash fixtures and agent logs name it, or "script") or an argv.
type classifyRecord struct {
	Command string   `json:"command"`
	Script  string   `json:"script"`
	Argv    []string `json:"argv"`
}

// rungUnparsed marks a JSONL record whose script does not parse.
const rungUnparsed shell.Rung = "unparsed"

// classified is one output row: the input record (JSONL) and the command.
type classified struct {
	Record int `json:"record,omitempty"`
	shell.Classified
}

func newClassifyCmd() *cobra.Command {
	var (
		imgName, data string
		asJSON        bool
		cf            commandsFlags
	)
	c := &cobra.Command{
		Use:   "classify [--image IMG] SCRIPT|-",
		Short: "say which rung (resident, wasm, native, missing) each command of a script would take, without running it",
		Long: "classify parses a bash script (or a JSONL file of {\"command\": SCRIPT} or {\"argv\": [...]}\n" +
			"records) and reports, per command, the rung of the execution ladder it would take in a\n" +
			"sandbox of IMG under the commands policy, and why. Nothing runs: resident commands are\n" +
			"only probed over an empty throwaway filesystem to see whether they refuse the invocation.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var src []byte
			var err error
			if args[0] == "-" {
				src, err = io.ReadAll(cmd.InOrStdin())
			} else {
				src, err = os.ReadFile(args[0])
			}
			if err != nil {
				return fmt.Errorf("cannot read script: %w", err)
			}
			policy, err := cf.value()
			if err != nil {
				return err
			}
			fsys, _, imgCfg, closeImage, err := sandboxFS(cmd.Context(), data, imgName, api.DefaultLimits)
			if err != nil {
				return err
			}
			defer closeImage()
			start, err := imgCfg.StartOf(fsys.ReadFile)
			if err != nil {
				return fmt.Errorf("--image %s: %w", imgName, err)
			}
			// The tiers are reported as available: classify says what a
			// sandbox of the image would do; it never calls them.
			never := func(ctx context.Context, inv *commands.Invocation, p string) int { return 126 }
			scfg := sandbox.ShellConfig(residentCommands(), sandbox.SessionConfig{
				FS: fsys, Env: start.Env, Dir: start.Dir, Limits: api.DefaultLimits, Native: never, Commands: policy,
			})
			scfg.WASM = never
			sh, err := shell.New(scfg)
			if err != nil {
				return err
			}
			rows, err := classifyInput(sh, string(src))
			if err != nil {
				return err
			}
			return writeClassified(cmd.OutOrStdout(), rows, asJSON)
		},
	}
	c.Flags().StringVar(&imgName, "image", image.DefaultName, "image the sandbox would run: a tag or digest in the data directory's catalog")
	c.Flags().StringVar(&data, "data", "", "data directory holding images (default $WARREN_DATA, else ~/.local/share/warren)")
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per command instead of the table")
	cf.register(c.Flags())
	return c
}

// classifyInput classifies a script, or each record of a JSONL input
// (its first non-blank character is "{").
func classifyInput(sh *shell.Shell, src string) ([]classified, error) {
	if !strings.HasPrefix(strings.TrimSpace(src), "{") {
		cs, err := sh.ClassifyScript(src)
		if err != nil {
			return nil, fmt.Errorf("cannot parse script: %w", err)
		}
		rows := make([]classified, len(cs))
		for i, c := range cs {
			rows[i] = classified{Classified: c}
		}
		return rows, nil
	}
	var rows []classified
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		n++
		var rec classifyRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("record %d: %w", n, err)
		}
		if len(rec.Argv) > 0 {
			rung, why := sh.Classify(rec.Argv)
			rows = append(rows, classified{Record: n, Classified: shell.Classified{Line: 1, Argv: rec.Argv, Rung: rung, Why: why}})
			continue
		}
		script := rec.Command + rec.Script
		if script == "" {
			return nil, fmt.Errorf("record %d: want \"command\", \"script\" or \"argv\"", n)
		}
		cs, err := sh.ClassifyScript(script)
		if err != nil {
			// one bad record of a log is a row, not the end of the report
			rows = append(rows, classified{Record: n, Classified: shell.Classified{Rung: rungUnparsed, Why: "cannot parse: " + err.Error()}})
			continue
		}
		for _, c := range cs {
			rows = append(rows, classified{Record: n, Classified: c})
		}
	}
	return rows, sc.Err()
}

func writeClassified(w io.Writer, rows []classified, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	records := len(rows) > 0 && rows[0].Record > 0
	if records {
		fmt.Fprintln(tw, "RECORD\tLINE\tCOMMAND\tRUNG\tWHY")
	} else {
		fmt.Fprintln(tw, "LINE\tCOMMAND\tRUNG\tWHY")
	}
	counts := map[shell.Rung]int{}
	for _, r := range rows {
		cmdText := strings.Join(r.Argv, " ")
		if len(cmdText) > 60 {
			cmdText = cmdText[:57] + "..."
		}
		cmdText = strings.NewReplacer("\n", `\n`, "\t", " ").Replace(cmdText)
		if records {
			fmt.Fprintf(tw, "%d\t", r.Record)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", r.Line, cmdText, r.Rung, r.Why)
		counts[r.Rung]++
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var parts []string
	for _, k := range []shell.Rung{shell.RungResident, shell.RungWASM, shell.RungNative, shell.RungMissing, shell.RungDynamic, rungUnparsed} {
		if k != rungUnparsed || counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		}
	}
	_, err := fmt.Fprintf(w, "%d commands: %s\n", len(rows), strings.Join(parts, ", "))
	return err
}
