// Package bc is bc(1) (and dc(1)) as resident commands: GNU bc's language
// over arbitrary-precision decimals (math/big), with its scale rules,
// ibase/obase, the -l math library, functions with dynamically scoped
// autos, arrays, and its output format (line breaks at BC_LINE_LENGTH).
//
// Untrusted input meets three bounds: no number (or scale) beyond
// MaxDigits digits, because one math/big operation cannot be interrupted
// and so its operand size is what keeps it inside the exec deadline;
// maxCalls nested calls and maxNesting nested constructs, because a Go
// stack overflow ends the whole process; and the sandbox's memory budget,
// charged for stored values and the parsed program. Loops and calls check
// the context, so the exec deadline stops a runaway script.
package bc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/optparse"
)

// Register adds bc and dc.
func Register(t commands.Table) {
	t.Register("bc", commands.Reserving(Bc))
	t.Register("dc", commands.Reserving(Dc))
}

var bcOpts = optparse.New("hilqswv", "help:h", "interactive:i", "mathlib:l", "quiet:q", "standard:s", "warn:w", "version:v")

const bcUsage = `usage: bc [options] [file ...]
  -h  --help         print this usage and exit
  -i  --interactive  force interactive mode
  -l  --mathlib      use the predefined math routines
  -q  --quiet        don't print initial banner
  -s  --standard     non-standard bc constructs are errors
  -w  --warn         warn about non-standard bc constructs
  -v  --version      print version information and exit
`

// Bc is bc(1).
func Bc(ctx context.Context, inv *commands.Invocation) int {
	opts, files, err := bcOpts.Parse(inv.Args[1:])
	if err != nil {
		return inv.BadUsage(err, fmt.Sprintf("bc: %s\n%s", err, bcUsage), 1)
	}
	lib := false
	for _, o := range opts {
		switch o.Key {
		case "h":
			io.WriteString(inv.Stdout, bcUsage)
			return 0
		case "v":
			io.WriteString(inv.Stdout, "bc 1.07.1 (warren)\n")
			return 0
		case "l":
			lib = true
		case "s", "w":
			// POSIX-strict checking is not built: a native bc does it.
			return inv.Refuse(&commands.UnsupportedError{Cmd: "bc", What: "-" + o.Key})
		}
	}
	bw := bufio.NewWriter(inv.Stdout)
	cw := &colWriter{w: bw, lineLen: lineLength(inv.Getenv("BC_LINE_LENGTH"))}
	in := newInterp(ctx, cw, inv.Stderr, commands.ReservationFrom(ctx))
	in.flushOut = func() { bw.Flush() }
	if lib {
		for k, v := range mathlib() {
			in.funcs[k] = v
		}
		in.scale = 20
	}
	stdin := bufio.NewReader(inv.Stdin)
	in.stdin = stdin
	status := 0
	for _, f := range append(files, "-") {
		var r *bufio.Reader
		label := "(standard_in)"
		if f == "-" {
			r = stdin
		} else {
			fh, err := inv.Open(f)
			if err != nil {
				bw.Flush()
				fmt.Fprintf(inv.Stderr, "File %s is unavailable.\n", f)
				return 1
			}
			defer fh.Close()
			r, label = bufio.NewReader(fh), f
		}
		st, done := runSource(ctx, inv, in, r, label)
		if done || st != 0 {
			status = st
			if done {
				break
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return 1
	}
	return status
}

// lineLength is BC_LINE_LENGTH: 0 turns line breaking off; values
// below 3 (and anything unreadable) mean the default, 70.
func lineLength(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 0 && n < 3 {
		return 70
	}
	return n
}

// runSource reads and runs one input. done: bc ends (quit, halt, a limit).
func runSource(ctx context.Context, inv *commands.Invocation, in *interp, r *bufio.Reader, label string) (status int, done bool) {
	p := &parser{lx: &lexer{r: r, line: 1}, grow: in.res.Grow}
	fatal := func(err error) (int, bool) {
		in.flushOut()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 130, true
		}
		var de *depthError
		if errors.As(err, &de) {
			err = &commands.DepthError{Limit: maxNesting}
		}
		if st, ok := inv.LimitExceeded(err); ok {
			return st, true
		}
		var le *limitError
		if errors.As(err, &le) {
			fmt.Fprintf(inv.Stderr, "bc: %s\n", le)
			return commands.StatusLimit, true
		}
		if errors.Is(err, errTokenTooLong) {
			fmt.Fprintf(inv.Stderr, "bc: %s: a token longer than %d bytes\n", label, maxToken)
			return commands.StatusLimit, true
		}
		fmt.Fprintf(inv.Stderr, "bc: %s: %s\n", label, commands.Strerror(err))
		return 1, true
	}
	for {
		it, err := p.nextItem()
		if it.fn == nil {
			// a line's statements are charged only while they run;
			// function bodies stay charged
			in.res.Shrink(int64(p.nodes/64) * 64 * 96)
		}
		var se *syntaxError
		switch {
		case errors.Is(err, errQuit):
			in.flushOut()
			return 0, true
		case errors.As(err, &se):
			in.flushOut()
			fmt.Fprintf(inv.Stderr, "%s %d: %s\n", label, se.line, se.msg)
			if err := p.skipLine(); err != nil {
				return fatal(err)
			}
			continue
		case err != nil:
			return fatal(err)
		case it.eof:
			in.flushOut()
			return 0, false
		case it.fn != nil:
			in.funcs[it.fn.name] = it.fn
			continue
		}
		halt, err := in.runLine(it.stmts)
		var re *runtimeError
		switch {
		case errors.Is(err, errHalt) || halt:
			in.flushOut()
			return 0, true
		case errors.As(err, &re):
			in.flushOut()
			fmt.Fprintf(inv.Stderr, "Runtime error (func=%s): %s\n", in.fname, re.msg)
		case err != nil:
			return fatal(err)
		}
		in.flushOut()
	}
}
