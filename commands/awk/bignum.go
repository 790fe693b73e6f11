package awk

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// Numbers GoAWK formats differently from gawk. Both use doubles, but
// GoAWK turns a number into text through int64: an integral value outside
// int64's range (2^63, 2^64, 1e300*10) comes out through OFMT ("1.84467e+19"
// where gawk prints all of its digits, "18446744073709551616"), an
// infinity is "inf" where gawk says "+inf", and printf's %d of such a value
// overflows to -9223372036854775808. GoAWK's conversion is in its core, so
// the program is rewritten (token by token) where the value is known to be
// a number when it is printed:
//
//	print EXPR                  (EXPR arithmetic: a + b, -x, 2^64, log(x), 1e300)
//	  -> print ((N = (EXPR)) * N >= 2^126 ? __warren_bigout(N) : N)
//	printf "%5d", EXPR          (a literal format; %d and %i)
//	  -> printf "%s", ((N = (EXPR)+0) * N >= 2^126 ? __warren_bigint("%5d", N) : sprintf("%5d", N))
//	                            (a plain %d: int(N) in place of the sprintf)
//	printf "%x", EXPR           (%o %x %X %u the same, with __warren_biguint;
//	                            %#x of zero without the #: C prints "0", Go "0x0")
//
// so a value in range takes GoAWK's own path and one outside it gawk's
// text. Left as GoAWK has it: a variable or field printed as it is
// (print x where x = 2^64), concatenation and CONVFMT ((2^64) ""), and
// strings read as numbers ("0x1A" and "inf" are 26 and inf to GoAWK, 0 to
// gawk): docs/commands.md lists them.
const (
	bigNumVar   = "__warren_n"
	bigOutFunc  = "__warren_bigout"
	bigIntFunc  = "__warren_bigint"
	bigUintFunc = "__warren_biguint"
	// the longest print argument (in tokens) checked for being numeric
	maxNumericTokens = 256
	// the guard, after "(N = (EXPR))": N*N >= 2^126 is |N| >= 2^63,
	// outside int64's range (-2^63 goes to the native function too, which
	// prints it the same), and true for NaN and the infinities, as GoAWK
	// compiles it (a fused jump past the native call when N*N < 2^126,
	// which NaN is not). One multiplication and one comparison: the guard
	// runs for every value printed.
	bigOutOfRange = " * " + bigNumVar + " >= 85070591730234615865843651857942052864 ? "
)

// bigFuncs are the native functions the rewritten statements call.
func bigFuncs() map[string]interface{} {
	return map[string]interface{}{
		bigOutFunc:  bigOut,
		bigIntFunc:  bigInt,
		bigUintFunc: bigUnsigned,
	}
}

// bigOut is gawk's output text for a number outside int64's range: all
// the digits of an integral value ("%.0f"; every double that large is
// integral), a signed infinity or NaN.
func bigOut(x float64) string {
	if s, ok := nonFinite(x); ok {
		return s
	}
	if x == math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 6, 64) // not reached: the guard lets these through
}

// nonFinite is gawk's text for an infinity or a NaN ("+inf", "-nan").
func nonFinite(x float64) (string, bool) {
	switch {
	case math.IsInf(x, 1):
		return "+inf", true
	case math.IsInf(x, -1):
		return "-inf", true
	case math.IsNaN(x):
		if math.Signbit(x) {
			return "-nan", true
		}
		return "+nan", true
	}
	return "", false
}

// bigInt is gawk's %d (or %i) conversion spec of x: C's integer
// formatting of all of x's digits (flags - + space 0, width, precision),
// and for an infinity or NaN its signed name without padding, as gawk
// prints them.
func bigInt(spec string, x float64) string {
	if s, ok := nonFinite(x); ok {
		return s
	}
	var minus, plus, space, zero bool
	i := 1 // past the %
	for ; i < len(spec) && strings.IndexByte("-+ 0#", spec[i]) >= 0; i++ {
		switch spec[i] {
		case '-':
			minus = true
		case '+':
			plus = true
		case ' ':
			space = true
		case '0':
			zero = true
		}
	}
	width, prec := 0, -1
	for ; i < len(spec) && spec[i] >= '0' && spec[i] <= '9'; i++ {
		width = width*10 + int(spec[i]-'0')
	}
	if i < len(spec) && spec[i] == '.' {
		prec = 0
		for i++; i < len(spec) && spec[i] >= '0' && spec[i] <= '9'; i++ {
			prec = prec*10 + int(spec[i]-'0')
		}
	}
	digits := strconv.FormatFloat(math.Abs(math.Trunc(x)), 'f', 0, 64)
	if prec == 0 && digits == "0" {
		digits = ""
	}
	if len(digits) < prec {
		digits = strings.Repeat("0", prec-len(digits)) + digits
	}
	sign := ""
	switch {
	case x < 0:
		sign = "-"
	case plus:
		sign = "+"
	case space:
		sign = " "
	}
	pad := width - len(sign) - len(digits)
	switch {
	case pad <= 0:
		return sign + digits
	case minus:
		return sign + digits + strings.Repeat(" ", pad)
	case zero && prec < 0:
		return sign + strings.Repeat("0", pad) + digits
	default:
		return strings.Repeat(" ", pad) + sign + digits
	}
}

