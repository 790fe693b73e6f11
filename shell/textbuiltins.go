package shell

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
)

// ---- read ----

func biRead(r *runner, args []string) int {
	args = args[1:]
	raw, silent := false, false
	delim := byte('\n')
	nchars, exactN := -1, false
	prompt, arrName := "", ""
	fd := 0
	timeout := time.Duration(-1)
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
		for i := 1; i < len(a); i++ {
			c := a[i]
			needArg := strings.IndexByte("adnNptu", c) >= 0
			val := ""
			if needArg {
				if i+1 < len(a) {
					val = a[i+1:]
				} else if len(args) > 0 {
					val = args[0]
					args = args[1:]
				} else {
					r.errf("read: -%c: option requires an argument", c)
					return 2
				}
			}
			switch c {
			case 'r':
				raw = true
			case 's':
				silent = true
			case 'e', 'i':
			case 'a':
				arrName = val
			case 'd':
				if val == "" {
					delim = 0
				} else {
					delim = val[0]
				}
			case 'n', 'N':
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 {
					r.errf("read: %s: invalid number", val)
					return 1
				}
				nchars, exactN = n, c == 'N'
			case 'p':
				prompt = val
			case 't':
				f, err := strconv.ParseFloat(val, 64)
				if err != nil {
					r.errf("read: %s: invalid timeout specification", val)
					return 1
				}
				if f < 0 {
					f = -f
				}
				timeout = time.Duration(f * float64(time.Second))
			case 'u':
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 {
					r.errf("read: %s: invalid file descriptor specification", val)
					return 1
				}
				fd = n
			default:
				r.errf("read: -%c: invalid option", c)
				r.usage("read: usage: read [-ers] [-a array] [-d delim] [-i text] [-n nchars] [-N nchars] [-p prompt] [-t timeout] [-u fd] [name ...]")
				return 2
			}
			if needArg {
				break
			}
		}
	}
	_ = silent
	for _, n := range args {
		if !validRef(n) {
			r.errf("read: `%s': not a valid identifier", n)
			return 1
		}
	}
	if fd >= len(r.fds) || r.fds[fd] == nil || r.fds[fd].r == nil {
		r.errf("read: %d: invalid file descriptor: Bad file descriptor", fd)
		return 1
	}
	_ = prompt // bash shows the prompt only when reading from a terminal
	in := r.fds[fd].r
	if timeout == 0 {
		return 0
	}
	var line []byte
	var one [1]byte
	gotDelim := false
	var err error
	readOne := func() (int, error) { return in.Read(one[:]) }
	if timeout > 0 {
		ctx, cancel := context.WithTimeout(r.context(), timeout)
		defer cancel()
		// One reader goroutine per read call (not per byte), with at most
		// one Read outstanding; on timeout the byte it may still get is
		// lost, as with a real read(2) interrupted late.
		type res struct {
			b   byte
			n   int
			err error
		}
		req := make(chan struct{})
		resc := make(chan res, 1)
		go func() {
			var b [1]byte
			for {
				select {
				case <-req:
				case <-ctx.Done():
					return
				}
				n, err := in.Read(b[:])
				resc <- res{b[0], n, err}
			}
		}()
		readOne = func() (int, error) {
			select {
			case req <- struct{}{}:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			select {
			case x := <-resc:
				one[0] = x.b
				return x.n, x.err
			case <-ctx.Done():
				select {
				case x := <-resc:
					one[0] = x.b
					return x.n, x.err
				default:
				}
				return 0, ctx.Err()
			}
		}
	}
	timedOut := false
	got := 0 // characters read (an escaped pair counts once)
	for {
		if nchars >= 0 && got >= nchars {
			break
		}
		var n int
		n, err = readOne()
		if n == 0 {
			if err == context.DeadlineExceeded {
				timedOut = true
			}
			if err == nil {
				continue
			}
			break
		}
		c := one[0]
		if c == 0 && delim != 0 {
			continue // bash drops NUL bytes
		}
		if !exactN && c == delim {
			gotDelim = true
			break
		}
		if !raw && c == '\\' && !exactN {
			n, err = readOne()
			if n == 0 {
				break
			}
			if one[0] == '\n' {
				continue
			}
			line = append(line, '\\', one[0])
			got++
			continue
		}
		line = append(line, c)
		got++
		if len(line) > r.rs.lim.MaxStringBytes {
			r.rs.fail(limitf("read: line exceeds the string size limit (%d bytes)", r.rs.lim.MaxStringBytes))
			r.exiting = true
			return 1
		}
	}
	st := 0
	if timedOut {
		st = 142
	} else if !gotDelim && (nchars < 0 || got < nchars) {
		st = 1
	}
	s := string(line)
	if exactN {
		if len(args) == 0 {
			r.setVar("REPLY", s)
		} else {
			r.setVar(args[0], s)
			for _, a := range args[1:] {
				r.setVar(a, "")
			}
		}
		return st
	}
	ifs := " \t\n"
	if v := r.lookup("IFS"); v != nil {
		ifs = v.str()
	} else if r.lookup("IFS") == nil {
		ifs = " \t\n"
	}
	if arrName != "" {
		fields := splitIFS(s, ifs, -1, raw)
		r.unsetVar(arrName)
		v := r.varForWrite(arrName)
		if v == nil {
			return 1
		}
		v.Kind, v.List, v.Idx, v.Set = expand.Indexed, []string{}, nil, true
		for i, f := range fields {
			if !r.storeIndex(v, i, f) {
				return StatusLimit
			}
		}
		return st
	}
	if len(args) == 0 {
		if !raw {
			s = unbackslash(s)
		}
		if !r.setVar("REPLY", s) {
			return 1
		}
		return st
	}
	fields := splitIFS(s, ifs, len(args), raw)
	for i, name := range args {
		val := ""
		if i < len(fields) {
			val = fields[i]
		}
		if !r.setVar(name, val) {
			return 1
		}
	}
	return st
}

