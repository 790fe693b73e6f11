package coreutils

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/getopt"
	"github.com/warren-sandbox/warren/commands/coreutils/textio"
	"github.com/warren-sandbox/warren/vfs"
)

// Echo is bash's echo: -n, -e, -E only when the whole word is such flags.
func Echo(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	args := inv.Args[1:]
	newline, escapes := true, false
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	for i, a := range args {
		if i > 0 {
			r.out.WriteByte(' ')
		}
		if escapes {
			s, stop := unescape(a, true)
			r.out.WriteString(s)
			if stop {
				return r.done()
			}
			continue
		}
		r.out.WriteString(a)
	}
	if newline {
		r.out.WriteByte('\n')
	}
	return r.done()
}

// unescape interprets echo -e / printf %b escapes; stop reports \c.
// echoStyle selects \0NNN (echo, %b) over \NNN (printf formats).
func unescape(s string, echoStyle bool) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := s[i]; d {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'c':
			return b.String(), true
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\':
			b.WriteByte('\\')
		case 'x':
			v, j := 0, i+1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				v = v*16 + hexVal(s[j])
				j++
			}
			if j == i+1 {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(v))
			i = j - 1
		case 'u', 'U':
			n := 4
			if d == 'U' {
				n = 8
			}
			v, j := 0, i+1
			for j < len(s) && j < i+1+n && isHex(s[j]) {
				v = v*16 + hexVal(s[j])
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(d)
				continue
			}
			b.WriteRune(rune(v))
			i = j - 1
		default:
			if d >= '0' && d <= '7' {
				start := i
				limit := 3
				if echoStyle && d == '0' {
					start, limit = i+1, 3
				}
				v, j := 0, start
				for j < len(s) && j < start+limit && s[j] >= '0' && s[j] <= '7' {
					v = v*8 + int(s[j]-'0')
					j++
				}
				b.WriteByte(byte(v))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(d)
		}
	}
	return b.String(), false
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func hexVal(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// Printf is printf(1) as bash's builtin behaves.
func Printf(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	args := inv.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		r.out.Flush()
		fmt.Fprintf(inv.Stderr, "%s: usage: printf [-v var] format [arguments]\n", r.name)
		r.status = 2
		return r.done()
	}
	format, args := args[0], args[1:]
	for {
		used, stop := r.printfOnce(format, args)
		if stop || used == 0 || used >= len(args) {
			break
		}
		args = args[used:]
	}
	return r.done()
}

// printfOnce applies format once; it returns how many args it consumed.
func (r *run) printfOnce(format string, args []string) (int, bool) {
	ai := 0
	next := func() (string, bool) {
		if ai < len(args) {
			ai++
			return args[ai-1], true
		}
		return "", false
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '\\' {
			j := i + 1
			if j < len(format) && format[j] == 'c' {
				return ai, true
			}
			// one escape sequence
			end := j + 1
			if j < len(format) {
				switch {
				case format[j] >= '0' && format[j] <= '7':
					for end < len(format) && end < j+3 && format[end] >= '0' && format[end] <= '7' {
						end++
					}
				case format[j] == 'x':
					for end < len(format) && end < j+3 && isHex(format[end]) {
						end++
					}
				case format[j] == 'u' || format[j] == 'U':
					n := 4
					if format[j] == 'U' {
						n = 8
					}
					for end < len(format) && end < j+1+n && isHex(format[end]) {
						end++
					}
				}
			}
			end = min(end, len(format))
			s, _ := unescape(format[i:end], false)
			r.out.WriteString(s)
			i = end - 1
			continue
		}
		if c != '%' {
			r.out.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			r.out.WriteByte('%')
			i++
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0'", format[j]) >= 0 {
			j++
		}
		flags := format[i+1 : j]
		width := ""
		if j < len(format) && format[j] == '*' {
			a, _ := next()
			n, _ := strconv.Atoi(a)
			width = strconv.Itoa(n)
			j++
		} else {
			for j < len(format) && isDigit(format[j]) {
				width += string(format[j])
				j++
			}
		}
		prec, hasPrec := "", false
		if j < len(format) && format[j] == '.' {
			hasPrec = true
			j++
			if j < len(format) && format[j] == '*' {
				a, _ := next()
				n, _ := strconv.Atoi(a)
				prec = strconv.Itoa(n)
				j++
			} else {
				for j < len(format) && isDigit(format[j]) {
					prec += string(format[j])
					j++
				}
			}
		}
		for j < len(format) && strings.IndexByte("hlLjzt", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			r.errorf("%%%s: invalid conversion specification", format[i+1:])
			return ai, true
		}
		verb := format[j]
		i = j
		spec := "%" + strings.ReplaceAll(flags, "'", "") + width
		if hasPrec {
			spec += "." + prec
		}
		arg, _ := next()
		switch verb {
		case 's':
			fmt.Fprintf(r.out, spec+"s", arg)
		case 'b':
			s, stop := unescape(arg, true)
			fmt.Fprintf(r.out, spec+"s", s)
			if stop {
				return ai, true
			}
		case 'q':
			fmt.Fprintf(r.out, spec+"s", shellQuote(arg))
		case 'c':
			if arg != "" {
				fmt.Fprintf(r.out, spec+"s", arg[:1])
			} else {
				fmt.Fprintf(r.out, spec+"s", "")
			}
		case 'd', 'i':
			fmt.Fprintf(r.out, spec+"d", r.intArg(arg))
		case 'o', 'u', 'x', 'X':
			v := r.intArg(arg)
			gv := verb
			if gv == 'u' {
				gv = 'd'
			}
			if v < 0 {
				fmt.Fprintf(r.out, spec+string(gv), uint64(v))
			} else {
				fmt.Fprintf(r.out, spec+string(gv), v)
			}
		case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
			v := r.floatArg(arg)
			if verb == 'F' {
				verb = 'f'
			}
			if verb == 'a' || verb == 'A' {
				verb = map[byte]byte{'a': 'x', 'A': 'X'}[verb]
			}
			fmt.Fprintf(r.out, spec+string(verb), v)
		default:
			r.errorf("%%%c: invalid conversion specification", verb)
			return ai, true
		}
	}
	return ai, false
}

