package coreutils

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

var uniqSpec = getopt.Spec{Short: "cdDf:is:uw:z", Long: []getopt.Long{
	{Name: "count", Key: "c"}, {Name: "repeated", Key: "d"}, {Name: "all-repeated", Arg: getopt.Optional, Key: "D"},
	{Name: "skip-fields", Arg: getopt.Required, Key: "f"}, {Name: "ignore-case", Key: "i"},
	{Name: "skip-chars", Arg: getopt.Required, Key: "s"}, {Name: "unique", Key: "u"},
	{Name: "check-chars", Arg: getopt.Required, Key: "w"}, {Name: "zero-terminated", Key: "z"},
	{Name: "group", Arg: getopt.Optional}}}

// Uniq is uniq(1).
func Uniq(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	r.readError = func(name string, _ error) string { return "error reading " + quoteGNU(name) }
	opts, files, code, ok := r.parse(&uniqSpec)
	if !ok {
		return code
	}
	// GNU's three switches: -d clears outUnique, -u clears outFirst, -D
	// clears outUnique and sets outLater (every line of a group but the
	// last is a "later" one there).
	var count, all, icase bool
	outUnique, outFirst, outLater := true, true, false
	skipF, skipC, check := 0, 0, -1
	delim := byte('\n')
	for _, o := range opts {
		num := func() (int, bool) {
			n, err := strconv.Atoi(o.Arg)
			return n, err == nil && n >= 0
		}
		switch o.Key {
		case "c":
			count = true
		case "d":
			outUnique = false
		case "D":
			all = true
			outUnique, outLater = false, true
		case "u":
			outFirst = false
		case "i":
			icase = true
		case "z":
			delim = 0
		case "f", "s", "w":
			n, ok := num()
			if !ok {
				what := map[string]string{"f": "number of fields to skip", "s": "number of bytes to skip", "w": "number of bytes to compare"}[o.Key]
				return r.fail(1, "%s: invalid %s", o.Arg, what)
			}
			switch o.Key {
			case "f":
				skipF = n
			case "s":
				skipC = n
			default:
				check = n
			}
		case "group":
			return r.fail(1, "--group is not supported")
		}
	}
	if count && all {
		r.errorf("printing all duplicated lines and repeat counts is meaningless")
		return r.usage(fmt.Errorf("printing all duplicated lines and repeat counts is meaningless"), 1)
	}
	if len(files) > 2 {
		return r.usage(fmt.Errorf("extra operand %s", quoteGNU(files[2])), 1)
	}
	in := "-"
	if len(files) > 0 {
		in = files[0]
	}
	if len(files) == 2 && files[1] != "-" {
		f, err := inv.OpenFile(files[1], vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o666)
		if err != nil {
			return r.fail(1, "%s", commands.Describe(err))
		}
		defer f.Close()
		r.out.Reset(f)
	}
	key := func(line []byte) []byte {
		i := 0
		for f := 0; f < skipF; f++ {
			for i < len(line) && isBlank(line[i]) {
				i++
			}
			for i < len(line) && !isBlank(line[i]) {
				i++
			}
		}
		i = min(i+skipC, len(line))
		k := line[i:]
		if check >= 0 && check < len(k) {
			k = k[:check]
		}
		return k
	}
	equal := func(a, b []byte) bool {
		ka, kb := key(a), key(b)
		if icase {
			return bytes.EqualFold(ka, kb)
		}
		return bytes.Equal(ka, kb)
	}
	// As GNU's check_file: prev is written when the next line differs (or,
	// with -D, whenever a line arrives), and matches counts the lines of
	// its group after the first.
	var prev []byte
	have := false
	matches := 0
	write := func(match bool) {
		if !(matches == 0 && outUnique || matches > 0 && !match && outFirst || matches > 0 && match && outLater) {
			return
		}
		if count {
			fmt.Fprintf(r.out, "%7d ", matches+1)
		}
		r.out.Write(prev)
		r.out.WriteByte(delim)
	}
	r.lines([]string{in}, delim, func(line []byte, _ bool) error {
		if !have {
			prev = append(prev[:0], line...)
			have = true
			return nil
		}
		match := equal(prev, line)
		if match {
			matches++
		}
		if !match || outLater {
			write(match)
			prev = append(prev[:0], line...)
			if !match {
				matches = 0
			}
		}
		return nil
	})
	if have {
		write(false)
	}
	return r.done()
}

