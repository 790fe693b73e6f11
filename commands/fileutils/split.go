package fileutils

// split(1) as GNU coreutils 9.1 cuts: -l lines, -b bytes, -C whole lines
// up to a size, -n chunks (N, K/N, l/N, l/K/N, r/N, r/K/N) and the suffix
// rules (-a, -d, -x, --additional-suffix, the default length widening as
// files run past it).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

var splitOpts = newOpts("l:b:C:n:d::a:x::et:u", "lines=:l", "bytes=:b", "line-bytes=:C", "number=:n",
	"numeric-suffixes?:d", "suffix-length=:a", "hex-suffixes?:x", "additional-suffix=", "verbose",
	"elide-empty-files:e", "separator=:t", "unbuffered:u", "filter=")

// splitter is one split invocation's output side.
type splitter struct {
	inv      *commands.Invocation
	prefix   string
	suffix   string // --additional-suffix
	alphabet string
	length   int  // suffix length
	auto     bool // widen the suffix when it runs out (no -a, not -n)
	index    []int
	started  bool
	verbose  bool
	elide    bool
	out      *vfs.File
}

// next names the next output file, as GNU's next_file_name does: the
// suffix counts up in its alphabet and, when auto, the name widens (xyz is
// followed by xzaaa) instead of running out.
func (s *splitter) next() (string, bool) {
	if !s.started {
		s.started = true
		s.index = make([]int, s.length)
	} else {
		i := len(s.index) - 1
		for ; i >= 0; i-- {
			s.index[i]++
			if s.auto && i == 0 && s.index[0] == len(s.alphabet)-1 {
				s.prefix += s.alphabet[len(s.alphabet)-1:]
				s.index = make([]int, len(s.index)+1)
				break
			}
			if s.index[i] < len(s.alphabet) {
				break
			}
			s.index[i] = 0
		}
		if i < 0 {
			return "", false
		}
	}
	var b strings.Builder
	b.WriteString(s.prefix)
	for _, k := range s.index {
		b.WriteByte(s.alphabet[k])
	}
	b.WriteString(s.suffix)
	return b.String(), true
}

