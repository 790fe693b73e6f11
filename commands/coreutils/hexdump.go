package coreutils

// hexdump: util-linux hexdump's format language (-e, -f) and the built-in
// formats (-b -c -C -d -o -x and the default), all run by one engine.
//
// A format is a list of units, `[iterations][/bytes] "text with
// conversions"`. Every format reads the same block of input (the largest
// number of bytes any format consumes); conversions past the end of the
// input print as blanks of their width; on a unit's last iteration one
// trailing blank is dropped; `%_A` units print once, after the input; a
// block equal to the one before prints as "*" unless -v.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

var hexdumpSpec = getopt.Spec{Short: "bcCde:f:n:os:vxL::", Long: []getopt.Long{
	{Name: "one-byte-octal", Key: "b"}, {Name: "one-byte-char", Key: "c"},
	{Name: "canonical", Key: "C"}, {Name: "two-bytes-decimal", Key: "d"},
	{Name: "format", Arg: getopt.Required, Key: "e"}, {Name: "format-file", Arg: getopt.Required, Key: "f"},
	{Name: "length", Arg: getopt.Required, Key: "n"}, {Name: "two-bytes-octal", Key: "o"},
	{Name: "skip", Arg: getopt.Required, Key: "s"}, {Name: "no-squeezing", Key: "v"},
	{Name: "two-bytes-hex", Key: "x"}, {Name: "color", Arg: getopt.Optional, Key: "L"}}}

// The built-in formats, in util-linux's own format language.
var hexdumpBuiltin = map[string][]string{
	"":  {`"%07.7_Ax\n"`, `"%07.7_ax " 8/2 "%04x " "\n"`},
	"b": {`"%07.7_Ax\n"`, `"%07.7_ax " 16/1 "%03o " "\n"`},
	"c": {`"%07.7_Ax\n"`, `"%07.7_ax " 16/1 "%3_c " "\n"`},
	"C": {`"%08.8_Ax\n"`, `"%08.8_ax  " 8/1 "%02x " "  " 8/1 "%02x "`, `"  |" 16/1 "%_p" "|\n"`},
	"d": {`"%07.7_Ax\n"`, `"%07.7_ax " 8/2 "  %05u " "\n"`},
	"o": {`"%07.7_Ax\n"`, `"%07.7_ax " 8/2 " %06o " "\n"`},
	"x": {`"%07.7_Ax\n"`, `"%07.7_ax " 8/2 "   %04x " "\n"`},
}

// hdPr is one piece of a unit: literal text, or text before a conversion
// and the conversion.
type hdPr struct {
	text  string
	spec  string // printf flags, width and precision ("%07.7")
	verb  byte   // 0: text only; d i o u x X e E f g G s c; 'a' 'A' (offsets); 'C' 'p' 'U' (%_c %_p %_u)
	abase byte   // d o x for the offsets
	bytes int
}

type hdUnit struct {
	reps, perIter int
	explicitReps  bool
	end           bool // holds %_A: printed after the input
	prs           []hdPr
}

type hdFormat struct {
	units []hdUnit
	bytes int
}

// parseHexFormat reads one format string.
func parseHexFormat(s string) (hdFormat, error) {
	var f hdFormat
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
	}
	for {
		skip()
		if i >= len(s) {
			break
		}
		u := hdUnit{reps: 1}
		bcnt := 0
		if s[i] >= '0' && s[i] <= '9' {
			j := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			u.reps, _ = strconv.Atoi(s[j:i])
			u.explicitReps = true
			skip()
		}
		if i < len(s) && s[i] == '/' {
			i++
			skip()
			j := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if j == i {
				return f, fmt.Errorf("bad byte count")
			}
			bcnt, _ = strconv.Atoi(s[j:i])
			skip()
		}
		if i >= len(s) || s[i] != '"' {
			return f, fmt.Errorf("bad format {%s}", s)
		}
		i++
		j := i
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			i++
		}
		if i >= len(s) {
			return f, fmt.Errorf("missing closing quote in format {%s}", s)
		}
		body := hexEscapes(s[j:i])
		i++
		prs, err := parseHexPrs(body, bcnt)
		if err != nil {
			return f, err
		}
		u.prs = prs
		for _, p := range prs {
			u.perIter += p.bytes
			if p.verb == 'A' {
				u.end = true
			}
		}
		f.units = append(f.units, u)
		if !u.end {
			f.bytes += u.reps * u.perIter
		}
	}
	return f, nil
}