func unbackslash(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// splitIFS splits a line as read does: at most n fields (n<0: all), the last
// taking the rest with trailing IFS whitespace trimmed. Backslashes (when
// !raw) escape the next character.
func splitIFS(s, ifs string, n int, raw bool) []string {
	isWS := func(c byte) bool { return (c == ' ' || c == '\t' || c == '\n') && strings.IndexByte(ifs, c) >= 0 }
	isIFS := func(c byte) bool { return strings.IndexByte(ifs, c) >= 0 }
	var fields []string
	i := 0
	for i < len(s) && isWS(s[i]) {
		i++
	}
	for i < len(s) {
		if n > 0 && len(fields) == n-1 {
			// the rest, minus trailing IFS whitespace
			rest := s[i:]
			end := len(rest)
			for end > 0 && isWS(rest[end-1]) && !(end >= 2 && rest[end-2] == '\\' && !raw) {
				end--
			}
			rest = rest[:end]
			// One field and one trailing separator: the separator goes
			// (bash: "a:b:" with IFS=: gives the last variable "b",
			// "a:b::" and "a:b:c:" keep theirs).
			j := 0
			for j < len(rest) && !isIFS(rest[j]) {
				if !raw && rest[j] == '\\' && j+1 < len(rest) {
					j++
				}
				j++
			}
			if fieldEnd := j; j < len(rest) {
				for j < len(rest) && isWS(rest[j]) {
					j++
				}
				if j < len(rest) && isIFS(rest[j]) && !isWS(rest[j]) {
					j++
				}
				if j == len(rest) {
					rest = rest[:fieldEnd]
				}
			}
			if !raw {
				rest = unbackslash(rest)
			}
			fields = append(fields, rest)
			return fields
		}
		var b strings.Builder
		for i < len(s) && !isIFS(s[i]) {
			if !raw && s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
			i++
		}
		fields = append(fields, b.String())
		// skip one separator: whitespace run, optionally one non-ws IFS char, whitespace run
		for i < len(s) && isWS(s[i]) {
			i++
		}
		if i < len(s) && isIFS(s[i]) && !isWS(s[i]) {
			i++
			for i < len(s) && isWS(s[i]) {
				i++
			}
		}
	}
	return fields
}

// ---- mapfile ----

func biMapfile(r *runner, args []string) int {
	args = args[1:]
	delim := byte('\n')
	trim := false
	count, origin, skip := -1, 0, 0
	fd := 0
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		a := args[0]
		args = args[1:]
		c := a[1]
		val := a[2:]
		if strings.IndexByte("dnOsuCc", c) >= 0 && val == "" {
			if len(args) == 0 {
				r.errf("mapfile: -%c: option requires an argument", c)
				return 2
			}
			val = args[0]
			args = args[1:]
		}
		switch c {
		case 't':
			trim = true
		case 'd':
			if val == "" {
				delim = 0
			} else {
				delim = val[0]
			}
		case 'n':
			count, _ = strconv.Atoi(val)
		case 'O':
			origin, _ = strconv.Atoi(val)
		case 's':
			skip, _ = strconv.Atoi(val)
		case 'u':
			fd, _ = strconv.Atoi(val)
		case 'C', 'c':
		default:
			r.errf("mapfile: -%c: invalid option", c)
			return 2
		}
	}
	name := "MAPFILE"
	if len(args) > 0 {
		name = args[0]
	}
	if fd >= len(r.fds) || r.fds[fd] == nil || r.fds[fd].r == nil {
		r.errf("mapfile: %d: invalid file descriptor: Bad file descriptor", fd)
		return 1
	}
	data, err := io.ReadAll(io.LimitReader(r.fds[fd].r, int64(r.rs.lim.MaxStringBytes)+1))
	if err != nil && len(data) == 0 && err != io.EOF {
		return 1
	}
	if len(data) > r.rs.lim.MaxStringBytes {
		r.rs.fail(limitf("mapfile: input exceeds the string size limit"))
		r.exiting = true
		return 1
	}
	if !r.memFits(int64(len(data))) {
		return StatusLimit
	}
	if origin == 0 {
		r.unsetVar(name)
	}
	v := r.varForWrite(name)
	if v == nil {
		return 1
	}
	s := string(data)
	idx := origin
	n := 0
	for len(s) > 0 {
		i := strings.IndexByte(s, delim)
		var line string
		if i < 0 {
			line, s = s, ""
		} else {
			line, s = s[:i+1], s[i+1:]
		}
		if skip > 0 {
			skip--
			continue
		}
		if count >= 0 && n >= count && count != 0 {
			break
		}
		if trim && len(line) > 0 && line[len(line)-1] == delim {
			line = line[:len(line)-1]
		}
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i] // values are C strings in bash
		}
		if !r.storeIndex(v, idx, line) {
			return StatusLimit
		}
		idx++
		n++
		if !r.checkArray(v) {
			return 1
		}
	}
	v.Set = true
	if v.List == nil {
		v.List = []string{}
	}
	return 0
}

