// Package grep implements grep, egrep and fgrep over the vfs with GNU
// grep 3.8's options, output format and exit statuses (0 a line was
// selected, 1 none, 2 an error). Patterns are POSIX BRE/ERE translated to
// Go's RE2 (see posixre); -P takes RE2 syntax directly, so look-arounds and
// back-references are refused with a clear error.
package grep

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

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/posixre"
	"github.com/warren-sandbox/warren/commands/internal/recache"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// Register adds grep, egrep and fgrep.
func Register(t commands.Table) {
	t.Register("grep", Grep)
	t.Register("egrep", func(ctx context.Context, inv *commands.Invocation) int {
		return run(ctx, inv, 'E')
	})
	t.Register("fgrep", func(ctx context.Context, inv *commands.Invocation) int {
		return run(ctx, inv, 'F')
	})
}

// Grep is the grep command.
func Grep(ctx context.Context, inv *commands.Invocation) int { return run(ctx, inv, 'G') }

var spec = getopt.Spec{
	Short: "EFGPiyvnclLrRwxoqsA:B:C:e:f:hHZzabIm:T0123456789V",
	Long: []getopt.Long{
		{Name: "extended-regexp", Key: "E"}, {Name: "fixed-strings", Key: "F"},
		{Name: "basic-regexp", Key: "G"}, {Name: "perl-regexp", Key: "P"},
		{Name: "ignore-case", Key: "i"}, {Name: "no-ignore-case"},
		{Name: "invert-match", Key: "v"}, {Name: "line-number", Key: "n"},
		{Name: "count", Key: "c"}, {Name: "files-with-matches", Key: "l"},
		{Name: "files-without-match", Key: "L"}, {Name: "recursive", Key: "r"},
		{Name: "dereference-recursive", Key: "R"}, {Name: "word-regexp", Key: "w"},
		{Name: "line-regexp", Key: "x"}, {Name: "only-matching", Key: "o"},
		{Name: "quiet", Key: "q"}, {Name: "silent", Key: "q"}, {Name: "no-messages", Key: "s"},
		{Name: "after-context", Arg: getopt.Required, Key: "A"},
		{Name: "before-context", Arg: getopt.Required, Key: "B"},
		{Name: "context", Arg: getopt.Required, Key: "C"},
		{Name: "regexp", Arg: getopt.Required, Key: "e"}, {Name: "file", Arg: getopt.Required, Key: "f"},
		{Name: "no-filename", Key: "h"}, {Name: "with-filename", Key: "H"},
		{Name: "null", Key: "Z"}, {Name: "null-data", Key: "z"}, {Name: "text", Key: "a"},
		{Name: "byte-offset", Key: "b"}, {Name: "max-count", Arg: getopt.Required, Key: "m"},
		{Name: "include", Arg: getopt.Required}, {Name: "exclude", Arg: getopt.Required},
		{Name: "exclude-dir", Arg: getopt.Required}, {Name: "color", Arg: getopt.Optional},
		{Name: "colour", Arg: getopt.Optional, Key: "color"}, {Name: "label", Arg: getopt.Required},
		{Name: "line-buffered"}, {Name: "initial-tab", Key: "T"}, {Name: "binary-files", Arg: getopt.Required},
		{Name: "help"}, {Name: "version", Key: "V"},
	},
}

type options struct {
	mode                                    byte // G E F P
	icase, invert, lineNum, count, list     bool
	listNon, recursive, deref, word, line   bool
	initialTab                              bool // -T
	only, quiet, noMsg, noName, withName    bool
	null, nullData, text, byteOff, binNoMat bool
	after, before                           int
	maxCount                                int64
	include, exclude, excludeDir            []string
	label                                   string
}