func hexEscapes(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'v':
			b.WriteByte('\v')
		case '0':
			b.WriteByte(0)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// parseHexPrs splits a unit's text into conversions with the text before
// each, and trailing text.
func parseHexPrs(body string, bcnt int) ([]hdPr, error) {
	var prs []hdPr
	text := ""
	for i := 0; i < len(body); {
		c := body[i]
		if c != '%' {
			text += string(c)
			i++
			continue
		}
		if i+1 < len(body) && body[i+1] == '%' {
			text += "%"
			i += 2
			continue
		}
		j := i + 1
		for j < len(body) && strings.IndexByte("-+ #0", body[j]) >= 0 {
			j++
		}
		for j < len(body) && (body[j] >= '0' && body[j] <= '9' || body[j] == '.') {
			j++
		}
		if j >= len(body) {
			return nil, fmt.Errorf("bad conversion character %%%s", body[i+1:])
		}
		p := hdPr{text: text, spec: body[i:j]}
		text = ""
		v := body[j]
		j++
		size := 0
		switch v {
		case 'd', 'i', 'o', 'u', 'x', 'X':
			p.verb, size = v, 4
		case 'e', 'E', 'f', 'g', 'G':
			p.verb, size = v, 8
		case 'c':
			p.verb, size = v, 1
		case 's':
			p.verb = v
			if k := strings.IndexByte(p.spec, '.'); k >= 0 {
				size, _ = strconv.Atoi(p.spec[k+1:])
			}
			if bcnt == 0 && size == 0 {
				return nil, fmt.Errorf("%%s requires a precision or a byte count")
			}
		case '_':
			if j >= len(body) {
				return nil, fmt.Errorf("bad conversion character %%_")
			}
			w := body[j]
			j++
			switch w {
			case 'a', 'A':
				if j >= len(body) || strings.IndexByte("dox", body[j]) < 0 {
					return nil, fmt.Errorf("bad conversion character %%_%c", w)
				}
				p.verb, p.abase = w, body[j]
				j++
			case 'c':
				p.verb, size = 'C', 1
			case 'p':
				p.verb, size = 'p', 1
			case 'u':
				p.verb, size = 'U', 1
			default:
				return nil, fmt.Errorf("bad conversion character %%_%c", w)
			}
		default:
			return nil, fmt.Errorf("bad conversion character %%%c", v)
		}
		if (size > 0 || v == 's') && bcnt > 0 {
			size = bcnt
		}
		switch p.verb {
		case 'd', 'i', 'o', 'u', 'x', 'X':
			if size != 1 && size != 2 && size != 4 && size != 8 {
				return nil, fmt.Errorf("bad byte count for conversion character %c", v)
			}
		case 'e', 'E', 'f', 'g', 'G':
			if size != 4 && size != 8 {
				return nil, fmt.Errorf("bad byte count for conversion character %c", v)
			}
		case 'c', 'C', 'p', 'U':
			if size != 1 {
				return nil, fmt.Errorf("bad byte count for conversion character %c", v)
			}
		}
		p.bytes = size
		prs = append(prs, p)
		i = j
	}
	if text != "" {
		prs = append(prs, hdPr{text: text})
	}
	return prs, nil
}

// Hexdump is hexdump(1).
func Hexdump(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&hexdumpSpec)
	if !ok {
		return code
	}
	squeeze := true
	var limit, skip int64 = -1, 0
	var srcs []string
	for _, o := range opts {
		switch o.Key {
		case "b", "c", "C", "d", "o", "x":
			srcs = append(srcs, hexdumpBuiltin[o.Key]...)
		case "e":
			srcs = append(srcs, o.Arg)
		case "f":
			f, err := inv.Open(o.Arg)
			if err != nil {
				return r.fail(1, "%s", commands.Describe(err))
			}
			data, err := io.ReadAll(io.LimitReader(f, 1<<20))
			f.Close()
			if err != nil {
				return r.fail(1, "%s: %s", o.Arg, commands.Strerror(err))
			}
			for _, l := range strings.Split(string(data), "\n") {
				if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
					srcs = append(srcs, l)
				}
			}
		case "v":
			squeeze = false
		case "n", "s":
			n, ok := parseSize(o.Arg)
			if !ok {
				return r.fail(1, "invalid number %s", quoteGNU(o.Arg))
			}
			if o.Key == "n" {
				limit = n
			} else {
				skip = n
			}
		}
	}
	if len(srcs) == 0 {
		srcs = hexdumpBuiltin[""]
	}
	var formats []hdFormat
	block := 0
	for _, s := range srcs {
		f, err := parseHexFormat(s)
		if err != nil {
			return r.fail(1, "%s", err)
		}
		formats = append(formats, f)
		block = max(block, f.bytes)
	}
	if block > 1<<20 {
		return r.fail(1, "block of %d bytes is too large", block)
	}
	// A format shorter than the block repeats its last consuming unit
	// (when its count was not given) to fill it.
	for fi := range formats {
		f := &formats[fi]
		if f.bytes >= block {
			continue
		}
		for ui := len(f.units) - 1; ui >= 0; ui-- {
			u := &f.units[ui]
			if u.perIter > 0 && !u.end {
				if !u.explicitReps {
					add := (block - f.bytes) / u.perIter
					u.reps += add
					f.bytes += add * u.perIter
				}
				break
			}
		}
	}
	var inputs []io.Reader
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		f, ok := r.open(name)
		if !ok {
			continue
		}
		defer f.Close()
		inputs = append(inputs, f)
	}
	if len(inputs) == 0 {
		return r.done() // nothing could be opened: no dump, as util-linux
	}
	var src io.Reader = bufio.NewReader(textio.WithContext(ctx, io.MultiReader(inputs...)))
	if skip > 0 {
		io.CopyN(io.Discard, src, skip)
	}
	if limit >= 0 {
		src = io.LimitReader(src, limit)
	}
	off := skip
	read := false
	if block > 0 {
		buf := make([]byte, block)
		var prev []byte
		starred := false
		for !r.stopped() {
			n, err := io.ReadFull(src, buf)
			if n == 0 {
				break
			}
			read = true
			if squeeze && prev != nil && n == block && bytes.Equal(buf, prev) {
				if !starred {
					r.out.WriteString("*\n")
					starred = true
				}
				off += int64(n)
				continue
			}
			starred = false
			for i := n; i < block; i++ {
				buf[i] = 0
			}
			for _, f := range formats {
				hexdumpBlock(r.out, f, buf, n, off)
			}
			prev = append(prev[:0], buf[:n]...)
			off += int64(n)
			if err != nil {
				break
			}
		}
	}
	// One %_A unit prints, the last one given (as util-linux), and only
	// after some input.
	var end *hdUnit
	for fi := range formats {
		for ui := range formats[fi].units {
			if formats[fi].units[ui].end {
				end = &formats[fi].units[ui]
			}
		}
	}
	if end != nil && read {
		for _, p := range end.prs {
			r.out.WriteString(p.text)
			if p.verb == 'A' || p.verb == 'a' {
				writeAddr(r.out, p, off)
			}
		}
	}
	return r.done()
}

