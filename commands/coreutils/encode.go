package coreutils

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
)

var base64Spec = getopt.Spec{Short: "diw:", Long: []getopt.Long{
	{Name: "decode", Key: "d"}, {Name: "ignore-garbage", Key: "i"}, {Name: "wrap", Arg: getopt.Required, Key: "w"}}}

// decodePartial decodes an incomplete base64 quantum the way GNU base64
// does before it reports invalid input: every whole byte its characters
// hold (two characters give one byte, three give two).
func decodePartial(quad []byte) []byte {
	q := quad
	if i := bytes.IndexByte(q, '='); i >= 0 {
		q = q[:i]
	}
	if len(q) < 2 {
		return nil
	}
	dst := make([]byte, 3)
	k, _ := base64.RawStdEncoding.Decode(dst, q)
	return dst[:k]
}

// Base64 is base64(1).
func Base64(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&base64Spec)
	if !ok {
		return code
	}
	decode, garbage, wrap := false, false, 76
	for _, o := range opts {
		switch o.Key {
		case "d":
			decode = true
		case "i":
			garbage = true
		case "w":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n < 0 {
				return r.fail(1, "invalid wrap size: %s", quoteGNU(o.Arg))
			}
			wrap = n
		}
	}
	if len(files) > 1 {
		return r.usage(fmt.Errorf("extra operand %s", quoteGNU(files[1])), 1)
	}
	r.each(files, func(name string, br *bufio.Reader) error {
		if decode {
			// Decode in 4-byte quanta, skipping newlines (and garbage with -i).
			var quad []byte
			chunkp := textio.GetChunk()
			defer textio.PutChunk(chunkp)
			chunk := *chunkp
			dst := make([]byte, 3)
			pad := false
			for {
				n, err := br.Read(chunk)
				for _, c := range chunk[:n] {
					switch {
					case c == '\n': // GNU skips newlines only: a \r is invalid
						continue
					case c == '=' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || isDigit(c) || c == '+' || c == '/':
						if pad && c != '=' {
							return fmt.Errorf("invalid input")
						}
						quad = append(quad, c)
					default:
						if garbage {
							continue
						}
						// GNU writes what the partial quantum holds first.
						r.out.Write(decodePartial(quad))
						r.errorf("invalid input")
						return nil
					}
					if len(quad) == 4 {
						k, derr := base64.StdEncoding.Decode(dst, quad)
						if derr != nil {
							r.out.Write(decodePartial(quad))
							r.errorf("invalid input")
							return nil
						}
						r.out.Write(dst[:k])
						pad = quad[3] == '='
						quad = quad[:0]
					}
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
			}
			if len(quad) > 0 {
				r.out.Write(decodePartial(quad))
				r.errorf("invalid input")
			}
			return nil
		}
		col := 0
		chunk := make([]byte, 3*1024*8)
		enc := make([]byte, base64.StdEncoding.EncodedLen(len(chunk)))
		for !r.stopped() {
			n, err := io.ReadFull(br, chunk)
			if n > 0 {
				m := base64.StdEncoding.EncodedLen(n)
				base64.StdEncoding.Encode(enc, chunk[:n])
				out := enc[:m]
				for len(out) > 0 {
					if wrap == 0 {
						r.out.Write(out)
						col += len(out)
						break
					}
					k := min(wrap-col, len(out))
					r.out.Write(out[:k])
					col += k
					out = out[k:]
					if col == wrap {
						r.out.WriteByte('\n')
						col = 0
					}
				}
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			if err != nil {
				return err
			}
		}
		if col > 0 && wrap > 0 {
			r.out.WriteByte('\n')
		}
		return nil
	})
	return r.done()
}

var stringsSpec = getopt.Spec{Short: "an:t:e:0123456789", Long: []getopt.Long{
	{Name: "all", Key: "a"}, {Name: "bytes", Arg: getopt.Required, Key: "n"}, {Name: "radix", Arg: getopt.Required, Key: "t"},
	{Name: "encoding", Arg: getopt.Required, Key: "e"}}}

// Strings is strings(1): printable runs of at least -n bytes.
func Strings(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&stringsSpec)
	if !ok {
		return code
	}
	min := 4
	radix := byte(0)
	digits := ""
	for _, o := range opts {
		switch o.Key {
		case "n":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n <= 0 {
				return r.fail(1, "invalid minimum string length %s", o.Arg)
			}
			min = n
		case "t":
			if o.Arg != "o" && o.Arg != "d" && o.Arg != "x" {
				return r.fail(1, "invalid radix: %s", o.Arg)
			}
			radix = o.Arg[0]
		default:
			if isDigit(o.Key[0]) {
				digits += o.Key
			}
		}
	}
	if digits != "" {
		min, _ = strconv.Atoi(digits)
	}
	r.each(files, func(name string, br *bufio.Reader) error {
		var run []byte
		var off, start int64
		emit := func() {
			if len(run) >= min {
				switch radix {
				case 'o':
					fmt.Fprintf(r.out, "%7o ", start)
				case 'd':
					fmt.Fprintf(r.out, "%7d ", start)
				case 'x':
					fmt.Fprintf(r.out, "%7x ", start)
				}
				r.out.Write(run)
				r.out.WriteByte('\n')
			}
			run = run[:0]
		}
		for {
			if off&0xffff == 0 && r.stopped() {
				break
			}
			c, err := br.ReadByte()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if c >= 32 && c < 127 || c == '\t' {
				if len(run) == 0 {
					start = off
				}
				run = append(run, c)
			} else {
				emit()
			}
			off++
		}
		emit()
		return nil
	})
	return r.done()
}

