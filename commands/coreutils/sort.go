package coreutils

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

var sortSpec = getopt.Spec{Short: "bcCdfghik:mMno:rRsS:t:T:uVz", Long: []getopt.Long{
	{Name: "ignore-leading-blanks", Key: "b"}, {Name: "check", Arg: getopt.Optional, Key: "check"},
	{Name: "dictionary-order", Key: "d"}, {Name: "ignore-case", Key: "f"},
	{Name: "general-numeric-sort", Key: "g"}, {Name: "human-numeric-sort", Key: "h"},
	{Name: "ignore-nonprinting", Key: "i"}, {Name: "key", Arg: getopt.Required, Key: "k"},
	{Name: "merge", Key: "m"}, {Name: "month-sort", Key: "M"}, {Name: "numeric-sort", Key: "n"},
	{Name: "output", Arg: getopt.Required, Key: "o"}, {Name: "reverse", Key: "r"},
	{Name: "random-sort", Key: "R"}, {Name: "stable", Key: "s"}, {Name: "buffer-size", Arg: getopt.Required, Key: "S"},
	{Name: "field-separator", Arg: getopt.Required, Key: "t"}, {Name: "temporary-directory", Arg: getopt.Required, Key: "T"},
	{Name: "unique", Key: "u"}, {Name: "version-sort", Key: "V"}, {Name: "zero-terminated", Key: "z"},
	{Name: "parallel", Arg: getopt.Required}, {Name: "sort", Arg: getopt.Required}, {Name: "random-source", Arg: getopt.Required},
	{Name: "files0-from", Arg: getopt.Required}, {Name: "debug"}, {Name: "compress-program", Arg: getopt.Required},
}}

// keyOpts are the per-key ordering options (also the global defaults).
type keyOpts struct {
	blanksStart, blanksEnd                      bool
	dict, fold, general, human, nonprint, month bool
	numeric, random, reverse, version           bool
}

func (k keyOpts) any() bool {
	return k.blanksStart || k.blanksEnd || k.dict || k.fold || k.general || k.human || k.nonprint ||
		k.month || k.numeric || k.random || k.reverse || k.version
}

// incompatible is GNU sort's check: at most one of -g -h -M -n and the
// group -R -V -d -i orders a key. It returns the key's options as GNU names
// them (without -b and -r), or "" when they are compatible.
func (k keyOpts) incompatible() string {
	n := btoi(k.numeric) + btoi(k.general) + btoi(k.human) + btoi(k.month) +
		btoi(k.version || k.random || k.dict || k.nonprint)
	if n <= 1 {
		return ""
	}
	var b strings.Builder
	for _, f := range []struct {
		on bool
		c  byte
	}{{k.dict, 'd'}, {k.fold, 'f'}, {k.general, 'g'}, {k.human, 'h'}, {k.nonprint && !k.dict, 'i'},
		{k.month, 'M'}, {k.numeric, 'n'}, {k.random, 'R'}, {k.version, 'V'}} {
		if f.on {
			b.WriteByte(f.c)
		}
	}
	return b.String()
}

// sameCheck records the first of -c and -C; a later different one is
// GNU's "options '-cC' are incompatible".
func sameCheck(first *byte, c byte) bool {
	if *first == 0 {
		*first = c
	}
	return *first == c
}

type sortKey struct {
	sf, sc, ef, ec int // 1-based fields/chars; ef 0 = end of line; ec 0 = end of field
	opts           keyOpts
}

type sorter struct {
	keys   []sortKey
	global keyOpts
	tab    int // -t byte, -1 = blank transitions
	stable bool
	unique bool
	seed   uint64
}

