package coreutils

// numfmt: numbers to and from human units (SI, IEC), with GNU numfmt's
// rounding, precision, padding and field handling. Values are binary
// floats of 64-bit mantissa (big.Float), as GNU's long double, so integers
// up to 2^64 keep every digit.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/optparse"
)

var numfmtOpts = optparse.New("d:z", "from=", "from-unit=", "to=", "to-unit=", "round=", "suffix=",
	"padding=", "field=", "format=", "invalid=", "header?", "grouping", "delimiter=:d",
	"zero-terminated:z", "debug", "help", "version")

type numScale int

const (
	scaleNone numScale = iota
	scaleAuto
	scaleSI
	scaleIEC
	scaleIECI
)

var numScales = map[string]numScale{"none": scaleNone, "auto": scaleAuto, "si": scaleSI, "iec": scaleIEC, "iec-i": scaleIECI}

type numfmt struct {
	r                  *run
	from, to           numScale
	fromUnit, toUnit   *big.Float
	round              string
	suffix             string
	padding            int
	fields             func(i int) bool
	delim              string // "" = blanks
	prefix, postfix    string // of --format
	fmtWidth, fmtPrec  int    // fmtPrec -1: none
	fmtZero, fmtLeft   bool
	invalid            string
	failed, abortedRun bool
}

const numPrec = 64

func newF(x float64) *big.Float { return new(big.Float).SetPrec(numPrec).SetFloat64(x) }

// Numfmt is numfmt(1).
func Numfmt(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	opts, args, err := numfmtOpts.Parse(inv.Args[1:])
	if err != nil {
		return r.usage(err, 1)
	}
	n := &numfmt{r: r, round: "from-zero", invalid: "abort", fmtPrec: -1, fields: func(i int) bool { return i == 1 },
		fromUnit: newF(1), toUnit: newF(1)}
	header := 0
	term := byte('\n')
	bad := func(format string, a ...any) int {
		r.errorf(format, a...)
		r.status = 1
		return r.done()
	}
	for _, o := range opts {
		switch o.Key {
		case "help":
			io.WriteString(inv.Stdout, "Usage: numfmt [OPTION]... [NUMBER]...\nReformat NUMBER(s), or the numbers from standard input if none are specified.\n")
			return 0
		case "version":
			io.WriteString(inv.Stdout, "numfmt (GNU coreutils) 9.1 (warren)\n")
			return 0
		case "from", "to":
			s, ok := numScales[o.Val]
			if !ok || o.Key == "to" && s == scaleAuto {
				return bad("invalid argument %s for '--%s'", n.q(o.Val), o.Key)
			}
			if o.Key == "from" {
				n.from = s
			} else {
				n.to = s
			}
		case "from-unit", "to-unit":
			v, ok := unitValue(o.Val)
			if !ok {
				return bad("invalid unit size: %s", n.q(o.Val))
			}
			if o.Key == "from-unit" {
				n.fromUnit = v
			} else {
				n.toUnit = v
			}
		case "round":
			switch o.Val {
			case "up", "down", "from-zero", "towards-zero", "nearest":
				n.round = o.Val
			default:
				return bad("invalid argument %s for '--round'", n.q(o.Val))
			}
		case "suffix":
			n.suffix = o.Val
		case "padding":
			p, err := strconv.Atoi(o.Val)
			if err != nil || p == 0 {
				return bad("invalid padding value %s", n.q(o.Val))
			}
			n.padding = p
		case "field":
			f, ok := parseFieldList(o.Val)
			if !ok {
				return bad("invalid field value %s", n.q(o.Val))
			}
			n.fields = f
		case "format":
			if msg := n.parseFormat(o.Val); msg != "" {
				return bad("%s", msg)
			}
		case "invalid":
			switch o.Val {
			case "abort", "fail", "warn", "ignore":
				n.invalid = o.Val
			default:
				return bad("invalid argument %s for '--invalid'", n.q(o.Val))
			}
		case "header":
			header = 1
			if o.Val != "" {
				h, err := strconv.Atoi(o.Val)
				if err != nil || h <= 0 {
					return bad("invalid header value %s", n.q(o.Val))
				}
				header = h
			}
		case "d":
			if len(o.Val) != 1 {
				return bad("the delimiter must be a single character")
			}
			n.delim = o.Val
		case "z":
			term = 0
		case "grouping", "debug":
			// the C locale has no grouping; --debug only adds warnings
		}
	}
	if len(args) > 0 {
		// each operand is a line of its own (fields, padding and all)
		for _, a := range args {
			if r.stopped() || n.abortedRun {
				break
			}
			n.line(a)
			if !n.abortedRun {
				r.out.WriteByte(term)
			}
		}
	} else {
		br := bufio.NewReader(r.inv.Stdin)
		for line := 0; !r.stopped() && !n.abortedRun; line++ {
			s, err := br.ReadString(term)
			if s == "" && err != nil {
				break
			}
			s = strings.TrimSuffix(s, string(term))
			if line < header {
				r.out.WriteString(s)
			} else {
				n.line(s)
			}
			if !n.abortedRun {
				r.out.WriteByte(term)
			}
		}
	}
	if n.failed && r.status == 0 {
		r.status = 2
	}
	return r.done()
}

