package coreutils

// uuencode and uudecode (GNU sharutils): the traditional encoding and
// base64 (-m), line by line.

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

var uuencodeSpec = getopt.Spec{Short: "mehv", Long: []getopt.Long{
	{Name: "base64", Key: "m"}, {Name: "encode-file-name", Key: "e"}, {Name: "help", Key: "h"}, {Name: "version", Key: "v"}}}

// uuChar is one 6-bit value in the traditional alphabet (0 as `).
func uuChar(v byte) byte {
	if v == 0 {
		return '`'
	}
	return v + 32
}

// Uuencode is uuencode(1).
func Uuencode(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, args, code, ok := r.parse(&uuencodeSpec)
	if !ok {
		return code
	}
	b64 := false
	for _, o := range opts {
		switch o.Key {
		case "m":
			b64 = true
		case "h":
			r.out.WriteString("Usage: uuencode [-m] [INFILE] REMOTEFILE\n")
			return r.done()
		case "v":
			r.out.WriteString("uuencode (GNU sharutils) 4.15.2 (warren)\n")
			return r.done()
		}
	}
	if len(args) == 0 || len(args) > 2 {
		r.out.Flush()
		io.WriteString(inv.Stderr, "uuencode (GNU sharutils) - encode a file into email friendly text\nUsage:  uuencode [ -<flag> | --<name> ]... [<in-file>] <output-name>\nTry 'uuencode --help' for more information.\n")
		r.status = 64 // EX_USAGE, as sharutils
		return r.done()
	}
	mode := 0o666 &^ fs.FileMode(inv.Umask)
	var in io.Reader = inv.Stdin
	name := args[0]
	if len(args) == 2 {
		name = args[1]
		f, err := inv.Open(args[0])
		if err != nil {
			return r.fail(1, "%s", commands.Describe(err))
		}
		defer f.Close()
		if st, err := inv.FS.Stat(inv.Abs(args[0])); err == nil {
			mode = st.Mode().Perm()
		}
		in = f
	}
	br := textio.NewReader(textio.WithContext(ctx, in))
	defer textio.PutReader(br)
	if b64 {
		fmt.Fprintf(r.out, "begin-base64 %o %s\n", mode, name)
	} else {
		fmt.Fprintf(r.out, "begin %o %s\n", mode, name)
	}
	buf := make([]byte, 45)
	for !r.stopped() {
		n, err := io.ReadFull(br, buf)
		if n > 0 {
			chunk := buf[:n]
			if b64 {
				r.out.WriteString(base64.StdEncoding.EncodeToString(chunk))
			} else {
				r.out.WriteByte(uuChar(byte(n)))
				for i := 0; i < n; i += 3 {
					var g [3]byte
					copy(g[:], chunk[i:min(i+3, n)])
					r.out.WriteByte(uuChar(g[0] >> 2))
					r.out.WriteByte(uuChar((g[0]&3)<<4 | g[1]>>4))
					r.out.WriteByte(uuChar((g[1]&15)<<2 | g[2]>>6))
					r.out.WriteByte(uuChar(g[2] & 63))
				}
			}
			r.out.WriteByte('\n')
		}
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				r.errorf("read error: %s", commands.Strerror(err))
			}
			break
		}
	}
	if b64 {
		r.out.WriteString("====\n")
	} else {
		r.out.WriteString("`\nend\n")
	}
	return r.done()
}

var uudecodeSpec = getopt.Spec{Short: "o:cihv", Long: []getopt.Long{
	{Name: "output-file", Arg: getopt.Required, Key: "o"}, {Name: "ignore-chmod", Key: "i"},
	{Name: "help", Key: "h"}, {Name: "version", Key: "v"}}}