type grep struct {
	ctx      context.Context
	inv      *commands.Invocation
	o        options
	m        *matcher
	out      *bufio.Writer
	tabWidth int                   // -T: columns of a line number or offset in the file being searched
	grouped  bool                  // a context group was printed (the next file's first one is set apart by --)
	sink     *textio.ErrWriter     // stdout; its error stops the search
	multi    bool                  // print file names
	status   int                   // 1 until a line is selected
	res      *commands.Reservation // the sandbox's budget, for long lines
	limit    error                 // the memory limit that stopped the search
	errs     bool
	quit     bool // -q matched: stop everything
	// walking holds the real paths of the directories being walked, so
	// -R through a symlink loop stops with GNU's warning instead of
	// recursing forever.
	walking []string
	in      *textio.ContextReader // the input being searched
}

// streams holds what the pooled reader and writer point at.
type streams struct {
	sink textio.ErrWriter
	in   textio.ContextReader
}

func run(ctx context.Context, inv *commands.Invocation, mode byte) int {
	name := inv.Args[0]
	opts, operands, err := spec.Parse(inv.Args[1:])
	if err != nil {
		return inv.BadUsage(err, fmt.Sprintf("%s: %s\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", name, err), 2)
	}
	o := options{mode: mode, maxCount: -1, after: -1, before: -1}
	var patterns []string
	havePat := false
	ctxNum := -1
	// egrep and fgrep name their matcher already; GNU refuses a second,
	// different one (grep -F -E) rather than letting the last win.
	matcherSet := mode != 'G'
	for _, op := range opts {
		switch op.Key {
		case "E", "F", "G", "P":
			if matcherSet && o.mode != op.Key[0] {
				fmt.Fprintf(inv.Stderr, "grep: conflicting matchers specified\n")
				return 2
			}
			o.mode, matcherSet = op.Key[0], true
		case "i", "y":
			o.icase = true
		case "no-ignore-case":
			o.icase = false
		case "v":
			o.invert = true
		case "n":
			o.lineNum = true
		case "c":
			o.count = true
		case "l":
			o.list, o.listNon = true, false
		case "L":
			o.listNon, o.list = true, false
		case "r":
			o.recursive = true
		case "R":
			o.recursive, o.deref = true, true
		case "w":
			o.word = true
		case "x":
			o.line = true
		case "o":
			o.only = true
		case "q":
			o.quiet = true
		case "s":
			o.noMsg = true
		case "h":
			o.noName, o.withName = true, false
		case "H":
			o.withName, o.noName = true, false
		case "Z":
			o.null = true
		case "z":
			o.nullData = true
		case "a":
			o.text = true
		case "I":
			o.binNoMat = true
		case "b":
			o.byteOff = true
		case "T":
			o.initialTab = true
		case "line-buffered":
		case "A", "B", "C":
			n, err := strconv.Atoi(op.Arg)
			if err != nil || n < 0 {
				fmt.Fprintf(inv.Stderr, "%s: %s: invalid context length argument\n", name, op.Arg)
				return 2
			}
			switch op.Key {
			case "A":
				o.after = n
			case "B":
				o.before = n
			default:
				ctxNum = n
			}
		case "m":
			n, err := strconv.ParseInt(op.Arg, 10, 64)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "%s: invalid max count\n", name)
				return 2
			}
			o.maxCount = n
		case "e":
			patterns = append(patterns, strings.Split(op.Arg, "\n")...)
			havePat = true
		case "f":
			ps, err := readPatterns(inv, op.Arg)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "%s: %s\n", name, commands.Describe(err))
				return 2
			}
			patterns = append(patterns, ps...)
			havePat = true
		case "include":
			o.include = append(o.include, op.Arg)
		case "exclude":
			o.exclude = append(o.exclude, op.Arg)
		case "exclude-dir":
			o.excludeDir = append(o.excludeDir, op.Arg)
		case "color":
			switch op.Arg {
			case "", "never", "no", "none", "auto", "tty", "if-tty", "always", "yes", "force":
				// Output is never a terminal here; even "always" prints
				// plain text, which is what the agent reading it wants.
			default:
				fmt.Fprintf(inv.Stderr, "%s: invalid argument '%s' for '--color'\nValid arguments are:\n  - 'always', 'yes', 'force'\n  - 'never', 'no', 'none'\n  - 'auto', 'tty', 'if-tty'\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", name, op.Arg)
				return 2
			}
		case "label":
			o.label = op.Arg
		case "binary-files":
			switch op.Arg {
			case "text":
				o.text = true
			case "without-match":
				o.binNoMat = true
			case "binary":
			default:
				fmt.Fprintf(inv.Stderr, "%s: unknown binary-files type\n", name)
				return 2
			}
		case "help":
			fmt.Fprintf(inv.Stdout, "Usage: grep [OPTION]... PATTERNS [FILE]...\nSearch for PATTERNS in each FILE.\n")
			return 0
		case "V":
			fmt.Fprintf(inv.Stdout, "grep (GNU grep) 3.8 (warren)\n")
			return 0
		default: // -NUM
			if op.Key[0] >= '0' && op.Key[0] <= '9' {
				if ctxNum < 0 {
					ctxNum = 0
				}
				ctxNum = ctxNum*10 + int(op.Key[0]-'0')
			}
		}
	}
	if ctxNum >= 0 {
		if o.after < 0 {
			o.after = ctxNum
		}
		if o.before < 0 {
			o.before = ctxNum
		}
	}
	o.after, o.before = max(o.after, 0), max(o.before, 0)
	if !havePat {
		if len(operands) == 0 {
			fmt.Fprintf(inv.Stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n")
			return 2
		}
		if strings.IndexByte(operands[0], '\n') < 0 {
			patterns = operands[:1:1] // the usual single pattern, without a Split
		} else {
			patterns = strings.Split(operands[0], "\n")
		}
		operands = operands[1:]
	}
	m, err := cachedCompile(patterns, &o)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, err)
		return 2
	}
	if m.none && !o.invert {
		// GNU grep stops at once when no pattern can match (grep -f /dev/null).
		return 1
	}
	// The writer and reader wrappers escape into the pooled bufio buffers:
	// one small allocation for both keeps the large grep state on the stack.
	st := &streams{sink: textio.ErrWriter{W: inv.Stdout}}
	sink := &st.sink
	out := textio.NewWriter(sink)
	defer textio.PutWriter(out)
	res := inv.Memory().Reserve()
	defer res.Close()
	g := &grep{ctx: ctx, inv: inv, o: o, m: m, out: out, sink: sink, in: &st.in, status: 1, res: res}
	if len(operands) == 0 {
		if o.recursive {
			operands = []string{"."}
			g.multi = true
		} else {
			operands = []string{"-"}
		}
	}
	g.multi = g.multi || len(operands) > 1 || o.recursive
	if o.withName {
		g.multi = true
	}
	if o.noName {
		g.multi = false
	}
	recursiveDefault := len(inv.Args) > 0 && o.recursive && len(operands) == 1 && operands[0] == "." && !containsDot(inv.Args[1:])
	for _, name := range operands {
		if g.quit || ctx.Err() != nil || sink.Err != nil {
			break
		}
		if recursiveDefault {
			g.walkDir(".", "", true)
			continue
		}
		g.file(name, true)
	}
	if err := out.Flush(); err != nil && !g.quit {
		if textio.BrokenPipe(err) {
			return 141 // SIGPIPE in the real grep: silent
		}
		g.errs = true
	}
	if g.limit != nil {
		out.Flush()
		st, _ := inv.LimitExceeded(g.limit)
		return st
	}
	if g.quit {
		return 0
	}
	if g.errs && !(o.quiet && g.status == 0) {
		return 2
	}
	return g.status
}

