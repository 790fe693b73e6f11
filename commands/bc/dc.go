package bc

// dc: the reverse-Polish calculator of GNU bc's package, over the same
// numbers as bc. Macros run on an explicit frame stack, not Go recursion:
// a macro whose last command runs another replaces itself (tail calls), so
// loops written as recursion run in constant depth, and nesting is bounded
// by maxFrames.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/optparse"
)

// maxFrames bounds nested macro execution.
const maxFrames = 10000

// dcValue is a number or a string.
type dcValue struct {
	n     num
	s     string
	isStr bool
}

func (v dcValue) bytes() int64 {
	if v.isStr {
		return int64(len(v.s)) + 32
	}
	return v.n.bytes()
}

type dcReg struct {
	stack []dcValue
	arr   map[int64]dcValue
}

type dcFrame struct {
	src string
	pos int
}

type dc struct {
	ctx                 context.Context
	inv                 *commands.Invocation
	out                 *colWriter
	flush               func()
	stack               []dcValue
	regs                map[byte]*dcReg
	scale, ibase, obase int
	res                 *commands.Reservation
	stdin               *bufio.Reader
	quit                bool
}

var dcOpts = optparse.New("e:f:hV", "expression=:e", "file=:f", "help:h", "version:V")

// Dc is dc(1).
func Dc(ctx context.Context, inv *commands.Invocation) int {
	opts, files, err := dcOpts.Parse(inv.Args[1:])
	if err != nil {
		return inv.BadUsage(err, fmt.Sprintf("dc: %s\nUsage: dc [OPTION] [file ...]\n", err), 1)
	}
	bw := bufio.NewWriter(inv.Stdout)
	defer bw.Flush()
	d := &dc{ctx: ctx, inv: inv, out: &colWriter{w: bw, lineLen: lineLength(inv.Getenv("DC_LINE_LENGTH")), wide: true},
		flush: func() { bw.Flush() }, regs: map[byte]*dcReg{}, ibase: 10, obase: 10,
		res: commands.ReservationFrom(ctx), stdin: bufio.NewReader(inv.Stdin)}
	ran := false
	for _, o := range opts {
		switch o.Key {
		case "h":
			io.WriteString(inv.Stdout, "Usage: dc [OPTION] [file ...]\n  -e, --expression=EXPR    evaluate expression\n  -f, --file=FILE          evaluate contents of file\n")
			return 0
		case "V":
			io.WriteString(inv.Stdout, "dc (GNU bc 1.07.1) 1.4.1 (warren)\n")
			return 0
		case "e":
			ran = true
			if st, done := d.runText(o.Val); done {
				return st
			}
		case "f":
			ran = true
			if st, done := d.runFile(o.Val); done {
				return st
			}
		}
	}
	for _, f := range files {
		ran = true
		if st, done := d.runFile(f); done {
			return st
		}
	}
	if !ran {
		if st, done := d.runReader(d.stdin); done {
			return st
		}
	}
	return 0
}

func (d *dc) runFile(name string) (int, bool) {
	if name == "-" {
		return d.runReader(d.stdin)
	}
	f, err := d.inv.Open(name)
	if err != nil {
		d.flush()
		fmt.Fprintf(d.inv.Stderr, "dc: Could not open file %s\n", name)
		return 1, true
	}
	defer f.Close()
	return d.runReader(bufio.NewReader(f))
}

// runReader runs input one line at a time (a bracketed string may span
// lines), so output follows input as it arrives.
func (d *dc) runReader(r *bufio.Reader) (int, bool) {
	var pending strings.Builder
	depth := 0
	for {
		line, err := r.ReadString('\n')
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '[':
				depth++
			case ']':
				if depth > 0 {
					depth--
				}
			case '#':
				if depth == 0 {
					// a comment hides brackets to the end of the line
					i = len(line)
				}
			}
		}
		pending.WriteString(line)
		if pending.Len() > maxToken {
			d.flush()
			fmt.Fprintf(d.inv.Stderr, "dc: a string longer than %d bytes\n", maxToken)
			return commands.StatusLimit, true
		}
		if depth == 0 || err != nil {
			if st, done := d.runText(pending.String()); done {
				if st == 0 && d.quit && r == d.stdin {
					st = 1 // GNU dc's status for q read from standard input
				}
				return st, true
			}
			pending.Reset()
		}
		if err != nil {
			return 0, false
		}
	}
}