// ---- printf ----

func (r *runner) printf(format string, args []string) (string, int) {
	var b strings.Builder
	st := 0
	first := true
	for first || len(args) > 0 {
		first = false
		used := 0
		stop := false
		i := 0
		for i < len(format) {
			c := format[i]
			if c == '\\' {
				s, n, isC := printfEscape(format[i:])
				b.WriteString(s)
				i += n
				if isC {
					return b.String(), st
				}
				continue
			}
			if c != '%' {
				b.WriteByte(c)
				i++
				continue
			}
			if i+1 < len(format) && format[i+1] == '%' {
				b.WriteByte('%')
				i += 2
				continue
			}
			// parse a conversion
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
				j++
			}
			flags := format[i+1 : j]
			width := ""
			if j < len(format) && format[j] == '*' {
				a := ""
				if len(args) > 0 {
					a, args = args[0], args[1:]
					used++
				}
				// the width is converted like a %d argument ('x, 0x1F)
				n64, ok := printfInt(a)
				if !ok {
					r.errf("printf: %s: invalid number", a)
					st = 1
				}
				n := int(max(min(n64, 1<<30), -(1 << 30))) // (the width bound below reports past 1<<20)
				width = strconv.Itoa(n)
				if n < 0 {
					flags += "-"
					width = strconv.Itoa(-n)
				}
				j++
			} else {
				k := j
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				width = format[k:j]
			}
			prec := ""
			hasPrec := false
			if j < len(format) && format[j] == '.' {
				hasPrec = true
				j++
				if j < len(format) && format[j] == '*' {
					a := ""
					if len(args) > 0 {
						a, args = args[0], args[1:]
						used++
					}
					n64, ok := printfInt(a)
					if !ok {
						r.errf("printf: %s: invalid number", a)
						st = 1
					}
					if n64 < 0 {
						// a negative precision is as if none was given
						hasPrec = false
					} else {
						prec = strconv.Itoa(int(min(n64, 1<<30)))
					}
					j++
				} else {
					k := j
					for j < len(format) && format[j] >= '0' && format[j] <= '9' {
						j++
					}
					prec = format[k:j]
				}
			}
			for j < len(format) && strings.IndexByte("hlLqjzt", format[j]) >= 0 && format[j] != 'q' {
				j++
			}
			if j >= len(format) {
				r.errf("printf: `%s': missing format character", format[i:])
				return b.String(), 1
			}
			verb := format[j]
			timeFmt := ""
			if verb == '(' {
				k := strings.Index(format[j:], ")T")
				if k < 0 {
					r.errf("printf: `%c': invalid format character", verb)
					return b.String(), 1
				}
				timeFmt = format[j+1 : j+k]
				j += k + 1
				verb = 'T'
			}
			i = j + 1
			if w, _ := strconv.Atoi(width); w > 1<<20 {
				r.errf("printf: %s: field width too large", width)
				return b.String(), 1
			}
			if p, _ := strconv.Atoi(prec); p > 1<<20 {
				r.errf("printf: %s: precision too large", prec)
				return b.String(), 1
			}
			spec := "%" + flags + width
			if hasPrec {
				spec += "." + prec
			}
			arg := ""
			have := len(args) > 0
			if have {
				arg, args = args[0], args[1:]
				used++
			}
			switch verb {
			case 's':
				sspec := "%" + strings.ReplaceAll(flags, "0", "") + width
				if hasPrec {
					sspec += "." + prec
				}
				b.WriteString(fmt.Sprintf(sspec+"s", arg))
			case 'b':
				s, stopped := echoEscapes(printfBArg(arg))
				b.WriteString(fmt.Sprintf(spec+"s", s))
				if stopped {
					return b.String(), st
				}
			case 'q':
				q := arg
				if have {
					q = bashQuote(arg)
				} else {
					q = "''"
				}
				b.WriteString(fmt.Sprintf(spec+"s", q))
			case 'c':
				s := "\x00" // bash prints a NUL for an empty or missing argument
				if arg != "" {
					s = arg[:1] // the first byte, not character, as bash
				}
				b.WriteString(fmt.Sprintf(spec+"s", s))
			case 'd', 'i', 'o', 'u', 'x', 'X':
				n, ok := printfInt(arg)
				if !ok {
					r.errf("printf: %s: invalid number", arg)
					st = 1
				}
				v := verb
				if v == 'i' || v == 'u' {
					v = 'd'
				}
				if n == 0 && strings.Contains(flags, "#") && (verb == 'x' || verb == 'X') {
					spec = strings.Replace(spec, "#", "", 1)
				}
				if n < 0 && (verb == 'u' || verb == 'o' || verb == 'x' || verb == 'X') {
					v2 := v
					if v2 == 'd' {
						v2 = 'd'
					}
					b.WriteString(fmt.Sprintf(spec+string(v2), uint64(n)))
				} else {
					b.WriteString(fmt.Sprintf(spec+string(v), n))
				}
			case 'e', 'E', 'f', 'F', 'g', 'G', 'a', 'A':
				f, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
				if err != nil && arg != "" {
					if n, ok := printfInt(arg); ok {
						f = float64(n)
					} else {
						r.errf("printf: %s: invalid number", arg)
						st = 1
					}
				}
				v := verb
				if v == 'F' {
					v = 'f'
				}
				b.WriteString(fmt.Sprintf(spec+string(v), f))
			case 'T':
				t := r.now()
				if have && arg != "" && arg != "-1" {
					if n, err := strconv.ParseInt(arg, 10, 64); err == nil {
						if n == -2 {
							t = r.start
						} else {
							t = time.Unix(n, 0)
						}
					}
				}
				out := strftime(timeFmt, t)
				if len(out) >= 128 {
					out = "" // bash's strftime buffer
				}
				b.WriteString(fmt.Sprintf(spec+"s", out))
			default:
				r.errf("printf: `%c': invalid format character", verb)
				return b.String(), 1
			}
		}
		if stop || used == 0 {
			break
		}
	}
	return b.String(), st
}

