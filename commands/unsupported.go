package commands

import (
	"errors"
	"fmt"
	"io"
)

// The refusal contract of the execution ladder (DESIGN.md "The execution
// ladder").
//
// A resident command that cannot honour an invocation (a subcommand or
// option it lacks, an input it cannot handle such as a binary patch) says
// so with Refuse BEFORE it has any effect: before it reads stdin, writes
// output or changes a file. The shell then runs the same argv, env, cwd and
// streams on the next rung that has the command (a WASM module or a native
// binary on PATH in the image). A command that fails for a real reason
// (a missing file, a bad pattern) reports it itself and never refuses.

// StatusUnsupported is the status of a refused invocation that no other
// rung could run.
const StatusUnsupported = 2

// UnsupportedError is the one typed signal of a refusal (checked with
// errors.As). Cmd and What name it ("git", "apply"; "sed", "--debug").
type UnsupportedError struct {
	Cmd  string
	What string
	// Diag and Status are the command's own report for when nothing else
	// runs the invocation: an option the resident command does not know
	// may be unknown to every implementation, so it gets GNU's "invalid
	// option" text and status. Diag "" means the shell's "not supported
	// here" line and StatusUnsupported.
	Diag   string
	Status int
}

func (e *UnsupportedError) Error() string {
	return e.Cmd + " " + e.What + ": not supported here"
}

// Report writes what the user sees when no other rung can run the
// invocation (why says why not, e.g. "no native git in this image") and
// returns the status.
func (e *UnsupportedError) Report(w io.Writer, why string) int {
	if e.Diag != "" {
		io.WriteString(w, e.Diag)
		if e.Status == 0 {
			return StatusUnsupported
		}
		return e.Status
	}
	if why != "" {
		why = " (" + why + ")"
	}
	fmt.Fprintf(w, "warren: %s%s\n", e.Error(), why)
	return StatusUnsupported
}

// Unsupported builds the refusal of what (a subcommand, an option) by inv's
// command.
func (inv *Invocation) Unsupported(what string) *UnsupportedError {
	return &UnsupportedError{Cmd: inv.Args[0], What: what}
}

// Refusals is where a caller that can run an invocation elsewhere
// (Invocation.FallBack) finds the command's refusal.
type Refusals struct{ e *UnsupportedError }

// Refusal is the refusal recorded (nil when the command did not refuse).
func (r *Refusals) Refusal() *UnsupportedError {
	if r == nil {
		return nil
	}
	return r.e
}

// Refuse records the refusal e and returns the status the command returns.
// When the caller can run the invocation elsewhere (FallBack) nothing is
// written: the caller reads Refusal and decides. Otherwise e is reported
// at once, as if no other rung existed.
func (inv *Invocation) Refuse(e *UnsupportedError) int {
	if inv.FallBack == nil {
		return e.Report(inv.Stderr, "")
	}
	inv.FallBack.e = e
	if e.Status != 0 {
		return e.Status
	}
	return StatusUnsupported
}

// Refusal is the refusal recorded by Refuse (nil when the command ran).
func (inv *Invocation) Refusal() *UnsupportedError { return inv.FallBack.Refusal() }

// UnknownOption is implemented by the option parser's errors
// (commands/internal/getopt, also behind optparse): the option as typed
// ("--debug", "-Z") when the parser did not know it, "" for other usage
// errors.
type UnknownOption interface {
	error
	UnknownOption() string
}

// BadUsage reports an option-parsing error err of inv's command: diag is
// the command's GNU text and status its GNU status. An option the
// command does not know is a refusal (Refuse), so a fuller implementation
// further down the ladder gets to run it; any other usage error (a missing
// argument) is reported as it is.
func (inv *Invocation) BadUsage(err error, diag string, status int) int {
	var u UnknownOption
	if errors.As(err, &u) && u.UnknownOption() != "" {
		return inv.Refuse(&UnsupportedError{Cmd: inv.Args[0], What: u.UnknownOption(), Diag: diag, Status: status})
	}
	io.WriteString(inv.Stderr, diag)
	return status
}
