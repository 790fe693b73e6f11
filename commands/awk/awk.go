// Package awk runs awk programs with GoAWK (github.com/benhoyt/goawk) over
// the shell's streams, answering as gawk 5 does where GoAWK alone would not
// (compat.go, fields.go, divzero.go; docs/commands.md lists what is left).
// GoAWK would open files and run commands on the host, so it runs with
// NoExec, NoFileReads and NoFileWrites: input files are opened here
// through the vfs and fed to GoAWK as a sequence of "-" inputs, FILENAME
// and > "/dev/stderr" are rewritten (rewrite.go), and system(), pipes to
// and from commands and close() go through the shell (pipes.go). What is
// left out: print > "file" and getline < "file" (they fail with a clear
// error).
package awk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/benhoyt/goawk/interp"
	"github.com/benhoyt/goawk/lexer"
	"github.com/benhoyt/goawk/parser"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// Register adds awk (and the usual aliases).
func Register(t commands.Table) {
	t.Register("awk", Awk)
	t.Register("gawk", Awk)
	t.Register("mawk", Awk)
	t.Register("nawk", Awk)
}

// segments is stdin for GoAWK: each input file in turn, with an EOF between
// them so GoAWK's per-"-" scanners see one file each.
type segments struct {
	ctx      context.Context
	inv      *commands.Invocation
	names    []string
	cur      io.Reader
	closer   io.Closer
	opened   bool
	keepCR   bool // RS is the default newline: keep a \r before it (see crKeeper)
	stderr   io.Writer
	failed   bool
	started  bool
	current  string // the file being read, for FILENAME
	stdin    bool   // no file operands: FILENAME is "-" once reading starts
	queued   bool   // operandHook queued a file
	stdinEOF bool   // standard input, read for want of file operands, is done
}

// operandHook is the BEGIN action that hands the file operands to the
// segments (see Awk).
const operandHook = "BEGIN{for(__warren_a=1;__warren_a<ARGC;__warren_a++)if(" + operandFunc + "(ARGV[__warren_a]))ARGV[__warren_a]=\"-\"}"

const operandFunc = "__warren_operand"

// filename is FILENAME: "" before input is read (BEGIN), then the file
// being read, "-" for standard input (as mawk).
func (s *segments) filename() string {
	if s.current == "" && s.stdin && s.started {
		return "-"
	}
	return s.current
}

func (s *segments) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	if !s.opened && len(s.names) == 0 && !s.queued && !s.stdinEOF {
		// no file operands: GoAWK reads its standard input
		var r io.Reader = textio.WithContext(s.ctx, s.inv.Stdin)
		if s.keepCR {
			r = &crKeeper{r: r}
		}
		s.cur, s.closer, s.opened, s.stdin, s.started, s.stdinEOF = r, io.NopCloser(nil), true, true, true, true
	}
	if !s.opened {
		if len(s.names) == 0 {
			return 0, io.EOF
		}
		name := s.names[0]
		s.names = s.names[1:]
		f, err := s.inv.Open(name)
		if err != nil {
			// Fatal as in mawk and gawk: no further input, no END.
			fmt.Fprintf(s.stderr, "awk: cannot open %s (%s)\n", name, commands.Strerror(unwrap(err)))
			s.failed = true
			return 0, errCannotOpen
		}
		s.cur, s.closer, s.opened, s.current = f, f, true, name
		if s.keepCR {
			s.cur = &crKeeper{r: f}
		}
	}
	n, err := s.cur.Read(p)
	if err == io.EOF {
		s.closer.Close()
		s.opened = false
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	return n, err
}

// errCannotOpen ends the run when an input file cannot be opened (the
// message is already written).
var errCannotOpen = errors.New("awk: cannot open input")

// crKeeper doubles a \r that ends a line (before \n or at the end of the
// input). GoAWK splits default-RS records with bufio.ScanLines, which drops
// one trailing \r; POSIX awks (mawk, gawk) keep it as part of the record,
// so CRLF input prints back as CRLF.
type crKeeper struct {
	r    io.Reader
	buf  []byte
	out  []byte
	held bool // a \r ended the last chunk: its successor decides
	eof  bool
	err  error
}