// Sort is sort(1) in the C locale. It buffers its input, charged against
// the sandbox memory limit, and fails with a clear error past it.
func Sort(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	r.usageStatus = 2
	opts, files, code, ok := r.parse(&sortSpec)
	if !ok {
		return code
	}
	s := &sorter{tab: -1}
	var check, quietCheck bool
	var checkOpt byte // the first of -c and -C given, for GNU's "options '-cC'"
	var output string
	delim := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "b":
			s.global.blanksStart, s.global.blanksEnd = true, true
		case "c":
			check = true
			if !sameCheck(&checkOpt, 'c') {
				return r.fail(2, "options '-cC' are incompatible")
			}
		case "check":
			c := byte('c')
			switch o.Arg {
			case "", "diagnose-first":
				check = true
			case "quiet", "silent":
				check, quietCheck, c = true, true, 'C'
			default:
				return r.usage(fmt.Errorf("invalid argument %s for '--check'", quoteGNU(o.Arg)), 2)
			}
			if !sameCheck(&checkOpt, c) {
				return r.fail(2, "options '-cC' are incompatible")
			}
		case "C":
			check, quietCheck = true, true
			if !sameCheck(&checkOpt, 'C') {
				return r.fail(2, "options '-cC' are incompatible")
			}
		case "d":
			s.global.dict = true
		case "f":
			s.global.fold = true
		case "g":
			s.global.general = true
		case "h":
			s.global.human = true
		case "i":
			s.global.nonprint = true
		case "M":
			s.global.month = true
		case "n":
			s.global.numeric = true
		case "R":
			s.global.random = true
		case "r":
			s.global.reverse = true
		case "V":
			s.global.version = true
		case "s":
			s.stable = true
		case "u":
			s.unique = true
		case "z":
			delim = 0
		case "o":
			output = o.Arg
		case "sort":
			switch o.Arg {
			case "numeric":
				s.global.numeric = true
			case "human-numeric":
				s.global.human = true
			case "general-numeric":
				s.global.general = true
			case "version":
				s.global.version = true
			case "month":
				s.global.month = true
			case "random":
				s.global.random = true
			default:
				return r.usage(fmt.Errorf("invalid argument %s for '--sort'", quoteGNU(o.Arg)), 2)
			}
		case "t":
			if len(o.Arg) != 1 {
				if o.Arg == `\0` {
					s.tab = 0
					continue
				}
				if o.Arg == "" {
					return r.fail(2, "empty tab")
				}
				return r.fail(2, "multi-character tab %s", quoteGNU(o.Arg))
			}
			s.tab = int(o.Arg[0])
		case "k":
			k, err := parseKey(o.Arg)
			if err != nil {
				return r.fail(2, "%v", err)
			}
			s.keys = append(s.keys, k)
		}
	}
	for i := range s.keys {
		if !s.keys[i].opts.any() {
			s.keys[i].opts = s.global
		}
	}
	// GNU checks each key after inheritance, or the global options when
	// there is no key.
	if len(s.keys) == 0 {
		if o := s.global.incompatible(); o != "" {
			return r.fail(2, "options '-%s' are incompatible", o)
		}
	}
	for _, k := range s.keys {
		if o := k.opts.incompatible(); o != "" {
			return r.fail(2, "options '-%s' are incompatible", o)
		}
	}
	if check && output != "" {
		return r.fail(2, "options '-%co' are incompatible", checkOpt)
	}
	if s.global.random {
		s.seed = rand.Uint64()
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	if check {
		if len(files) > 1 {
			return r.fail(2, "extra operand %s not allowed with -c", quoteGNU(files[1]))
		}
		return s.check(r, files[0], delim, quietCheck)
	}
	b := r.budget()
	var lines [][]byte
	for _, name := range files {
		// GNU sort reads every input before writing; it reports an
		// unreadable one as "cannot read" and stops.
		f, err := inv.Open(name)
		if err != nil {
			return r.fail(2, "cannot read: %s", commands.Describe(err))
		}
		lines, err = readChunked(textio.WithContext(ctx, f), delim, b, lines)
		f.Close()
		if err != nil {
			if st, ok := r.limitFail(err); ok {
				return st
			}
			return r.fail(2, "read failed: %s: %s", name, commands.Strerror(err))
		}
	}
	// Keys are extracted and numbers parsed once per line, not per
	// comparison (sort -n of 1 MB went from 200 ms to a fraction).
	nk := max(len(s.keys), 1)
	if err := b.Add(len(lines) * (48 + nk*80)); err != nil {
		st, _ := r.limitFail(err)
		return st
	}
	recs := make([]sortRec, len(lines))
	kvs := make([]keyVal, len(lines)*nk)
	for i, l := range lines {
		recs[i] = sortRec{line: l, keys: kvs[i*nk : (i+1)*nk : (i+1)*nk], idx: i}
		s.prepare(&recs[i])
		recs[i].f, recs[i].fok = recs[i].keys[0].f, recs[i].keys[0].fok
	}
	// pdqsort with the input position as the final tie-break: stable where
	// it matters (-s, -u) and much faster than a merge-based stable sort.
	first := &s.global
	if len(s.keys) > 0 {
		first = &s.keys[0].opts
	}
	numericFirst := first.numeric && !first.human
	less := -1
	if first.reverse {
		less = 1
	}
	slices.SortFunc(recs, func(a, b sortRec) int {
		// sort -n / -k N,Nn: most comparisons end on the first key's float.
		if numericFirst && a.fok && b.fok && a.f != b.f {
			if a.f < b.f {
				return less
			}
			return -less
		}
		if c := s.compareRec(&a, &b); c != 0 {
			return c
		}
		return a.idx - b.idx
	})
	lines = lines[:0]
	for i := range recs {
		if s.unique && i > 0 && s.keyCompareRec(&recs[i-1], &recs[i]) == 0 {
			continue
		}
		lines = append(lines, recs[i].line)
	}
	w := r.out
	if output != "" && output != "-" {
		f, err := inv.OpenFile(output, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o666)
		if err != nil {
			return r.fail(2, "open failed: %s", commands.Describe(err))
		}
		defer f.Close()
		bw := textio.NewWriter(f)
		defer textio.PutWriter(bw)
		w = bw
	}
	for i, l := range lines {
		if i&1023 == 0 && ctx.Err() != nil {
			break
		}
		w.Write(l)
		w.WriteByte(delim)
	}
	if w != r.out {
		if err := w.Flush(); err != nil {
			r.errorf("write failed: %s: %s", output, commands.Strerror(err))
			r.status = 2
		}
	}
	return r.done()
}

