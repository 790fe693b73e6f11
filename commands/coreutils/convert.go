package coreutils

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/vfs"
)

// maxConvert bounds the file dos2unix/unix2dos hold while converting it in
// place (they rewrite the whole file).
const maxConvert = 256 << 20

var dos2unixSpec = getopt.Spec{Short: "qno", Long: []getopt.Long{
	{Name: "quiet", Key: "q"}, {Name: "newfile", Key: "n"}, {Name: "oldfile", Key: "o"}}}

var envsubstSpec = getopt.Spec{Short: "v", Long: []getopt.Long{{Name: "variables", Key: "v"}}}

// Dos2unix is dos2unix(1) and unix2dos(1): CRLF to LF (or back), files in
// place, standard input to standard output without operands. -q quiets
// the per-file notes, -n IN OUT writes a new file; files with NUL bytes are
// skipped as binary, as the Debian tool does.
func Dos2unix(ctx context.Context, inv *commands.Invocation) int {
	name := inv.Args[0]
	toUnix := name != "unix2dos"
	format := "Unix"
	if !toUnix {
		format = "DOS"
	}
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&dos2unixSpec)
	if !ok {
		return code
	}
	quiet, newFile := false, false
	for _, o := range opts {
		switch o.Key {
		case "q":
			quiet = true
		case "n":
			newFile = true
		}
	}
	conv := func(b []byte) []byte {
		if toUnix {
			return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		}
		var out bytes.Buffer
		for i, c := range b {
			if c == '\n' && (i == 0 || b[i-1] != '\r') {
				out.WriteByte('\r')
			}
			out.WriteByte(c)
		}
		return out.Bytes()
	}
	read := func(r io.Reader) ([]byte, error) {
		b, err := io.ReadAll(io.LimitReader(r, maxConvert+1))
		if err == nil && len(b) > maxConvert {
			err = fmt.Errorf("larger than %d bytes", maxConvert)
		}
		return b, err
	}
	if len(files) == 0 {
		b, err := read(inv.Stdin)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %s\n", name, err)
			return 2
		}
		inv.Stdout.Write(conv(b))
		return 0
	}
	status := 0
	pairs := [][2]string{}
	if newFile {
		if len(files)%2 != 0 {
			fmt.Fprintf(inv.Stderr, "%s: target of file %s not specified in new-file mode\n", name, files[len(files)-1])
			return 1
		}
		for i := 0; i < len(files); i += 2 {
			pairs = append(pairs, [2]string{files[i], files[i+1]})
		}
	} else {
		for _, f := range files {
			pairs = append(pairs, [2]string{f, f})
		}
	}
	for _, p := range pairs {
		if err := ctx.Err(); err != nil {
			return 130
		}
		f, err := inv.Open(p[0])
		if err != nil {
			if !quiet {
				fmt.Fprintf(inv.Stderr, "%s: %s\n", name, commands.Describe(err))
			}
			status = 2
			continue
		}
		b, err := read(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %s: %s\n", name, p[0], commands.Strerror(err))
			status = 2
			continue
		}
		if bytes.IndexByte(b, 0) >= 0 {
			fmt.Fprintf(inv.Stderr, "%s: Skipping binary file %s\n", name, p[0])
			continue
		}
		// A new file (-n) gets the original's permissions.
		perm := fs.FileMode(0o644)
		if inv.FS != nil {
			if st, err := inv.FS.Stat(inv.Abs(p[0])); err == nil {
				perm = st.Mode().Perm()
			}
		}
		out, err := inv.OpenFile(p[1], vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, perm)
		if err == nil {
			_, err = out.Write(conv(b))
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %s\n", name, commands.Describe(err))
			status = 2
			continue
		}
		if !quiet {
			if newFile {
				fmt.Fprintf(inv.Stderr, "%s: converting file %s to file %s in %s format...\n", name, p[0], p[1], format)
			} else {
				fmt.Fprintf(inv.Stderr, "%s: converting file %s to %s format...\n", name, p[0], format)
			}
		}
	}
	if quiet {
		return 0 // -q: "the return value is zero" (dos2unix(1))
	}
	return status
}

// Envsubst is GNU gettext's envsubst(1): $NAME and ${NAME} on standard
// input replaced by the environment's values (empty when unset). With a
// SHELL-FORMAT operand only the variables it names are replaced; -v lists
// them.
func Envsubst(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, args, code, ok := r.parse(&envsubstSpec)
	if !ok {
		return code
	}
	list := len(opts) > 0
	if len(args) > 1 {
		fmt.Fprintf(inv.Stderr, "envsubst: too many arguments\n")
		return 1
	}
	if list {
		if len(args) == 0 {
			fmt.Fprintf(inv.Stderr, "envsubst: missing arguments\n")
			return 1
		}
		scanVars(args[0], func(n string) string { // every occurrence, as GNU
			fmt.Fprintln(inv.Stdout, n)
			return ""
		})
		return 0
	}
	var only map[string]bool
	if len(args) == 1 {
		only = map[string]bool{}
		scanVars(args[0], func(n string) string { only[n] = true; return "" })
	}
	b, err := io.ReadAll(io.LimitReader(inv.Stdin, maxConvert+1))
	if err != nil || len(b) > maxConvert {
		fmt.Fprintf(inv.Stderr, "envsubst: error while reading standard input\n")
		return 1
	}
	out := scanVars(string(b), func(n string) string {
		if only != nil && !only[n] {
			return "\x00"
		}
		return inv.Getenv(n)
	})
	io.WriteString(inv.Stdout, out)
	return 0
}

// scanVars replaces every $NAME and ${NAME} in s with sub(NAME); a "\x00"
// from sub keeps the reference as written.
func scanVars(s string, sub func(string) string) string {
	var b strings.Builder
	isStart := func(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isName := func(c byte) bool { return isStart(c) || c >= '0' && c <= '9' }
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		j, braced := i+1, false
		if s[j] == '{' {
			braced, j = true, j+1
		}
		if j >= len(s) || !isStart(s[j]) {
			b.WriteByte(s[i])
			continue
		}
		k := j
		for k < len(s) && isName(s[k]) {
			k++
		}
		end := k
		if braced {
			if k >= len(s) || s[k] != '}' {
				b.WriteByte(s[i])
				continue
			}
			end = k + 1
		}
		if v := sub(s[j:k]); v != "\x00" {
			b.WriteString(v)
		} else {
			b.WriteString(s[i:end])
		}
		i = end - 1
	}
	return b.String()
}
