package coreutils

// yes: the same line for ever, in large writes.

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// Yes is yes(1); it writes large blocks and stops when ctx is done or the
// reader goes away.
func Yes(ctx context.Context, inv *commands.Invocation) int {
	s := "y"
	if len(inv.Args) > 1 {
		args := inv.Args[1:]
		if args[0] == "--" {
			args = args[1:]
		}
		s = strings.Join(args, " ")
	}
	line := s + "\n"
	block := bytes.Repeat([]byte(line), max(1, 8192/len(line)))
	for ctx.Err() == nil {
		if _, err := inv.Stdout.Write(block); err != nil {
			if textio.BrokenPipe(err) {
				return 141
			}
			fmt.Fprintf(inv.Stderr, "yes: standard output: %s\n", commands.Strerror(err))
			return 1
		}
	}
	return 0
}