func writeAddr(w io.Writer, p hdPr, addr int64) {
	fmt.Fprintf(w, p.spec+string(p.abase), addr)
}

// hexdumpBlock prints one block (n bytes of it are input) in format f.
func hexdumpBlock(w io.Writer, f hdFormat, buf []byte, n int, off int64) {
	pos := 0
	for _, u := range f.units {
		if u.end {
			continue
		}
		for it := 0; it < u.reps; it++ {
			for k, p := range u.prs {
				text := p.text
				last := it == u.reps-1 && u.reps > 1 && k == len(u.prs)-1
				if p.verb == 0 {
					if last && text != "" && strings.IndexByte(" \t\n", text[len(text)-1]) >= 0 {
						text = text[:len(text)-1]
					}
					io.WriteString(w, text)
					continue
				}
				io.WriteString(w, text)
				if p.verb == 'a' {
					writeAddr(w, p, off+int64(pos))
					continue
				}
				if pos >= n {
					// past the input: blanks of the conversion's width
					fmt.Fprintf(w, "%"+strings.TrimLeft(p.spec[1:], "-+ #0")+"s", "")
					pos += p.bytes
					continue
				}
				hexConv(w, p, buf[pos:pos+p.bytes])
				pos += p.bytes
			}
		}
	}
}