var xxdSpec = getopt.Spec{Short: "c:g:l:ps:ruiEeb", Long: []getopt.Long{
	{Name: "bits", Key: "b"},
	{Name: "cols", Arg: getopt.Required, Key: "c"}, {Name: "groupsize", Arg: getopt.Required, Key: "g"},
	{Name: "len", Arg: getopt.Required, Key: "l"}, {Name: "plain", Key: "p"}, {Name: "postscript", Key: "p"},
	{Name: "seek", Arg: getopt.Required, Key: "s"}, {Name: "revert", Key: "r"}, {Name: "include", Key: "i"}}}

// xxdRevert is xxd -r as vim's xxd reads dumps: a character at a time,
// an offset up to the first non-hex character of a line, then pairs of hex
// digits, the rest of the line dropped after cols bytes or at two non-hex
// characters in a row. So it reads -i and -b output the way xxd does (a
// C array's second line "seeks backwards": status 5). Plain (-p) input is
// hex digits with blanks anywhere. Gaps before an offset are NUL-filled.
func xxdRevert(r *run, br *bufio.Reader, plain bool, cols int, base int64) int {
	n1, n2, n3 := -1, 0, 0
	ign := true
	p := cols
	var have, want int64
	hexDigit := func(c byte) int {
		if isHex(c) {
			return int(hexVal(c))
		}
		return -1
	}
	skipToEOL := func(c byte) byte {
		for c != '\n' {
			b, err := br.ReadByte()
			if err != nil {
				return 0
			}
			c = b
		}
		return c
	}
	for !r.stopped() {
		c, err := br.ReadByte()
		if err != nil {
			break
		}
		if c == '\r' || plain && (c == ' ' || c == '\n' || c == '\t') {
			continue
		}
		n3, n2 = n2, n1
		n1 = hexDigit(c)
		if n1 < 0 && ign {
			continue
		}
		ign = false
		if !plain && p >= cols {
			if n1 < 0 {
				p = 0
				continue
			}
			want = want<<4 | int64(n1)
			continue
		}
		if base+want != have {
			if base+want < have {
				r.errorf("Sorry, cannot seek backwards.")
				r.status = 5
				return r.done()
			}
			for ; have < base+want && !r.stopped(); have++ {
				r.out.WriteByte(0)
			}
		}
		switch {
		case n2 >= 0 && n1 >= 0:
			r.out.WriteByte(byte(n2<<4 | n1))
			have++
			want++
			n1 = -1
			if p++; !plain && p >= cols {
				c = skipToEOL(c)
			}
		case n1 < 0 && n2 < 0 && n3 < 0:
			c = skipToEOL(c)
		}
		if c == '\n' {
			if !plain {
				want = 0
			}
			p = cols
			ign = true
		}
	}
	return r.done()
}