// rewriteBigNumbers applies the rewrites above; a program that does not
// lex is returned as it is.
func rewriteBigNumbers(src string) string {
	if !strings.Contains(src, "print") {
		return src
	}
	toks, ok := lex(src)
	if !ok {
		return src
	}
	// each ( and [ with its closing token, found once: matching() for
	// every nested sprintf would be quadratic in a hostile program
	pair := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		pair[i] = -1
		switch t.tok {
		case lexer.LPAREN, lexer.LBRACKET:
			stack = append(stack, i)
		case lexer.RPAREN, lexer.RBRACKET:
			if n := len(stack); n > 0 {
				pair[stack[n-1]] = i
				stack = stack[:n-1]
			}
		}
	}
	var reps []replacement
	for i, t := range toks {
		switch t.tok {
		case lexer.PRINT:
			for _, a := range printArgs(toks, i) {
				// numericExpr is quadratic in nesting: a long argument is
				// left as it is
				if a[1]-a[0] <= maxNumericTokens && numericExpr(toks[a[0]:a[1]]) && !smallLiteral(toks[a[0]:a[1]]) {
					if end, ok := tokenEnd(src, toks[a[1]-1]); ok {
						reps = append(reps,
							replacement{toks[a[0]].off, toks[a[0]].off, "((" + bigNumVar + " = ("},
							replacement{end, end, "))" + bigOutOfRange + bigOutFunc + "(" + bigNumVar + ") : " + bigNumVar + ")"})
					}
				}
			}
		case lexer.PRINTF, lexer.F_SPRINTF:
			reps = append(reps, rewriteIntConversions(src, toks, pair, i)...)
		}
	}
	if len(reps) == 0 {
		return src
	}
	out := applyReplacements(src, reps)
	if checkNesting(out) != nil {
		// the guards' parentheses took a program near the nesting bound
		// past it: GoAWK's text then, rather than a refusal
		return src
	}
	return out
}

// rewriteIntConversions rewrites the integer conversions of the printf
// or sprintf at toks[i] when its format is a string literal (and has no *
// widths, positional or grouping flags, which are left alone).
func rewriteIntConversions(src string, toks []token, pair []int, i int) []replacement {
	var args [][2]int
	if toks[i].tok == lexer.PRINTF {
		args = printArgs(toks, i)
	} else {
		if i+2 >= len(toks) || toks[i+1].tok != lexer.LPAREN || toks[i+2].tok != lexer.STRING {
			return nil
		}
		end := pair[i+1]
		if end < 0 {
			return nil
		}
		args = splitArgs(toks, i+2, end)
	}
	if len(args) < 2 || args[0][1]-args[0][0] != 1 || toks[args[0][0]].tok != lexer.STRING {
		return nil
	}
	format := toks[args[0][0]].val
	specs, ok := intSpecs(format)
	if !ok {
		return nil
	}
	lit := toks[args[0][0]]
	litEnd, ok := tokenEnd(src, lit)
	if !ok {
		return nil
	}
	var reps []replacement
	var out strings.Builder
	last := 0
	for n, sp := range specs {
		if sp.start < 0 || n+1 >= len(args) {
			continue
		}
		spec := format[sp.start:sp.end]
		// C's %#x of zero is "0", Go's "0x0": such a spec is rewritten
		// whatever its argument
		altHex := strings.Contains(spec, "#") && strings.ContainsAny(spec[len(spec)-1:], "xX")
		if !altHex && smallValue(toks[args[n+1][0]:args[n+1][1]]) {
			continue
		}
		a := args[n+1]
		end, ok := tokenEnd(src, toks[a[1]-1])
		if !ok {
			return nil
		}
		q := awkString(spec)
		f, inRange := bigIntFunc, "sprintf("+q+", "+bigNumVar+")"
		switch c := spec[len(spec)-1]; {
		case altHex:
			f = bigUintFunc
			inRange = "(" + bigNumVar + " ? " + inRange + " : sprintf(" + awkString(strings.ReplaceAll(spec, "#", "")) + ", " + bigNumVar + "))"
		case c != 'd' && c != 'i':
			f = bigUintFunc
		case len(spec) == 2:
			// a plain %d is %s of the integer's text, without a second
			// format
			inRange = "int(" + bigNumVar + ")"
		}
		out.WriteString(format[last:sp.start])
		out.WriteString("%s")
		last = sp.end
		reps = append(reps,
			replacement{toks[a[0]].off, toks[a[0]].off, "((" + bigNumVar + " = ("},
			replacement{end, end, ")+0)" + bigOutOfRange + f + "(" + q + ", " + bigNumVar + ") : " + inRange + ")"})
	}
	if len(reps) == 0 {
		return nil
	}
	out.WriteString(format[last:])
	return append(reps, replacement{lit.off, litEnd, awkString(out.String())})
}

