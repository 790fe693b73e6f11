package coreutils

// printf: printf(1) as GNU coreutils prints it, on the shared engine.

import (
	"context"
	"fmt"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/bashfmt"
)

// Printf is GNU coreutils' printf(1): the format language is bashfmt's
// GNU dialect, diagnostics are "printf: ..." in the invocation's locale.
func Printf(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	args := inv.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		r.errorf("missing operand")
		fmt.Fprintf(inv.Stderr, "Try '%s --help' for more information.\n", r.name)
		return r.done()
	}
	utf8Locale := strings.HasPrefix(r.q(""), "‘")
	p := bashfmt.Printer{
		Dialect:  bashfmt.GNU,
		QuoteArg: func(s string) string { return bashfmt.QuoteGNUDiag(s, utf8Locale) },
		// Output streams to stdout and is not kept, so nothing is charged;
		// padding is written in pieces and stops when ctx ends.
		Warn: func(e *bashfmt.Error) {
			st := r.status
			r.errorf("%s", e.Msg)
			if e.Warning {
				r.status = st
			}
		},
	}
	st, err := p.Printf(ctx, r.out, args[0], args[1:])
	if err != nil && ctx.Err() == nil {
		if code, ok := r.limitFail(err); ok {
			return code
		}
	}
	r.status = max(r.status, st)
	return r.done()
}