// Xxd is xxd(1): hex dump, -p plain, -r reverse, -i C include.
func Xxd(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&xxdSpec)
	if !ok {
		return code
	}
	cols, group := 16, 2
	var limit, seek int64 = -1, 0
	plain, revert, upper, include, bits := false, false, false, false, false
	colsSet, groupSet := false, false
	for _, o := range opts {
		num := func() (int64, bool) {
			n, err := strconv.ParseInt(o.Arg, 0, 64)
			return n, err == nil && n >= 0
		}
		switch o.Key {
		case "c", "g", "l", "s":
			n, ok := num()
			if !ok {
				return r.fail(1, "invalid number %s", quoteGNU(o.Arg))
			}
			switch o.Key {
			case "c":
				cols, colsSet = int(n), true
			case "g":
				group, groupSet = int(n), true
			case "l":
				limit = n
			case "s":
				seek = n
			}
		case "p":
			plain = true
		case "r":
			revert = true
		case "u":
			upper = true
		case "i":
			include = true
		case "b":
			bits = true
		}
	}
	if bits && !colsSet {
		cols = 6
	}
	if bits && !groupSet {
		group = 1
	}
	if plain && !colsSet {
		cols = 30
	}
	if include && !colsSet {
		cols = 12
	}
	if cols <= 0 || cols > 256 {
		return r.fail(1, "invalid number of columns (max. 256).")
	}
	in := "-"
	if len(files) > 0 {
		in = files[0]
	}
	f, ok := r.open(in)
	if !ok {
		r.status = 2
		return r.done()
	}
	defer f.Close()
	br := textio.NewReader(textio.WithContext(ctx, f))
	defer textio.PutReader(br)
	if revert {
		return xxdRevert(r, br, plain, cols, seek)
	}
	if seek > 0 {
		io.CopyN(io.Discard, br, seek)
	}
	var src io.Reader = br
	if limit >= 0 {
		src = io.LimitReader(br, limit)
	}
	hexfmt, blank := "%02x", "  "
	if upper {
		hexfmt = "%02X"
	}
	if bits && !plain && !include {
		hexfmt, blank = "%08b", "        "
	}
	buf := make([]byte, cols)
	off := seek
	total := 0
	if include {
		name := "stdin"
		if in != "-" {
			name = strings.Map(func(c rune) rune {
				if c < 128 && (isAlpha(byte(c)) || isDigit(byte(c))) {
					return c
				}
				return '_'
			}, in)
			fmt.Fprintf(r.out, "unsigned char %s[] = {\n", name)
		}
		first := true
		for {
			n, err := io.ReadFull(src, buf)
			if n > 0 {
				if !first {
					r.out.WriteString(",\n")
				}
				first = false
				r.out.WriteString("  ")
				for i := 0; i < n; i++ {
					if i > 0 {
						r.out.WriteString(", ")
					}
					fmt.Fprintf(r.out, "0x"+hexfmt, buf[i])
				}
				total += n
			}
			if err != nil {
				break
			}
		}
		if !first {
			r.out.WriteString("\n")
		}
		if in != "-" {
			fmt.Fprintf(r.out, "};\nunsigned int %s_len = %d;\n", name, total)
		}
		return r.done()
	}
	for !r.stopped() {
		n, err := io.ReadFull(src, buf)
		if n > 0 {
			if plain {
				for i := 0; i < n; i++ {
					fmt.Fprintf(r.out, hexfmt, buf[i])
				}
				r.out.WriteByte('\n')
			} else {
				fmt.Fprintf(r.out, "%08x: ", off)
				w := 0
				for i := 0; i < cols; i++ {
					if i < n {
						fmt.Fprintf(r.out, hexfmt, buf[i])
					} else {
						r.out.WriteString(blank)
					}
					w += len(blank)
					if group > 0 && (i+1)%group == 0 && i+1 < cols {
						r.out.WriteByte(' ')
						w++
					}
				}
				r.out.WriteString("  ")
				for i := 0; i < n; i++ {
					c := buf[i]
					if c < 32 || c > 126 {
						c = '.'
					}
					r.out.WriteByte(c)
				}
				r.out.WriteByte('\n')
			}
			off += int64(n)
		}
		if err != nil {
			break
		}
	}
	return r.done()
}