func (r *run) intArg(s string) int64 {
	if s == "" {
		return 0
	}
	if s[0] == '\'' || s[0] == '"' {
		if len(s) < 2 {
			return 0
		}
		rn, _ := utf8.DecodeRuneInString(s[1:])
		return int64(rn)
	}
	t := strings.TrimLeft(s, " \t")
	v, err := strconv.ParseInt(t, 0, 64)
	if err != nil {
		// Octal with leading 0 and hex handled by base 0; report others.
		if u, err2 := strconv.ParseUint(t, 0, 64); err2 == nil {
			return int64(u)
		}
		// GNU prints the numeric prefix and complains.
		i := 0
		if i < len(t) && (t[i] == '-' || t[i] == '+') {
			i++
		}
		for i < len(t) && isDigit(t[i]) {
			i++
		}
		pv, _ := strconv.ParseInt(t[:i], 10, 64)
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			r.errorf("%s: Numerical result out of range", quoteGNU(s))
		} else if i > 0 && i < len(t) {
			r.errorf("%s: value not completely converted", quoteGNU(s))
		} else {
			r.errorf("%s: expected a numeric value", quoteGNU(s))
		}
		return pv
	}
	return v
}

func (r *run) floatArg(s string) float64 {
	if s == "" {
		return 0
	}
	if s[0] == '\'' || s[0] == '"' {
		if len(s) < 2 {
			return 0
		}
		rn, _ := utf8.DecodeRuneInString(s[1:])
		return float64(rn)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		r.errorf("%s: expected a numeric value", quoteGNU(s))
		return 0
	}
	return v
}

