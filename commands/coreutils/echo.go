package coreutils

// echo: GNU coreutils' echo(1), escapes from the shared bashfmt package.

import (
	"context"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/bashfmt"
)

// Echo is GNU's echo: -n, -e, -E only when the whole word is such flags;
// -e knows \NNN and \0NNN but not \u (bash's builtin echo is the shell's).
func Echo(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	args, newline, escapes := bashfmt.EchoOptions(inv.Args[1:], false)
	for i, a := range args {
		if i > 0 {
			r.out.WriteByte(' ')
		}
		if escapes {
			s, stop := bashfmt.Unescape(a, bashfmt.GNUEchoEscapes)
			r.out.WriteString(s)
			if stop {
				return r.done()
			}
			continue
		}
		r.out.WriteString(a)
	}
	if newline {
		r.out.WriteByte('\n')
	}
	return r.done()
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func hexVal(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}
