package oils

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// RegisterHelpers adds the helper commands the cases call (argv.py,
// printenv.py, stdout_stderr.py, read_from_fd.py, foo=bar) as test builtins.
func RegisterHelpers(t commands.Table) {
	t.Register("argv.py", argvPy)
	t.Register("printenv.py", printenvPy)
	t.Register("stdout_stderr.py", stdoutStderrPy)
	t.Register("read_from_fd.py", readFromFdPy)
	t.Register("foo=bar", func(ctx context.Context, inv *commands.Invocation) int {
		fmt.Fprintln(inv.Stdout, "HI")
		return 0
	})
}

// pyRepr renders b as Python 2's repr() of a byte string.
func pyRepr(b string) string {
	q := byte('\'')
	if strings.IndexByte(b, '\'') >= 0 && strings.IndexByte(b, '"') < 0 {
		q = '"'
	}
	var s strings.Builder
	s.WriteByte(q)
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\\':
			s.WriteString(`\\`)
		case c == q:
			s.WriteByte('\\')
			s.WriteByte(c)
		case c == '\t':
			s.WriteString(`\t`)
		case c == '\n':
			s.WriteString(`\n`)
		case c == '\r':
			s.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&s, `\x%02x`, c)
		default:
			s.WriteByte(c)
		}
	}
	s.WriteByte(q)
	return s.String()
}

func argvPy(ctx context.Context, inv *commands.Invocation) int {
	parts := make([]string, len(inv.Args)-1)
	for i, a := range inv.Args[1:] {
		parts[i] = pyRepr(a)
	}
	fmt.Fprintf(inv.Stdout, "[%s]\n", strings.Join(parts, ", "))
	return 0
}

func printenvPy(ctx context.Context, inv *commands.Invocation) int {
	var b strings.Builder
	for _, k := range inv.Args[1:] {
		v, ok := inv.LookupEnv(k)
		if !ok {
			v = "None"
		}
		b.WriteString(v + "\n")
	}
	io.WriteString(inv.Stdout, b.String())
	return 0
}

func stdoutStderrPy(ctx context.Context, inv *commands.Invocation) int {
	out, errs, st := "STDOUT", "STDERR", 0
	if len(inv.Args) > 1 {
		out = inv.Args[1]
	}
	if len(inv.Args) > 2 {
		errs = inv.Args[2]
	}
	if len(inv.Args) > 3 {
		st, _ = strconv.Atoi(inv.Args[3])
	}
	io.WriteString(inv.Stderr, errs+"\n")
	io.WriteString(inv.Stdout, out+"\n")
	return st
}

func readFromFdPy(ctx context.Context, inv *commands.Invocation) int {
	var out strings.Builder
	st := 0
	for _, a := range inv.Args[1:] {
		fd, err := strconv.Atoi(a)
		if err != nil {
			st = 1
			break
		}
		var f commands.File
		ok := false
		if inv.OpenHook != nil {
			f2, handled, err := inv.OpenHook("/dev/fd/"+a, vfs.O_RDONLY, 0)
			if handled && err == nil {
				f, ok = f2, true
			}
		}
		if !ok {
			fmt.Fprintf(inv.Stderr, "FATAL: Error reading from fd %d: [Errno 9] Bad file descriptor\n", fd)
			st = 1
			break
		}
		buf := make([]byte, 1024)
		n, err := f.Read(buf)
		if err != nil && err != io.EOF && n == 0 {
			fmt.Fprintf(inv.Stderr, "FATAL: Error reading from fd %d: [Errno 9] Bad file descriptor\n", fd)
			st = 1
			break
		}
		out.WriteString(a + ": ")
		out.Write(buf[:n])
	}
	io.WriteString(inv.Stdout, out.String())
	return st
}

// hostHelpers are the same helpers for a reference shell on the host.
var hostHelpers = map[string]string{
	"argv.py": `#!/usr/bin/env python3
import os, sys
def rep(b):
    q = "'"
    if b"'" in b and b'"' not in b:
        q = '"'
    out = [q]
    for c in b:
        ch = chr(c)
        if ch == '\\': out.append('\\\\')
        elif ch == q: out.append('\\' + q)
        elif ch == '\t': out.append('\\t')
        elif ch == '\n': out.append('\\n')
        elif ch == '\r': out.append('\\r')
        elif c < 0x20 or c >= 0x7f: out.append('\\x%02x' % c)
        else: out.append(ch)
    out.append(q)
    return ''.join(out)
sys.stdout.write('[' + ', '.join(rep(os.fsencode(a)) for a in sys.argv[1:]) + ']\n')
`,
	"printenv.py": `#!/usr/bin/env python3
import os, sys
for n in sys.argv[1:]:
    v = os.environb.get(os.fsencode(n))
    sys.stdout.buffer.write((v if v is not None else b'None') + b'\n')
`,
	"stdout_stderr.py": `#!/usr/bin/env python3
import sys
out = sys.argv[1] if len(sys.argv) > 1 else 'STDOUT'
err = sys.argv[2] if len(sys.argv) > 2 else 'STDERR'
st = int(sys.argv[3]) if len(sys.argv) > 3 else 0
sys.stderr.write(err + '\n'); sys.stderr.flush()
sys.stdout.write(out + '\n')
sys.exit(st)
`,
	"read_from_fd.py": `#!/usr/bin/env python3
import os, sys
res = []
st = 0
for a in sys.argv[1:]:
    fd = int(a)
    try:
        b = os.read(fd, 1024)
    except OSError as e:
        sys.stderr.write('FATAL: Error reading from fd %d: [Errno %d] %s\n' % (fd, e.errno, e.strerror))
        st = 1
        break
    res.append(a.encode() + b': ' + b)
sys.stdout.buffer.write(b''.join(res))
sys.exit(st)
`,
	"foo=bar":                          "#!/bin/sh\necho HI\n",
	"builtins-exec-here-doc-helper.sh": herdocHelper,
}

const herdocHelper = `#!/usr/bin/env bash
exec 0<<EOF
one
two
three
EOF
read x
read y
echo x=$x
echo y=$y
echo DONE
`