// rangeList is a cut-style list of 1-based inclusive ranges.
type rangeList []struct{ lo, hi int } // hi 0 = to the end

func parseRanges(s string) (rangeList, error) {
	var rl rangeList
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		lo, hi := 1, 0
		a, b, isRange := strings.Cut(part, "-")
		var err error
		if a != "" {
			if lo, err = strconv.Atoi(a); err != nil || lo < 1 {
				if err == nil {
					return nil, fmt.Errorf("fields and positions are numbered from 1")
				}
				return nil, fmt.Errorf("invalid field value %s", quoteGNU(a))
			}
		} else if !isRange {
			return nil, fmt.Errorf("invalid byte or field list")
		}
		if !isRange {
			hi = lo
		} else if b != "" {
			if hi, err = strconv.Atoi(b); err != nil || hi < 1 {
				return nil, fmt.Errorf("invalid field value %s", quoteGNU(b))
			}
			if hi < lo {
				return nil, fmt.Errorf("invalid decreasing range")
			}
		} else if a == "" {
			return nil, fmt.Errorf("invalid range with no endpoint: -")
		}
		rl = append(rl, struct{ lo, hi int }{lo, hi})
	}
	if len(rl) == 0 {
		return nil, fmt.Errorf("missing list of fields")
	}
	return rl, nil
}

func (rl rangeList) has(i int) bool {
	for _, r := range rl {
		if i >= r.lo && (r.hi == 0 || i <= r.hi) {
			return true
		}
	}
	return false
}

var cutSpec = getopt.Spec{Short: "b:c:d:f:nsz", Long: []getopt.Long{
	{Name: "bytes", Arg: getopt.Required, Key: "b"}, {Name: "characters", Arg: getopt.Required, Key: "c"},
	{Name: "delimiter", Arg: getopt.Required, Key: "d"}, {Name: "fields", Arg: getopt.Required, Key: "f"},
	{Name: "only-delimited", Key: "s"}, {Name: "zero-terminated", Key: "z"}, {Name: "complement"},
	{Name: "output-delimiter", Arg: getopt.Required}}}