// shellQuote renders s as coreutils printf %q does (quotearg's
// shell-escape style): bare when safe, '...' by preference, "..." when
// only a single quote is in the way, $'...' for control characters.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe, control, quote := true, false, false
	for _, c := range s {
		switch {
		case c < 32 || c == 127:
			control = true
		case c == '\'':
			quote = true
		}
		if c < 128 && !(isAlpha(byte(c)) || isDigit(byte(c)) || strings.ContainsRune("_-./,:@%+=", c)) {
			safe = false
		}
	}
	switch {
	case safe:
		return s
	case control:
		// Printable runs in '...', control runs in $'...', side by side.
		var b strings.Builder
		for i := 0; i < len(s); {
			j := i
			isCtl := func(c byte) bool { return c < 32 || c == 127 }
			for j < len(s) && isCtl(s[j]) == isCtl(s[i]) {
				j++
			}
			run := s[i:j]
			if !isCtl(s[i]) {
				b.WriteString("'" + strings.ReplaceAll(run, "'", `'\''`) + "'")
			} else {
				b.WriteString("$'")
				for k := 0; k < len(run); k++ {
					switch c := run[k]; c {
					case '\n':
						b.WriteString(`\n`)
					case '\t':
						b.WriteString(`\t`)
					case '\r':
						b.WriteString(`\r`)
					default:
						fmt.Fprintf(&b, "\\%03o", c)
					}
				}
				b.WriteString("'")
			}
			i = j
		}
		return b.String()
	case quote && !strings.ContainsAny(s, "\"$`\\!"):
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var seqSpec = getopt.Spec{Short: "f:s:w", Long: []getopt.Long{
	{Name: "format", Arg: getopt.Required, Key: "f"}, {Name: "separator", Arg: getopt.Required, Key: "s"},
	{Name: "equal-width", Key: "w"}}}

// Seq is seq(1).
func Seq(ctx context.Context, inv *commands.Invocation) int {
	// Negative numbers are operands, not options.
	args := []string{inv.Args[0]}
	var nums []string
	for i := 1; i < len(inv.Args); i++ {
		a := inv.Args[i]
		if len(a) > 1 && a[0] == '-' && (isDigit(a[1]) || a[1] == '.') {
			nums = append(nums, a)
			continue
		}
		args = append(args, a)
	}
	inv2 := *inv
	inv2.Args = args
	r := begin(ctx, &inv2)
	opts, operands, code, ok := r.parse(&seqSpec)
	if !ok {
		return code
	}
	if len(nums) > 0 {
		// Keep operand order: re-scan the original argv.
		operands = operands[:0]
		skip := false
		for _, a := range inv.Args[1:] {
			if skip {
				skip = false
				continue
			}
			if a == "-f" || a == "-s" || a == "--format" || a == "--separator" {
				skip = true
				continue
			}
			if strings.HasPrefix(a, "-") && !(len(a) > 1 && (isDigit(a[1]) || a[1] == '.')) {
				continue
			}
			operands = append(operands, a)
		}
	}
	sep, format, equal := "\n", "", false
	for _, o := range opts {
		switch o.Key {
		case "s":
			sep = o.Arg
		case "f":
			format = o.Arg
		case "w":
			equal = true
		}
	}
	switch len(operands) {
	case 0:
		return r.usage(fmt.Errorf("missing operand"), 1)
	case 1, 2, 3:
	default:
		return r.usage(fmt.Errorf("extra operand %s", quoteGNU(operands[3])), 1)
	}
	first, incr := "1", "1"
	last := operands[len(operands)-1]
	if len(operands) >= 2 {
		first = operands[0]
	}
	if len(operands) == 3 {
		incr = operands[1]
	}
	vals := make([]float64, 3)
	prec := 0
	for i, s := range []string{first, incr, last} {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) {
			return r.usage(fmt.Errorf("invalid floating point argument: %s", quoteGNU(s)), 1)
		}
		vals[i] = v
		if i < 2 {
			if dot := strings.IndexByte(s, '.'); dot >= 0 && !strings.ContainsAny(s, "eE") {
				prec = max(prec, len(s)-dot-1)
			}
		}
	}
	if strings.IndexByte(last, '.') >= 0 && prec == 0 && len(operands) == 1 {
		prec = 0
	}
	if vals[1] == 0 {
		return r.usage(fmt.Errorf("invalid Zero increment value: %s", quoteGNU(incr)), 1)
	}
	render := func(v float64) string {
		if format != "" {
			return fmt.Sprintf(format, v)
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	width := 0
	if equal && format == "" {
		// GNU takes the widths from the operands as written (seq -w 003
		// 10 pads to three digits), widened to the common precision.
		opWidth := func(s string, v float64) int {
			if strings.ContainsAny(s, "eExXnN") {
				return len(render(v))
			}
			s = strings.TrimPrefix(s, "+")
			w := len(s)
			if dot := strings.IndexByte(s, '.'); dot >= 0 {
				w += prec - (len(s) - dot - 1)
			} else if prec > 0 {
				w += prec + 1
			}
			return max(w, len(render(v)))
		}
		width = max(opWidth(first, vals[0]), opWidth(last, vals[2]))
	}
	// Integers use exact int64 arithmetic; the rest steps by index to avoid drift.
	allInt := prec == 0 && vals[0] == math.Trunc(vals[0]) && vals[1] == math.Trunc(vals[1]) && math.Abs(vals[0]) < 1<<53 && math.Abs(vals[2]) < 1<<62
	var num []byte
	for i := int64(0); ; i++ {
		if i&1023 == 0 && r.stopped() {
			break
		}
		v := vals[0] + float64(i)*vals[1]
		if (vals[1] > 0 && v > vals[2]) || (vals[1] < 0 && v < vals[2]) {
			break
		}
		if i > 0 {
			r.out.WriteString(sep)
		}
		var s string
		if allInt && format == "" {
			num = strconv.AppendInt(num[:0], int64(vals[0])+i*int64(vals[1]), 10)
			s = string(num)
		} else {
			s = render(v)
		}
		if width > len(s) {
			if strings.HasPrefix(s, "-") {
				s = "-" + strings.Repeat("0", width-len(s)) + s[1:]
			} else {
				s = strings.Repeat("0", width-len(s)) + s
			}
		}
		r.out.WriteString(s)
		if i == 0 && vals[1] > 0 && vals[0] > vals[2] {
			break
		}
	}
	if (vals[1] > 0 && vals[0] <= vals[2]) || (vals[1] < 0 && vals[0] >= vals[2]) {
		r.out.WriteString("\n")
	}
	return r.done()
}

// Yes is yes(1); it writes large blocks and stops when ctx is done or the
// reader goes away.
func Yes(ctx context.Context, inv *commands.Invocation) int {
	s := "y"
	if len(inv.Args) > 1 {
		args := inv.Args[1:]
		if args[0] == "--" {
			args = args[1:]
		}
		s = strings.Join(args, " ")
	}
	line := s + "\n"
	block := bytes.Repeat([]byte(line), max(1, 8192/len(line)))
	for ctx.Err() == nil {
		if _, err := inv.Stdout.Write(block); err != nil {
			if textio.BrokenPipe(err) {
				return 141
			}
			fmt.Fprintf(inv.Stderr, "yes: standard output: %s\n", commands.Strerror(err))
			return 1
		}
	}
	return 0
}

var teeSpec = getopt.Spec{Short: "aip", Long: []getopt.Long{
	{Name: "append", Key: "a"}, {Name: "ignore-interrupts", Key: "i"}, {Name: "output-error", Arg: getopt.Optional, Key: "p"}}}

// Tee is tee(1): unbuffered copies, as the real one, so pipelines see data promptly.
func Tee(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, files, code, ok := r.parse(&teeSpec)
	if !ok {
		return code
	}
	flag := vfs.O_WRONLY | vfs.O_CREATE | vfs.O_TRUNC
	for _, o := range opts {
		if o.Key == "a" {
			flag = vfs.O_WRONLY | vfs.O_CREATE | vfs.O_APPEND
		}
	}
	type sink struct {
		name string
		w    io.Writer
	}
	sinks := []sink{{"standard output", inv.Stdout}}
	for _, name := range files {
		if name == "-" {
			sinks = append(sinks, sink{"standard output", inv.Stdout})
			continue
		}
		f, err := inv.OpenFile(name, flag, 0o666)
		if err != nil {
			r.errorf("%s", commands.Describe(err))
			continue
		}
		defer f.Close()
		sinks = append(sinks, sink{name, f})
	}
	bufp := textio.GetChunk()
	defer textio.PutChunk(bufp)
	buf := *bufp
	in := textio.WithContext(ctx, inv.Stdin)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			for i := range sinks {
				if sinks[i].w == nil {
					continue
				}
				if _, werr := sinks[i].w.Write(buf[:n]); werr != nil {
					if i > 0 {
						r.errorf("%s: %s", sinks[i].name, commands.Strerror(werr))
					} else {
						r.status = 1
					}
					sinks[i].w = nil
				}
			}
		}
		if err != nil {
			if err != io.EOF && ctx.Err() == nil {
				r.errorf("read error: %s", commands.Strerror(err))
			}
			break
		}
	}
	return r.done()
}

