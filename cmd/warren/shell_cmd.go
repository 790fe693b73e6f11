package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"golang.org/x/term"
)

func init() { verbs = append(verbs, newShellCmd) }

func newShellCmd() *cobra.Command {
	var c conn
	var session string
	var noPTY bool
	cmd := &cobra.Command{
		Use:   "shell ID",
		Short: "an interactive line-by-line session in a sandbox (Ctrl-D to leave)",
		Long: `On a terminal, shell opens an interactive shell on a pseudo-terminal in
the sandbox (the local terminal in raw mode, resized with the window; line
editing, history, ^C and ^D as in bash; the exit status is the shell's).

Otherwise (or with --no-pty) it reads lines, runs each in the sandbox's session and prints the output.
The session keeps its state between lines (cwd, variables, functions), and
across hibernate and restart. A line ending in \ continues on the next.
Local commands: "history" lists this session's lines, "!!" repeats the last
one and "!N" repeats line N.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			id := args[0]
			if _, err := cl.Get(cmd.Context(), id); err != nil {
				return err
			}
			if in, ok := cmd.InOrStdin().(*os.File); ok && !noPTY && term.IsTerminal(int(in.Fd())) {
				s := ""
				if cmd.Flags().Changed("session") {
					s = session
				}
				return ptyShell(cmd.Context(), cl, id, s, in, cmd.OutOrStdout())
			}
			return shellLoop(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), session, func(line string) (int, error) {
				res, err := cl.Exec(cmd.Context(), id, api.ExecRequest{Script: line, Session: session}, cmd.OutOrStdout(), cmd.ErrOrStderr())
				return res.Exit, err
			})
		}),
	}
	c.flags(cmd)
	cmd.Flags().StringVar(&session, "session", "main", "shell session (on a terminal: a session of its own unless given)")
	cmd.Flags().BoolVar(&noPTY, "no-pty", false, "read lines even when stdin is a terminal")
	return cmd
}

// shellLoop is the REPL: prompt, read a (possibly continued) line, expand
// history references, run, repeat until EOF.
func shellLoop(in io.Reader, out, errw io.Writer, session string, run func(string) (int, error)) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var history []string
	status := 0
	for {
		prompt := session + "$ "
		if status != 0 {
			prompt = fmt.Sprintf("%s [%d]$ ", session, status)
		}
		fmt.Fprint(out, prompt)
		var line string
		for {
			if !sc.Scan() {
				fmt.Fprintln(out)
				return sc.Err()
			}
			part := sc.Text()
			if strings.HasSuffix(part, `\`) {
				line += strings.TrimSuffix(part, `\`) + "\n"
				fmt.Fprint(out, "> ")
				continue
			}
			line += part
			break
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case trimmed == "history":
			for i, h := range history {
				fmt.Fprintf(out, "%5d  %s\n", i+1, h)
			}
			continue
		case trimmed == "!!":
			if len(history) == 0 {
				fmt.Fprintln(errw, "warren: !!: event not found")
				continue
			}
			line = history[len(history)-1]
			fmt.Fprintln(out, line)
		case strings.HasPrefix(trimmed, "!"):
			n, err := strconv.Atoi(trimmed[1:])
			if err != nil || n < 1 || n > len(history) {
				fmt.Fprintf(errw, "warren: %s: event not found\n", trimmed)
				continue
			}
			line = history[n-1]
			fmt.Fprintln(out, line)
		}
		history = append(history, line)
		st, err := run(line)
		if err != nil {
			fmt.Fprintln(errw, "warren:", err)
			status = 1
			continue
		}
		status = st
	}
}