func (s *sorter) check(r *run, name string, delim byte, quiet bool) int {
	var prev []byte
	havePrev := false
	n := 0
	disorder := false
	r.each([]string{name}, func(_ string, br *bufio.Reader) error {
		lr := textio.LineReader{R: br, Delim: delim, Res: commands.ReservationFrom(r.ctx)}
		for {
			line, _, err := lr.Next()
			if err != nil {
				return nil
			}
			n++
			if havePrev {
				c := s.compare(prev, line)
				if c > 0 || (s.unique && c == 0) {
					if !quiet {
						display := name
						if name == "-" {
							display = "-"
						}
						r.out.Flush()
						fmt.Fprintf(r.inv.Stderr, "%s: %s:%d: disorder: %s\n", r.name, display, n, line)
					}
					disorder = true
					return nil
				}
			}
			prev = append(prev[:0], line...)
			havePrev = true
		}
	})
	if r.status != 0 {
		r.status = 2
		return r.done()
	}
	if disorder {
		r.status = 1
	}
	return r.done()
}

func parseKey(spec string) (sortKey, error) {
	var k sortKey
	bad := func() (sortKey, error) {
		return k, fmt.Errorf("invalid number at field start: invalid count at start of %s", quoteGNU(spec))
	}
	start, end, hasEnd := strings.Cut(spec, ",")
	num := func(s string) (int, string, bool) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, s, false
		}
		v, err := strconv.Atoi(s[:i])
		return v, s[i:], err == nil
	}
	var rest string
	var ok bool
	k.sf, rest, ok = num(start)
	if !ok || k.sf == 0 {
		if k.sf == 0 && ok {
			return k, fmt.Errorf("field number is zero: invalid field specification %s", quoteGNU(spec))
		}
		return bad()
	}
	if strings.HasPrefix(rest, ".") {
		k.sc, rest, ok = num(rest[1:])
		if !ok || k.sc == 0 {
			return k, fmt.Errorf("character offset is zero: invalid field specification %s", quoteGNU(spec))
		}
	}
	if err := keyFlags(rest, &k.opts, true); err != nil {
		return k, fmt.Errorf("%v: invalid field specification %s", err, quoteGNU(spec))
	}
	if hasEnd {
		k.ef, rest, ok = num(end)
		if !ok || k.ef == 0 {
			return k, fmt.Errorf("invalid number after ',': invalid count at start of %s", quoteGNU(end))
		}
		if strings.HasPrefix(rest, ".") {
			k.ec, rest, _ = num(rest[1:])
		}
		if err := keyFlags(rest, &k.opts, false); err != nil {
			return k, fmt.Errorf("%v: invalid field specification %s", err, quoteGNU(spec))
		}
	}
	return k, nil
}