func unitValue(s string) (*big.Float, bool) {
	f, ok := new(big.Float).SetPrec(numPrec).SetString(s)
	if ok && f.Sign() > 0 {
		return f, true
	}
	for i, c := range "KMGTPEZY" {
		if s == string(c) || s == string(c)+"i" {
			v := newF(1)
			base := 1000.0
			if strings.HasSuffix(s, "i") {
				base = 1024
			}
			for j := 0; j <= i; j++ {
				v.Mul(v, newF(base))
			}
			return v, true
		}
	}
	return nil, false
}

// parseFieldList reads N, N-M, N-, -M and comma lists.
func parseFieldList(s string) (func(int) bool, bool) {
	type span struct{ lo, hi int }
	var spans []span
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		sp := span{1, 1 << 30}
		if lo != "" {
			v, err := strconv.Atoi(lo)
			if err != nil || v < 1 {
				return nil, false
			}
			sp.lo = v
		}
		if !isRange {
			sp.hi = sp.lo
		} else if hi != "" {
			v, err := strconv.Atoi(hi)
			if err != nil || v < sp.lo {
				return nil, false
			}
			sp.hi = v
		} else if lo == "" {
			return nil, false
		}
		spans = append(spans, sp)
	}
	return func(i int) bool {
		for _, sp := range spans {
			if i >= sp.lo && i <= sp.hi {
				return true
			}
		}
		return false
	}, true
}

// parseFormat reads --format: %[0]['][-][N][.][N]f with text around it.
func (n *numfmt) parseFormat(f string) string {
	i := strings.Index(f, "%")
	for i >= 0 && i+1 < len(f) && f[i+1] == '%' {
		j := strings.Index(f[i+2:], "%")
		if j < 0 {
			i = -1
			break
		}
		i += 2 + j
	}
	if i < 0 {
		return fmt.Sprintf("format %s has no %% directive", n.q(f))
	}
	n.prefix = f[:i] // GNU prints %% in the text around as it is
	j := i + 1
	for j < len(f) && strings.IndexByte("0'-", f[j]) >= 0 {
		switch f[j] {
		case '0':
			n.fmtZero = true
		case '-':
			n.fmtLeft = true
		}
		j++
	}
	k := j
	for k < len(f) && f[k] >= '0' && f[k] <= '9' {
		k++
	}
	n.fmtWidth, _ = strconv.Atoi(f[j:k])
	if k < len(f) && f[k] == '.' {
		k++
		m := k
		for k < len(f) && f[k] >= '0' && f[k] <= '9' {
			k++
		}
		n.fmtPrec, _ = strconv.Atoi(f[m:k])
	}
	if k >= len(f) || f[k] != 'f' {
		return fmt.Sprintf("invalid format %s, directive must be %%[0]['][-][N][.][N]f", n.q(f))
	}
	rest := f[k+1:]
	if strings.Contains(strings.ReplaceAll(rest, "%%", ""), "%") {
		return fmt.Sprintf("format %s has too many %% directives", n.q(f))
	}
	n.postfix = rest
	return ""
}