// Uudecode is uudecode(1): every encoded file in each input, written to
// the name its begin line gives, or -o.
func Uudecode(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, args, code, ok := r.parse(&uudecodeSpec)
	if !ok {
		return code
	}
	outName := ""
	for _, o := range opts {
		switch o.Key {
		case "o":
			outName = o.Arg
		case "h":
			r.out.WriteString("Usage: uudecode [-o OUTPUT-FILE] [FILE]...\n")
			return r.done()
		case "v":
			r.out.WriteString("uudecode (GNU sharutils) 4.15.2 (warren)\n")
			return r.done()
		}
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	for _, a := range args {
		if r.stopped() {
			break
		}
		f, ok := r.open(a)
		if !ok {
			r.status = 2
			continue
		}
		label := a
		if a == "-" {
			label = "standard input"
		}
		br := bufio.NewReader(textio.WithContext(ctx, f))
		if st := uudecodeOne(r, br, label, outName); st != 0 {
			r.status = st
		}
		f.Close()
	}
	return r.done()
}

func uudecodeOne(r *run, br *bufio.Reader, label, outName string) int {
	inv := r.inv
	fatal := func(msg string) int {
		r.out.Flush()
		fmt.Fprintf(inv.Stderr, "uudecode fatal error:\n%s: %s\n", label, msg)
		return 2
	}
	readLine := func() (string, bool) {
		l, err := br.ReadString('\n')
		if l == "" && err != nil {
			return "", false
		}
		return strings.TrimRight(l, "\r\n"), true
	}
	found := false
	for {
		var hdr string
		for {
			l, ok := readLine()
			if !ok {
				if !found {
					return fatal("Invalid or missing 'begin' line")
				}
				return 0
			}
			if strings.HasPrefix(l, "begin ") || strings.HasPrefix(l, "begin-base64 ") {
				hdr = l
				break
			}
		}
		found = true
		b64 := strings.HasPrefix(hdr, "begin-base64 ")
		fields := strings.SplitN(hdr, " ", 3)
		if len(fields) < 3 {
			return fatal("Invalid or missing 'begin' line")
		}
		mode, err := strconv.ParseUint(fields[1], 8, 32)
		if err != nil {
			return fatal("Invalid or missing 'begin' line")
		}
		name := fields[2]
		if outName != "" {
			name = outName
		}
		var w io.Writer
		var file commands.File
		if name == "-" || name == "/dev/stdout" {
			w = r.out
		} else {
			f, err := inv.OpenFile(name, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, fs.FileMode(mode)&0o777&^inv.Umask)
			if err != nil {
				r.errorf("%s", commands.Describe(err))
				return 1
			}
			file, w = f, bufio.NewWriter(f)
		}
		st := uuBody(r, readLine, w, b64, fatal)
		if bw, ok := w.(*bufio.Writer); ok && bw != r.out {
			bw.Flush()
		}
		if file != nil {
			file.Close()
		}
		if st != 0 {
			return st
		}
	}
}

// uuBody decodes lines up to end (or ====) into w.
func uuBody(r *run, readLine func() (string, bool), w io.Writer, b64 bool, fatal func(string) int) int {
	var acc strings.Builder
	for !r.stopped() {
		l, ok := readLine()
		if !ok {
			return fatal("Short file")
		}
		if b64 {
			if l == "====" {
				data, err := base64.StdEncoding.DecodeString(acc.String())
				if err != nil {
					return fatal("Illegal character in base64 input")
				}
				w.Write(data)
				return 0
			}
			acc.WriteString(strings.TrimSpace(l))
			if acc.Len() >= 4<<10 {
				// decode whole quanta as they come
				s := acc.String()
				cut := len(s) / 4 * 4
				data, err := base64.StdEncoding.DecodeString(s[:cut])
				if err != nil {
					return fatal("Illegal character in base64 input")
				}
				w.Write(data)
				acc.Reset()
				acc.WriteString(s[cut:])
			}
			continue
		}
		if l == "end" {
			return 0
		}
		if l == "" {
			continue
		}
		n := int((l[0] - 32) & 63)
		if n == 0 {
			continue
		}
		val := func(i int) byte {
			if i < len(l) {
				return (l[i] - 32) & 63
			}
			return 0
		}
		out := make([]byte, 0, n+2)
		for i := 1; len(out) < n; i += 4 {
			a, b, c, d := val(i), val(i+1), val(i+2), val(i+3)
			out = append(out, a<<2|b>>4, b<<4|c>>2, c<<6|d)
		}
		w.Write(out[:n])
	}
	return 0
}