var hexNames = [32]string{"nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "lf", "vt", "ff", "cr", "so", "si",
	"dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc", "fs", "gs", "rs", "us"}

func hexConv(w io.Writer, p hdPr, b []byte) {
	var u uint64
	switch len(b) {
	case 1:
		u = uint64(b[0])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(b))
	case 4:
		u = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		u = binary.LittleEndian.Uint64(b)
	}
	spec := p.spec
	switch p.verb {
	case 'd', 'i':
		var s int64
		switch len(b) {
		case 1:
			s = int64(int8(u))
		case 2:
			s = int64(int16(u))
		case 4:
			s = int64(int32(u))
		default:
			s = int64(u)
		}
		fmt.Fprintf(w, spec+"d", s)
	case 'u':
		fmt.Fprintf(w, spec+"d", u)
	case 'o', 'x', 'X':
		fmt.Fprintf(w, spec+string(p.verb), u)
	case 'e', 'E', 'f', 'g', 'G':
		var x float64
		if len(b) == 4 {
			x = float64(math.Float32frombits(uint32(u)))
		} else {
			x = math.Float64frombits(u)
		}
		if (p.verb == 'g' || p.verb == 'G') && !strings.Contains(spec, ".") {
			spec += ".6" // C's default; Go's %g is the shortest form
		}
		fmt.Fprintf(w, spec+string(p.verb), x)
	case 'c':
		fmt.Fprintf(w, strings.ReplaceAll(spec, "0", "")+"s", string(b[:1]))
	case 's':
		s := b
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		fmt.Fprintf(w, spec+"s", string(s))
	case 'C':
		c := b[0]
		var s string
		switch {
		case c == 0:
			s = `\0`
		case c == '\a':
			s = `\a`
		case c == '\b':
			s = `\b`
		case c == '\f':
			s = `\f`
		case c == '\n':
			s = `\n`
		case c == '\r':
			s = `\r`
		case c == '\t':
			s = `\t`
		case c == '\v':
			s = `\v`
		case c >= 32 && c < 127:
			s = string(c)
		default:
			s = fmt.Sprintf("%03o", c)
		}
		fmt.Fprintf(w, spec+"s", s)
	case 'p':
		c := b[0]
		if c < 32 || c > 126 {
			c = '.'
		}
		fmt.Fprintf(w, spec+"s", string(c))
	case 'U':
		c := b[0]
		var s string
		switch {
		case c < 32:
			s = hexNames[c]
		case c == 127:
			s = "del"
		case c > 127:
			s = fmt.Sprintf("%02x", c)
		default:
			s = string(c)
		}
		fmt.Fprintf(w, spec+"s", s)
	}
}