func containsDot(args []string) bool {
	for _, a := range args {
		if a == "." {
			return true
		}
	}
	return false
}

func readPatterns(inv *commands.Invocation, name string) ([]string, error) {
	f, err := inv.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if len(data) == 0 {
		return nil, nil
	}
	s := strings.TrimSuffix(string(data), "\n")
	return strings.Split(s, "\n"), nil
}

func (g *grep) warn(err error) {
	g.errs = true
	if !g.o.noMsg {
		g.out.Flush()
		fmt.Fprintf(g.inv.Stderr, "%s: %s\n", g.inv.Args[0], commands.Describe(err))
	}
}

// file searches one operand; top says it was named on the command line.
func (g *grep) file(name string, top bool) {
	if name == "-" {
		label := g.o.label
		if label == "" {
			label = "(standard input)"
		}
		g.search(g.inv.Stdin, label)
		return
	}
	if g.o.recursive && g.inv.FS != nil {
		st, err := g.inv.FS.Stat(g.inv.Abs(name))
		if err == nil && st.IsDir() {
			if !top && !g.o.deref {
				return
			}
			g.walkDir(name, name, top)
			return
		}
	}
	if !g.included(path.Base(name), top) {
		return
	}
	f, err := g.inv.Open(name)
	if err != nil {
		g.warn(err)
		return
	}
	defer f.Close()
	g.search(f, name)
}

