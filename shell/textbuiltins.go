package shell

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"

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
	got := 0     // characters read (an escaped pair counts once)
	pending := 0 // UTF-8 continuation bytes still due for the last character
	for {
		if nchars >= 0 && got >= nchars && pending == 0 {
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
		if pending > 0 {
			// -n and -N count characters, as bash does in a UTF-8
			// locale: the rest of a multibyte one comes with it. (A
			// sequence cut short by a new character is taken as bytes;
			// that byte, already read, stays in the line.)
			pending--
			if c&0xC0 == 0x80 {
				line = append(line, c)
				continue
			}
			pending = 0
		}
		pending = utf8Tail(c)
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
			pending = utf8Tail(one[0])
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
		if v := r.lookupRef(arrName); v == nil || v.Attr&attrReadonly == 0 {
			r.unsetVar(arrName) // a readonly one: varForWrite says so
		}
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
	count, origin, skip := 0, 0, 0
	originSet := false // with -O the array is not emptied first, even -O 0
	fd := 0
	callback, quantum := "", 5000
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
		// bash's numeric operands: digits only (an optional sign is
		// refused where the value must not be negative)
		num := func(what string) (int, bool) {
			n, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil || n < 0 {
				r.errf("mapfile: %s: %s", val, what)
				return 0, false
			}
			return n, true
		}
		ok := true
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
			count, ok = num("invalid line count")
		case 'O':
			origin, ok = num("invalid array origin")
			originSet = true
		case 's':
			skip, ok = num("invalid line count")
		case 'u':
			fd, ok = num("invalid file descriptor specification")
		case 'C':
			callback = val
		case 'c':
			if quantum, ok = num("invalid callback quantum"); ok && quantum == 0 {
				r.errf("mapfile: %s: invalid callback quantum", val)
				ok = false
			}
		default:
			r.errf("mapfile: -%c: invalid option", c)
			return 2
		}
		if !ok {
			return 1
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
	var data []byte
	var err error
	if count > 0 {
		// bash reads -n's lines a byte at a time and leaves the rest of
		// the input to whoever reads it next (read, another mapfile)
		data, err = readDelimited(r.fds[fd].r, delim, skip+count, r.rs.lim.MaxStringBytes+1)
	} else {
		data, err = io.ReadAll(io.LimitReader(r.fds[fd].r, int64(r.rs.lim.MaxStringBytes)+1))
	}
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
	if v := r.lookupRef(name); !originSet && (v == nil || v.Attr&attrReadonly == 0) {
		r.unsetVar(name) // a readonly one: varForWrite says so
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
		if count > 0 && n >= count {
			break
		}
		if trim && len(line) > 0 && line[len(line)-1] == delim {
			line = line[:len(line)-1]
		}
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i] // values are C strings in bash
		}
		if callback != "" && (n+1)%quantum == 0 {
			// bash evaluates "CALLBACK INDEX 'LINE'" before storing the line
			biEval(r, []string{"eval", callback, strconv.Itoa(idx), shellQuote(line)})
			if r.exiting || r.returning {
				return r.status
			}
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
	if v.Kind != expand.Indexed && v.Kind != expand.Associative {
		// no line read: still an (empty) indexed array, as in bash
		old, had := v.Str, v.Set && v.Kind == expand.String
		v.Kind, v.Str, v.List, v.Idx = expand.Indexed, "", []string{}, nil
		if had {
			v.List = append(v.List, old)
		}
	}
	v.Set = true
	if v.List == nil {
		v.List = []string{}
	}
	return 0
}

// utf8Tail is how many continuation bytes a UTF-8 lead byte announces.
func utf8Tail(c byte) int {
	switch {
	case c >= 0xF0:
		return 3
	case c >= 0xE0:
		return 2
	case c >= 0xC0:
		return 1
	}
	return 0
}

// readDelimited reads from in one byte at a time until it has n delim
// bytes, max bytes or the end of the input, so that nothing after the
// n-th delimiter is consumed.
func readDelimited(in io.Reader, delim byte, n, max int) ([]byte, error) {
	var out []byte
	var one [1]byte
	for len(out) < max {
		k, err := in.Read(one[:])
		if k == 1 {
			out = append(out, one[0])
			if one[0] == delim {
				if n--; n == 0 {
					return out, nil
				}
			}
		}
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
	}
	return out, nil
}