// runText executes src; done: dc ends (q at top level, a limit).
func (d *dc) runText(src string) (int, bool) {
	err := d.exec(src)
	d.flush()
	switch {
	case err == nil:
		return 0, d.quit
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return 130, true
	}
	if st, ok := d.inv.LimitExceeded(err); ok {
		return st, true
	}
	var le *limitError
	if errors.As(err, &le) {
		fmt.Fprintf(d.inv.Stderr, "dc: %s\n", le)
		return commands.StatusLimit, true
	}
	fmt.Fprintf(d.inv.Stderr, "dc: %s\n", err)
	return 1, true
}

func (d *dc) warn(msg string) {
	d.flush()
	fmt.Fprintf(d.inv.Stderr, "dc: %s\n", msg)
}

func (d *dc) push(v dcValue) error {
	if err := d.res.Grow(v.bytes()); err != nil {
		return err
	}
	d.stack = append(d.stack, v)
	return nil
}

func (d *dc) pop() (dcValue, bool) {
	if len(d.stack) == 0 {
		d.warn("stack empty")
		return dcValue{}, false
	}
	v := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	d.res.Shrink(v.bytes())
	return v, true
}

// pop2 pops two numbers (a below b); on an error both stay.
func (d *dc) pop2() (a, b num, ok bool) {
	if len(d.stack) < 2 {
		d.warn("stack empty")
		return num{}, num{}, false
	}
	x, y := d.stack[len(d.stack)-2], d.stack[len(d.stack)-1]
	if x.isStr || y.isStr {
		d.warn("non-numeric value")
		return num{}, num{}, false
	}
	d.pop()
	d.pop()
	return x.n, y.n, true
}

func (d *dc) reg(c byte) *dcReg {
	r := d.regs[c]
	if r == nil {
		r = &dcReg{}
		d.regs[c] = r
	}
	return r
}

func (d *dc) print(v dcValue, nl bool) {
	if v.isStr {
		d.out.WriteString(v.s)
	} else {
		d.out.number(format(v.n, d.obase))
	}
	if nl {
		d.out.WriteString("\n")
	}
}