func (g *grep) included(base string, top bool) bool {
	for _, p := range g.o.exclude {
		if ok, _ := path.Match(p, base); ok {
			return false
		}
	}
	if len(g.o.include) == 0 {
		return true
	}
	for _, p := range g.o.include {
		if ok, _ := path.Match(p, base); ok {
			return true
		}
	}
	return false
}

// walkDir searches a directory tree; prefix is how names are printed ("" for
// the implicit "." of a bare grep -r, which GNU prints without "./").
func (g *grep) walkDir(dir, prefix string, top bool) {
	if !top || dir != "." {
		for _, p := range g.o.excludeDir {
			if ok, _ := path.Match(p, path.Base(dir)); ok && !top {
				return
			}
		}
	}
	real, err := g.inv.FS.Realpath(g.inv.Abs(dir))
	if err != nil {
		real = g.inv.Abs(dir)
	}
	for _, w := range g.walking {
		if w == real {
			if !g.o.noMsg {
				g.out.Flush()
				fmt.Fprintf(g.inv.Stderr, "%s: warning: %s: recursive directory loop\n", g.inv.Args[0], dir)
			}
			return
		}
	}
	g.walking = append(g.walking, real)
	defer func() { g.walking = g.walking[:len(g.walking)-1] }()
	ents, err := g.inv.FS.ReadDir(g.inv.Abs(dir))
	if err != nil {
		g.warn(&fs.PathError{Op: "open", Path: dir, Err: unwrap(err)})
		return
	}
	for _, e := range ents {
		if g.quit || g.ctx.Err() != nil {
			return
		}
		child := path.Join(dir, e.Name())
		shown := e.Name()
		if prefix != "" {
			shown = strings.TrimSuffix(prefix, "/") + "/" + e.Name()
		}
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			if !g.o.deref {
				continue
			}
			st, err := g.inv.FS.Stat(g.inv.Abs(child))
			if err != nil {
				g.warn(&fs.PathError{Op: "stat", Path: shown, Err: unwrap(err)})
				continue
			}
			typ = st.Mode().Type()
		}
		switch {
		case typ.IsDir():
			excluded := false
			for _, p := range g.o.excludeDir {
				if ok, _ := path.Match(p, e.Name()); ok {
					excluded = true
				}
			}
			if !excluded {
				g.walkDir(child, shown, false)
			}
		case typ.IsRegular():
			if !g.included(e.Name(), false) {
				continue
			}
			f, err := g.inv.Open(g.inv.Abs(child))
			if err != nil {
				g.warn(&fs.PathError{Op: "open", Path: shown, Err: unwrap(err)})
				continue
			}
			g.search(f, shown)
			f.Close()
		}
	}
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type ctxLine struct {
	data []byte
	num  int64
	off  int64
}

