package bashfmt

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Dialect is which printf is modelled.
type Dialect int

const (
	// Bash is bash 5.2's builtin printf: %(fmt)T, %n, %Q, backslash %q,
	// "invalid number" errors, range warnings that keep status 0, and \c
	// in the format printed as it is.
	Bash Dialect = iota
	// GNU is GNU coreutils 9.1's printf(1): quotearg %q, "expected a
	// numeric value" errors, flags checked against each conversion, \c in
	// the format ending the output, and escape errors that stop it.
	GNU
)

// Error is one diagnostic, worded as the dialect words it, without the
// program's prefix: the caller prints "bash: printf: " + Msg or
// "printf: " + Msg.
type Error struct {
	Msg string
	// Warning: the status stays as it is (bash's "warning: 1e999:
	// Numerical result out of range", "missing hex digit for \x");
	// everything else makes it 1.
	Warning bool
}

func (e *Error) Error() string { return e.Msg }

// Printer formats printf output in one Dialect. The zero value is bash's
// builtin with no hooks: diagnostics are dropped (the status still tells),
// nothing is charged and %(fmt)T reads the real clock in UTC.
type Printer struct {
	Dialect Dialect
	// Warn receives each diagnostic when it happens. In the GNU dialect
	// the output before it has been written first (GNU flushes stdout
	// before it complains); bash's builtin complains before its buffered
	// output, and so does this, up to the first 4 KiB.
	Warn func(*Error)
	// Charge is asked before each piece of output (at most 4 KiB) is
	// written; an error stops the call and is returned as it is. A caller
	// that keeps the output (printf -v) charges its memory budget here.
	Charge func(n int) error
	// Now is the clock for %(fmt)T without an argument or with -1; Start
	// is the shell's start for -2; Location is the TZ the time is shown
	// in. Bash only; nil Now is time.Now, nil Location is UTC.
	Now      func() time.Time
	Start    time.Time
	Location *time.Location
	// SetVar is bash's %n: it receives the variable named by the argument
	// and the bytes written so far in this pass of the format; an error
	// (not a valid identifier) stops printf with status 1. Nil ignores %n.
	SetVar func(name string, n int) error
	// QuoteArg quotes an operand in a GNU diagnostic, as QuoteGNUDiag
	// does for the caller's locale. Nil is QuoteGNUDiag in C.
	QuoteArg func(string) string
}

// chunk is how much output is gathered before it is charged and written.
const chunk = 4096

// spaces and zeros are what pad copies from.
var spaces, zeros = strings.Repeat(" ", chunk), strings.Repeat("0", chunk)

// Printf writes format applied to args to w, reusing the format while
// arguments remain (and once with none), missing arguments taken as empty
// strings or zero. It returns printf's exit status (0, or 1 after an
// error) and a non-nil error only when writing failed, Charge refused or
// ctx ended; the output before that stays written.
//
//	p := Printer{Dialect: Bash}
//	p.Printf(ctx, w, "%s=%d\n", []string{"a", "1", "b"}) // a=1\nb=0\n
func (p *Printer) Printf(ctx context.Context, w io.Writer, format string, args []string) (int, error) {
	r := &run{p: p, ctx: ctx, w: w, args: args}
	r.buf = make([]byte, 0, 256)
	for r.err == nil {
		before := r.ai
		if r.pass(format) {
			break
		}
		if r.ai >= len(r.args) || r.ai == before {
			break
		}
	}
	if p.Dialect == GNU && r.err == nil && !r.ended && r.ai < len(r.args) {
		r.diag(true, "warning: ignoring excess arguments, starting with %s", r.gnuQuote(r.args[r.ai]))
	}
	if r.overflow && r.err == nil {
		r.diag(false, "write error") // glibc refused a width past INT_MAX
	}
	r.flush()
	return r.status, r.err
}