func (c *crKeeper) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.eof {
			return 0, c.err
		}
		if c.buf == nil {
			c.buf = make([]byte, 32<<10)
		}
		n, err := c.r.Read(c.buf)
		if err != nil {
			c.eof, c.err = true, err
		}
		data := c.buf[:n]
		out := c.out[:0]
		if c.held && len(data) == 0 && !c.eof {
			continue
		}
		if c.held {
			c.held = false
			if len(data) > 0 && data[0] == '\n' || len(data) == 0 && c.eof {
				out = append(out, '\r', '\r')
			} else {
				out = append(out, '\r')
			}
		}
		for i, b := range data {
			if b == '\r' {
				switch {
				case i+1 < len(data):
					if data[i+1] == '\n' {
						out = append(out, '\r')
					}
				case c.eof:
					out = append(out, '\r')
				default:
					c.held = true
					continue
				}
			}
			out = append(out, b)
		}
		c.out = out
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// Awk is awk(1).
func Awk(ctx context.Context, inv *commands.Invocation) int {
	name := inv.Args[0]
	args := inv.Args[1:]
	var fs string
	var assigns []string
	var progFiles []string
	var sources []string // -e / --source
	haveFS := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		takeArg := func(flag string) (string, bool) {
			if len(a) > len(flag) {
				return a[len(flag):], true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			fmt.Fprintf(inv.Stderr, "%s: option requires an argument -- '%s'\n", name, flag[1:])
			return "", false
		}
		switch {
		case strings.HasPrefix(a, "-F"):
			v, ok := takeArg("-F")
			if !ok {
				return 2
			}
			fs, haveFS = v, true
		case strings.HasPrefix(a, "-v"):
			v, ok := takeArg("-v")
			if !ok {
				return 2
			}
			if !strings.Contains(v, "=") {
				fmt.Fprintf(inv.Stderr, "%s: invalid -v argument %q\n", name, v)
				return 2
			}
			assigns = append(assigns, v)
		case a == "-e" || a == "--source" || strings.HasPrefix(a, "--source="):
			// gawk's program text given as an option (may repeat)
			var v string
			if strings.HasPrefix(a, "--source=") {
				v = a[len("--source="):]
			} else {
				var ok bool
				if v, ok = takeArg(a); !ok {
					return 2
				}
			}
			sources = append(sources, v)
		case strings.HasPrefix(a, "-f"):
			v, ok := takeArg("-f")
			if !ok {
				return 2
			}
			progFiles = append(progFiles, v)
		case a == "--version" || a == "-version":
			fmt.Fprintln(inv.Stdout, "awk (GoAWK v1.29.1, warren)")
			return 0
		default:
			fmt.Fprintf(inv.Stderr, "%s: unknown option %s\n", name, a)
			return 2
		}
	}
	args = args[i:]
	var src string
	if len(progFiles) > 0 {
		var b strings.Builder
		for _, pf := range progFiles {
			f, err := inv.Open(pf)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "%s: %s\n", name, commands.Describe(err))
				return 2
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				fmt.Fprintf(inv.Stderr, "%s: %s: %s\n", name, pf, commands.Strerror(err))
				return 2
			}
			b.Write(data)
			b.WriteByte('\n')
		}
		src = b.String()
	} else if len(sources) > 0 {
		src = strings.Join(sources, "\n")
	} else {
		if len(args) == 0 {
			fmt.Fprintf(inv.Stderr, "usage: %s [-F fs][-v var=value][prog | -f progfile][file ...]\n", name)
			return 2
		}
		src, args = args[0], args[1:]
	}
	if len(progFiles) > 0 && len(sources) > 0 {
		src += "\n" + strings.Join(sources, "\n")
	}
	src = joinContinuedStrings(src)
	where := "cmd. line" // how gawk names the program in diagnostics
	if len(progFiles) == 1 && len(sources) == 0 {
		where = progFiles[0]
	}
	// An integer conversion in OFMT or CONVFMT is refused before anything
	// runs (GoAWK would print Go's %!d(float64=...)), so that a native
	// awk can run the program.
	bad := intFormatAssigned(src)
	for _, a := range assigns {
		if k, v, _ := strings.Cut(a, "="); (k == "OFMT" || k == "CONVFMT") && intFormat(v) {
			bad = k + "=" + v
		}
	}
	if bad != "" {
		return inv.Refuse(&commands.UnsupportedError{Cmd: name, What: bad + " (an integer conversion in OFMT or CONVFMT)"})
	}
	consts, divs := divisions(src, where)
	written := src // as written, for the diagnostics that name a line
	fmts := formatCalls(src)
	if len(consts) > 0 {
		for _, m := range consts {
			fmt.Fprintf(inv.Stderr, "%s: %s\n", name, m)
		}
		return 1
	}
	// The nesting bound first on the program as written: the rewrites
	// below lex it whole (a token slice as long as the program), which a
	// hostile program of a million parentheses makes cost seconds.
	if err := checkNesting(src); err != nil {
		st, _ := inv.LimitExceeded(err)
		return st
	}
	src = rewriteNumbers(src)
	src = rewriteBigNumbers(src)
	// gawk's extensions: calls rewritten, asort/asorti added as awk code
	// after the program (its lines keep their numbers).
	if rw, needSort := rewriteGawk(src); rw != src {
		src = rw
		if needSort {
			src += "\n" + asortSource
		}
	}
	chars := utf8Locale(inv)
	if rw, add := rewriteCompat(src, chars); rw != src {
		src = rw + "\n" + add
	}
	src = rewritePipes(src)
	pp := newPipes(ctx, inv, nil)
	seg := &segments{ctx: ctx, inv: inv, stderr: inv.Stderr}
	var sp *splitter
	gawk := gawkFuncs(inv, func(line int, msg string) {
		// gawk's form: where:line: (FILENAME=f FNR=n) warning: msg
		at := ""
		if nr, fnr, ok := sp.position(); ok && nr > 0 {
			at = fmt.Sprintf("(FILENAME=%s FNR=%d) ", seg.filename(), fnr)
		}
		fmt.Fprintf(inv.Stderr, "%s: %s:%d: %swarning: %s\n", name, where, line, at, msg)
	})
	for k, v := range compatFuncs(chars) {
		gawk[k] = v
	}
	for k, v := range bigFuncs() {
		gawk[k] = v
	}
	for k, v := range pp.funcs() {
		gawk[k] = v
	}
	// FILENAME: GoAWK only ever sees "-", so reads of it are rewritten to
	// ask the input sequence which file is current.
	if err := checkNesting(src); err != nil {
		st, _ := inv.LimitExceeded(err)
		return st
	}
	// The program is parsed as written first, so that parse errors name
	// the user's own lines and columns.
	firstFuncs := map[string]interface{}{filenameFunc: func() string { return "" }, ewriteFunc: func(string) int { return 0 }, splitFunc: func() int { return 0 }}
	for k, v := range gawk {
		firstFuncs[k] = v
	}
	asWritten, err := parser.ParseProgram([]byte(src), &parser.ParserConfig{Funcs: firstFuncs})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, err)
		return 2
	}
	var met *meter
	funcs := map[string]interface{}{
		splitFunc: func() int {
			if sp != nil {
				return sp.split()
			}
			return 0
		},
		filenameFunc: seg.filename,
		ewriteFunc: func(s string) int {
			io.WriteString(inv.Stderr, s)
			return 0
		},
		operandFunc: func(a string) int {
			if a == "" || isAssign(a) {
				return 0
			}
			if a == "/dev/stdin" {
				a = "-"
			}
			seg.names = append(seg.names, a)
			seg.queued = true
			return 1
		},
		meterFunc: func() int {
			if met != nil {
				return met.start()
			}
			return 0
		},
	}
	for k, v := range gawk {
		funcs[k] = v
	}
	if rewritten, ok := rewrite(src); ok {
		src = rewritten
	}
	// The metered program starts with a BEGIN action of its own, on the
	// same line so that runtime errors keep their line numbers. A program
	// that assigns FS and reads records also starts its main rules with
	// one that splits each record as it is read: GoAWK splits lazily, with
	// whatever FS is then, where POSIX awks split with the FS in force
	// when the record was read (FS set in an action applies from the next
	// record).
	head := "BEGIN{" + meterFunc + "()} "
	if strings.Contains(src, "getline") {
		head += operandHook + " "
	} else {
		src += "\n" + operandHook + "\n"
	}
	if len(asWritten.Actions) > 0 {
		head += `index($0, "\r") && ` + splitFunc + "(){} "
		if assignsFS(src) {
			head += "NF<0{} "
		}
	}
	prog, err := parser.ParseProgram([]byte(head+src), &parser.ParserConfig{Funcs: funcs})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, err)
		return 2
	}
	// File operands reach GoAWK as "-", each reading the next segment:
	// operandHook, the last BEGIN action (the first when the program uses
	// getline, which may read input in BEGIN), queues each operand that
	// is a file (not "" and not var=value, which stay in place so they
	// apply at the right time) and sets its ARGV entry to "-". So BEGIN
	// sees the operands as written, and a program that edits ARGV there
	// (ARGV[1] = "", ARGV[ARGC++] = "f") reads what it asked for.
	argv := append([]string{name}, args...)
	// A program that never sets RS to anything but a newline keeps the
	// newline RS, the only mode in which GoAWK drops a \r.
	seg.keepCR = !setsRS(src)
	for _, a := range append(append([]string{}, assigns...), args...) {
		if v, ok := strings.CutPrefix(a, "RS="); ok && unescapeFS(v) != "\n" {
			seg.keepCR = false
		}
	}
	var stdin io.Reader = seg
	env := []string{}
	for _, kv := range inv.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, k, v)
	}
	vars := []string{}
	if haveFS {
		if fs == "t" {
			fs = "\t"
		}
		vars = append(vars, "FS", unescapeFS(fs))
	}
	for _, a := range assigns {
		k, v, _ := strings.Cut(a, "=")
		v = unescapeAssign(v, func(msg string) { fmt.Fprintf(inv.Stderr, "%s: warning: %s\n", name, msg) })
		vars = append(vars, k, v)
	}
	out := textio.NewWriter(inv.Stdout)
	defer textio.PutWriter(out)
	pp.out = out
	cfg := &interp.Config{
		// Not a *bufio.Writer, which GoAWK would flush itself at the end:
		// the commands still open run first, then awk's output is
		// flushed (gawk's order; see pipes.go).
		Stdin: stdin, Output: struct{ io.Writer }{out}, Error: inv.Stderr,
		Argv0: name, Args: argv[1:], Vars: vars, Environ: env,
		NoExec: true, NoFileReads: true, NoFileWrites: true,
		Funcs: funcs,
		// length, substr, index, match and %c count characters in a
		// UTF-8 locale, bytes in the C locale, as gawk does.
		Chars: chars,
	}
	it, err := interp.New(prog)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, err)
		return 2
	}
	sp = newSplitter(it)
	var run context.Context = ctx
	if mem := inv.Memory(); mem != nil {
		pp.res = mem.Reserve()
		defer pp.res.Close()
	}
	if mem := inv.Memory(); mem != nil {
		res := mem.Reserve()
		defer res.Close()
		if met = newMeter(ctx, it, res); met != nil {
			run = met
		}
	}
	status, err := it.ExecuteContext(run, cfg)
	pp.closeAll()
	if ferr := out.Flush(); textio.BrokenPipe(ferr) || (err != nil && textio.BrokenPipe(err)) {
		return 141 // SIGPIPE in a real awk: silent
	}
	if err != nil && seg.failed {
		return 2 // cannot open: already said
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 130
		}
		if st, ok := inv.LimitExceeded(err); ok {
			return st
		}
		msg := err.Error()
		nr, fnr, _ := sp.position()
		if m := divMessage(msg, divs, where, nr > 0, seg.filename(), fnr); m != "" {
			msg = m
		} else if m := formatMessage(msg, fmts, where, nr > 0, seg.filename(), fnr); m != "" {
			msg = m
		} else if m := regexMessage(msg, regexUses(written), where, nr > 0, seg.filename(), fnr); m != "" {
			msg = m
		}
		if strings.Contains(msg, "NoFileReads") || strings.Contains(msg, "NoFileWrites") || strings.Contains(msg, "NoExec") {
			msg += " (file redirection and getline from files are not available in the sandbox's awk, nor a command whose getline is too complex to find)"
		}
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, msg)
		return 2
	}
	if seg.failed && status == 0 {
		return 2
	}
	return status
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func isAssign(a string) bool {
	k, _, ok := strings.Cut(a, "=")
	if !ok || k == "" {
		return false
	}
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// assignsFS reports whether the program assigns FS (FS = ..., FS += ...;
// getline FS and split targets are not FS assignments that matter here).
func assignsFS(src string) bool {
	if !strings.Contains(src, "FS") {
		return false
	}
	toks, ok := lex(src)
	if !ok {
		return true
	}
	for i, t := range toks {
		if t.tok == lexer.NAME && t.val == "FS" && i+1 < len(toks) && isAssignOp(toks[i+1].tok) {
			return true
		}
	}
	return false
}

// unescapeFS applies awk's escape processing to -F values ("\t" -> tab).
func unescapeFS(s string) string {
	if u, err := lexer.Unescape(s); err == nil {
		return u
	}
	return s
}

// setsRS reports whether the program assigns RS anything but "\n" (a
// program that does not lex is taken to).
func setsRS(src string) bool {
	if !strings.Contains(src, "RS") {
		return false
	}
	toks, ok := lex(src)
	if !ok {
		return true
	}
	for i, t := range toks {
		if t.tok != lexer.NAME || t.val != "RS" || i+1 >= len(toks) {
			continue
		}
		switch toks[i+1].tok {
		case lexer.ASSIGN:
			if i+3 < len(toks) && toks[i+2].tok == lexer.STRING && toks[i+2].val == "\n" {
				switch toks[i+3].tok {
				case lexer.SEMICOLON, lexer.NEWLINE, lexer.RBRACE, lexer.EOF:
					continue
				}
			}
			return true
		case lexer.ADD_ASSIGN, lexer.SUB_ASSIGN, lexer.MUL_ASSIGN, lexer.DIV_ASSIGN, lexer.MOD_ASSIGN, lexer.POW_ASSIGN:
			return true
		}
		if i > 0 && toks[i-1].tok == lexer.GETLINE {
			return true
		}
	}
	return false
}

// utf8Locale reports whether the invocation's locale (LC_ALL, LC_CTYPE,
// LANG, the first set) is a UTF-8 one; unset is the C locale.
func utf8Locale(inv *commands.Invocation) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := inv.Getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}
