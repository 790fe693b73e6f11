// Package coreutils implements the text utilities of GNU coreutils (cat,
// sort, cut, tr, wc, ...) as resident commands: they read only the shell's
// streams and the vfs, stream through pooled buffers, and print GNU's
// output formats, diagnostics and exit statuses.
package coreutils

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// Register adds every coreutils text command to t.
func Register(t commands.Table) {
	for name, fn := range map[string]commands.Func{
		"cat": Cat, "tac": Tac, "rev": Rev, "head": Head, "tail": Tail, "wc": Wc,
		"sort": Sort, "uniq": Uniq, "cut": Cut, "tr": Tr, "paste": Paste,
		"join": Join, "comm": Comm, "column": Column, "nl": Nl, "fold": Fold,
		"expand": Expand, "unexpand": Unexpand, "fmt": Fmt, "od": Od, "xxd": Xxd,
		"hexdump": Hexdump, "strings": Strings, "seq": Seq, "shuf": Shuf, "yes": Yes,
		"tee": Tee, "expr": Expr, "echo": Echo, "printf": Printf, "base64": Base64,
		"md5sum": Md5sum, "sha1sum": Sha1sum, "sha256sum": Sha256sum, "sha512sum": Sha512sum,
		"sha224sum": Sha224sum, "sha384sum": Sha384sum, "b2sum": B2sum,
		"cksum": Cksum, "sum": Sum, "basename": Basename, "dirname": Dirname,
		"dos2unix": Dos2unix, "unix2dos": Dos2unix, "envsubst": Envsubst,
		"dd": Dd, "numfmt": Numfmt, "factor": Factor, "uuencode": Uuencode, "uudecode": Uudecode,
	} {
		// Buffering commands charge the sandbox's memory budget through
		// one reservation per invocation, given back when they return.
		t.Register(name, commands.Reserving(fn))
	}
}

// run is one command's execution state.
type run struct {
	ctx    context.Context
	inv    *commands.Invocation
	name   string
	sink   textio.ErrWriter // stdout, remembering the first write error
	out    *bufio.Writer
	status int
	// usageStatus is the exit status for usage errors (sort and friends use 2).
	usageStatus int
	// readError words a read failure; nil means GNU's usual "FILE: error".
	readError func(name string, err error) string
	// in wraps the current input (each): a field, so it does not allocate.
	in textio.ContextReader
	// stdin is the "-" operand, kept here so opening it does not allocate.
	stdin stdinCloser
	// stream: output leaves before each read of standard input (cat, as
	// GNU cat writes each block it reads; GNU's other filters hold theirs
	// in a block buffer when writing to a pipe, and so do these)
	stream bool
}

func begin(ctx context.Context, inv *commands.Invocation) *run {
	r := &run{ctx: ctx, inv: inv, name: inv.Args[0], usageStatus: 1}
	r.sink.W = inv.Stdout
	r.out = textio.NewWriter(&r.sink)
	return r
}

// done flushes the output and returns the exit status.
func (r *run) done() int {
	err := r.out.Flush()
	if err == nil {
		err = r.sink.Err
	}
	textio.PutWriter(r.out)
	switch {
	case err == nil:
	case textio.BrokenPipe(err):
		return 141 // killed by SIGPIPE, silently, as the real tools are
	case r.status == 0:
		r.status = 1
		if r.ctx.Err() == nil {
			fmt.Fprintf(r.inv.Stderr, "%s: write error: %s\n", r.name, commands.Strerror(err))
		}
	}
	return r.status
}

// stopped reports whether the command should stop: cancelled, or nobody
// reads its output any more.
func (r *run) stopped() bool { return r.ctx.Err() != nil || r.sink.Err != nil }

// q quotes s for a diagnostic in the invocation's locale.
func (r *run) q(s string) string { return quoteLocale(r.inv, s) }

// errorf prints "NAME: msg" (after flushing pending output, so the two
// streams interleave as they would from the real tool) and marks failure.
func (r *run) errorf(format string, args ...any) {
	r.out.Flush()
	fmt.Fprintf(r.inv.Stderr, "%s: %s\n", r.name, fmt.Sprintf(format, args...))
	if r.status == 0 {
		r.status = 1
	}
}

// usage reports a usage error and returns the status for it.
func (r *run) usage(err error, status int) int {
	r.out.Flush()
	textio.PutWriter(r.out)
	return r.inv.BadUsage(err, getopt.UsageText(r.name, err), status)
}

// fail prints "NAME: msg" and returns status (for errors before any output).
func (r *run) fail(status int, format string, args ...any) int {
	r.errorf(format, args...)
	r.status = status
	return r.done()
}

// limitFail ends the command with status 125 when err is a sandbox limit
// (memory, depth), reported in the limit's own words.
func (r *run) limitFail(err error) (int, bool) {
	r.out.Flush()
	st, ok := r.inv.LimitExceeded(err)
	if !ok {
		return 0, false
	}
	r.status = st
	return r.done(), true
}

