package sed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

// Register adds sed.
func Register(t commands.Table) { t.Register("sed", Sed) }

var spec = getopt.Spec{Short: "ne:f:Eri::szul:", Long: []getopt.Long{
	{Name: "quiet", Key: "n"}, {Name: "silent", Key: "n"}, {Name: "expression", Arg: getopt.Required, Key: "e"},
	{Name: "file", Arg: getopt.Required, Key: "f"}, {Name: "regexp-extended", Key: "E"},
	{Name: "in-place", Arg: getopt.Optional, Key: "i"}, {Name: "separate", Key: "s"},
	{Name: "null-data", Key: "z"}, {Name: "unbuffered", Key: "u"}, {Name: "line-length", Arg: getopt.Required, Key: "l"},
	{Name: "posix"}, {Name: "debug"}, {Name: "sandbox"}, {Name: "follow-symlinks"}, {Name: "help"}, {Name: "version"},
}}

// Sed is sed(1).
func Sed(ctx context.Context, inv *commands.Invocation) int {
	opts, operands, err := spec.Parse(inv.Args[1:])
	if err != nil {
		return inv.BadUsage(err, fmt.Sprintf("sed: %s\nUsage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n", err), 1)
	}
	s := &sed{ctx: ctx, inv: inv, lineWrap: 70, wfiles: map[string]*wfile{}, rfiles: map[string]*textio.LineReader{}}
	var script []string
	haveScript := false
	ere := false
	for _, o := range opts {
		switch o.Key {
		case "n":
			s.quiet = true
		case "e":
			script = append(script, o.Arg)
			haveScript = true
		case "f":
			f, err := inv.Open(o.Arg)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "sed: couldn't open file %s: %s\n", o.Arg, commands.Strerror(err))
				return 1
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				fmt.Fprintf(inv.Stderr, "sed: read error on %s: %s\n", o.Arg, commands.Strerror(err))
				return 1
			}
			script = append(script, strings.TrimSuffix(string(data), "\n"))
			haveScript = true
		case "E", "r":
			ere = true
		case "i":
			s.inPlace, s.suffix, s.separate = true, o.Arg, true
		case "s":
			s.separate = true
		case "z":
			s.delim = 0
			s.nul = true
		case "u":
			s.unbuffered = true
		case "l":
			n, err := strconv.Atoi(o.Arg)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "sed: invalid line length: %s\n", o.Arg)
				return 1
			}
			s.lineWrap = n
		case "help":
			fmt.Fprint(inv.Stdout, "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n")
			return 0
		case "version":
			fmt.Fprint(inv.Stdout, "sed (GNU sed) 4.9 (warren)\n")
			return 0
		}
	}
	if !s.nul {
		s.delim = '\n'
	}
	if !haveScript {
		if len(operands) == 0 {
			fmt.Fprint(inv.Stderr, "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n")
			return 1
		}
		script, operands = []string{operands[0]}, operands[1:]
	}
	src := strings.Join(script, "\n")
	if strings.HasPrefix(src, "#n\n") || src == "#n" {
		s.quiet = true
	}
	cmds, err := parseScript(src, ere)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "sed: %s\n", err)
		if _, ok := err.(*labelError); ok {
			return 4 // GNU sed reports this one through panic(): status 4
		}
		return 1
	}
	s.cmds = cmds
	if len(operands) == 0 {
		if s.inPlace {
			fmt.Fprint(inv.Stderr, "sed: no input files\n")
			return 1
		}
		operands = []string{"-"}
	}
	s.sink = textio.ErrWriter{W: inv.Stdout}
	if inv.Sys != nil {
		s.limit = inv.Sys.MaxMemoryBytes
	}
	s.res = inv.Memory().Reserve()
	defer s.res.Close()
	s.out = textio.NewWriter(&s.sink)
	defer textio.PutWriter(s.out)
	defer s.closeFiles()
	if s.separate {
		for _, name := range operands {
			if s.quit || ctx.Err() != nil {
				break
			}
			if s.inPlace {
				s.editInPlace(name)
				continue
			}
			s.run([]string{name})
		}
	} else {
		s.run(operands)
	}
	if err := s.out.Flush(); textio.BrokenPipe(err) || textio.BrokenPipe(s.sink.Err) {
		return 141 // SIGPIPE in the real sed: silent
	} else if err != nil && s.status == 0 {
		fmt.Fprintf(inv.Stderr, "sed: couldn't write items to stdout: %s\n", commands.Strerror(err))
		s.status = 4
	}
	return s.status
}

