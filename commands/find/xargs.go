package find

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
)

// xargs reads items from stdin and runs the command (default echo) with
// them through the execution ladder. Invocations run one at a time, so
// output order is deterministic even with -P.
func xargs(ctx context.Context, inv *commands.Invocation) int {
	args := inv.Args[1:]
	var (
		nul, trace, noEmpty, exitOnSize bool
		maxArgs, maxLines               int
		maxChars                        = 128 << 10
		delim                           = -1
		replace, eof, argFile           string
	)
	// options end at the first non-option (the command)
	i := 0
	needArg := func(name string) (string, bool) {
		a := args[i]
		if len(a) > 2 && !strings.HasPrefix(a, "--") {
			return a[2:], true
		}
		if k := strings.IndexByte(a, '='); k >= 0 && strings.HasPrefix(a, "--") {
			return a[k+1:], true
		}
		if i+1 >= len(args) {
			inv.Errorf("option requires an argument -- '%s'", strings.TrimLeft(name, "-"))
			return "", false
		}
		i++
		return args[i], true
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name := a
		if strings.HasPrefix(a, "--") {
			name, _, _ = strings.Cut(a, "=")
		} else {
			name = a[:2]
		}
		switch name {
		case "-0", "--null":
			nul = true
			if len(a) > 2 && !strings.HasPrefix(a, "--") {
				args[i] = "-" + a[2:]
				i--
			}
		case "-t", "--verbose":
			trace = true
			if len(a) > 2 && !strings.HasPrefix(a, "--") {
				args[i] = "-" + a[2:]
				i--
			}
		case "-r", "--no-run-if-empty":
			noEmpty = true
			if len(a) > 2 && !strings.HasPrefix(a, "--") {
				args[i] = "-" + a[2:]
				i--
			}
		case "-x", "--exit":
			exitOnSize = true
		case "-p", "--interactive":
			inv.Errorf("interactive mode (-p) needs a terminal, which the sandbox does not have")
			return 1
		case "-n", "--max-args":
			v, ok := needArg(name)
			if !ok {
				return 1
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				inv.Errorf("value %s for -n option should be >= 1", quote(v))
				return 1
			}
			maxArgs = n
		case "-L", "--max-lines":
			v, ok := needArg(name)
			if !ok {
				return 1
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				inv.Errorf("value %s for -L option should be >= 1", quote(v))
				return 1
			}
			maxLines = n
		case "-l":
			maxLines = 1
			if len(a) > 2 {
				n, err := strconv.Atoi(a[2:])
				if err == nil && n > 0 {
					maxLines = n
				}
			}
		case "-s", "--max-chars":
			v, ok := needArg(name)
			if !ok {
				return 1
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				inv.Errorf("invalid number %s for -s option", quote(v))
				return 1
			}
			maxChars = n
		case "-P", "--max-procs":
			if _, ok := needArg(name); !ok {
				return 1
			}
		case "-d", "--delimiter":
			v, ok := needArg(name)
			if !ok {
				return 1
			}
			d, err := delimiterOf(v)
			if err != nil {
				inv.Errorf("%s", err.Error())
				return 1
			}
			delim = int(d)
		case "-I", "--replace", "-i":
			if name == "-i" || (name == "--replace" && !strings.Contains(a, "=")) {
				replace = "{}"
				if len(a) > 2 && name == "-i" {
					replace = a[2:]
				}
			} else {
				v, ok := needArg(name)
				if !ok {
					return 1
				}
				replace = v
			}
			maxLines = 1
		case "-E", "--eof", "-e":
			if name == "-e" {
				eof = a[2:]
			} else {
				v, ok := needArg(name)
				if !ok {
					return 1
				}
				eof = v
			}
		case "-a", "--arg-file":
			v, ok := needArg(name)
			if !ok {
				return 1
			}
			argFile = v
		default:
			inv.Errorf("invalid option -- '%s'", strings.TrimLeft(a, "-"))
			fmt.Fprintf(inv.Stderr, "Usage: xargs [OPTION]... COMMAND [INITIAL-ARGS]...\nTry 'xargs --help' for more information.\n")
			return 1
		}
	}
	cmd := args[i:]
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	var in io.Reader = inv.Stdin
	if argFile != "" {
		rc, err := inv.Open(argFile)
		if err != nil {
			inv.Errorf("Cannot open input file %s: %s", quote(argFile), commands.Strerror(err))
			return 1
		}
		defer rc.Close()
		in = rc
	}
	if in == nil {
		in = strings.NewReader("")
	}
	if inv.Exec == nil {
		inv.Errorf("%s: command execution is not available", cmd[0])
		return 126
	}
	r := bufio.NewReaderSize(in, 64<<10)
	status := 0
	ran := false
	// run executes one command line and reports whether to continue.
	run := func(items []string) bool {
		argv := append([]string(nil), cmd...)
		if replace != "" {
			joined := strings.Join(items, " ")
			for k, a := range argv {
				argv[k] = strings.ReplaceAll(a, replace, joined)
			}
		} else {
			argv = append(argv, items...)
		}
		if trace {
			q := make([]string, len(argv))
			for k, a := range argv {
				q[k] = shellQuote(a)
			}
			fmt.Fprintln(inv.Stderr, strings.Join(q, " "))
		}
		ran = true
		st := inv.Exec(ctx, argv, strings.NewReader(""), inv.Stdout, inv.Stderr, inv.Env) // like /dev/null
		switch {
		case st == 0:
		case st == 255:
			inv.Errorf("%s: exited with status 255; aborting", argv[0])
			status = 124
			return false
		case st == 126 || st == 127:
			status = st
			return false
		case st > 128:
			status = 125
			return false
		default:
			status = 123
		}
		return ctx.Err() == nil
	}
	var items []string
	size := 0
	lines := 0
	flush := func() bool {
		if len(items) == 0 {
			return true
		}
		ok := run(items)
		items, size, lines = items[:0], 0, 0
		return ok
	}
	base := 0
	for _, c := range cmd {
		base += len(c) + 1
	}
	add := func(item string, endOfLine bool) bool {
		if maxChars > 0 && base+size+len(item)+1 > maxChars && len(items) > 0 {
			if exitOnSize {
				inv.Errorf("argument list too long")
				status = 1
				return false
			}
			if !flush() {
				return false
			}
		}
		items = append(items, item)
		size += len(item) + 1
		if endOfLine {
			lines++
		}
		if maxArgs > 0 && len(items) >= maxArgs && replace == "" {
			return flush()
		}
		if maxLines > 0 && lines >= maxLines {
			return flush()
		}
		return true
	}
	switch {
	case nul || delim >= 0:
		sep := byte(0)
		if delim >= 0 {
			sep = byte(delim)
		}
		for {
			if ctx.Err() != nil {
				return 130
			}
			item, err := r.ReadString(sep)
			if len(item) > 0 && item[len(item)-1] == sep {
				item = item[:len(item)-1]
			} else if err == nil {
				continue
			}
			if err != nil && item == "" {
				break
			}
			if eof != "" && item == eof {
				break
			}
			if !add(item, true) {
				return status
			}
			if err != nil {
				break
			}
		}
	default:
		for {
			if ctx.Err() != nil {
				return 130
			}
			line, err := r.ReadString('\n')
			if line == "" && err != nil {
				break
			}
			var words []string
			if replace != "" {
				// GNU skips leading isspace() (\v and \f too), keeps
				// trailing blanks, and a line is always one whole item
				w, perr := unquote(strings.TrimLeft(strings.TrimSuffix(line, "\n"), " \t\v\f\r"))
				if perr != nil {
					inv.Errorf("%s", perr.Error())
					return 1
				}
				if w != "" {
					words = []string{w}
				}
			} else {
				var perr error
				words, perr = splitQuoted(line)
				if perr != nil {
					inv.Errorf("%s", perr.Error())
					flush()
					if status == 0 {
						status = 1
					}
					return status
				}
			}
			stop := false
			for k, w := range words {
				if eof != "" && w == eof {
					stop = true
					break
				}
				// -L counts lines; a trailing blank continues the line
				endOfLine := k == len(words)-1 && (replace != "" || !strings.HasSuffix(strings.TrimSuffix(line, "\n"), " "))
				if !add(w, endOfLine) {
					return status
				}
			}
			if stop || err != nil {
				break
			}
		}
	}
	if len(items) > 0 || (!ran && !noEmpty && replace == "") {
		if len(items) > 0 || !noEmpty {
			run(items)
		}
	}
	return status
}

