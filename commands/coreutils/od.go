package coreutils

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

// od: GNU's options and the traditional ones.

var odSpec = getopt.Spec{Short: "A:j:N:t:vw::abcdfiloxsS:BDHXhOILeF", Long: []getopt.Long{
	{Name: "address-radix", Arg: getopt.Required, Key: "A"}, {Name: "skip-bytes", Arg: getopt.Required, Key: "j"},
	{Name: "read-bytes", Arg: getopt.Required, Key: "N"}, {Name: "format", Arg: getopt.Required, Key: "t"},
	{Name: "output-duplicates", Key: "v"}, {Name: "width", Arg: getopt.Optional, Key: "w"}, {Name: "endian", Arg: getopt.Required},
	{Name: "traditional"}}}

// parseOldOffset reads od's pre-POSIX offset operand, [+]N[b|B]: octal,
// hexadecimal after 0x, decimal when it has a '.' (which GNU then rejects
// as a suffix, so "1." is a file name there too).
func parseOldOffset(s string) (int64, bool) {
	s = strings.TrimPrefix(s, "+")
	base := 8
	if strings.Contains(s, ".") {
		base = 10
	} else if len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		base, s = 16, s[2:]
	}
	var n int64
	i := 0
	for ; i < len(s); i++ {
		d := digitValue(s[i])
		if d < 0 || d >= base {
			break
		}
		if n > (1<<62)/int64(base) {
			return 0, false
		}
		n = n*int64(base) + int64(d)
	}
	if i == 0 {
		return 0, false
	}
	switch s[i:] {
	case "":
	case "b":
		n *= 512
	case "B":
		n *= 1024
	default:
		return 0, false
	}
	return n, true
}

func digitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

type odType struct {
	kind byte // a c d o u x f
	size int
	z    bool // a "z" suffix: the line's printable bytes after it, >like this<
}

func (t odType) width() int {
	switch t.kind {
	case 'a', 'c':
		return 3
	case 'x':
		return t.size * 2
	case 'o':
		return map[int]int{1: 3, 2: 6, 4: 11, 8: 22}[t.size]
	case 'u':
		return map[int]int{1: 3, 2: 5, 4: 10, 8: 20}[t.size]
	case 'd':
		return map[int]int{1: 4, 2: 6, 4: 11, 8: 20}[t.size]
	case 'f':
		return map[int]int{4: 15, 8: 24}[t.size]
	}
	return 3
}

var odNames = []string{"nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "nl", "vt", "ff", "cr", "so", "si",
	"dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc", "fs", "gs", "rs", "us", "sp"}

func (t odType) format(b []byte) string {
	switch t.kind {
	case 'a':
		c := b[0] & 0x7f
		switch {
		case c <= 32:
			return odNames[c]
		case c == 127:
			return "del"
		}
		return string(c)
	case 'c':
		c := b[0]
		switch c {
		case 0:
			return `\0`
		case 7:
			return `\a`
		case 8:
			return `\b`
		case 9:
			return `\t`
		case 10:
			return `\n`
		case 11:
			return `\v`
		case 12:
			return `\f`
		case 13:
			return `\r`
		}
		if c >= 32 && c < 127 {
			return string(c)
		}
		return fmt.Sprintf("%03o", c)
	}
	var v uint64
	switch t.size {
	case 1:
		v = uint64(b[0])
	case 2:
		v = uint64(binary.LittleEndian.Uint16(b))
	case 4:
		v = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		v = binary.LittleEndian.Uint64(b)
	}
	switch t.kind {
	case 'x':
		return fmt.Sprintf("%0*x", t.size*2, v)
	case 'o':
		return fmt.Sprintf("%0*o", t.width(), v)
	case 'u':
		return strconv.FormatUint(v, 10)
	case 'd':
		shift := 64 - 8*t.size
		return strconv.FormatInt(int64(v<<shift)>>shift, 10)
	case 'f':
		if t.size == 4 {
			return odFloat(float64(math.Float32frombits(uint32(v))), 32)
		}
		return odFloat(math.Float64frombits(v), 64)
	}
	return ""
}

// odFloat prints v as GNU od does: the fewest digits that read back as
// the same value, in C's %g layout (exponent when it is below -4 or not
// less than the digit count).
func odFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(v, 'e', -1, bits)
	mant, _, _ := strings.Cut(e, "e")
	digits := len(strings.TrimLeft(strings.Replace(mant, ".", "", 1), "-"))
	return strconv.FormatFloat(v, 'g', digits, bits)
}