// exec runs src on an explicit frame stack.
func (d *dc) exec(src string) error {
	frames := []dcFrame{{src: src}}
	for len(frames) > 0 {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		f := &frames[len(frames)-1]
		if f.pos >= len(f.src) {
			frames = frames[:len(frames)-1]
			continue
		}
		c := f.src[f.pos]
		f.pos++
		var run string // a macro to run next
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'A' && c <= 'F':
			start := f.pos - 1
			neg := c == '_'
			if neg {
				start++
			}
			dot := c == '.'
			for f.pos < len(f.src) {
				n := f.src[f.pos]
				if n >= '0' && n <= '9' || n >= 'A' && n <= 'F' || n == '.' && !dot {
					dot = dot || n == '.'
					f.pos++
					continue
				}
				if n == '\\' && f.pos+1 < len(f.src) && f.src[f.pos+1] == '\n' {
					f.pos += 2
					continue
				}
				break
			}
			lit := strings.ReplaceAll(f.src[start:f.pos], "\\\n", "")
			if lit == "" || lit == "." {
				lit = "0"
			}
			v, err := parseNum(lit, d.ibase)
			if err != nil {
				return err
			}
			if neg {
				v = num{v: new(big.Int).Neg(v.v), s: v.s}
			}
			if err := d.push(dcValue{n: v}); err != nil {
				return err
			}
		case c == '[':
			depth, start := 1, f.pos
			for f.pos < len(f.src) && depth > 0 {
				switch f.src[f.pos] {
				case '[':
					depth++
				case ']':
					depth--
				}
				f.pos++
			}
			end := f.pos - 1
			if depth > 0 {
				end = len(f.src)
			}
			if err := d.push(dcValue{s: f.src[start:end], isStr: true}); err != nil {
				return err
			}
		case c == '#':
			for f.pos < len(f.src) && f.src[f.pos] != '\n' {
				f.pos++
			}
		case strings.IndexByte("+-*/%^|~", c) >= 0:
			if err := d.arith(c); err != nil {
				return err
			}
		case c == 'p' || c == 'n' || c == 'P':
			if len(d.stack) == 0 {
				d.warn("stack empty")
				break
			}
			v := d.stack[len(d.stack)-1]
			switch c {
			case 'p':
				d.print(v, true)
			case 'n':
				d.pop()
				d.print(v, false)
			case 'P':
				d.pop()
				if v.isStr {
					d.out.WriteString(v.s)
				} else {
					b := new(big.Int).Abs(v.n.trunc()).Bytes()
					d.out.WriteString(string(b))
				}
			}
		case c == 'f':
			for i := len(d.stack) - 1; i >= 0; i-- {
				d.print(d.stack[i], true)
			}
		case c == 'c':
			for len(d.stack) > 0 {
				d.pop()
			}
		case c == 'd':
			if len(d.stack) == 0 {
				d.warn("stack empty")
				break
			}
			if err := d.push(d.stack[len(d.stack)-1]); err != nil {
				return err
			}
		case c == 'r':
			if len(d.stack) < 2 {
				d.warn("stack empty")
				break
			}
			n := len(d.stack)
			d.stack[n-1], d.stack[n-2] = d.stack[n-2], d.stack[n-1]
		case c == 'R':
			v, ok := d.pop()
			if !ok || v.isStr {
				break
			}
			k := int(v.n.int64Of())
			n := len(d.stack)
			switch {
			case k > 1 && k <= n:
				e := d.stack[n-k]
				copy(d.stack[n-k:], d.stack[n-k+1:])
				d.stack[n-1] = e
			case k < -1 && -k <= n:
				e := d.stack[n-1]
				copy(d.stack[n+k+1:], d.stack[n+k:n-1])
				d.stack[n+k] = e
			}
		case c == 'z':
			if err := d.push(dcValue{n: intNum(int64(len(d.stack)))}); err != nil {
				return err
			}
		case c == 'Z' || c == 'X':
			v, ok := d.pop()
			if !ok {
				break
			}
			var n int
			switch {
			case c == 'Z' && v.isStr:
				n = len(v.s)
			case c == 'Z':
				// dc counts the digits of the value, leading fraction
				// zeros not included (0.00120 is 3), unlike bc's length()
				n = 1
				if !v.n.isZero() {
					n = len(new(big.Int).Abs(v.n.v).String())
				}
			case !v.isStr:
				n = v.n.s
			}
			if err := d.push(dcValue{n: intNum(int64(n))}); err != nil {
				return err
			}
		case c == 'v':
			if len(d.stack) == 0 {
				d.warn("stack empty")
				break
			}
			v := d.stack[len(d.stack)-1]
			if v.isStr {
				d.warn("square root of nonnumeric attempted")
				break
			}
			if v.n.sign() < 0 {
				d.warn("square root of negative number")
				break
			}
			r, err := sqrtNum(v.n, d.scale)
			if err != nil {
				return err
			}
			d.pop()
			if err := d.push(dcValue{n: r}); err != nil {
				return err
			}
		case c == 'k' || c == 'i' || c == 'o':
			v, ok := d.pop()
			if !ok {
				break
			}
			if v.isStr {
				d.warn("non-numeric value")
				break
			}
			n := v.n.int64Of()
			switch {
			case c == 'k' && n < 0:
				d.warn("scale must be a nonnegative number")
			case c == 'k' && n > MaxDigits:
				return &limitError{fmt.Sprintf("scale too large: %d", n)}
			case c == 'k':
				d.scale = int(n)
			case c == 'i' && (n < 2 || n > 16):
				d.warn("input base must be a number between 2 and 16 (inclusive)")
			case c == 'i':
				d.ibase = int(n)
			case n < 2 || n > 2147483647:
				d.warn("output base must be a number between 2 and 2147483647 (inclusive)")
			default:
				d.obase = int(n)
			}
		case c == 'K' || c == 'I' || c == 'O':
			n := map[byte]int{'K': d.scale, 'I': d.ibase, 'O': d.obase}[c]
			if err := d.push(dcValue{n: intNum(int64(n))}); err != nil {
				return err
			}
		case c == 'a':
			v, ok := d.pop()
			if !ok {
				break
			}
			s := ""
			if v.isStr {
				if v.s != "" {
					s = v.s[:1]
				}
			} else {
				b := new(big.Int).Abs(v.n.trunc())
				s = string([]byte{byte(new(big.Int).Rem(b, big.NewInt(256)).Int64())})
			}
			if err := d.push(dcValue{s: s, isStr: true}); err != nil {
				return err
			}
		case c == 'x':
			v, ok := d.pop()
			if !ok {
				break
			}
			if !v.isStr {
				if err := d.push(v); err != nil {
					return err
				}
				break
			}
			run = v.s
		case c == '?':
			line, _ := d.stdin.ReadString('\n')
			run = line
		case c == 'q':
			if len(frames) <= 2 {
				d.quit = true
				return nil
			}
			frames = frames[:len(frames)-2]
			continue
		case c == 'Q':
			v, ok := d.pop()
			if !ok || v.isStr {
				break
			}
			n := int(v.n.int64Of())
			if n <= 0 {
				break
			}
			if n >= len(frames) {
				d.warn("Q command argument exceeded string execution depth")
				break
			}
			frames = frames[:len(frames)-n]
			continue
		case c == '!' && f.pos < len(f.src) && strings.IndexByte("<>=", f.src[f.pos]) >= 0:
			op := f.src[f.pos]
			f.pos++
			if f.pos >= len(f.src) {
				break
			}
			r := f.src[f.pos]
			f.pos++
			run = d.cond(op, r, true)
		case c == '!':
			// a shell command: the sandbox's dc runs none
			for f.pos < len(f.src) && f.src[f.pos] != '\n' {
				f.pos++
			}
			d.warn("! (running a shell command) is not available in the sandbox")
		case c == '<' || c == '>' || c == '=':
			if f.pos >= len(f.src) {
				break
			}
			r := f.src[f.pos]
			f.pos++
			run = d.cond(c, r, false)
		case c == 's' || c == 'l' || c == 'S' || c == 'L' || c == ':' || c == ';':
			if f.pos >= len(f.src) {
				break
			}
			rn := f.src[f.pos]
			f.pos++
			if err := d.register(c, d.reg(rn), rn); err != nil {
				return err
			}
		default:
			// GNU dc puts its "dc: " on standard error and the rest on
			// standard output
			d.flush()
			io.WriteString(d.inv.Stderr, "dc: ")
			d.out.WriteString(fmt.Sprintf("'%c' (%#o) unimplemented\n", c, c))
		}
		if run != "" {
			// a call as the frame's last command replaces the frame
			if top := &frames[len(frames)-1]; top.pos >= len(top.src) && len(frames) > 1 {
				frames = frames[:len(frames)-1]
			}
			if len(frames) >= maxFrames {
				return &commands.DepthError{Limit: maxFrames}
			}
			frames = append(frames, dcFrame{src: run})
		}
	}
	return nil
}