var shufSpec = getopt.Spec{Short: "ei:n:o:rz", Long: []getopt.Long{
	{Name: "echo", Key: "e"}, {Name: "input-range", Arg: getopt.Required, Key: "i"},
	{Name: "head-count", Arg: getopt.Required, Key: "n"}, {Name: "output", Arg: getopt.Required, Key: "o"},
	{Name: "repeat", Key: "r"}, {Name: "zero-terminated", Key: "z"}, {Name: "random-source", Arg: getopt.Required}}}

// Shuf is shuf(1); input lines are buffered within the memory budget.
func Shuf(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, operands, code, ok := r.parse(&shufSpec)
	if !ok {
		return code
	}
	echo, repeat := false, false
	count := int64(-1)
	rangeSpec, output := "", ""
	delim := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "e":
			echo = true
		case "i":
			rangeSpec = o.Arg
		case "n":
			n, err := strconv.ParseInt(o.Arg, 10, 64)
			if err != nil || n < 0 {
				return r.fail(1, "invalid line count: %s", quoteGNU(o.Arg))
			}
			count = n
		case "o":
			output = o.Arg
		case "r":
			repeat = true
		case "z":
			delim = 0
		case "random-source":
			return r.fail(1, "--random-source is not supported")
		}
	}
	var items []string
	switch {
	case echo:
		items = operands
	case rangeSpec != "":
		lo, hi, ok := strings.Cut(rangeSpec, "-")
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if !ok || err1 != nil || err2 != nil || b < a-1 {
			return r.fail(1, "invalid input range: %s", quoteGNU(rangeSpec))
		}
		if b-a > 1<<24 && !repeat && count < 0 {
			return r.fail(1, "input range too large")
		}
		if repeat {
			if count < 0 {
				count = math.MaxInt64
			}
			for i := int64(0); i < count && !r.stopped(); i++ {
				fmt.Fprintf(r.out, "%d%c", a+rand.Int64N(b-a+1), delim)
			}
			return r.done()
		}
		for v := a; v <= b; v++ {
			items = append(items, strconv.FormatInt(v, 10))
		}
	default:
		if len(operands) > 1 {
			return r.usage(fmt.Errorf("extra operand %s", quoteGNU(operands[1])), 1)
		}
		lines, ok := r.readLines(firstOr(operands, "-"), delim, r.budget())
		if !ok {
			if r.status == 0 {
				r.status = 1
			}
			return r.done()
		}
		items = lines
	}
	if output != "" {
		f, err := inv.OpenFile(output, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o666)
		if err != nil {
			return r.fail(1, "%s", commands.Describe(err))
		}
		defer f.Close()
		r.out.Flush()
		r.out.Reset(f)
	}
	if repeat {
		if len(items) == 0 {
			if count != 0 {
				return r.fail(1, "no lines to repeat")
			}
			return r.done()
		}
		if count < 0 {
			count = math.MaxInt64
		}
		for i := int64(0); i < count && !r.stopped(); i++ {
			r.out.WriteString(items[rand.IntN(len(items))])
			r.out.WriteByte(delim)
		}
		return r.done()
	}
	rand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	if count >= 0 && count < int64(len(items)) {
		items = items[:count]
	}
	for _, it := range items {
		r.out.WriteString(it)
		r.out.WriteByte(delim)
	}
	return r.done()
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