func keyFlags(s string, o *keyOpts, start bool) error {
	for _, c := range s {
		switch c {
		case 'b':
			if start {
				o.blanksStart = true
			} else {
				o.blanksEnd = true
			}
		case 'd':
			o.dict = true
		case 'f':
			o.fold = true
		case 'g':
			o.general = true
		case 'h':
			o.human = true
		case 'i':
			o.nonprint = true
		case 'M':
			o.month = true
		case 'n':
			o.numeric = true
		case 'R':
			o.random = true
		case 'r':
			o.reverse = true
		case 'V':
			o.version = true
		default:
			return fmt.Errorf("stray character in field spec")
		}
	}
	return nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// fieldStart returns the offset where 0-based field f begins.
func (s *sorter) fieldStart(line []byte, f int) int {
	i := 0
	for ; f > 0 && i < len(line); f-- {
		if s.tab >= 0 {
			j := bytes.IndexByte(line[i:], byte(s.tab))
			if j < 0 {
				return len(line)
			}
			i += j + 1
		} else {
			for i < len(line) && isBlank(line[i]) {
				i++
			}
			for i < len(line) && !isBlank(line[i]) {
				i++
			}
		}
	}
	return i
}

// fieldEnd returns the offset where 0-based field f ends.
func (s *sorter) fieldEnd(line []byte, start int) int {
	i := start
	if s.tab >= 0 {
		j := bytes.IndexByte(line[i:], byte(s.tab))
		if j < 0 {
			return len(line)
		}
		return i + j
	}
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	for i < len(line) && !isBlank(line[i]) {
		i++
	}
	return i
}

func (s *sorter) extract(line []byte, k *sortKey) []byte {
	beg := s.fieldStart(line, k.sf-1)
	if k.opts.blanksStart {
		for beg < len(line) && isBlank(line[beg]) {
			beg++
		}
	}
	if k.sc > 0 {
		beg = min(beg+k.sc-1, len(line))
		if fe := s.fieldEnd(line, s.fieldStart(line, k.sf-1)); beg > fe && s.tab >= 0 {
			beg = fe
		}
	}
	end := len(line)
	if k.ef > 0 {
		fs := s.fieldStart(line, k.ef-1)
		if k.ec == 0 {
			end = s.fieldEnd(line, fs)
		} else {
			if k.opts.blanksEnd {
				for fs < len(line) && isBlank(line[fs]) {
					fs++
				}
			}
			end = min(fs+k.ec, len(line))
		}
	}
	if end < beg {
		end = beg
	}
	return line[beg:end]
}

// readChunked appends r's lines to lines, reading into 1 MiB chunks that
// the lines point into: memory stays at the input size (a growing buffer
// would double it), and every chunk is charged to the budget.
func readChunked(r io.Reader, delim byte, b *textio.Budget, lines [][]byte) ([][]byte, error) {
	// Chunks start small (most sorts are a few lines: a 64 KiB first chunk
	// was most of what a small sort allocated) and double up to 1 MiB.
	chunkSize := 4 << 10
	var carry []byte
	for {
		chunk := make([]byte, max(chunkSize, 2*len(carry)))
		chunkSize = min(chunkSize*2, 1<<20)
		n := copy(chunk, carry)
		if err := b.Add(len(chunk)); err != nil {
			return lines, err
		}
		m, err := io.ReadFull(r, chunk[n:])
		chunk = chunk[:n+m]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return lines, err
		}
		end := len(chunk)
		if !eof {
			end = bytes.LastIndexByte(chunk, delim) + 1
		}
		data := chunk[:end]
		for len(data) > 0 {
			i := bytes.IndexByte(data, delim)
			if i < 0 {
				lines = append(lines, data)
				break
			}
			lines = append(lines, data[:i:i])
			data = data[i+1:]
		}
		if eof {
			return lines, nil
		}
		carry = chunk[end:]
	}
}

