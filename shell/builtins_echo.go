package shell

// Builtins that write their arguments: echo (with its -e escapes) and
// printf (its format language is bashfmt's).

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/bashfmt"
	"github.com/warren-sandbox/warren/commands/sysinfo"
)

// biEcho is bash's echo: leading words made only of -n, -e and -E letters
// are options, the first other word starts the text; -e (or shopt
// xpg_echo) interprets backslash escapes.
func biEcho(r *runner, args []string) int {
	args, nl, esc := bashfmt.EchoOptions(args[1:], r.shopts["xpg_echo"])
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if esc {
			s, stop := bashfmt.Unescape(a, bashfmt.EchoEscapes)
			b.WriteString(s)
			if stop {
				nl = false
				break
			}
		} else {
			b.WriteString(a)
		}
	}
	if nl {
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(r.stdout(), b.String()); err != nil {
		return r.writeErr("echo", err)
	}
	return 0
}

// biPrintf is bash's printf builtin: its options (-v NAME, --) here, the
// format language bashfmt's (Dialect Bash), diagnostics with the shell's
// "bash: line N: printf: " prefix. With -v the output is kept, so it is
// charged to the memory budget and MaxStringBytes as it is made.
func biPrintf(r *runner, args []string) int {
	args = args[1:]
	varName, hasVar := "", false
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if a[1] != 'v' {
			r.errf("printf: %s: invalid option", a[:2])
			r.printfUsage()
			return 2
		}
		if len(a) > 2 {
			varName, args = a[2:], args[1:]
		} else if len(args) > 1 {
			varName, args = args[1], args[2:]
		} else {
			r.errf("printf: -v: option requires an argument")
			r.printfUsage()
			return 2
		}
		hasVar = true
	}
	if hasVar && !validRef(varName) {
		r.errf("printf: `%s': not a valid identifier", varName)
		return 2
	}
	if len(args) == 0 {
		r.printfUsage()
		return 2
	}
	p := bashfmt.Printer{
		Dialect: bashfmt.Bash,
		Warn:    func(e *bashfmt.Error) { r.errf("printf: %s", e.Msg) },
		Now:     r.now,
		Start:   r.start,
		SetVar: func(name string, n int) error {
			if !validRef(name) {
				return fmt.Errorf("`%s': not a valid identifier", name)
			}
			// bash goes on after a readonly name (setVar has said so)
			r.setVar(name, strconv.Itoa(n))
			return nil
		},
	}
	if strings.Contains(args[0], "%(") {
		p.Location = r.timeZone()
	}
	if !hasVar {
		st, err := p.Printf(r.context(), r.stdout(), args[0], args[1:])
		if err != nil {
			return r.printfErr(err)
		}
		return st
	}
	var b strings.Builder
	var held int64
	defer func() { r.memGrow(-held) }()
	p.Charge = func(n int) error {
		if b.Len()+n > r.rs.lim.MaxStringBytes {
			r.rs.fail(limitf("string size limit exceeded (%d bytes, max %d)", b.Len()+n, r.rs.lim.MaxStringBytes))
			r.exiting = true
			return errCancelled
		}
		if !r.memGrow(int64(n)) {
			return errCancelled
		}
		held += int64(n)
		return nil
	}
	st, err := p.Printf(r.context(), &b, args[0], args[1:])
	if err != nil {
		return r.printfErr(err)
	}
	if !r.setVar(varName, b.String()) {
		return 1
	}
	return st
}

// printfUsage is bash's usage line, which has no "bash: line N: " prefix.
func (r *runner) printfUsage() {
	io.WriteString(r.stderr(), "printf: usage: printf [-v var] format [arguments]\n")
}

// printfErr is printf's status after bashfmt stopped: a write error, a
// limit (already recorded) or the Run's end.
func (r *runner) printfErr(err error) int {
	if err == errCancelled || r.context().Err() != nil {
		r.exiting = r.exiting || r.context().Err() != nil
		return 1
	}
	return r.writeErr("printf", err)
}

// timeZone is where %(fmt)T shows a time: $TZ resolved in the sandbox's
// own zoneinfo as date(1) does, UTC when it is unset.
func (r *runner) timeZone() *time.Location {
	v := r.lookup("TZ")
	if v == nil || !v.Set {
		return time.UTC
	}
	return sysinfo.LoadZone(&commands.Invocation{FS: r.sh.cfg.FS}, v.str())
}