type sed struct {
	ctx      context.Context
	inv      *commands.Invocation
	cmds     []*command
	quiet    bool
	inPlace  bool
	suffix   string
	separate bool
	nul      bool
	// unbuffered (-u): output leaves before each read of standard input,
	// as GNU's -u writes each line before it reads the next
	unbuffered bool
	delim      byte
	lineWrap   int
	out        *bufio.Writer
	sink       textio.ErrWriter      // stdout; a write error ends the run
	limit      int64                 // sandbox memory limit for pattern+hold space
	res        *commands.Reservation // the sandbox's budget, charged for both spaces
	status     int
	quit       bool
	lastRe     *regexp.Regexp
	wfiles     map[string]*wfile
	closers    []io.Closer
	rfiles     map[string]*textio.LineReader
	lineNo     int64 // persists across files unless separate
	missingNL  bool  // the last output line had no newline

	// per-run input state
	in       *input
	ps, hs   []byte
	append   []appendItem
	tflag    bool
	hadNL    bool
	fileName string
}

type appendItem struct {
	text   string
	isFile bool
	rline  bool
}

func (s *sed) closeFiles() {
	for _, c := range s.closers {
		c.Close()
	}
}

// input reads lines across files with one line of lookahead, for '$',
// taken only when needed (the next read, or a '$' to test), as GNU sed
// does: a line leaves sed -u before the next one has arrived.
type input struct {
	s        *sed
	filled   bool // the lookahead was taken (next/hasNext are valid)
	names    []string
	cur      io.ReadCloser
	lr       *textio.LineReader
	br       *bufio.Reader // pooled; given back by release
	next     []byte
	nextNL   bool
	hasNext  bool
	curName  string
	nextName string
}

// fill takes the lookahead if it was not taken yet.
func (in *input) fill() {
	if !in.filled {
		in.advance()
		in.filled = true
	}
}

func (in *input) advance() {
	in.hasNext = false
	for {
		if in.lr == nil {
			if len(in.names) == 0 {
				return
			}
			name := in.names[0]
			in.names = in.names[1:]
			f, err := in.s.inv.Open(name)
			if err != nil {
				in.s.out.Flush()
				fmt.Fprintf(in.s.inv.Stderr, "sed: can't read %s: %s\n", name, commands.Strerror(unwrapPath(err)))
				in.s.status = 2
				continue
			}
			in.cur = f
			var rd io.Reader = textio.WithContext(in.s.ctx, f)
			if in.s.unbuffered && name == "-" {
				rd = &textio.ContextReader{Ctx: in.s.ctx, R: f, Flush: in.s.out}
			}
			in.br = textio.NewReader(rd)
			in.lr = &textio.LineReader{R: in.br, Delim: in.s.delim, Limit: in.s.limit, Res: in.s.res}
			in.nextName = name
		}
		line, nl, err := in.lr.Next()
		if err == nil {
			in.next = append(in.next[:0], line...)
			in.nextNL = nl
			in.hasNext = true
			return
		}
		if err != io.EOF && in.s.ctx.Err() == nil {
			in.s.out.Flush()
			if st, ok := in.s.inv.LimitExceeded(err); ok {
				in.s.status, in.s.quit = st, true
			} else {
				fmt.Fprintf(in.s.inv.Stderr, "sed: read error on %s: %s\n", in.nextName, commands.Strerror(unwrapPath(err)))
				in.s.status = 4
			}
		}
		in.release()
	}
}