// Od is od(1) for the common types (a c d o u x, sizes 1 2 4 8).
func Od(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&odSpec)
	if !ok {
		return code
	}
	radix := byte('o')
	var skip, limit int64 = 0, -1
	var types []odType
	dup, width := false, 16
	traditional := false
	label := int64(-1) // --traditional's LABEL: the address printed beside the real one
	parseType := func(s string) bool {
		for len(s) > 0 {
			k := s[0]
			s = s[1:]
			if k == 'a' || k == 'c' {
				t := odType{kind: k, size: 1}
				if len(s) > 0 && s[0] == 'z' {
					t.z, s = true, s[1:]
				}
				types = append(types, t)
				continue
			}
			if strings.IndexByte("douxf", k) < 0 {
				return false
			}
			size := 4
			if k == 'f' {
				size = 8
			}
			if len(s) > 0 {
				switch s[0] {
				case 'F':
					size, s = 4, s[1:]
				case 'D':
					size, s = 8, s[1:]
				case 'C':
					size, s = 1, s[1:]
				case 'S':
					size, s = 2, s[1:]
				case 'I':
					size, s = 4, s[1:]
				case 'L':
					size, s = 8, s[1:]
				default:
					i := 0
					for i < len(s) && isDigit(s[i]) {
						i++
					}
					if i > 0 {
						size, _ = strconv.Atoi(s[:i])
						s = s[i:]
					}
				}
			}
			if size != 1 && size != 2 && size != 4 && size != 8 || k == 'f' && size < 4 {
				return false
			}
			t := odType{kind: k, size: size}
			if len(s) > 0 && s[0] == 'z' {
				t.z, s = true, s[1:]
			}
			types = append(types, t)
		}
		return true
	}
	for _, o := range opts {
		switch o.Key {
		case "A":
			if len(o.Arg) != 1 || strings.IndexByte("doxn", o.Arg[0]) < 0 {
				return r.fail(1, "invalid output address radix '%s'; it is not one character of [doxn]", o.Arg)
			}
			radix = o.Arg[0]
		case "j", "N":
			n, ok := parseSize(o.Arg)
			if !ok {
				return r.fail(1, "invalid number %s", quoteGNU(o.Arg))
			}
			if o.Key == "j" {
				skip = n
			} else {
				limit = n
			}
		case "traditional":
			traditional = true
		case "t":
			if !parseType(o.Arg) {
				return r.fail(1, "invalid type string %s", quoteGNU(o.Arg))
			}
		case "v":
			dup = true
		case "w":
			width = 32
			if o.HasArg {
				n, err := strconv.Atoi(o.Arg)
				if err != nil || n <= 0 {
					return r.fail(1, "invalid width %s", quoteGNU(o.Arg))
				}
				width = n
			}
		case "a":
			types = append(types, odType{kind: 'a', size: 1})
		case "b":
			types = append(types, odType{kind: 'o', size: 1})
		case "c":
			types = append(types, odType{kind: 'c', size: 1})
		case "d":
			types = append(types, odType{kind: 'u', size: 2})
		case "o":
			types = append(types, odType{kind: 'o', size: 2})
		case "x":
			types = append(types, odType{kind: 'x', size: 2})
		case "i", "s":
			types = append(types, odType{kind: 'd', size: map[string]int{"i": 4, "s": 2}[o.Key]})
		case "l", "I", "L":
			types = append(types, odType{kind: 'd', size: 8})
		// The traditional (pre-POSIX) type letters GNU still takes.
		case "B":
			types = append(types, odType{kind: 'o', size: 2})
		case "D":
			types = append(types, odType{kind: 'u', size: 4})
		case "H", "X":
			types = append(types, odType{kind: 'x', size: 4})
		case "h":
			types = append(types, odType{kind: 'x', size: 2})
		case "O":
			types = append(types, odType{kind: 'o', size: 4})
		case "e", "F":
			types = append(types, odType{kind: 'f', size: 8})
		case "f":
			types = append(types, odType{kind: 'f', size: 4})
		}
	}
	if len(types) == 0 {
		types = []odType{{kind: 'o', size: 2}}
	}
	// Every column is as wide as the widest type needs per byte.
	perByte := 0
	for _, t := range types {
		perByte = max(perByte, (t.width()+1+t.size-1)/t.size)
	}
	// GNU's operands FILE [[+]OFFSET [[+]LABEL]]: an offset operand only
	// when --traditional or when it looks like one ('+', or a digit second).
	switch n := len(files); {
	case n == 1 && (traditional || strings.HasPrefix(files[0], "+")):
		if o, ok := parseOldOffset(files[0]); ok {
			skip, files = o, nil
		}
	case n == 2:
		o1, ok1 := parseOldOffset(files[0])
		o2, ok2 := parseOldOffset(files[1])
		switch {
		case traditional && ok1 && ok2:
			skip, label, files = o1, o2, nil
		case ok2 && (traditional || files[1][0] == '+' || isDigit(files[1][0])):
			skip, files = o2, files[:1]
		}
	case n == 3 && traditional:
		o1, ok1 := parseOldOffset(files[1])
		o2, ok2 := parseOldOffset(files[2])
		if !ok1 || !ok2 {
			r.errorf("extra operand %s", r.q(files[1]))
			return r.usage(errors.New("compatibility mode supports at most one file"), 1)
		}
		skip, label, files = o1, o2, files[:1]
	case n > 3 && traditional:
		r.errorf("extra operand %s", r.q(files[1]))
		return r.usage(errors.New("compatibility mode supports at most one file"), 1)
	}
	base := func(off int64) string {
		switch radix {
		case 'd':
			return fmt.Sprintf("%07d", off)
		case 'x':
			return fmt.Sprintf("%06x", off)
		case 'n':
			return ""
		}
		return fmt.Sprintf("%07o", off)
	}
	addr := func(off int64) string {
		if label < 0 {
			return base(off)
		}
		return base(off) + " (" + base(off-skip+label) + ")"
	}
	var data bytes.Buffer
	var inputs []io.Reader
	if len(files) == 0 {
		files = []string{"-"}
	}
	var closers []io.Closer
	for _, name := range files {
		f, ok := r.open(name)
		if !ok {
			continue
		}
		closers = append(closers, f)
		inputs = append(inputs, f)
	}
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	if len(inputs) == 0 {
		return r.done() // nothing could be opened: GNU dumps nothing
	}
	in := bufio.NewReader(textio.WithContext(ctx, io.MultiReader(inputs...)))
	if skip > 0 {
		if n, _ := io.CopyN(io.Discard, in, skip); n < skip {
			r.errorf("cannot skip past end of combined input")
			return r.done()
		}
	}
	var src io.Reader = in
	if limit >= 0 {
		src = io.LimitReader(in, limit)
	}
	off := skip
	var prev []byte
	starred := false
	line := make([]byte, width)
	_ = data
	for !r.stopped() {
		n, err := io.ReadFull(src, line)
		if n == 0 {
			break
		}
		chunk := line[:n]
		if !dup && prev != nil && n == width && bytes.Equal(chunk, prev) {
			if !starred {
				r.out.WriteString("*\n")
				starred = true
			}
			off += int64(n)
			continue
		}
		starred = false
		for ti, t := range types {
			if ti == 0 {
				r.out.WriteString(addr(off))
			} else {
				r.out.WriteString(strings.Repeat(" ", len(addr(off))))
			}
			for i := 0; i < n; i += t.size {
				cell := make([]byte, t.size)
				copy(cell, chunk[i:min(i+t.size, n)])
				s := t.format(cell)
				w := perByte * t.size
				if len(types) == 1 {
					w = t.width() + 1
				}
				fmt.Fprintf(r.out, "%*s", w, s)
			}
			if t.z {
				// pad the missing cells, then the bytes as text
				w := perByte * t.size
				if len(types) == 1 {
					w = t.width() + 1
				}
				cells := (width+t.size-1)/t.size - (n+t.size-1)/t.size
				r.out.WriteString(strings.Repeat(" ", cells*w))
				r.out.WriteString("  >")
				for _, b := range chunk {
					if b < 32 || b > 126 {
						b = '.'
					}
					r.out.WriteByte(b)
				}
				r.out.WriteString("<")
			}
			r.out.WriteByte('\n')
		}
		prev = append(prev[:0], chunk...)
		off += int64(n)
		if err != nil {
			break
		}
	}
	if radix != 'n' {
		r.out.WriteString(addr(off))
		r.out.WriteByte('\n')
	}
	return r.done()
}