// open opens an input operand ("-" is stdin), reporting failures itself.
func (r *run) open(name string) (io.ReadCloser, bool) {
	if name == "-" {
		r.stdin.Reader = r.inv.Stdin
		return &r.stdin, true
	}
	f, err := r.inv.Open(name)
	if err != nil {
		r.errorf("%s", commands.Describe(err))
		return nil, false
	}
	return f, true
}

// each calls fn with a pooled reader for every operand (stdin when none),
// reporting open and read errors as GNU does and continuing with the next.
func (r *run) each(files []string, fn func(name string, br *bufio.Reader) error) {
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		if r.stopped() {
			return
		}
		f, ok := r.open(name)
		if !ok {
			continue
		}
		r.in = textio.ContextReader{Ctx: r.ctx, R: f}
		if r.stream && name == "-" {
			r.in.Flush = r.out
		}
		br := textio.NewReader(&r.in)
		if err := fn(name, br); err != nil && !r.stopped() {
			if st, ok := r.inv.LimitExceeded(err); ok {
				r.out.Flush()
				r.status = st
			} else if r.readError != nil {
				r.errorf("%s", r.readError(name, err))
			} else {
				r.errorf("%s: %s", name, commands.Strerror(err))
			}
		}
		textio.PutReader(br)
		f.Close()
		r.in.R = nil
	}
}

// stdinCloser is stdin as an operand: closing it is a no-op.
type stdinCloser struct{ io.Reader }

func (*stdinCloser) Close() error { return nil }

// copyStream copies br to w in buffer-sized writes. (bufio.Reader.WriteTo
// would hand a read error to bufio.Writer.ReadFrom, which keeps it as the
// writer's sticky error and fails every later write.)
func copyStream(w *bufio.Writer, br *bufio.Reader) error {
	for {
		if br.Buffered() == 0 {
			// What came in leaves before the next read may wait: GNU cat
			// writes each block it reads, and a stream through cat (a
			// build log, tail -f) must not wait for its end.
			if err := w.Flush(); err != nil {
				return err
			}
			if _, err := br.Peek(1); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
		b, _ := br.Peek(br.Buffered())
		if _, err := w.Write(b); err != nil {
			return err
		}
		br.Discard(len(b))
	}
}

// errorReading is head and tail's wording of read failures.
func errorReading(name string, err error) string {
	return fmt.Sprintf("error reading %s: %s", quoteGNU(name), commands.Strerror(err))
}

// lines calls fn for every line of every operand.
func (r *run) lines(files []string, delim byte, fn func(line []byte, terminated bool) error) {
	r.each(files, func(name string, br *bufio.Reader) error {
		lr := textio.LineReader{R: br, Delim: delim, Limit: r.budget().Max, Res: commands.ReservationFrom(r.ctx)}
		for {
			line, term, err := lr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if r.sink.Err != nil {
				return r.sink.Err
			}
			if err := fn(line, term); err != nil {
				return err
			}
		}
	})
}

// help prints a usage summary generated from the option grammar.
func (r *run) help(spec *getopt.Spec) {
	fmt.Fprintf(r.out, "Usage: %s [OPTION]... [FILE]...\nOptions (GNU semantics):\n", r.name)
	long := map[string][]string{}
	for _, l := range spec.Long {
		k := l.Key
		if k == "" {
			k = l.Name
		}
		long[k] = append(long[k], "--"+l.Name)
	}
	seen := map[string]bool{}
	for i := 0; i < len(spec.Short); i++ {
		c := spec.Short[i]
		if c == ':' {
			continue
		}
		k := string(c)
		seen[k] = true
		arg := ""
		if i+1 < len(spec.Short) && spec.Short[i+1] == ':' {
			arg = " ARG"
		}
		names := append([]string{"-" + k}, long[k]...)
		fmt.Fprintf(r.out, "  %s%s\n", strings.Join(names, ", "), arg)
	}
	for _, l := range spec.Long {
		k := l.Key
		if k == "" {
			k = l.Name
		}
		if !seen[k] {
			seen[k] = true
			fmt.Fprintf(r.out, "  %s\n", strings.Join(long[k], ", "))
		}
	}
	fmt.Fprintf(r.out, "  --help, --version\n")
}

// budget is the memory budget for commands that buffer all input.
func (r *run) budget() *textio.Budget {
	b := &textio.Budget{Res: commands.ReservationFrom(r.ctx)}
	if r.inv.Sys != nil {
		b.Max = r.inv.Sys.MaxMemoryBytes
	}
	return b
}

// parse parses options, printing GNU's usage error on failure. --help and
// --version are answered here (status 0) for every command.
func (r *run) parse(spec *getopt.Spec) ([]getopt.Opt, []string, int, bool) {
	for _, a := range r.inv.Args[1:] {
		if a == "--" {
			break
		}
		switch a {
		case "--help":
			r.help(spec)
			return nil, nil, r.done(), false
		case "--version":
			fmt.Fprintf(r.out, "%s (GNU coreutils) 9.1\n(warren resident implementation)\n", r.name)
			return nil, nil, r.done(), false
		}
	}
	opts, operands, err := spec.Parse(r.inv.Args[1:])
	if err != nil {
		return nil, nil, r.usage(err, r.usageStatus), false
	}
	return opts, operands, 0, true
}