// open starts the next output file.
func (s *splitter) open() bool {
	s.close()
	n, ok := s.next()
	if !ok {
		s.inv.Errorf("output file suffixes exhausted")
		return false
	}
	f, err := s.inv.FS.OpenFile(s.inv.Abs(n), vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
	if err != nil {
		s.inv.Errorf("%s: %s", quote(n), commands.Strerror(err))
		return false
	}
	if s.verbose {
		fmt.Fprintf(s.inv.Stdout, "creating file %s\n", quote(n))
	}
	s.out = f
	return true
}

func (s *splitter) close() {
	if s.out != nil {
		s.out.Close()
		s.out = nil
	}
}

// chunk writes one -n chunk to a file of its own (none when it is empty
// and -e is given).
func (s *splitter) chunk(data []byte) bool {
	if len(data) == 0 && s.elide {
		return true
	}
	if !s.open() {
		return false
	}
	if _, err := s.out.Write(data); err != nil {
		s.inv.Errorf("%s", commands.Strerror(err))
		return false
	}
	return true
}

// splitCount parses a -l/-b/-C/-n count: sizes with GNU's suffixes for
// bytes, plain numbers otherwise; 0 is out of range.
func splitCount(inv *commands.Invocation, what, v string, size bool) (int64, bool) {
	var n int64
	var ok bool
	if size {
		n, ok = parseSize(v)
	} else {
		u, err := strconv.ParseInt(v, 10, 64)
		n, ok = u, err == nil
	}
	switch {
	case !ok || n < 0:
		inv.Errorf("invalid %s: %s", what, localeQuote(inv, v))
		return 0, false
	case n == 0:
		inv.Errorf("invalid %s: %s: Numerical result out of range", what, localeQuote(inv, v))
		return 0, false
	}
	return n, true
}

func split(ctx context.Context, inv *commands.Invocation) int {
	opts, args, err := splitOpts.Parse(inv.Args[1:])
	if err != nil {
		return badUsage(inv, err, 1)
	}
	s := &splitter{inv: inv, prefix: "x", alphabet: "abcdefghijklmnopqrstuvwxyz", length: 2, auto: true}
	mode, count := byte('l'), int64(1000)
	chunkKind, chunkK := byte(0), int64(0)
	sep := byte('\n')
	lengthSet, start := false, int64(0)
	ways := 0
	for _, o := range opts {
		var ok bool
		switch o.Key {
		case "l", "b", "C":
			what := map[string]string{"l": "number of lines", "b": "number of bytes", "C": "number of bytes"}[o.Key]
			if count, ok = splitCount(inv, what, o.Val, o.Key != "l"); !ok {
				return 1
			}
			mode = o.Key[0]
			ways++
		case "n":
			v := o.Val
			chunkKind = 'b'
			if strings.HasPrefix(v, "l/") || strings.HasPrefix(v, "r/") {
				chunkKind, v = v[0], v[2:]
			}
			k, n, found := strings.Cut(v, "/")
			if !found {
				k, n = "", v
			}
			if count, ok = splitCount(inv, "number of chunks", n, false); !ok {
				return 1
			}
			if found {
				if chunkK, ok = splitCount(inv, "chunk number", k, false); !ok {
					return 1
				}
				if chunkK > count {
					inv.Errorf("invalid chunk number: %s: Numerical result out of range", localeQuote(inv, k))
					return 1
				}
			}
			mode = 'n'
			ways++
		case "d", "x":
			s.alphabet = "0123456789"
			if o.Key == "x" {
				s.alphabet = "0123456789abcdef"
			}
			if o.Val != "" {
				n, err := strconv.ParseInt(o.Val, 10, 64)
				if err != nil || n < 0 || strings.HasPrefix(o.Val, "-") {
					inv.Errorf("%s: invalid start value for numerical suffix", localeQuote(inv, o.Val))
					return 1
				}
				start = n
			}
		case "a":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				inv.Errorf("%s: invalid suffix length", localeQuote(inv, o.Val))
				return 1
			}
			if n > 0 {
				s.length, lengthSet, s.auto = n, true, false
			}
		case "additional-suffix":
			if strings.Contains(o.Val, "/") {
				inv.Errorf("invalid suffix %s, contains directory separator", localeQuote(inv, o.Val))
				return 1
			}
			s.suffix = o.Val
		case "verbose":
			s.verbose = true
		case "e":
			s.elide = true
		case "t":
			switch {
			case o.Val == `\0`:
				sep = 0
			case len(o.Val) == 1:
				sep = o.Val[0]
			case o.Val == "":
				inv.Errorf("empty record separator")
				return 1
			default:
				inv.Errorf("multi-character separator %s", localeQuote(inv, o.Val))
				return 1
			}
		case "filter":
			return inv.Refuse(inv.Unsupported("--filter"))
		}
	}
	if ways > 1 {
		return badUsage(inv, errors.New("cannot split in more than one way"), 1)
	}
	input := "-"
	if len(args) > 0 {
		input = args[0]
	}
	if len(args) > 1 {
		s.prefix = args[1]
	}
	if len(args) > 2 {
		return badUsage(inv, fmt.Errorf("extra operand %s", localeQuote(inv, args[2])), 1)
	}
	if start > 0 {
		// Count the suffix up from FROM: the first index is start's digits.
		s.auto = false
	}
	if mode == 'n' && chunkK == 0 {
		// Every chunk file is made: the suffix must name them all.
		need, last := 1, count-1
		for last /= int64(len(s.alphabet)); last > 0; last /= int64(len(s.alphabet)) {
			need++
		}
		if lengthSet && s.length < need {
			inv.Errorf("the suffix length needs to be at least %d", need)
			return 1
		}
		s.length, s.auto = max(s.length, need), false
	}
	if start > 0 {
		s.started = true
		s.index = make([]int, s.length)
		n := start
		for i := s.length - 1; i >= 0; i-- {
			s.index[i] = int(n % int64(len(s.alphabet)))
			n /= int64(len(s.alphabet))
		}
		if n > 0 {
			inv.Errorf("numerical suffix start value is too large for the suffix length")
			return 1
		}
		// next() increments before naming: step back one.
		s.index[s.length-1]--
		for i := s.length - 1; i > 0 && s.index[i] < 0; i-- {
			s.index[i] += len(s.alphabet)
			s.index[i-1]--
		}
		if s.index[0] < 0 {
			s.started = false
		}
	}
	var rc io.Reader
	if input == "-" {
		rc = inv.Stdin
	} else {
		f, err := inv.Open(input)
		if err != nil {
			inv.Errorf("cannot open %s for reading: %s", localeQuote(inv, input), commands.Strerror(err))
			return 1
		}
		defer f.Close()
		rc = f
	}
	defer s.close()
	if mode == 'n' {
		return s.chunks(inv, rc, input, chunkKind, chunkK, count, sep)
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	var st int
	switch mode {
	case 'b':
		st = s.bytes(ctx, br, count)
	case 'C':
		st = s.lineBytes(ctx, br, count, sep)
	default:
		st = s.lines(ctx, br, count, sep)
	}
	return st
}

func (s *splitter) write(p []byte) bool {
	if _, err := s.out.Write(p); err != nil {
		s.inv.Errorf("%s", commands.Strerror(err))
		return false
	}
	return true
}

func (s *splitter) bytes(ctx context.Context, br *bufio.Reader, size int64) int {
	buf := make([]byte, 64<<10)
	cur := size
	for {
		if ctx.Err() != nil {
			return 130
		}
		n, err := br.Read(buf)
		for p := buf[:n]; len(p) > 0; {
			if cur == size {
				if !s.open() {
					return 1
				}
				cur = 0
			}
			k := min(int64(len(p)), size-cur)
			if !s.write(p[:k]) {
				return 1
			}
			cur += k
			p = p[k:]
		}
		if err == io.EOF {
			return 0
		}
		if err != nil {
			s.inv.Errorf("read error: %s", commands.Strerror(err))
			return 1
		}
	}
}

func (s *splitter) lines(ctx context.Context, br *bufio.Reader, lines int64, sep byte) int {
	cur := lines
	for {
		if ctx.Err() != nil {
			return 130
		}
		line, err := br.ReadSlice(sep)
		if len(line) > 0 {
			if cur == lines {
				if !s.open() {
					return 1
				}
				cur = 0
			}
			if !s.write(line) {
				return 1
			}
			if err == nil {
				cur++
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			return 0
		}
		if err != nil {
			s.inv.Errorf("read error: %s", commands.Strerror(err))
			return 1
		}
	}
}

// lineBytes is -C: whole records while they fit in size bytes; a record
// longer than size fills files of its own, its rest then counting as a
// record. Records are read whole, within the sandbox's memory budget.
func (s *splitter) lineBytes(ctx context.Context, br *bufio.Reader, size int64, sep byte) int {
	res := s.inv.Memory().Reserve()
	defer res.Close()
	lr := textio.LineReader{R: br, Delim: sep, Limit: s.inv.Memory().Max(), Res: res}
	cur := int64(0) // bytes in the current file (0: start a new one)
	for {
		if ctx.Err() != nil {
			return 130
		}
		rec, term, err := lr.Next()
		if err == io.EOF {
			return 0
		}
		if err != nil {
			if st, ok := s.inv.LimitExceeded(err); ok {
				return st
			}
			s.inv.Errorf("read error: %s", commands.Strerror(err))
			return 1
		}
		if term {
			rec = append(rec, sep) // LineReader drops the separator
		}
		for len(rec) > 0 {
			n := int64(len(rec))
			if cur > 0 && cur+n <= size {
				if !s.write(rec) {
					return 1
				}
				cur += n
				break
			}
			k := min(n, size)
			if !s.open() || !s.write(rec[:k]) {
				return 1
			}
			cur, rec = k, rec[k:]
			if cur == size {
				cur = 0
			}
		}
	}
}

// chunks is -n: the input's size decides the cut, so it is read whole,
// charged to the sandbox's memory budget.
func (s *splitter) chunks(inv *commands.Invocation, rc io.Reader, input string, kind byte, k, n int64, sep byte) int {
	// GNU needs standard input to be a regular file here ("cannot
	// determine file size" for a pipe); the shell hands resident commands
	// one reader for both, so stdin is read whole like a file.
	limit := int64(0)
	if inv.Sys != nil && inv.Sys.MaxMemoryBytes > 0 {
		limit = inv.Sys.MaxMemoryBytes
	}
	if m := inv.Memory().Max(); m > 0 && (limit == 0 || m < limit) {
		limit = m
	}
	src := rc
	if limit > 0 {
		src = io.LimitReader(rc, limit+1)
	}
	res := inv.Memory().Reserve()
	defer res.Close()
	data, err := io.ReadAll(src)
	if err != nil {
		inv.Errorf("%s: %s", quote(input), commands.Strerror(err))
		return 1
	}
	if limit > 0 && int64(len(data)) > limit {
		st, _ := inv.LimitExceeded(&commands.MemoryLimitError{Max: limit})
		return st
	}
	if err := res.Grow(int64(len(data))); err != nil {
		st, _ := inv.LimitExceeded(err)
		return st
	}
	size := int64(len(data))
	emit := func(c int64, part []byte) bool {
		if k > 0 {
			if c == k {
				inv.Stdout.Write(part)
			}
			return true
		}
		return s.chunk(part)
	}
	switch kind {
	case 'r':
		// Round robin: record i goes to chunk i mod n.
		parts := make([][]byte, n)
		for i, rest := int64(0), data; len(rest) > 0; i++ {
			j := bytes.IndexByte(rest, sep)
			rec := rest
			if j >= 0 {
				rec = rest[:j+1]
			}
			if k == 0 || i%n+1 == k {
				parts[i%n] = append(parts[i%n], rec...)
			}
			rest = rest[len(rec):]
		}
		for c := int64(1); c <= n; c++ {
			if !emit(c, parts[c-1]) {
				return 1
			}
		}
	case 'l':
		// Chunk c ends with the record holding its nominal last byte
		// (c*size/n - 1); a record may swallow whole chunks, which stay
		// empty.
		csize := size / n
		pos := int64(0)
		for c := int64(1); c <= n; c++ {
			nominal := c*csize - 1
			end := pos
			switch {
			case pos >= size:
			case c > 1 && c < n && nominal < pos:
			case c == n:
				end = size
			default:
				from := max(pos, nominal)
				if j := bytes.IndexByte(data[from:], sep); j >= 0 {
					end = from + int64(j) + 1
				} else {
					end = size
				}
			}
			if !emit(c, data[pos:end]) {
				return 1
			}
			pos = end
		}
	default:
		csize := size / n
		for c := int64(1); c <= n; c++ {
			end := c * csize
			if c == n {
				end = size
			}
			if !emit(c, data[(c-1)*csize:end]) {
				return 1
			}
		}
	}
	return 0
}