func delimiterOf(v string) (byte, error) {
	if len(v) == 1 {
		return v[0], nil
	}
	if strings.HasPrefix(v, `\`) {
		switch v {
		case `\n`:
			return '\n', nil
		case `\t`:
			return '\t', nil
		case `\0`:
			return 0, nil
		case `\\`:
			return '\\', nil
		}
		if n, err := strconv.ParseUint(v[1:], 8, 8); err == nil {
			return byte(n), nil
		}
		if strings.HasPrefix(v, `\x`) {
			if n, err := strconv.ParseUint(v[2:], 16, 8); err == nil {
				return byte(n), nil
			}
		}
	}
	return 0, fmt.Errorf("invalid input delimiter specification %s: the delimiter must be either a single character or an escape sequence starting with \\", v)
}

// splitQuoted splits a line into xargs words: blanks separate, single and
// double quotes group, backslash escapes.
func splitQuoted(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	var q byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else if c == '\n' {
				kind := "single"
				if q == '"' {
					kind = "double"
				}
				return nil, fmt.Errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option", kind)
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q, in = c, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if q != 0 {
		kind := "single"
		if q == '"' {
			kind = "double"
		}
		return nil, fmt.Errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option", kind)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// unquote removes xargs quoting from an -I line, keeping blanks.
func unquote(s string) (string, error) {
	var b strings.Builder
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q = c
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	if q != 0 {
		kind := "single"
		if q == '"' {
			kind = "double"
		}
		return "", fmt.Errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option", kind)
	}
	return b.String(), nil
}

// shellQuote quotes an argument for xargs -t as GNU does.
func shellQuote(a string) string {
	if a == "" {
		return "''"
	}
	for _, c := range a {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_@%+=:,./-", c)) {
			return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return a
}