// printfBArg: %b understands \NNN octal without a leading 0 too.
func printfBArg(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] >= '1' && s[i+1] <= '7' {
			b.WriteString("\\0")
			continue
		}
		if s[i] == '\\' && i+1 < len(s) {
			b.WriteByte(s[i])
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func printfEscape(s string) (string, int, bool) {
	if len(s) < 2 {
		return s, len(s), false
	}
	switch s[1] {
	case 'c':
		return "", 2, true
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n, j := 0, 1
		for ; j < len(s) && j < 4 && s[j] >= '0' && s[j] <= '7'; j++ {
			n = n*8 + int(s[j]-'0')
		}
		return string([]byte{byte(n)}), j, false
	case 'x', 'u', 'U':
		out, _ := echoEscapes(s[:min(len(s), 10)])
		// find how many bytes echoEscapes consumed: re-scan
		max := 2
		if s[1] == 'u' {
			max = 4
		} else if s[1] == 'U' {
			max = 8
		}
		j := 2
		for ; j < len(s) && j < 2+max && isHex(s[j]); j++ {
		}
		if j == 2 {
			return s[:2], 2, false
		}
		out, _ = echoEscapes(s[:j])
		return out, j, false
	}
	out, _ := echoEscapes(s[:2])
	return out, 2, false
}

func printfInt(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	// 'c and "c give c's code, and c may be a blank
	if t := strings.TrimLeft(s, " \t\n"); len(t) >= 1 && (t[0] == '\'' || t[0] == '"') {
		if len(t) == 1 {
			return 0, true
		}
		r, sz := utf8.DecodeRuneInString(t[1:])
		if r == utf8.RuneError && sz <= 1 {
			return int64(t[1]), true
		}
		return int64(r), true
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, false
	}
	if len(t) >= 1 && (t[0] == '\'' || t[0] == '"') {
		if len(t) == 1 {
			return 0, true
		}
		r, sz := utf8.DecodeRuneInString(t[1:])
		if r == utf8.RuneError && sz <= 1 {
			return int64(t[1]), true
		}
		return int64(r), true
	}
	if strings.TrimRight(s, " \t\n") != s {
		n, _ := printfInt(strings.TrimRight(s, " \t\n"))
		return n, false
	}
	neg := false
	u := t
	if u[0] == '-' || u[0] == '+' {
		neg = u[0] == '-'
		u = u[1:]
	}
	var n int64
	var err error
	switch {
	case strings.HasPrefix(u, "0x") || strings.HasPrefix(u, "0X"):
		n, err = strconv.ParseInt(u[2:], 16, 64)
	case len(u) > 1 && u[0] == '0':
		n, err = strconv.ParseInt(u[1:], 8, 64)
	default:
		n, err = strconv.ParseInt(u, 10, 64)
	}
	if err != nil {
		// leading digits count, the rest is an error
		k := 0
		for k < len(u) && u[k] >= '0' && u[k] <= '9' {
			k++
		}
		n, _ = strconv.ParseInt(u[:k], 10, 64)
		if neg {
			n = -n
		}
		return n, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// bashQuote is printf %q.
func bashQuote(s string) string {
	if s == "" {
		return "''"
	}
	special := false
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			special = true
			break
		}
	}
	if special {
		return ansiQuote(s)
	}
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(" \t!\"#$&'()*,;<>?[\\]^`{|}~", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// strftime implements the common conversions of strftime(3).
func strftime(f string, t time.Time) string {
	if f == "" {
		f = "%X"
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			fmt.Fprintf(&b, "%02d", h)
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T', 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'D', 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'R':
			b.WriteString(t.Format("15:04"))
		case 'c':
			b.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// ansiQuote renders s as $'...' the way bash's printf %q and ${x@Q} do.
func ansiQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case 27:
			b.WriteString(`\E`)
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else if c < 0x80 {
				b.WriteByte(c)
			} else if r, w := utf8.DecodeRuneInString(s[i:]); r == utf8.RuneError && w <= 1 {
				fmt.Fprintf(&b, "\\%03o", c) // a byte that is no character
			} else {
				b.WriteString(s[i : i+w])
				i += w - 1
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}