// cond pops two numbers and returns register r's macro when the
// comparison of the top (b) with the one below (a) holds.
func (d *dc) cond(op, r byte, negate bool) string {
	a, b, ok := d.pop2()
	if !ok {
		return ""
	}
	c := cmp(b, a)
	hold := op == '<' && c < 0 || op == '>' && c > 0 || op == '=' && c == 0
	if negate {
		hold = !hold
	}
	if !hold {
		return ""
	}
	reg := d.reg(r)
	if len(reg.stack) == 0 {
		d.warn(fmt.Sprintf("register '%c' (%#o) is empty", r, r))
		return ""
	}
	v := reg.stack[len(reg.stack)-1]
	if !v.isStr {
		d.push(v)
		return ""
	}
	return v.s
}

func (d *dc) register(c byte, reg *dcReg, rn byte) error {
	switch c {
	case 's', 'S':
		v, ok := d.pop()
		if !ok {
			return nil
		}
		if err := d.res.Grow(v.bytes()); err != nil {
			return err
		}
		if c == 's' && len(reg.stack) > 0 {
			d.res.Shrink(reg.stack[len(reg.stack)-1].bytes())
			reg.stack[len(reg.stack)-1] = v
		} else {
			reg.stack = append(reg.stack, v)
		}
	case 'l':
		v := dcValue{n: zeroNum}
		if len(reg.stack) > 0 {
			v = reg.stack[len(reg.stack)-1]
		}
		return d.push(v)
	case 'L':
		if len(reg.stack) == 0 {
			d.warn(fmt.Sprintf("stack register '%c' (%#o) is empty", rn, rn))
			return nil
		}
		v := reg.stack[len(reg.stack)-1]
		reg.stack = reg.stack[:len(reg.stack)-1]
		d.res.Shrink(v.bytes())
		return d.push(v)
	case ':':
		if len(d.stack) < 2 {
			d.warn("stack empty")
			return nil
		}
		iv, _ := d.pop()
		v, _ := d.pop()
		i := iv.n.int64Of()
		if iv.isStr || i < 0 || i >= maxDim {
			d.warn("array index must be a nonnegative integer")
			return nil
		}
		if reg.arr == nil {
			reg.arr = map[int64]dcValue{}
		}
		if err := d.res.Grow(v.bytes() + 32); err != nil {
			return err
		}
		if old, ok := reg.arr[i]; ok {
			d.res.Shrink(old.bytes() + 32)
		}
		reg.arr[i] = v
	case ';':
		iv, ok := d.pop()
		if !ok {
			return nil
		}
		v, found := reg.arr[iv.n.int64Of()]
		if !found {
			v = dcValue{n: zeroNum}
		}
		return d.push(v)
	}
	return nil
}

