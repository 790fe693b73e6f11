package coreutils

// seq: number sequences, GNU seq's widths and formats.

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
)

var seqSpec = getopt.Spec{Short: "f:s:w", Long: []getopt.Long{
	{Name: "format", Arg: getopt.Required, Key: "f"}, {Name: "separator", Arg: getopt.Required, Key: "s"},
	{Name: "equal-width", Key: "w"}}}

// Seq is seq(1).
func Seq(ctx context.Context, inv *commands.Invocation) int {
	// GNU parses options in order ("+f:s:w") and stops at the first
	// operand or negative number: everything after is an operand.
	args := []string{inv.Args[0]}
	var nums []string
	for i := 1; i < len(inv.Args); i++ {
		a := inv.Args[i]
		if a == "--" {
			args = append(args, a)
			nums = inv.Args[i+1:]
			break
		}
		if len(a) < 2 || a[0] != '-' || isDigit(a[1]) || a[1] == '.' {
			nums = inv.Args[i:]
			break
		}
		args = append(args, a)
		takesArg := a == "--format" || a == "--separator" ||
			!strings.HasPrefix(a, "--") && strings.IndexAny(a[1:], "fs") == len(a)-2
		if takesArg && i+1 < len(inv.Args) {
			i++
			args = append(args, inv.Args[i])
		}
	}
	inv2 := *inv
	inv2.Args = args
	r := begin(ctx, &inv2)
	opts, operands, code, ok := r.parse(&seqSpec)
	if !ok {
		return code
	}
	operands = append(operands, nums...)
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
	if format != "" {
		if msg := seqFormatError(format); msg != "" {
			return r.fail(1, "format %s %s", r.q(format), msg)
		}
		var hexFloat bool
		if format, hexFloat = goFloatFormat(format); hexFloat {
			// C's %a has no Go verb with the same digits: refuse it.
			return inv.Refuse(inv.Unsupported("-f %a"))
		}
	}
	switch len(operands) {
	case 0:
		return r.usage(fmt.Errorf("missing operand"), 1)
	case 1, 2, 3:
	default:
		return r.usage(fmt.Errorf("extra operand %s", r.q(operands[3])), 1)
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
		v, err := parseSeqNumber(s)
		if err != nil || math.IsNaN(v) {
			return r.usage(fmt.Errorf("invalid floating point argument: %s", r.q(s)), 1)
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
		return r.usage(fmt.Errorf("invalid Zero increment value: %s", r.q(incr)), 1)
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
			if isHexNumber(s) {
				return 0 // GNU takes no width from a hexadecimal operand
			}
			if strings.ContainsAny(s, "eEnN") {
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

// goFloatFormat turns a format seqFormatError accepted into Go's: C's
// long-double L and grouping ' (no effect in the C locale) dropped. hexFloat
// reports a %a or %A directive.
func goFloatFormat(f string) (string, bool) {
	var b strings.Builder
	hexFloat := false
	for i := 0; i < len(f); i++ {
		b.WriteByte(f[i])
		if f[i] != '%' {
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		for i++; i < len(f); i++ {
			c := f[i]
			if c == 'L' || c == '\'' {
				continue
			}
			b.WriteByte(c)
			if strings.IndexByte("aAeEfFgG", c) >= 0 {
				hexFloat = hexFloat || c == 'a' || c == 'A'
				break
			}
		}
	}
	return b.String(), hexFloat
}

// isHexNumber reports whether s is strtold's hexadecimal form ([+-]0x...).
func isHexNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

// parseSeqNumber reads an operand as strtold does: decimal or hexadecimal
// (0x10, 0x1p3; Go's ParseFloat wants the binary exponent), inf and nan,
// without Go's digit separators.
func parseSeqNumber(s string) (float64, error) {
	if strings.Contains(s, "_") {
		return 0, strconv.ErrSyntax
	}
	if isHexNumber(s) && !strings.ContainsAny(s, "pP") {
		s += "p0"
	}
	return strconv.ParseFloat(s, 64)
}

// seqFormatError is why GNU seq refuses a -f format ("" if it takes it):
// exactly one floating-point directive (%[-+ #0]W.P then one of aAeEfFgG)
// besides %%. Go's Sprintf must not see anything else: its %x of a float
// is hexadecimal floating point, where GNU refuses the format.
func seqFormatError(f string) string {
	n := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			i++
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0'", f[j]) >= 0 {
			j++
		}
		for j < len(f) && (f[j] >= '0' && f[j] <= '9' || f[j] == '.') {
			j++
		}
		if j < len(f) && f[j] == 'L' {
			j++
		}
		if j >= len(f) {
			return "ends in %"
		}
		if strings.IndexByte("aAeEfFgG", f[j]) < 0 {
			return "has unknown %" + f[j:j+1] + " directive"
		}
		if n++; n > 1 {
			return "has too many % directives"
		}
		i = j
	}
	if n == 0 {
		return "has no % directive"
	}
	return ""
}