// Cut is cut(1); -c counts bytes, as GNU cut does.
func Cut(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&cutSpec)
	if !ok {
		return code
	}
	var list string
	mode := byte(0)
	delim := byte('\t')
	haveDelim := false
	var outDelim *string
	var onlyDelim, complement bool
	eol := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "b", "c", "f":
			if mode != 0 {
				return r.usage(fmt.Errorf("only one type of list may be specified"), 1)
			}
			mode, list = o.Key[0], o.Arg
		case "d":
			if len(o.Arg) > 1 {
				return r.usage(fmt.Errorf("the delimiter must be a single character"), 1)
			}
			if o.Arg == "" {
				delim = 0
			} else {
				delim = o.Arg[0]
			}
			haveDelim = true
		case "s":
			onlyDelim = true
		case "z":
			eol = 0
		case "complement":
			complement = true
		case "output-delimiter":
			s := o.Arg
			outDelim = &s
		}
	}
	if mode == 0 {
		return r.usage(fmt.Errorf("you must specify a list of bytes, characters, or fields"), 1)
	}
	if mode != 'f' && haveDelim {
		return r.usage(fmt.Errorf("an input delimiter may be specified only when operating on fields"), 1)
	}
	if mode != 'f' && onlyDelim {
		return r.usage(fmt.Errorf("suppressing non-delimited lines makes sense\n\tonly when operating on fields"), 1)
	}
	rl, err := parseRanges(list)
	if err != nil {
		return r.usage(err, 1)
	}
	sel := func(i int) bool { return rl.has(i) != complement }
	od := string(delim)
	if outDelim != nil {
		od = *outDelim
	}
	r.lines(files, eol, func(line []byte, term bool) error {
		if mode != 'f' {
			first := true
			prevSel := false
			for i := range line {
				if sel(i + 1) {
					if !prevSel && !first && outDelim != nil {
						r.out.WriteString(*outDelim)
					}
					r.out.WriteByte(line[i])
					first, prevSel = false, true
				} else {
					prevSel = false
				}
			}
			r.out.WriteByte(eol)
			return nil
		}
		if bytes.IndexByte(line, delim) < 0 {
			if !onlyDelim {
				r.out.Write(line)
				r.out.WriteByte(eol)
			}
			return nil
		}
		field := 1
		first := true
		for {
			i := bytes.IndexByte(line, delim)
			f := line
			if i >= 0 {
				f = line[:i]
			}
			if sel(field) {
				if !first {
					r.out.WriteString(od)
				}
				r.out.Write(f)
				first = false
			}
			if i < 0 {
				break
			}
			line = line[i+1:]
			field++
		}
		r.out.WriteByte(eol)
		return nil
	})
	return r.done()
}

var pasteSpec = getopt.Spec{Short: "d:sz", Long: []getopt.Long{
	{Name: "delimiters", Arg: getopt.Required, Key: "d"}, {Name: "serial", Key: "s"}, {Name: "zero-terminated", Key: "z"}}}

// pasteDelims decodes paste's delimiter list (\n \t \\ \0 = none).
func pasteDelims(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				out = append(out, "\n")
			case 't':
				out = append(out, "\t")
			case '0':
				out = append(out, "")
			default:
				out = append(out, string(s[i]))
			}
			continue
		}
		out = append(out, string(s[i]))
	}
	return out
}

// Paste is paste(1).
func Paste(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&pasteSpec)
	if !ok {
		return code
	}
	delims := []string{"\t"}
	serial := false
	eol := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "d":
			delims = pasteDelims(o.Arg)
			if len(delims) == 0 {
				delims = []string{""}
			}
		case "s":
			serial = true
		case "z":
			eol = 0
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	var stdin *textio.LineReader
	readers := make([]*textio.LineReader, len(files))
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for i, name := range files {
		if name == "-" {
			if stdin == nil {
				br := textio.NewReader(textio.WithContext(ctx, inv.Stdin))
				defer textio.PutReader(br)
				stdin = &textio.LineReader{R: br, Delim: eol}
			}
			readers[i] = stdin
			continue
		}
		f, ok := r.open(name)
		if !ok {
			return r.done()
		}
		closers = append(closers, f)
		br := textio.NewReader(textio.WithContext(ctx, f))
		defer textio.PutReader(br)
		readers[i] = &textio.LineReader{R: br, Delim: eol}
	}
	if serial {
		for _, lr := range readers {
			n := 0
			for {
				line, _, err := lr.Next()
				if err != nil {
					break
				}
				if n > 0 {
					r.out.WriteString(delims[(n-1)%len(delims)])
				}
				r.out.Write(line)
				n++
			}
			r.out.WriteByte(eol)
		}
		return r.done()
	}
	done := make([]bool, len(readers))
	for !r.stopped() {
		var row bytes.Buffer
		live := 0
		for i, lr := range readers {
			if i > 0 {
				row.WriteString(delims[(i-1)%len(delims)])
			}
			if done[i] {
				continue
			}
			line, _, err := lr.Next()
			if err != nil {
				done[i] = true
				continue
			}
			live++
			row.Write(line)
		}
		if live == 0 {
			break
		}
		r.out.Write(row.Bytes())
		r.out.WriteByte(eol)
	}
	return r.done()
}