// convSpec is where one conversion is in a format (start -1 for one that
// is not an integer conversion).
type convSpec struct{ start, end int }

// intSpecs walks a printf format: for each argument it converts, where
// the integer (%d %i %o %x %X %u) spec that takes it is. ok is false for a
// format this does not rewrite (a * width or precision, n$ positions, the
// ' flag, a length modifier).
func intSpecs(f string) (specs []convSpec, ok bool) {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		start := i
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		for i < len(f) && (f[i] >= '0' && f[i] <= '9' || f[i] == '.') {
			i++
		}
		if i >= len(f) {
			break
		}
		switch c := f[i]; {
		case c == '*' || c == '$' || c == '\'' || c == 'h' || c == 'l' || c == 'L' || c == 'q' || c == 'j' || c == 'z' || c == 't':
			return nil, false
		case strings.IndexByte("dioxXu", c) >= 0:
			specs = append(specs, convSpec{start, i + 1})
		default:
			specs = append(specs, convSpec{-1, -1})
		}
	}
	return specs, true
}

// smallValue reports whether toks is a value always inside int64's
// range: a counter (NR, NF, FNR, RSTART, RLENGTH) or a small literal.
func smallValue(toks []token) bool {
	if len(toks) == 1 && toks[0].tok == lexer.NAME {
		switch toks[0].val {
		case "NR", "NF", "FNR", "RSTART", "RLENGTH":
			return true
		}
	}
	return smallLiteral(toks)
}

// printArgs returns the token ranges [start, end) of the arguments of the
// print or printf at toks[i]: up to the end of the statement or a
// redirect, inside the parentheses of print (a, b).
func printArgs(toks []token, i int) [][2]int {
	k := i + 1
	end := statementEnd(toks, k)
	depth := 0 // kept as it goes: depthAt for each > would be quadratic
	for j := k; j < end; j++ {
		switch tk := toks[j].tok; tk {
		case lexer.LPAREN, lexer.LBRACKET:
			depth++
		case lexer.RPAREN, lexer.RBRACKET:
			depth--
		case lexer.GREATER, lexer.APPEND, lexer.PIPE:
			if depth == 0 {
				end = j
			}
		}
	}
	if k < end && toks[k].tok == lexer.LPAREN && matching(toks, k) == end-1 {
		return splitArgs(toks, k+1, end-1)
	}
	return splitArgs(toks, k, end)
}

// splitArgs cuts toks[from:to] at its top-level commas.
func splitArgs(toks []token, from, to int) [][2]int {
	if from >= to {
		return nil
	}
	var out [][2]int
	start := from
	for _, c := range topCommas(toks, from, to) {
		out = append(out, [2]int{start, c})
		start = c + 1
	}
	out = append(out, [2]int{start, to})
	for _, a := range out {
		if a[0] >= a[1] {
			return nil
		}
	}
	return out
}

// tokenEnd is the offset just past token t in src, for the tokens an
// expression can end with (ok false for others).
func tokenEnd(src string, t token) (int, bool) {
	switch t.tok {
	case lexer.NAME, lexer.NUMBER:
		if strings.HasPrefix(src[t.off:], t.val) {
			return t.off + len(t.val), true
		}
	case lexer.RPAREN, lexer.RBRACKET:
		return t.off + 1, true
	case lexer.INCR, lexer.DECR:
		return t.off + 2, true
	case lexer.STRING:
		for i := t.off + 1; i < len(src); i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1, true
			case '\n':
				return 0, false
			}
		}
	}
	return 0, false
}

// mathBuiltins are the builtins whose value can be outside int64's range
// or not finite.
var mathBuiltins = map[lexer.Token]bool{
	lexer.F_ATAN2: true, lexer.F_COS: true, lexer.F_EXP: true, lexer.F_INT: true,
	lexer.F_LOG: true, lexer.F_SIN: true, lexer.F_SQRT: true,
}