// keyVal is one key of one line, prepared for comparison.
type keyVal struct {
	b      []byte
	neg    bool
	ip, fp []byte
	suffix int
	f      float64 // the number, when it has at most 15 digits (fok)
	fok    bool
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// fastFloat converts a short number exactly enough to order it: the
// result is the correctly rounded value, and rounding never reverses an
// order, so only equal floats need the exact digit comparison.
func fastFloat(neg bool, ip, fp []byte) (float64, bool) {
	if len(ip)+len(fp) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range ip {
		n = n*10 + int64(c-'0')
	}
	for _, c := range fp {
		n = n*10 + int64(c-'0')
	}
	f := float64(n) / pow10[len(fp)]
	if neg {
		f = -f
	}
	return f, true
}

type sortRec struct {
	line []byte
	keys []keyVal
	idx  int
	// f is the first key's number, kept inline: comparisons that it
	// decides touch no other memory (sort -n is memory-bound otherwise).
	f   float64
	fok bool
}

func (s *sorter) prepare(rec *sortRec) {
	for i := range rec.keys {
		o := &s.global
		b := rec.line
		if len(s.keys) > 0 {
			k := &s.keys[i]
			o = &k.opts
			b = s.extract(rec.line, k)
		}
		if o.blanksStart {
			b = trimBlanks(b)
		}
		kv := keyVal{b: b}
		if o.numeric || o.human {
			kv.neg, kv.ip, kv.fp = numParts(b)
			kv.f, kv.fok = fastFloat(kv.neg, kv.ip, kv.fp)
		}
		if o.human {
			kv.suffix = humanSuffix(b)
		}
		rec.keys[i] = kv
	}
}

func (s *sorter) keyCompareRec(a, b *sortRec) int {
	for i := range a.keys {
		o := &s.global
		if len(s.keys) > 0 {
			o = &s.keys[i].opts
		}
		ka, kb := &a.keys[i], &b.keys[i]
		var c int
		switch {
		case o.human && ka.suffix != kb.suffix:
			c = sign(ka.suffix - kb.suffix)
		case (o.numeric || o.human) && ka.fok && kb.fok && ka.f != kb.f:
			if ka.f < kb.f {
				c = -1
			} else {
				c = 1
			}
		case o.numeric || o.human:
			c = numCompareParts(ka.neg, ka.ip, ka.fp, kb.neg, kb.ip, kb.fp)
		default:
			c = compareRaw(ka.b, kb.b, o, s.seed)
		}
		if c != 0 {
			if o.reverse {
				return -c
			}
			return c
		}
	}
	return 0
}

func (s *sorter) compareRec(a, b *sortRec) int {
	if c := s.keyCompareRec(a, b); c != 0 || s.unique || s.stable {
		return c
	}
	c := bytes.Compare(a.line, b.line)
	if s.global.reverse {
		return -c
	}
	return c
}

func (s *sorter) keyCompare(a, b []byte) int {
	if len(s.keys) == 0 {
		return compareWith(a, b, &s.global, s.seed)
	}
	for i := range s.keys {
		k := &s.keys[i]
		if c := compareWith(s.extract(a, k), s.extract(b, k), &k.opts, s.seed); c != 0 {
			return c
		}
	}
	return 0
}

func (s *sorter) compare(a, b []byte) int {
	if c := s.keyCompare(a, b); c != 0 || s.unique || s.stable {
		return c
	}
	c := bytes.Compare(a, b)
	if s.global.reverse {
		return -c
	}
	return c
}

func compareWith(a, b []byte, o *keyOpts, seed uint64) int {
	c := compareRaw(a, b, o, seed)
	if o.reverse {
		return -c
	}
	return c
}

func compareRaw(a, b []byte, o *keyOpts, seed uint64) int {
	if o.blanksStart {
		a, b = trimBlanks(a), trimBlanks(b)
	}
	switch {
	case o.numeric:
		return numCompare(a, b)
	case o.human:
		if c := humanSuffix(a) - humanSuffix(b); c != 0 {
			return sign(c)
		}
		return numCompare(a, b)
	case o.general:
		return generalCompare(a, b)
	case o.month:
		return month(a) - month(b)
	case o.version:
		return versionCompare(string(a), string(b))
	case o.random:
		ha, hb := fnvHash(a, seed), fnvHash(b, seed)
		if ha != hb {
			if ha < hb {
				return -1
			}
			return 1
		}
		return bytes.Compare(a, b)
	case o.dict || o.fold || o.nonprint:
		return filteredCompare(a, b, o)
	}
	return bytes.Compare(a, b)
}

func trimBlanks(s []byte) []byte {
	for len(s) > 0 && (isBlank(s[0]) || s[0] == '\n') {
		s = s[1:]
	}
	return s
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func fnvHash(b []byte, seed uint64) uint64 {
	h := seed ^ 1469598103934665603
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func filteredCompare(a, b []byte, o *keyOpts) int {
	keep := func(c byte) bool {
		if o.dict && !(isBlank(c) || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
		if o.nonprint && (c < 32 || c >= 127) {
			return false
		}
		return true
	}
	i, j := 0, 0
	for {
		for i < len(a) && !keep(a[i]) {
			i++
		}
		for j < len(b) && !keep(b[j]) {
			j++
		}
		if i >= len(a) || j >= len(b) {
			return sign((len(a) - i) - (len(b) - j))
		}
		ca, cb := a[i], b[j]
		if o.fold {
			ca, cb = upper(ca), upper(cb)
		}
		if ca != cb {
			return sign(int(ca) - int(cb))
		}
		i++
		j++
	}
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

// numParts splits a leading number into sign, integer digits (no leading
// zeros) and fraction digits (no trailing zeros), as GNU's strnumcmp sees it.
func numParts(s []byte) (neg bool, intPart, frac []byte) {
	s = trimBlanks(s)
	if len(s) > 0 && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') {
		i++
	}
	intPart = bytes.TrimLeft(s[:i], "0")
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac = bytes.TrimRight(s[i+1:j], "0")
	}
	if len(intPart) == 0 && len(frac) == 0 {
		neg = false // -0 == 0
	}
	return
}

func numCompare(a, b []byte) int {
	na, ia, fa := numParts(a)
	nb, ib, fb := numParts(b)
	return numCompareParts(na, ia, fa, nb, ib, fb)
}

func numCompareParts(na bool, ia, fa []byte, nb bool, ib, fb []byte) int {
	if na != nb {
		if na {
			return -1
		}
		return 1
	}
	c := 0
	if len(ia) != len(ib) {
		c = sign(len(ia) - len(ib))
	} else if c = bytes.Compare(ia, ib); c == 0 {
		c = bytes.Compare(fa, fb)
	}
	if na {
		return -c
	}
	return c
}

func humanSuffix(s []byte) int {
	s = trimBlanks(s)
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := false
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		digits = digits || s[i] != '.'
		i++
	}
	// A suffix counts only after a number: "The" is not tera.
	if digits && i < len(s) {
		if k := strings.IndexByte("kKMGTPEZYRQ", s[i]); k >= 0 {
			if k == 0 {
				k = 1
			}
			if len(s) > 0 && s[0] == '-' {
				return -k
			}
			return k
		}
	}
	return 0
}

func generalCompare(a, b []byte) int {
	pa, oka := parseFloatPrefix(trimBlanks(a))
	pb, okb := parseFloatPrefix(trimBlanks(b))
	switch {
	case !oka && !okb:
		return 0
	case !oka:
		return -1
	case !okb:
		return 1
	case math.IsNaN(pa) || math.IsNaN(pb):
		return sign(btoi(!math.IsNaN(pa)) - btoi(!math.IsNaN(pb)))
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func parseFloatPrefix(s []byte) (float64, bool) {
	for n := len(s); n > 0; n-- {
		if f, err := strconv.ParseFloat(string(s[:n]), 64); err == nil {
			return f, true
		}
	}
	return 0, false
}

var months = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}

func month(s []byte) int {
	s = trimBlanks(s)
	if len(s) < 3 {
		return 0
	}
	m := strings.ToUpper(string(s[:3]))
	for i, name := range months {
		if m == name {
			return i + 1
		}
	}
	return 0
}

// versionCompare is GNU filevercmp (sort -V, ls -v).
func versionCompare(a, b string) int {
	if a == b {
		return 0
	}
	switch {
	case a == "":
		return -1
	case b == "":
		return 1
	case a == ".":
		return -1
	case b == ".":
		return 1
	case a == "..":
		return -1
	case b == "..":
		return 1
	}
	if ha, hb := a[0] == '.', b[0] == '.'; ha != hb {
		if ha {
			return -1
		}
		return 1
	} else if ha {
		a, b = a[1:], b[1:]
	}
	pa, pb := a[:fileSuffixStart(a)], b[:fileSuffixStart(b)]
	if pa == pb {
		if c := verrevcmp(a, b); c != 0 {
			return c
		}
	} else if c := verrevcmp(pa, pb); c != 0 {
		return c
	} else if c := verrevcmp(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// fileSuffixStart finds a trailing (\.[A-Za-z~][A-Za-z0-9~]*)* suffix.
func fileSuffixStart(s string) int {
	end := len(s)
	i := len(s)
	for i > 0 {
		j := i - 1
		for j >= 0 && (isAlpha(s[j]) || isDigit(s[j]) || s[j] == '~') {
			j--
		}
		if j >= 0 && s[j] == '.' && j+1 < i && (isAlpha(s[j+1]) || s[j+1] == '~') {
			end = j
			i = j
			continue
		}
		break
	}
	return end
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func verOrder(c byte, end bool) int {
	switch {
	case end:
		return 0
	case isDigit(c):
		return 0
	case isAlpha(c):
		return int(c)
	case c == '~':
		return -1
	}
	return int(c) + 256
}

func verrevcmp(a, b string) int {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		first := 0
		for (i < len(a) && !isDigit(a[i])) || (j < len(b) && !isDigit(b[j])) {
			var ca, cb byte
			if i < len(a) {
				ca = a[i]
			}
			if j < len(b) {
				cb = b[j]
			}
			oa, ob := verOrder(ca, i >= len(a)), verOrder(cb, j >= len(b))
			if oa != ob {
				return sign(oa - ob)
			}
			i++
			j++
		}
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		for i < len(a) && isDigit(a[i]) && j < len(b) && isDigit(b[j]) {
			if first == 0 {
				first = int(a[i]) - int(b[j])
			}
			i++
			j++
		}
		if i < len(a) && isDigit(a[i]) {
			return 1
		}
		if j < len(b) && isDigit(b[j]) {
			return -1
		}
		if first != 0 {
			return sign(first)
		}
	}
	return 0
}