// search scans one input stream.
func (g *grep) search(r io.Reader, name string) {
	o := &g.o
	if o.initialTab {
		g.tabWidth = 19
		if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				g.tabWidth = len(strconv.FormatInt(st.Size(), 10))
			}
		}
	}
	*g.in = textio.ContextReader{Ctx: g.ctx, R: r}
	if r == g.inv.Stdin {
		g.in.Flush = g.out // a stream: matches leave as input pauses
	}
	br := textio.NewReader(g.in)
	defer func() {
		textio.PutReader(br)
		g.in.R = nil
	}()
	delim := byte('\n')
	if o.nullData {
		delim = 0
	}
	binary := false
	if !o.text && !o.nullData {
		// GNU looks at the first block read, not a full buffer: waiting
		// for one would hold a slow stream back until 64 KiB or its end.
		br.Peek(1)
		peek, _ := br.Peek(br.Buffered())
		binary = bytes.IndexByte(peek, 0) >= 0
	}
	if binary && o.binNoMat {
		return
	}
	lr := textio.LineReader{R: br, Delim: delim, Res: g.res}
	if g.inv.Sys != nil {
		lr.Limit = g.inv.Sys.MaxMemoryBytes
	}
	var (
		lineNo    int64
		offset    int64
		selected  int64
		lastOut   int64 = -1 // number of the last line printed
		afterLeft int
		ring      = make([]ctxLine, 0, o.before)
		outputs   = !o.quiet && !o.list && !o.listNon && !o.count
		sep       = o.after > 0 || o.before > 0
	)
	for {
		line, _, err := lr.Next()
		if err != nil {
			if errors.Is(err, commands.ErrMemoryLimit) {
				g.limit, g.quit = err, true
			} else if err != io.EOF {
				g.warn(&fs.PathError{Op: "read", Path: name, Err: err})
			}
			break
		}
		if g.sink.Err != nil {
			break
		}
		lineNo++
		lineOff := offset
		offset += int64(len(line)) + 1
		if o.maxCount >= 0 && selected >= o.maxCount {
			// GNU keeps printing trailing context after the last match.
			if afterLeft > 0 && outputs && !binary {
				g.emit(name, line, lineNo, lineOff, '-')
				lastOut = lineNo
				afterLeft--
				continue
			}
			break
		}
		if g.m.match(line) != o.invert {
			selected++
			g.status = 0
			if o.quiet {
				g.quit = true
				return
			}
			if o.list || o.listNon {
				break
			}
			if !outputs {
				continue
			}
			if binary {
				// grep >= 3.5 reports this on stderr (status stays 0).
				g.out.Flush()
				fmt.Fprintf(g.inv.Stderr, "%s: %s: binary file matches\n", g.inv.Args[0], name)
				break
			}
			// context groups are apart, in one file or across files
			if sep && (lastOut >= 0 && lineNo-int64(len(ring)) > lastOut+1 || lastOut < 0 && g.grouped) {
				g.out.WriteString("--\n")
			}
			g.grouped = true
			for _, c := range ring {
				g.emit(name, c.data, c.num, c.off, '-')
			}
			ring = ring[:0]
			if o.only {
				g.emitOnly(name, line, lineNo, lineOff)
			} else {
				g.emit(name, line, lineNo, lineOff, ':')
			}
			lastOut = lineNo
			afterLeft = o.after
			continue
		}
		if !outputs || binary {
			continue
		}
		if afterLeft > 0 {
			g.emit(name, line, lineNo, lineOff, '-')
			lastOut = lineNo
			afterLeft--
			continue
		}
		if o.before > 0 {
			if len(ring) == o.before {
				first := ring[0]
				copy(ring, ring[1:])
				ring = ring[:len(ring)-1]
				first.data = append(first.data[:0], line...)
				first.num, first.off = lineNo, lineOff
				ring = append(ring, first)
			} else {
				ring = append(ring, ctxLine{data: append([]byte(nil), line...), num: lineNo, off: lineOff})
			}
		}
	}
	if o.quiet {
		return
	}
	term := byte('\n')
	if o.null {
		term = 0
	}
	switch {
	case o.list && selected > 0, o.listNon && selected == 0:
		g.out.WriteString(name)
		g.out.WriteByte(term)
	case o.count && !o.list && !o.listNon:
		if g.multi {
			g.out.WriteString(name)
			if o.null {
				g.out.WriteByte(0)
			} else {
				g.out.WriteByte(':')
			}
		}
		g.out.WriteString(strconv.FormatInt(selected, 10))
		g.out.WriteByte('\n')
	}
}