// numericExpr reports whether toks is an expression whose value is a
// number: operands joined by arithmetic operators (at least one, or a
// leading sign), a numeric literal, a math builtin's call, or such an
// expression in parentheses. Anything else (a string, a concatenation,
// a comparison, a lone variable, which may hold a string) is not.
func numericExpr(toks []token) bool {
	ops, signed, single := 0, false, false
	i := 0
	for {
		for i < len(toks) && isUnary(toks[i].tok) {
			if i == 0 && (toks[i].tok == lexer.SUB || toks[i].tok == lexer.ADD) {
				signed = true
			}
			i++
		}
		next, num, ok := primary(toks, i)
		if !ok {
			return false
		}
		single = num
		i = next
		if i < len(toks) && (toks[i].tok == lexer.INCR || toks[i].tok == lexer.DECR) {
			i++
		}
		if i == len(toks) {
			break
		}
		switch toks[i].tok {
		case lexer.ADD, lexer.SUB, lexer.MUL, lexer.DIV, lexer.MOD, lexer.POW:
			ops++
			i++
		default:
			return false
		}
	}
	return ops > 0 || signed || single
}

func isUnary(t lexer.Token) bool {
	return t == lexer.SUB || t == lexer.ADD || t == lexer.NOT || t == lexer.INCR || t == lexer.DECR
}

// primary reads one operand at toks[i]: it returns the index past it and
// whether it is a number by itself (a literal, a math builtin's call, a
// numeric expression in parentheses).
func primary(toks []token, i int) (int, bool, bool) {
	if i >= len(toks) {
		return 0, false, false
	}
	switch t := toks[i]; {
	case t.tok == lexer.NUMBER:
		return i + 1, true, true
	case t.tok == lexer.DOLLAR:
		for i+1 < len(toks) && isUnary(toks[i+1].tok) {
			i++
		}
		next, _, ok := primary(toks, i+1)
		return next, false, ok
	case t.tok == lexer.NAME:
		if i+1 < len(toks) && (toks[i+1].tok == lexer.LBRACKET || toks[i+1].tok == lexer.LPAREN && toks[i+1].off == t.off+len(t.val)) {
			end := matching(toks, i+1)
			if end < 0 || end >= len(toks) {
				return 0, false, false
			}
			return end + 1, false, true
		}
		return i + 1, false, true
	case t.tok == lexer.LPAREN:
		end := matching(toks, i)
		if end < 0 || end >= len(toks) || len(topCommas(toks, i+1, end)) > 0 {
			return 0, false, false
		}
		return end + 1, numericExpr(toks[i+1 : end]), true
	case t.tok >= lexer.FIRST_FUNC && t.tok <= lexer.LAST_FUNC:
		if i+1 >= len(toks) || toks[i+1].tok != lexer.LPAREN {
			return 0, false, false
		}
		end := matching(toks, i+1)
		if end < 0 || end >= len(toks) {
			return 0, false, false
		}
		return end + 1, mathBuiltins[t.tok], true
	}
	return 0, false, false
}

// smallLiteral reports whether toks is one numeric literal inside int64's
// range (printed the same by GoAWK and gawk: no need for the guard).
func smallLiteral(toks []token) bool {
	if len(toks) != 1 || toks[0].tok != lexer.NUMBER {
		return false
	}
	v, err := strconv.ParseFloat(toks[0].val, 64)
	return err == nil && v < 1<<63 && v >= -(1<<63)
}

// negNaN is the NaN C's log and sqrt give for a negative argument (Go's
// math.NaN has the sign bit clear): gawk prints it "-nan".
var negNaN = math.Copysign(math.NaN(), -1)

// bigUnsigned is gawk's %o %x %X or %u spec of x outside int64's range:
// C's conversion of the uint64 below 2^64, %g with the spec's flags,
// width and precision past it (gawk's fallback for a value no integer
// type holds), a signed infinity or NaN without padding (upper case for
// %X).
func bigUnsigned(spec string, x float64) string {
	conv := spec[len(spec)-1]
	if s, ok := nonFinite(x); ok {
		if conv == 'X' {
			s = strings.ToUpper(s)
		}
		return s
	}
	if x >= 0 && x < 1<<64 {
		if conv == 'u' {
			spec = spec[:len(spec)-1] + "d"
		}
		return fmt.Sprintf(spec, uint64(x))
	}
	body := strings.ReplaceAll(spec[1:len(spec)-1], "#", "")
	if !strings.Contains(body, ".") {
		body += ".6"
	}
	return fmt.Sprintf("%"+body+"g", x)
}