// release closes the current input and gives its reader back to the pool
// (at EOF, and when the script quits before reading everything).
func (in *input) release() {
	if in.cur != nil {
		in.cur.Close()
		in.cur = nil
	}
	if in.br != nil {
		textio.PutReader(in.br)
		in.br = nil
	}
	in.lr = nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// read moves the lookahead line into the pattern space.
func (s *sed) read() bool {
	s.in.fill()
	if !s.in.hasNext {
		return false
	}
	s.ps = append(s.ps[:0], s.in.next...)
	s.hadNL = s.in.nextNL
	s.fileName = s.in.nextName
	s.lineNo++
	s.tflag = false // GNU: every line read (n and N too) clears t's flag
	s.in.filled = false
	return true
}

func (s *sed) isLast() bool {
	s.in.fill()
	return !s.in.hasNext
}

// emit writes one line of output, adding the newline the previous line lacked.
func (s *sed) emit(w io.Writer, b []byte, nl bool) {
	if w == io.Writer(s.out) || w == nil {
		if s.missingNL {
			s.out.WriteByte(s.delim)
			s.missingNL = false
		}
		s.out.Write(b)
		if nl {
			s.out.WriteByte(s.delim)
		} else {
			s.missingNL = true
		}
		return
	}
	w.Write(b)
	w.Write([]byte{s.delim})
}

func (s *sed) run(names []string) {
	if s.separate {
		s.lineNo = 0
	}
	s.in = &input{s: s, names: names}
	for _, c := range s.cmds {
		c.rangeOn, c.rangeRan = false, false
	}
	s.cycle()
	s.in.release()
}

// editInPlace runs the script over one file and replaces it with the output.
func (s *sed) editInPlace(name string) {
	f, err := s.inv.Open(name)
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "sed: can't read %s: %s\n", name, commands.Strerror(unwrapPath(err)))
		s.status = 2
		return
	}
	data, err := io.ReadAll(textio.WithContext(s.ctx, f))
	f.Close()
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "sed: couldn't edit %s: %s\n", name, commands.Strerror(unwrapPath(err)))
		s.status = 4
		return
	}
	if s.inv.FS != nil {
		if st, err := s.inv.FS.Stat(s.inv.Abs(name)); err == nil && !st.Mode().IsRegular() {
			fmt.Fprintf(s.inv.Stderr, "sed: couldn't edit %s: not a regular file\n", name)
			s.status = 4
			return
		}
	}
	var buf bytes.Buffer
	saved, savedMissing := s.out, s.missingNL
	s.out = textio.NewWriter(&buf)
	s.missingNL = false
	s.lineNo = 0
	s.in = &input{s: s, names: nil}
	s.in.next = nil
	// Feed the file's bytes through the same input machinery.
	s.in.br = textio.NewReader(bytes.NewReader(data))
	s.in.lr = &textio.LineReader{R: s.in.br, Delim: s.delim}
	s.in.cur = io.NopCloser(nil)
	s.in.nextName = name
	for _, c := range s.cmds {
		c.rangeOn, c.rangeRan = false, false
	}
	s.cycle()
	s.in.release()
	s.out.Flush()
	textio.PutWriter(s.out)
	s.out, s.missingNL = saved, savedMissing
	if s.suffix != "" {
		backup := s.suffix
		if strings.Contains(backup, "*") {
			base := path.Base(name)
			backup = strings.ReplaceAll(backup, "*", base)
			if !strings.Contains(backup, "/") {
				backup = path.Join(path.Dir(name), backup)
			}
		} else {
			backup = name + backup
		}
		if err := s.writeFile(backup, data); err != nil {
			fmt.Fprintf(s.inv.Stderr, "sed: cannot rename %s: %s\n", name, commands.Strerror(unwrapPath(err)))
			s.status = 4
			return
		}
	}
	if err := s.writeFile(name, buf.Bytes()); err != nil {
		fmt.Fprintf(s.inv.Stderr, "sed: couldn't open temporary file %s: %s\n", name, commands.Strerror(unwrapPath(err)))
		s.status = 4
	}
}

