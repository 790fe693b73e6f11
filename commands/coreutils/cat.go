package coreutils

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

var catSpec = getopt.Spec{Short: "AbeEnstTuv", Long: []getopt.Long{
	{Name: "show-all", Key: "A"}, {Name: "number-nonblank", Key: "b"}, {Name: "show-ends", Key: "E"},
	{Name: "number", Key: "n"}, {Name: "squeeze-blank", Key: "s"}, {Name: "show-tabs", Key: "T"},
	{Name: "show-nonprinting", Key: "v"},
}}

// Cat is cat(1).
func Cat(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	r.stream = true
	opts, files, code, ok := r.parse(&catSpec)
	if !ok {
		return code
	}
	var number, nonblank, ends, squeeze, tabs, nonprint bool
	for _, o := range opts {
		switch o.Key {
		case "A":
			nonprint, ends, tabs = true, true, true
		case "b":
			nonblank, number = true, true
		case "e":
			nonprint, ends = true, true
		case "E":
			ends = true
		case "n":
			number = true
		case "s":
			squeeze = true
		case "t":
			nonprint, tabs = true, true
		case "T":
			tabs = true
		case "v":
			nonprint = true
		}
	}
	plain := !number && !ends && !squeeze && !tabs && !nonprint
	var lineNo int64
	blanks := 0
	var num []byte
	r.each(files, func(name string, br *bufio.Reader) error {
		if plain {
			return copyStream(r.out, br)
		}
		lr := textio.LineReader{R: br, Delim: '\n'}
		for !r.stopped() {
			line, term, err := lr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if len(line) == 0 && term {
				blanks++
				if squeeze && blanks > 1 {
					continue
				}
			} else {
				blanks = 0
			}
			if number && !(nonblank && len(line) == 0) {
				lineNo++
				num = strconv.AppendInt(num[:0], lineNo, 10)
				for i := len(num); i < 6; i++ {
					r.out.WriteByte(' ')
				}
				r.out.Write(num)
				r.out.WriteByte('\t')
			}
			if nonprint || tabs {
				for _, c := range line {
					writeVisible(r.out, c, nonprint, tabs)
				}
			} else {
				r.out.Write(line)
			}
			if term {
				if ends {
					r.out.WriteByte('$')
				}
				r.out.WriteByte('\n')
			}
		}
		return nil
	})
	return r.done()
}

// writeVisible renders c as cat -v/-T do (^X, M-X, ^?, ^I).
func writeVisible(w *bufio.Writer, c byte, nonprint, tabs bool) {
	switch {
	case c == '\t':
		if tabs {
			w.WriteString("^I")
		} else {
			w.WriteByte(c)
		}
		return
	case !nonprint:
		w.WriteByte(c)
		return
	}
	if c >= 128 {
		w.WriteString("M-")
		c -= 128
	}
	switch {
	case c < 32:
		w.WriteByte('^')
		w.WriteByte(c + 64)
	case c == 127:
		w.WriteString("^?")
	default:
		w.WriteByte(c)
	}
}

var tacSpec = getopt.Spec{Short: "bs:r", Long: []getopt.Long{
	{Name: "before", Key: "b"}, {Name: "separator", Arg: getopt.Required, Key: "s"}, {Name: "regex", Key: "r"}}}

// Tac is tac(1); it buffers each input within the sandbox memory budget.
func Tac(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&tacSpec)
	if !ok {
		return code
	}
	sep := []byte("\n")
	before := false
	for _, o := range opts {
		switch o.Key {
		case "s":
			if o.Arg == "" {
				return r.fail(1, "separator cannot be empty")
			}
			sep = []byte(o.Arg)
		case "b":
			before = true
		case "r":
			return r.fail(1, "--regex is not supported")
		}
	}
	b := r.budget()
	r.each(files, func(name string, br *bufio.Reader) error {
		var buf bytes.Buffer
		if _, err := copyLimited(&buf, br, b); err != nil {
			return err
		}
		data := buf.Bytes()
		// Split into records that keep their separator (after, or before with -b).
		var recs [][]byte
		for len(data) > 0 {
			i := bytes.Index(data, sep)
			if i < 0 {
				recs = append(recs, data)
				break
			}
			if before {
				if i == 0 {
					j := bytes.Index(data[len(sep):], sep)
					if j < 0 {
						recs = append(recs, data)
						break
					}
					i = j + len(sep)
				}
				recs = append(recs, data[:i])
				data = data[i:]
				continue
			}
			recs = append(recs, data[:i+len(sep)])
			data = data[i+len(sep):]
		}
		for i := len(recs) - 1; i >= 0; i-- {
			r.out.Write(recs[i])
		}
		b.Release(buf.Len())
		return nil
	})
	return r.done()
}

