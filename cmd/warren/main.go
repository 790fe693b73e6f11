// Command warren is the sandbox runtime's single binary: the service, the
// in-process runner, image tools, client verbs, benchmarks and conformance.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is stamped at release time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI and returns the process exit status, so tests can
// drive it without exiting.
func run(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		var st exitStatus
		if asExit(err, &st) {
			return int(st)
		}
		fmt.Fprintln(os.Stderr, "warren:", err)
		return exitCode(err)
	}
	return 0
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "warren",
		Short:         "warren: sandboxes for AI agents without machines",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "warren", version)
		},
	})
	for _, v := range verbs {
		root.AddCommand(v())
	}
	root.AddCommand(newExitCodesTopic())
	strictTree(root)
	return root
}

// verbs holds the constructors of the top-level verbs; each verb's file
// appends its own in init, so verbs are added without editing this file.
var verbs []func() *cobra.Command

// exitStatus is returned by verbs whose exit status is not a failure of
// warren itself (a script's own status), so main exits with it silently.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func asExit(err error, st *exitStatus) bool {
	e, ok := err.(exitStatus)
	if ok {
		*st = e
	}
	return ok
}