// line converts the selected fields of one input line.
func (n *numfmt) line(s string) {
	out := n.r.out
	if n.delim != "" {
		parts := strings.Split(s, n.delim)
		for i, p := range parts {
			if i > 0 {
				out.WriteString(n.delim)
			}
			if !n.fields(i + 1) {
				out.WriteString(p)
				continue
			}
			v, ok := n.convert(p)
			if !ok {
				return
			}
			out.WriteString(v)
		}
		return
	}
	// blank-separated: a field is its leading blanks and its text
	i, field := 0, 0
	for i < len(s) {
		start := i
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			out.WriteString(s[start:])
			return
		}
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		field++
		text := s[start:i]
		if !n.fields(field) {
			out.WriteString(text)
			continue
		}
		pad := n.padding
		if field > 1 {
			out.WriteByte(' ')
		}
		if pad == 0 && (text[0] == ' ' || text[0] == '\t') {
			// a converted field keeps the width it had with its blanks
			pad = len(text)
			if field > 1 {
				pad--
			}
		}
		v, ok := n.convertPadded(strings.TrimLeft(text, " \t"), pad)
		if !ok {
			return
		}
		out.WriteString(v)
	}
	if field == 0 && n.fields(1) {
		n.convert(s)
	}
}

func (n *numfmt) convert(s string) (string, bool) { return n.convertPadded(s, n.padding) }

// convertPadded converts one number; on invalid input it applies
// --invalid and returns the input as it was (ok=false: stop the line).
func (n *numfmt) convertPadded(s string, pad int) (string, bool) {
	v, prec, msg := n.parse(s)
	var out string
	if msg == "" {
		out, msg = n.format(v, prec)
	}
	if msg != "" {
		switch n.invalid {
		case "abort":
			n.r.errorf("%s", msg)
			n.r.status = 2
			n.abortedRun = true
			return "", false
		case "fail":
			st := n.r.status
			n.r.errorf("%s", msg)
			n.r.status = st
			n.failed = true
		case "warn":
			st := n.r.status
			n.r.errorf("%s", msg)
			n.r.status = st
		}
		return s, true
	}
	if n.fmtWidth > 0 {
		pad = 0 // the format's width wins
	}
	switch {
	case pad > 0 && len(out) < pad:
		out = strings.Repeat(" ", pad-len(out)) + out
	case pad < 0 && len(out) < -pad:
		out += strings.Repeat(" ", -pad-len(out))
	}
	return out, true
}

// parse reads a number with an optional unit suffix and --suffix; prec is
// the input's decimal digits (0 once a unit scaled it).
func (n *numfmt) parse(s string) (*big.Float, int, string) {
	orig := s
	s = strings.TrimLeft(s, " \t")
	if n.suffix != "" {
		s = strings.TrimSuffix(s, n.suffix)
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	prec := 0
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			prec++
			digits++
		}
	}
	if digits == 0 {
		return nil, 0, "invalid number: " + n.q(orig)
	}
	v, ok := new(big.Float).SetPrec(numPrec).SetString(s[:i])
	if !ok {
		return nil, 0, "invalid number: " + n.q(orig)
	}
	rest := s[i:]
	if rest != "" {
		p := strings.IndexByte("KMGTPEZY", rest[0])
		if p < 0 {
			return nil, 0, "invalid suffix in input: " + n.q(orig)
		}
		if n.from == scaleNone {
			return nil, 0, fmt.Sprintf("rejecting suffix in input: %s (consider using --from)", n.q(orig))
		}
		iec := rest[1:] == "i"
		switch {
		case len(rest) > 2 || len(rest) == 2 && !iec:
			return nil, 0, "invalid suffix in input: " + n.q(orig)
		case n.from == scaleIECI && !iec:
			return nil, 0, fmt.Sprintf("missing 'i' suffix in input: %s (e.g Ki/Mi/Gi)", n.q(orig))
		case iec && (n.from == scaleSI || n.from == scaleIEC):
			return nil, 0, "invalid suffix in input: " + n.q(orig)
		}
		base := 1000.0
		if n.from == scaleIEC || n.from == scaleIECI || n.from == scaleAuto && iec {
			base = 1024
		}
		for j := 0; j <= p; j++ {
			v.Mul(v, newF(base))
		}
		prec = 0
	}
	v.Mul(v, n.fromUnit)
	return v, prec, ""
}