// prefix writes a matching line's file name, line number and offset. With
// -T, GNU grep right-aligns the numbers in as many columns as the file's
// size has digits (19, those of the largest offset, for a stream; search
// sets tabWidth) and tab puts a tab before the text.
func (g *grep) prefix(name string, num, off int64, sep byte) {
	if g.multi {
		g.out.WriteString(name)
		if g.o.null {
			g.out.WriteByte(0)
		} else {
			g.out.WriteByte(sep)
		}
	}
	if g.o.lineNum {
		g.number(num, sep)
	}
	if g.o.byteOff {
		g.number(off, sep)
	}
}

func (g *grep) number(n int64, sep byte) {
	s := strconv.FormatInt(n, 10)
	if g.o.initialTab {
		for i := len(s); i < g.tabWidth; i++ {
			g.out.WriteByte(' ')
		}
	}
	g.out.WriteString(s)
	g.out.WriteByte(sep)
}

// tab ends -T's prefix before a non-empty text.
func (g *grep) tab(text []byte) {
	if g.o.initialTab && len(text) > 0 && (g.multi || g.o.lineNum || g.o.byteOff) {
		g.out.WriteByte('\t')
	}
}

func (g *grep) emit(name string, line []byte, num, off int64, sep byte) {
	g.prefix(name, num, off, sep)
	g.tab(line)
	g.out.Write(line)
	if g.o.nullData {
		g.out.WriteByte(0)
	} else {
		g.out.WriteByte('\n')
	}
}

func (g *grep) emitOnly(name string, line []byte, num, off int64) {
	if g.o.invert {
		return // GNU prints nothing for -o -v
	}
	g.m.each(line, func(s, e int) {
		if e == s {
			return
		}
		g.prefix(name, num, off+int64(s), ':')
		g.tab(line[s:e])
		g.out.Write(line[s:e])
		if g.o.nullData {
			g.out.WriteByte(0)
		} else {
			g.out.WriteByte('\n')
		}
	})
}

// matcher decides whether a line is selected.
type matcher struct {
	none  bool           // no patterns at all: nothing matches
	fixed []byte         // single fixed string, case-sensitive, no -w/-x
	re    *regexp.Regexp // the whole pattern set
	mid   *regexp.Regexp // -w: variant used when searching after a preceding char
	word  bool
}

// matchers caches compiled pattern sets by (mode, -i -w -x, patterns), so
// a script running the same grep in a loop compiles it once. Bounded:
// patterns come from untrusted scripts.
var matchers = recache.New[*matcher](256, 4<<20)

// cachedCompile is compile through the matchers cache. A matcher is
// immutable once built, so concurrent greps share it.
func cachedCompile(patterns []string, o *options) (*matcher, error) {
	var kb [256]byte
	// 'p' tells no patterns (grep -f /dev/null) from one empty pattern.
	key := append(kb[:0], o.mode, flagBits(o), 'p')
	if len(patterns) == 0 {
		key[2] = '-'
	}
	for i, p := range patterns {
		if i > 0 {
			key = append(key, '\n') // patterns never contain one
		}
		key = append(key, p...)
	}
	if m, ok := matchers.Get(key); ok {
		return m, nil
	}
	m, cost, err := compile(patterns, o)
	if err != nil {
		return nil, err
	}
	matchers.Add(string(key), m, cost)
	return m, nil
}

func flagBits(o *options) byte {
	var b byte = '0'
	if o.icase {
		b |= 1
	}
	if o.word {
		b |= 2
	}
	if o.line {
		b |= 4
	}
	return b
}

// literal reports whether p means itself in every syntax (BRE, ERE, RE2):
// ASCII without any character that is special in one of them.
func literal(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 0x80 || strings.IndexByte(`\.[]*^$+?(){}|`, c) >= 0 {
			return false
		}
	}
	return true
}