// copyLimited reads src into dst, charging the budget as it goes.
func copyLimited(dst *bytes.Buffer, src io.Reader, b *textio.Budget) (int64, error) {
	var total int64
	for {
		dst.Grow(32 << 10)
		free := dst.AvailableBuffer()
		n, err := src.Read(free[:cap(free)])
		if n > 0 {
			dst.Write(free[:n])
			total += int64(n)
			if berr := b.Add(n); berr != nil {
				return total, berr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Rev is rev(1): reverse the characters of each line.
func Rev(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	_, files, code, ok := r.parse(&getopt.Spec{})
	if !ok {
		return code
	}
	var tmp []rune
	r.lines(files, '\n', func(line []byte, term bool) error {
		if i := bytes.IndexByte(line, 0); i >= 0 {
			// util-linux reads wide strings: a NUL ends the line there,
			// its newline included
			line, term = line[:i], false
		}
		tmp = tmp[:0]
		for _, c := range string(line) {
			tmp = append(tmp, c)
		}
		for i := len(tmp) - 1; i >= 0; i-- {
			r.out.WriteRune(tmp[i])
		}
		if term {
			r.out.WriteByte('\n')
		}
		return nil
	})
	return r.done()
}

// legacyCount turns "-5" into "-n5" for head/tail's obsolete syntax.
func legacyCount(args []string) []string {
	if len(args) > 1 && len(args[1]) > 1 && args[1][0] == '-' && args[1][1] >= '0' && args[1][1] <= '9' {
		out := append([]string{args[0], "-n" + args[1][1:]}, args[2:]...)
		return out
	}
	if len(args) > 1 && len(args[1]) > 1 && args[1][0] == '+' && args[1][1] >= '0' && args[1][1] <= '9' {
		return append([]string{args[0], "-n" + args[1]}, args[2:]...)
	}
	return args
}

// parseSize parses head/tail counts with GNU suffixes (k, K, M, G, b, KB, MB...).
func parseSize(s string) (int64, bool) {
	mult := int64(1)
	suffixes := []struct {
		s string
		m int64
	}{{"KiB", 1024}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1000}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000},
		{"b", 512}, {"K", 1024}, {"k", 1024}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}}
	for _, suf := range suffixes {
		if strings.HasSuffix(s, suf.s) && len(s) > len(suf.s) {
			mult = suf.m
			s = strings.TrimSuffix(s, suf.s)
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mult, true
}

var headSpec = getopt.Spec{Short: "n:c:qvz", Long: []getopt.Long{
	{Name: "lines", Arg: getopt.Required, Key: "n"}, {Name: "bytes", Arg: getopt.Required, Key: "c"},
	{Name: "quiet", Key: "q"}, {Name: "silent", Key: "q"}, {Name: "verbose", Key: "v"}, {Name: "zero-terminated", Key: "z"}}}

// countOpts are the options head and tail share: -n/-c with an optional
// sign, -q/-v (the last one wins) and -z.
type countOpts struct {
	n              int64
	bytes          bool
	sign           byte // '-' or '+' before the count, 0 without
	quiet, verbose bool
	delim          byte
}

// apply takes o if it is a shared option; a non-zero code is the status
// of a bad count, already reported.
func (c *countOpts) apply(r *run, o getopt.Opt) (code int, handled bool) {
	switch o.Key {
	case "n", "c":
		arg := o.Arg
		c.sign = 0
		if arg != "" && (arg[0] == '-' || arg[0] == '+') {
			c.sign = arg[0]
		}
		arg = strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "+")
		v, ok := parseSize(arg)
		if !ok {
			what := "lines"
			if o.Key == "c" {
				what = "bytes"
			}
			return r.fail(1, "invalid number of %s: %s", what, quoteGNU(o.Arg)), true
		}
		c.n, c.bytes = v, o.Key == "c"
	case "q":
		c.quiet, c.verbose = true, false
	case "v":
		c.verbose, c.quiet = true, false
	case "z":
		c.delim = 0
	default:
		return 0, false
	}
	return 0, true
}

// Head is head(1).
func Head(ctx context.Context, inv *commands.Invocation) int {
	inv2 := *inv
	inv2.Args = legacyCount(inv.Args)
	r := begin(ctx, &inv2)
	r.readError = errorReading
	opts, files, code, ok := r.parse(&headSpec)
	if !ok {
		return code
	}
	c := countOpts{n: 10, delim: '\n'}
	for _, o := range opts {
		if code, handled := c.apply(r, o); handled && code != 0 {
			return code
		}
	}
	n, bytesMode, allBut := c.n, c.bytes, c.sign == '-'
	quiet, verbose, delim := c.quiet, c.verbose, c.delim
	if len(files) == 0 {
		files = []string{"-"}
	}
	headers := verbose || (len(files) > 1 && !quiet)
	first := true
	r.each(files, func(name string, br *bufio.Reader) error {
		if headers {
			if !first {
				r.out.WriteByte('\n')
			}
			shown := name
			if name == "-" {
				shown = "standard input"
			}
			fmt.Fprintf(r.out, "==> %s <==\n", shown)
		}
		first = false
		switch {
		case bytesMode && !allBut:
			_, err := io.CopyN(r.out, br, n)
			if err == io.EOF {
				err = nil
			}
			return err
		case bytesMode:
			var buf bytes.Buffer
			if _, err := copyLimited(&buf, br, r.budget()); err != nil {
				return err
			}
			if int64(buf.Len()) > n {
				r.out.Write(buf.Bytes()[:int64(buf.Len())-n])
			}
			return nil
		case !allBut:
			for i := int64(0); i < n; i++ {
				line, err := br.ReadSlice(delim)
				r.out.Write(line)
				for err == bufio.ErrBufferFull {
					line, err = br.ReadSlice(delim)
					r.out.Write(line)
				}
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
			}
			return nil
		default:
			// All but the last n lines: a ring of n pending lines.
			ring := make([][]byte, 0, min(n, 1024))
			lr := textio.LineReader{R: br, Delim: delim, Res: commands.ReservationFrom(r.ctx)}
			start := 0
			for {
				line, term, err := lr.Next()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				rec := append([]byte(nil), line...)
				if term {
					rec = append(rec, delim)
				}
				if n == 0 {
					r.out.Write(rec)
					continue
				}
				if int64(len(ring)) < n {
					ring = append(ring, rec)
					continue
				}
				r.out.Write(ring[start])
				ring[start] = rec
				start = (start + 1) % len(ring)
			}
		}
	})
	return r.done()
}

// quoteLocale quotes s as GNU's quote() does in the invocation's locale:
// ‘s’ in a UTF-8 one (what agents see with LANG=C.UTF-8), 's' otherwise.
func quoteLocale(inv *commands.Invocation, s string) string {
	loc := ""
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := inv.Getenv(k); v != "" {
			loc = v
			break
		}
	}
	if l := strings.ToLower(loc); strings.Contains(l, "utf-8") || strings.Contains(l, "utf8") {
		return "‘" + s + "’"
	}
	return quoteGNU(s)
}

// quoteGNU quotes s as GNU's quote() does in diagnostics ('s').
func quoteGNU(s string) string {
	if strings.ContainsRune(s, '\'') {
		return `"` + s + `"`
	}
	return "'" + s + "'"
}

var tailSpec = getopt.Spec{Short: "n:c:qvzfF", Long: []getopt.Long{
	{Name: "lines", Arg: getopt.Required, Key: "n"}, {Name: "bytes", Arg: getopt.Required, Key: "c"},
	{Name: "quiet", Key: "q"}, {Name: "silent", Key: "q"}, {Name: "verbose", Key: "v"},
	{Name: "zero-terminated", Key: "z"}, {Name: "follow", Arg: getopt.Optional, Key: "f"}, {Name: "retry"},
	{Name: "pid", Arg: getopt.Required}, {Name: "sleep-interval", Arg: getopt.Required, Key: "s"}}}

// Tail is tail(1). -f is refused: a resident command cannot wait for
// another writer, and an agent would hang.
func Tail(ctx context.Context, inv *commands.Invocation) int {
	inv2 := *inv
	inv2.Args = legacyCount(inv.Args)
	r := begin(ctx, &inv2)
	r.readError = errorReading
	opts, files, code, ok := r.parse(&tailSpec)
	if !ok {
		return code
	}
	c := countOpts{n: 10, delim: '\n'}
	for _, o := range opts {
		code, handled := c.apply(r, o)
		if handled {
			if code != 0 {
				return code
			}
			continue
		}
		switch o.Key {
		case "f", "F", "retry", "pid", "s":
			return r.fail(1, "following files (-f) is not supported in the sandbox; use tail without -f")
		}
	}
	n, bytesMode, fromStart := c.n, c.bytes, c.sign == '+'
	quiet, verbose, delim := c.quiet, c.verbose, c.delim
	if len(files) == 0 {
		files = []string{"-"}
	}
	headers := verbose || (len(files) > 1 && !quiet)
	first := true
	r.each(files, func(name string, br *bufio.Reader) error {
		if headers {
			if !first {
				r.out.WriteByte('\n')
			}
			shown := name
			if name == "-" {
				shown = "standard input"
			}
			fmt.Fprintf(r.out, "==> %s <==\n", shown)
		}
		first = false
		if fromStart {
			skip := n - 1
			if n == 0 {
				skip = 0
			}
			if bytesMode {
				if _, err := io.CopyN(io.Discard, br, skip); err != nil {
					if err == io.EOF {
						return nil
					}
					return err
				}
			} else {
				for i := int64(0); i < skip; i++ {
					_, err := br.ReadSlice(delim)
					for err == bufio.ErrBufferFull {
						_, err = br.ReadSlice(delim)
					}
					if err == io.EOF {
						return nil
					}
					if err != nil {
						return err
					}
				}
			}
			return copyStream(r.out, br)
		}
		if bytesMode {
			ring := make([]byte, 0, min(n, 1<<20))
			for {
				if br.Buffered() == 0 {
					if _, err := br.Peek(1); err != nil {
						if err == io.EOF {
							break
						}
						return err
					}
				}
				chunk, _ := br.Peek(br.Buffered())
				ring = append(ring, chunk...)
				br.Discard(len(chunk))
				if int64(len(ring)) > n {
					ring = append(ring[:0], ring[int64(len(ring))-n:]...)
				}
			}
			r.out.Write(ring)
			return nil
		}
		if n == 0 {
			_, err := io.Copy(io.Discard, br)
			return err
		}
		ring := make([][]byte, 0, min(n, 1024))
		start := 0
		b := r.budget()
		lr := textio.LineReader{R: br, Delim: delim, Res: commands.ReservationFrom(r.ctx)}
		for {
			line, term, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			var rec []byte
			if int64(len(ring)) < n {
				if err := b.Add(len(line) + 1); err != nil {
					return err
				}
				rec = make([]byte, 0, len(line)+1)
			} else {
				rec = ring[start][:0]
			}
			rec = append(rec, line...)
			if term {
				rec = append(rec, delim)
			}
			if int64(len(ring)) < n {
				ring = append(ring, rec)
			} else {
				ring[start] = rec
				start = (start + 1) % len(ring)
			}
		}
		for i := range ring {
			r.out.Write(ring[(start+i)%len(ring)])
		}
		return nil
	})
	return r.done()
}

var wcSpec = getopt.Spec{Short: "clmwL", Long: []getopt.Long{
	{Name: "bytes", Key: "c"}, {Name: "lines", Key: "l"}, {Name: "chars", Key: "m"},
	{Name: "words", Key: "w"}, {Name: "max-line-length", Key: "L"}, {Name: "total", Arg: getopt.Required}}}

type wcCounts struct {
	lines, words, chars, bytes, maxLen int64
	name                               string
	stdin, failed                      bool
}

// Wc is wc(1), with GNU's column-width rules.
func Wc(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&wcSpec)
	if !ok {
		return code
	}
	var l, w, c, m, L bool
	total := "auto"
	for _, o := range opts {
		switch o.Key {
		case "l":
			l = true
		case "w":
			w = true
		case "c":
			c = true
		case "m":
			m = true
		case "L":
			L = true
		case "total":
			total = o.Arg
		}
	}
	if !l && !w && !c && !m && !L {
		l, w, c = true, true, true
	}
	named := len(files) > 0
	if !named {
		files = []string{"-"}
	}
	// One operand is the usual case: its counts stay on the stack.
	var resultsBuf [1]wcCounts
	results := resultsBuf[:0]
	for _, name := range files {
		res := wcCounts{name: name, stdin: name == "-" || strings.HasPrefix(name, "/dev/")}
		if inv.FS != nil && !res.stdin {
			// Width rules treat anything but a regular file like stdin.
			if st, err := inv.FS.Stat(inv.Abs(name)); err == nil && !st.Mode().IsRegular() {
				res.stdin = true
			}
		}
		f, ok := r.open(name)
		if !ok {
			res.failed = true
			results = append(results, res)
			continue
		}
		r.in = textio.ContextReader{Ctx: ctx, R: f}
		br := textio.NewReader(&r.in)
		if err := wcCount(br, &res, w || m || L); err != nil {
			r.errorf("%s: %s", name, commands.Strerror(err))
		}
		textio.PutReader(br)
		f.Close()
		r.in.R = nil
		results = append(results, res)
	}
	var tot wcCounts
	width := 1
	minWidth := 1
	var regular int64
	for _, res := range results {
		tot.lines += res.lines
		tot.words += res.words
		tot.chars += res.chars
		tot.bytes += res.bytes
		tot.maxLen = max(tot.maxLen, res.maxLen)
		if res.failed {
			continue
		}
		if res.stdin {
			minWidth = 7
		} else {
			regular += res.bytes
		}
	}
	ncounts := 0
	for _, b := range []bool{l, w, c, m, L} {
		if b {
			ncounts++
		}
	}
	if !(len(files) == 1 && ncounts == 1) && !(len(results) > 0 && results[0].failed) {
		for v := regular; v >= 10; v /= 10 {
			width++
		}
		width = max(width, minWidth)
	}
	var fieldsBuf [5]int64
	var num [24]byte
	print := func(res wcCounts, label string) {
		fields := fieldsBuf[:0]
		if l {
			fields = append(fields, res.lines)
		}
		if w {
			fields = append(fields, res.words)
		}
		if m {
			fields = append(fields, res.chars)
		}
		if c {
			fields = append(fields, res.bytes)
		}
		if L {
			fields = append(fields, res.maxLen)
		}
		for i, v := range fields {
			if i > 0 {
				r.out.WriteByte(' ')
			}
			// fmt's "%*d" without its allocations: right-aligned in width.
			digits := strconv.AppendInt(num[:0], v, 10)
			for i := len(digits); i < width; i++ {
				r.out.WriteByte(' ')
			}
			for _, d := range digits { // bytewise: Write would move num to the heap
				r.out.WriteByte(d)
			}
		}
		if label != "" {
			r.out.WriteByte(' ')
			r.out.WriteString(label)
		}
		r.out.WriteByte('\n')
	}
	for _, res := range results {
		if res.failed {
			continue
		}
		label := res.name
		if !named {
			label = ""
		}
		if total != "only" {
			print(res, label)
		}
	}
	if total == "always" || total == "only" || (total == "auto" && len(files) > 1) {
		label := "total"
		if total == "only" {
			label = ""
		}
		print(tot, label)
	}
	return r.done()
}