// run is one Printf call.
type run struct {
	p    *Printer
	ctx  context.Context
	w    io.Writer
	buf  []byte
	err  error // write failure, Charge refusal or ctx end: stop
	args []string
	ai   int // next argument
	// status is the exit status so far; ended: GNU stopped (\c or an
	// error), so no excess-arguments warning.
	status   int
	ended    bool
	overflow bool
	passN    int // bytes written in this pass of the format (%n)
}

func (r *run) write(b []byte) {
	r.passN += len(b)
	for len(b) > 0 && r.err == nil {
		n := min(len(b), chunk-len(r.buf))
		r.buf = append(r.buf, b[:n]...)
		b = b[n:]
		if len(r.buf) >= chunk {
			r.flush()
		}
	}
}

func (r *run) writeString(s string) {
	r.passN += len(s)
	for len(s) > 0 && r.err == nil {
		n := min(len(s), chunk-len(r.buf))
		r.buf = append(r.buf, s[:n]...)
		s = s[n:]
		if len(r.buf) >= chunk {
			r.flush()
		}
	}
}

func (r *run) writeByte(c byte) {
	r.passN++
	r.buf = append(r.buf, c)
	if len(r.buf) >= chunk {
		r.flush()
	}
}

// pad writes n copies of c, a piece at a time: a width of a billion must
// not allocate a billion bytes, and must stop when ctx ends or Charge
// refuses.
func (r *run) pad(n int, c byte) {
	for n > 0 && r.err == nil {
		k := min(n, chunk-len(r.buf))
		if c == '0' {
			r.buf = append(r.buf, zeros[:k]...)
		} else {
			r.buf = append(r.buf, spaces[:k]...)
		}
		r.passN += k
		n -= k
		if len(r.buf) >= chunk {
			r.flush()
		}
	}
}

func (r *run) flush() {
	if len(r.buf) == 0 || r.err != nil {
		r.buf = r.buf[:0]
		return
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return
	}
	if r.p.Charge != nil {
		if err := r.p.Charge(len(r.buf)); err != nil {
			r.err = err
			return
		}
	}
	if _, err := r.w.Write(r.buf); err != nil {
		r.err = err
	}
	r.buf = r.buf[:0]
}

// diag reports a diagnostic; warning keeps the status.
func (r *run) diag(warning bool, format string, a ...any) {
	if r.p.Dialect == GNU {
		r.flush()
	}
	if !warning {
		r.status = 1
	}
	if r.p.Warn != nil {
		r.p.Warn(&Error{Msg: fmt.Sprintf(format, a...), Warning: warning})
	}
}

func (r *run) gnuQuote(s string) string {
	if r.p.QuoteArg != nil {
		return r.p.QuoteArg(s)
	}
	return QuoteGNUDiag(s, false)
}

// next takes the next argument; ok is false when none is left.
func (r *run) next() (string, bool) {
	if r.ai < len(r.args) {
		r.ai++
		return r.args[r.ai-1], true
	}
	return "", false
}

// pass applies format once; it reports whether printf must stop.
func (r *run) pass(format string) bool {
	r.passN = 0
	gnu := r.p.Dialect == GNU
	kind := escFormatBash
	if gnu {
		kind = escFormatGNU
	}
	for i := 0; i < len(format); i++ {
		if r.err != nil {
			return true
		}
		c := format[i]
		if c == '\\' {
			before := len(r.buf)
			n, stop, err := escape1(&r.buf, format[i+1:], kind, r.warnf)
			r.passN += len(r.buf) - before
			if err != nil {
				r.ended = true
				r.diag(false, "%s", err.Error())
				return true
			}
			if stop {
				r.ended = true
				return true
			}
			if n == 0 && gnu && i+1 < len(format) {
				n = 1 // GNU prints an unknown escape's character as it is
				r.writeByte(format[i+1])
			}
			i += n
			if len(r.buf) >= chunk {
				r.flush()
			}
			continue
		}
		if c != '%' {
			r.writeByte(c)
			continue
		}
		n, stop := r.conversion(format, i)
		if stop {
			return true
		}
		i += n - 1
	}
	return false
}

// warnf is bash's non-fatal escape complaint.
func (r *run) warnf(msg string) { r.diag(true, "%s", msg) }