// compile builds the matcher for patterns and estimates its memory cost.
func compile(patterns []string, o *options) (*matcher, int, error) {
	if len(patterns) == 0 {
		return &matcher{none: true}, 0, nil
	}
	if len(patterns) == 1 && !o.icase && !o.word && !o.line && patterns[0] != "" &&
		(o.mode == 'F' || literal(patterns[0])) {
		// A plain string: bytes.Contains selects the same lines as the
		// regexp would, several times faster.
		return &matcher{fixed: []byte(patterns[0])}, len(patterns[0]), nil
	}
	parts := make([]string, 0, len(patterns))
	for _, p := range patterns {
		var g string
		var err error
		switch o.mode {
		case 'F':
			g = regexp.QuoteMeta(p)
		case 'P':
			g = p
			if _, err := regexp.Compile(g); err != nil {
				return nil, 0, fmt.Errorf("%s (-P uses Go RE2 syntax: look-around and back-references are not supported)", describeRE(err))
			}
		default:
			g, err = posixre.Translate(p, o.mode == 'E')
			if errors.Is(err, posixre.ErrBackref) {
				return nil, 0, fmt.Errorf("back-references (\\1..\\9) are not supported in %q", p)
			}
			if err != nil {
				return nil, 0, errors.New(capitalize(err.Error()))
			}
		}
		parts = append(parts, g)
	}
	body := "(?:" + strings.Join(parts, ")|(?:") + ")"
	if o.line {
		body = "^(?:" + body + ")$"
	}
	flags := ""
	if o.icase {
		flags = "(?i)"
	}
	m := &matcher{}
	var err error
	cost := 0
	if o.word {
		m.word = true
		expr := flags + `(?:^|[^\pL\pN_])(` + body + `)(?:[^\pL\pN_]|$)`
		m.re, err = regexp.Compile(expr)
		if err == nil {
			cost = recache.Cost(expr)
			expr = flags + `[^\pL\pN_](` + body + `)(?:[^\pL\pN_]|$)`
			m.mid, err = regexp.Compile(expr)
			cost += recache.Cost(expr)
		}
	} else {
		m.re, err = regexp.Compile(flags + body)
		if err == nil {
			cost = recache.Cost(flags + body)
		}
	}
	if err != nil {
		return nil, 0, errors.New(describeRE(err))
	}
	m.re.Longest()
	if m.mid != nil {
		m.mid.Longest()
	}
	return m, cost, nil
}

func describeRE(err error) string {
	return capitalize(strings.TrimPrefix(err.Error(), "error parsing regexp: "))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (m *matcher) match(line []byte) bool {
	switch {
	case m.none:
		return false
	case m.fixed != nil:
		return bytes.Contains(line, m.fixed)
	}
	return m.re.Match(line)
}

// each calls fn for every non-overlapping match in line (for -o).
func (m *matcher) each(line []byte, fn func(s, e int)) {
	if m.none {
		return
	}
	if m.fixed != nil {
		for pos := 0; pos <= len(line); {
			i := bytes.Index(line[pos:], m.fixed)
			if i < 0 {
				return
			}
			fn(pos+i, pos+i+len(m.fixed))
			pos += i + len(m.fixed)
		}
		return
	}
	for pos := 0; pos <= len(line); {
		var loc []int
		base := pos
		if !m.word {
			loc = m.re.FindIndex(line[pos:])
		} else if pos == 0 {
			if l := m.re.FindSubmatchIndex(line); l != nil {
				loc = l[2:4]
			}
		} else {
			base = pos - 1
			if l := m.mid.FindSubmatchIndex(line[pos-1:]); l != nil {
				loc = l[2:4]
			}
		}
		if loc == nil {
			return
		}
		s, e := base+loc[0], base+loc[1]
		fn(s, e)
		if e > pos {
			pos = e
		} else {
			pos++
		}
	}
}