func wcCount(br *bufio.Reader, res *wcCounts, slow bool) error {
	if !slow {
		// Count in the reader's own (pooled) buffer: no copy, no scratch.
		for {
			if br.Buffered() == 0 {
				if _, err := br.Peek(1); err != nil {
					if err == io.EOF {
						return nil
					}
					return err
				}
			}
			b, _ := br.Peek(br.Buffered())
			res.bytes += int64(len(b))
			res.lines += int64(bytes.Count(b, newline))
			br.Discard(len(b))
		}
	}
	inWord := false
	var lineLen int64
	for {
		rn, size, err := br.ReadRune()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		res.bytes += int64(size)
		res.chars++
		switch {
		case rn == '\n':
			res.lines++
			res.maxLen = max(res.maxLen, lineLen)
			lineLen = 0
			inWord = false
			continue
		case rn == '\t':
			lineLen += 8 - lineLen%8
		case rn == '\r' || rn == '\f':
			// GNU measures the line so far before the carriage return.
			res.maxLen = max(res.maxLen, lineLen)
			lineLen = 0
		case rn >= ' ' && !(rn == utf8RuneError && size == 1):
			lineLen += int64(cellWidth(rn))
		}
		// As coreutils 9: spaces end words, printable characters start
		// them, anything else (NUL, invalid bytes) does neither.
		printable := rn > ' ' && rn != 127 && !(rn == utf8RuneError && size == 1) && (rn < 128 || rn >= 160)
		if rn == ' ' || rn == '\t' || rn == '\r' || rn == '\f' || rn == '\v' {
			inWord = false
		} else if !inWord && printable {
			inWord = true
			res.words++
		}
	}
	res.maxLen = max(res.maxLen, lineLen)
	return nil
}

const utf8RuneError = '\uFFFD'

var newline = []byte{'\n'}