func (s *sed) writeFile(name string, data []byte) error {
	f, err := s.inv.OpenFile(name, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *sed) match(a *address) bool {
	switch a.kind {
	case addrLine:
		return s.lineNo == a.n
	case addrLast:
		return s.isLast()
	case addrStep:
		if a.m <= 0 {
			return s.lineNo == a.n
		}
		return s.lineNo >= a.n && (s.lineNo-a.n)%a.m == 0
	case addrRegex:
		re := a.re
		if re == nil {
			re = s.lastRe
			if re == nil {
				return false
			}
		} else {
			s.lastRe = re
		}
		return re.Match(s.ps)
	case addrZero:
		return false
	}
	return false
}

// selected evaluates a command's addresses for the current line.
func (s *sed) selected(c *command) bool {
	if c.a1.kind == addrNone {
		return true
	}
	if c.a2.kind == addrNone {
		return s.match(&c.a1)
	}
	if c.rangeOn {
		switch c.a2.kind {
		case addrLine:
			if s.lineNo >= c.a2.n {
				c.rangeOn = false
			}
			if s.lineNo > c.a2.n {
				return false
			}
		case addrPlus:
			if s.lineNo >= c.rangeEnd {
				c.rangeOn = false
			}
		case addrMulti:
			if c.a2.n <= 0 || s.lineNo%c.a2.n == 0 {
				c.rangeOn = false
			}
		default:
			if s.match(&c.a2) {
				c.rangeOn = false
			}
		}
		return true
	}
	start := false
	if c.a1.kind == addrZero {
		// 0,/re/: the end regex may match on the very first line.
		if s.lineNo == 1 || !c.rangeOn && s.lineNo == 1 {
			start = true
		}
		if start {
			if s.match(&c.a2) {
				return true
			}
			c.rangeOn = true
			return true
		}
		return false
	}
	if c.a1.kind == addrLine && !c.rangeRan && s.lineNo > c.a1.n {
		if c.a2.kind == addrLine && s.lineNo > c.a2.n {
			return false
		}
	} else if !s.match(&c.a1) {
		return false
	}
	c.rangeRan = true
	switch c.a2.kind {
	case addrLine:
		c.rangeOn = c.a2.n > s.lineNo
	case addrPlus:
		c.rangeEnd = s.lineNo + c.a2.n
		c.rangeOn = c.a2.n > 0
	case addrMulti:
		c.rangeOn = !(c.a2.n <= 0 || s.lineNo%c.a2.n == 0)
	case addrLast:
		c.rangeOn = !s.isLast()
	default:
		c.rangeOn = true
	}
	return true
}

func (s *sed) flushAppend() {
	for _, a := range s.append {
		switch {
		case a.rline:
			s.emit(nil, []byte(a.text), true)
		case a.isFile:
			f, err := s.inv.Open(a.text)
			if err != nil {
				continue // GNU silently ignores unreadable r files
			}
			data, _ := io.ReadAll(f)
			f.Close()
			if len(data) > 0 {
				if s.missingNL {
					s.out.WriteByte(s.delim)
					s.missingNL = false
				}
				s.out.Write(data)
				if data[len(data)-1] != '\n' {
					s.missingNL = true
				}
			}
		default:
			s.emit(nil, []byte(a.text), true)
		}
	}
	s.append = s.append[:0]
}

func (s *sed) endCycle(autoprint bool) {
	if autoprint && !s.quiet {
		s.emit(nil, s.ps, s.hadNL)
	}
	s.flushAppend()
}

// cycle is sed's main loop over the input.
func (s *sed) cycle() {
	restart := false // D: restart without reading
	for !s.quit {
		if s.ctx.Err() != nil || s.sink.Err != nil {
			return
		}
		if !restart {
			if !s.read() {
				return
			}
			s.tflag = false
		}
		restart = false
		autoprint, next := s.exec(&restart)
		s.charge(0)
		if s.quit {
			return
		}
		if next {
			s.endCycle(autoprint)
		}
	}
}

// charge resizes the reservation to the pattern and hold spaces (plus
// extra bytes being built), reporting the limit and quitting past it.
func (s *sed) charge(extra int) bool {
	if s.quit {
		return false
	}
	spaces := int64(cap(s.ps) + cap(s.hs) + extra)
	if spaces == s.res.Held() {
		return true
	}
	var err error
	if s.limit > 0 && int64(len(s.ps)+len(s.hs)+extra) > s.limit {
		err = &commands.MemoryLimitError{Max: s.limit}
	} else {
		err = s.res.Resize(spaces)
	}
	if err != nil {
		s.out.Flush()
		s.status, _ = s.inv.LimitExceeded(err)
		s.quit = true
		return false
	}
	return true
}

// exec runs the script once; it reports whether to autoprint and whether
// the cycle ends normally.
func (s *sed) exec(restart *bool) (autoprint, endCycle bool) {
	jumps := 0
	for pc := 0; pc < len(s.cmds); pc++ {
		// Every command may have grown the spaces (s, G, H, N, and loops
		// of them within one cycle): charge them before the next.
		if !s.charge(0) {
			return false, false
		}
		c := s.cmds[pc]
		if c.name == 'b' || c.name == 't' || c.name == 'T' {
			// A script can loop forever on one line (:a;ba): notice cancellation.
			if jumps++; jumps&1023 == 0 && s.ctx.Err() != nil {
				s.quit = true
				return false, false
			}
		}
		sel := s.selected(c)
		if c.neg {
			sel = !sel
		}
		if !sel {
			if c.name == '{' {
				pc = c.block
			}
			continue
		}
		switch c.name {
		case '{', '}', ':':
		case '=':
			s.emitRaw(strconv.FormatInt(s.lineNo, 10) + "\n")
		case 'a':
			s.append = append(s.append, appendItem{text: c.text})
		case 'i':
			s.emit(nil, []byte(c.text), true)
		case 'c':
			if c.a2.kind == addrNone || !c.rangeOn || c.neg {
				s.emit(nil, []byte(c.text), true)
			}
			s.flushAppend()
			return false, false
		case 'b':
			if c.block < 0 {
				return true, true
			}
			pc = c.block
		case 't', 'T':
			// GNU clears the flag on T that does not jump, too.
			jump := s.tflag == (c.name == 't')
			s.tflag = false
			if jump {
				if c.block < 0 {
					return true, true
				}
				pc = c.block
			}
		case 'd':
			s.flushAppend()
			return false, false
		case 'D':
			i := bytes.IndexByte(s.ps, '\n')
			if i < 0 {
				s.flushAppend()
				return false, false
			}
			s.ps = append(s.ps[:0], s.ps[i+1:]...)
			s.flushAppend()
			*restart = true
			return false, false
		case 'e':
		case 'F':
			name := s.fileName
			if name == "" {
				name = "-"
			}
			s.emitRaw(name + "\n")
		case 'g':
			s.ps = append(s.ps[:0], s.hs...)
		case 'G':
			s.ps = append(append(s.ps, '\n'), s.hs...)
		case 'h':
			s.hs = append(s.hs[:0], s.ps...)
		case 'H':
			s.hs = append(append(s.hs, '\n'), s.ps...)
		case 'x':
			s.ps, s.hs = s.hs, s.ps
		case 'l':
			width := s.lineWrap
			if c.hasInt {
				width = int(c.intArg)
			}
			s.list(width)
		case 'n':
			if s.isLast() {
				// GNU: with no next line, n quits (printing the pattern space).
				s.endCycle(true)
				s.quit = true
				return false, false
			}
			if !s.quiet {
				s.emit(nil, s.ps, s.hadNL)
			}
			s.flushAppend()
			s.read()
		case 'N':
			if s.isLast() {
				s.endCycle(true)
				s.quit = true
				return false, false
			}
			s.flushAppend()
			prev := append([]byte(nil), s.ps...)
			s.read()
			s.ps = append(append(prev, '\n'), s.ps...)
		case 'p':
			// As GNU: the newline follows the line's own (a last line
			// without one prints without one; the next output adds it).
			s.emit(nil, s.ps, s.hadNL)
		case 'P':
			line, nl := firstLine(s.ps, s.hadNL)
			s.emit(nil, line, nl)
		case 'q':
			s.endCycle(true)
			s.status = int(c.intArg)
			s.quit = true
			return false, false
		case 'Q':
			s.status = int(c.intArg)
			s.quit = true
			return false, false
		case 'r':
			s.append = append(s.append, appendItem{text: c.text, isFile: true})
		case 'R':
			if line, ok := s.readRLine(c.text); ok {
				s.append = append(s.append, appendItem{text: line, rline: true})
			}
		case 's':
			if s.substitute(c.sub) {
				s.tflag = true
			}
		case 'w':
			s.writeTo(c.text, s.ps, s.hadNL)
		case 'W':
			line, nl := firstLine(s.ps, s.hadNL)
			s.writeTo(c.text, line, nl)
		case 'y':
			s.ps = translit(s.ps, c.ySrc, c.yDst)
		case 'z':
			s.ps = s.ps[:0]
		}
	}
	return true, true
}

func (s *sed) emitRaw(text string) {
	if s.missingNL {
		s.out.WriteByte(s.delim)
		s.missingNL = false
	}
	s.out.WriteString(text)
}

func (s *sed) readRLine(name string) (string, bool) {
	lr, ok := s.rfiles[name]
	if !ok {
		f, err := s.inv.Open(name)
		if err != nil {
			s.rfiles[name] = nil
			return "", false
		}
		s.closers = append(s.closers, f)
		lr = &textio.LineReader{R: bufio.NewReader(f), Delim: '\n'}
		s.rfiles[name] = lr
	}
	if lr == nil {
		return "", false
	}
	line, _, err := lr.Next()
	if err != nil {
		return "", false
	}
	return string(line), true
}

// wfile is a w file; like stdout it owes the newline a last line lacked
// only when more output follows.
type wfile struct {
	w       io.Writer
	missing bool
}

// firstLine is P's and W's text: up to the first newline, which they
// print; a space without one prints as the line would.
func firstLine(ps []byte, nl bool) ([]byte, bool) {
	if i := bytes.IndexByte(ps, '\n'); i >= 0 {
		return ps[:i], true
	}
	return ps, nl
}

func (s *sed) writeTo(name string, data []byte, nl bool) {
	switch name {
	case "/dev/stdout":
		s.emit(nil, data, nl)
		return
	case "/dev/stderr":
		s.out.Flush()
		s.inv.Stderr.Write(append(append([]byte(nil), data...), s.delim))
		return
	}
	wf, ok := s.wfiles[name]
	if !ok {
		f, err := s.inv.OpenFile(name, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o666)
		if err != nil {
			fmt.Fprintf(s.inv.Stderr, "sed: couldn't open file %s: %s\n", name, commands.Strerror(unwrapPath(err)))
			s.status = 4
			s.wfiles[name] = &wfile{w: io.Discard}
			return
		}
		s.closers = append(s.closers, f)
		wf = &wfile{w: f}
		s.wfiles[name] = wf
	}
	buf := make([]byte, 0, len(data)+2)
	if wf.missing {
		buf = append(buf, s.delim)
	}
	buf = append(buf, data...)
	if nl {
		buf = append(buf, s.delim)
	}
	wf.missing = !nl
	wf.w.Write(buf)
}

func translit(b []byte, src, dst []rune) []byte {
	ascii := true
	for _, r := range src {
		if r >= utf8.RuneSelf {
			ascii = false
		}
	}
	for _, r := range dst {
		if r >= utf8.RuneSelf {
			ascii = false
		}
	}
	if ascii {
		var m [256]int
		for i := range m {
			m[i] = -1
		}
		for i, r := range src {
			if m[r] < 0 {
				m[r] = int(dst[i])
			}
		}
		for i, c := range b {
			if m[c] >= 0 {
				b[i] = byte(m[c])
			}
		}
		return b
	}
	var out []byte
	for _, r := range string(b) {
		for i, sr := range src {
			if sr == r {
				r = dst[i]
				break
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// list prints the pattern space unambiguously (the l command).
func (s *sed) list(width int) {
	var b strings.Builder
	col := 0
	put := func(piece string) {
		if width > 1 && col+len(piece) > width-1 {
			b.WriteString("\\\n")
			col = 0
		}
		b.WriteString(piece)
		col += len(piece)
	}
	for _, c := range s.ps {
		switch c {
		case '\\':
			put(`\\`)
		case '\a':
			put(`\a`)
		case '\b':
			put(`\b`)
		case '\f':
			put(`\f`)
		case '\n':
			put(`\n`)
		case '\r':
			put(`\r`)
		case '\t':
			put(`\t`)
		case '\v':
			put(`\v`)
		default:
			if c < 32 || c >= 127 {
				put(fmt.Sprintf("\\%03o", c))
			} else {
				put(string(c))
			}
		}
	}
	b.WriteString("$\n")
	s.emitRaw(b.String())
}

// substitute applies one s command to the pattern space.
func (s *sed) substitute(sub *substitution) bool {
	re := sub.re
	if re == nil {
		re = s.lastRe
		if re == nil {
			s.out.Flush()
			fmt.Fprintf(s.inv.Stderr, "sed: no previous regular expression\n")
			s.status = 1
			s.quit = true
			return false
		}
	} else {
		s.lastRe = re
	}
	matches := re.FindAllSubmatchIndex(s.ps, -1)
	if len(matches) == 0 {
		return false
	}
	// The match list is ~40 bytes a match: charge it while it lives.
	mbytes := len(matches) * (24 + 8*len(matches[0]))
	if !s.charge(mbytes) {
		return false
	}
	var out []byte
	last := 0
	done := false
	count := 0
	for _, m := range matches {
		count++
		if sub.nth > 0 && count < sub.nth {
			continue
		}
		if done {
			break
		}
		out = append(out, s.ps[last:m[0]]...)
		out = expandRepl(out, sub.repl, s.ps, m)
		if count&255 == 0 && !s.charge(cap(out)+mbytes) {
			return false // s/./&&&&&&&&/g multiplies the space in one command
		}
		last = m[1]
		if !sub.global {
			done = true
		}
	}
	if sub.nth > 0 && count < sub.nth {
		return false
	}
	out = append(out, s.ps[last:]...)
	s.ps = out
	for i := 0; i < sub.print; i++ {
		s.emit(nil, s.ps, s.hadNL)
	}
	if sub.wfile != "" {
		s.writeTo(sub.wfile, s.ps, s.hadNL)
	}
	return true
}

func expandRepl(out []byte, parts []replPart, src []byte, m []int) []byte {
	var caseMode, oneShot byte
	add := func(b []byte) {
		for _, r := range string(b) {
			switch {
			case oneShot == 'u':
				r = unicode.ToUpper(r)
				oneShot = 0
			case oneShot == 'l':
				r = unicode.ToLower(r)
				oneShot = 0
			case caseMode == 'U':
				r = unicode.ToUpper(r)
			case caseMode == 'L':
				r = unicode.ToLower(r)
			}
			out = utf8.AppendRune(out, r)
		}
	}
	plain := true
	for _, p := range parts {
		if p.caseOp != 0 {
			plain = false
		}
	}
	for _, p := range parts {
		switch {
		case p.caseOp != 0:
			switch p.caseOp {
			case 'U', 'L':
				caseMode, oneShot = p.caseOp, 0
			case 'E':
				caseMode, oneShot = 0, 0
			default:
				oneShot = p.caseOp
			}
		case p.group < 0:
			if plain {
				out = append(out, p.lit...)
			} else {
				add([]byte(p.lit))
			}
		default:
			if 2*p.group+1 < len(m) && m[2*p.group] >= 0 {
				g := src[m[2*p.group]:m[2*p.group+1]]
				if plain {
					out = append(out, g...)
				} else {
					add(g)
				}
			}
		}
	}
	return out
}