func (d *dc) arith(op byte) error {
	if op == '|' {
		if len(d.stack) < 3 {
			d.warn("stack empty")
			return nil
		}
		for _, v := range d.stack[len(d.stack)-3:] {
			if v.isStr {
				d.warn("non-numeric value")
				return nil
			}
		}
		m, _ := d.pop()
		e, _ := d.pop()
		b, _ := d.pop()
		if m.n.isZero() {
			d.warn("remainder by zero")
			d.stack = append(d.stack, b, e, m)
			return nil
		}
		// GNU dc: x^0 is 1 whatever the modulus, and the remainder takes
		// the sign of the power (truncating, as %), so _3 3 5| is -2
		ev, bv := new(big.Int).Abs(e.n.trunc()), b.n.trunc()
		if ev.Sign() == 0 {
			return d.push(dcValue{n: intNum(1)})
		}
		r := new(big.Int).Exp(new(big.Int).Abs(bv), ev, new(big.Int).Abs(m.n.trunc()))
		if bv.Sign() < 0 && ev.Bit(0) == 1 {
			r.Neg(r)
		}
		return d.push(dcValue{n: num{v: r}})
	}
	a, b, ok := d.pop2()
	if !ok {
		return nil
	}
	restore := func() { d.stack = append(d.stack, dcValue{n: a}, dcValue{n: b}) }
	var r num
	var err error
	switch op {
	case '+':
		r = add(a, b)
	case '-':
		r = sub(a, b)
	case '*':
		r, err = mul(a, b, d.scale)
	case '/':
		if b.isZero() {
			d.warn("divide by zero")
			restore()
			return nil
		}
		r, err = div(a, b, d.scale)
	case '%', '~':
		if b.isZero() {
			d.warn("remainder by zero")
			restore()
			return nil
		}
		if op == '~' {
			q, err := div(a, b, d.scale)
			if err != nil {
				return err
			}
			m, err := mod(a, b, d.scale)
			if err != nil {
				return err
			}
			if err := d.push(dcValue{n: q}); err != nil {
				return err
			}
			return d.push(dcValue{n: m})
		}
		r, err = mod(a, b, d.scale)
	case '^':
		if b.s > 0 {
			d.warn("warning: non-zero scale in exponent")
		}
		r, err = power(a, b.trunc(), d.scale)
	}
	if err != nil {
		var re *runtimeError
		if errors.As(err, &re) {
			d.warn(strings.ToLower(re.msg[:1]) + re.msg[1:])
			restore()
			return nil
		}
		return err
	}
	return d.push(dcValue{n: r})
}