var basenameSpec = getopt.Spec{Short: "as:z", Long: []getopt.Long{
	{Name: "multiple", Key: "a"}, {Name: "suffix", Arg: getopt.Required, Key: "s"}, {Name: "zero", Key: "z"}}}

func baseName(s, suffix string) string {
	if s == "" {
		return ""
	}
	t := strings.TrimRight(s, "/")
	if t == "" {
		return "/"
	}
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		t = t[i+1:]
	}
	if suffix != "" && t != suffix && strings.HasSuffix(t, suffix) {
		t = strings.TrimSuffix(t, suffix)
	}
	return t
}

// Basename is basename(1).
func Basename(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, names, code, ok := r.parse(&basenameSpec)
	if !ok {
		return code
	}
	multiple, suffix := false, ""
	term := byte('\n')
	for _, o := range opts {
		switch o.Key {
		case "a":
			multiple = true
		case "s":
			suffix, multiple = o.Arg, true
		case "z":
			term = 0
		}
	}
	if len(names) == 0 {
		return r.usage(fmt.Errorf("missing operand"), 1)
	}
	if !multiple {
		if len(names) > 2 {
			return r.usage(fmt.Errorf("extra operand %s", quoteGNU(names[2])), 1)
		}
		if len(names) == 2 {
			suffix = names[1]
		}
		names = names[:1]
	}
	for _, n := range names {
		r.out.WriteString(baseName(n, suffix))
		r.out.WriteByte(term)
	}
	return r.done()
}

// Dirname is dirname(1).
func Dirname(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, names, code, ok := r.parse(&getopt.Spec{Short: "z", Long: []getopt.Long{{Name: "zero", Key: "z"}}})
	if !ok {
		return code
	}
	term := byte('\n')
	if len(opts) > 0 {
		term = 0
	}
	if len(names) == 0 {
		return r.usage(fmt.Errorf("missing operand"), 1)
	}
	for _, n := range names {
		r.out.WriteString(dirName(n))
		r.out.WriteByte(term)
	}
	return r.done()
}

func dirName(s string) string {
	t := strings.TrimRight(s, "/")
	if t == "" {
		if strings.HasPrefix(s, "/") {
			return "/"
		}
		return "."
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "."
	}
	d := strings.TrimRight(t[:i], "/")
	if d == "" {
		return "/"
	}
	return d
}