// roundF rounds v to an integer in the --round mode.
func (n *numfmt) roundF(v *big.Float) *big.Float {
	t, _ := v.Int(nil) // toward zero
	tf := new(big.Float).SetPrec(numPrec).SetInt(t)
	frac := new(big.Float).SetPrec(numPrec).Sub(v, tf)
	if frac.Sign() == 0 {
		return tf
	}
	away := func() *big.Float { return tf.Add(tf, newF(float64(v.Sign()))) }
	switch n.round {
	case "up":
		if v.Sign() > 0 {
			return away()
		}
	case "down":
		if v.Sign() < 0 {
			return away()
		}
	case "from-zero":
		return away()
	case "nearest":
		frac.Abs(frac)
		if frac.Cmp(newF(0.5)) >= 0 {
			return away()
		}
	}
	return tf
}

func pow10F(p int) *big.Float {
	v := newF(1)
	for i := 0; i < p; i++ {
		v.Mul(v, newF(10))
	}
	return v
}

// format renders v as --to and --format say.
func (n *numfmt) format(v *big.Float, inPrec int) (string, string) {
	v = new(big.Float).SetPrec(numPrec).Quo(v, n.toUnit)
	userPrec := n.fmtPrec
	var body string
	if n.to == scaleNone {
		prec := inPrec
		if userPrec >= 0 {
			prec = userPrec
		}
		abs := new(big.Float).Abs(v)
		if abs.Cmp(newF(1e19)) >= 0 {
			f, _ := v.Float64()
			return "", fmt.Sprintf("value too large to be printed: '%s' (consider using --to)", strconv.FormatFloat(f, 'g', 6, 64))
		}
		m := pow10F(prec)
		x := n.roundF(new(big.Float).SetPrec(numPrec).Mul(v, m))
		x.Quo(x, m)
		body = x.Text('f', prec)
	} else {
		base := 1000.0
		if n.to != scaleSI {
			base = 1024
		}
		bf := newF(base)
		power := 0
		x := new(big.Float).SetPrec(numPrec).Set(v)
		for new(big.Float).Abs(x).Cmp(bf) >= 0 && power < 9 {
			x.Quo(x, bf)
			power++
		}
		adjust := 0
		if userPrec >= 0 {
			adjust = min(power*3, userPrec)
		} else if new(big.Float).Abs(x).Cmp(newF(10)) < 0 {
			adjust = 1
		}
		m := pow10F(adjust)
		x = n.roundF(x.Mul(x, m))
		x.Quo(x, m)
		if new(big.Float).Abs(x).Cmp(bf) >= 0 {
			x.Quo(x, bf)
			power++
		}
		if power > 8 {
			f, _ := v.Float64()
			return "", fmt.Sprintf("value too large to be printed: '%s' (cannot handle values > 999Y)", strconv.FormatFloat(f, 'g', 6, 64))
		}
		show := x.Sign() != 0 && new(big.Float).Abs(x).Cmp(newF(10)) < 0 && power > 0
		prec := 0
		if show {
			prec = 1
		}
		if userPrec >= 0 {
			prec = userPrec
		}
		body = x.Text('f', prec)
		if power > 0 {
			body += string("KMGTPEZY"[power-1])
			if n.to == scaleIECI {
				body += "i"
			}
		}
	}
	if strings.HasPrefix(body, "-") && strings.Trim(body[1:], "0.") == "" && v.Sign() == 0 {
		body = body[1:]
	}
	body += n.suffix
	if n.fmtWidth > 0 && len(body) < n.fmtWidth {
		switch {
		case n.fmtLeft:
			body += strings.Repeat(" ", n.fmtWidth-len(body))
		case n.fmtZero:
			neg := strings.HasPrefix(body, "-")
			digits := strings.TrimPrefix(body, "-")
			body = strings.Repeat("0", n.fmtWidth-len(body)) + digits
			if neg {
				body = "-" + body
			}
		default:
			body = strings.Repeat(" ", n.fmtWidth-len(body)) + body
		}
	}
	return n.prefix + body + n.postfix, ""
}

func (n *numfmt) q(s string) string { return n.r.q(s) }
