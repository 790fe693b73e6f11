package bc

// Numbers as bc keeps them: a decimal fixed-point value with a scale of
// its own (the digits after the point), over math/big. Every operation
// follows GNU bc's rules for the scale of its result and truncates (never
// rounds) as GNU bc does, so results match digit for digit.

import (
	"fmt"
	"math/big"
	"strings"
)

// num is v / 10^s. Values are never modified after they are made.
type num struct {
	v *big.Int
	s int
}

var (
	bigTen  = big.NewInt(10)
	zeroNum = num{v: new(big.Int)}
	oneNum  = num{v: big.NewInt(1)}
)

// MaxDigits bounds the digits of any number bc makes (and the scale):
// math/big's multiplication, division and square root cannot be
// interrupted, so the size of each operand is what keeps one operation
// inside the exec deadline (a 100,000-digit square root takes ~0.1 s).
const MaxDigits = 100_000

// limitError is a number or scale past MaxDigits: it ends the run.
type limitError struct{ what string }

func (e *limitError) Error() string {
	return fmt.Sprintf("%s (limit %d digits)", e.what, MaxDigits)
}

// smallPow10 caches the powers of ten the usual scales need; they are
// never modified.
var smallPow10 = func() (t [256]*big.Int) {
	t[0] = big.NewInt(1)
	for i := 1; i < len(t); i++ {
		t[i] = new(big.Int).Mul(t[i-1], bigTen)
	}
	return t
}()

// pow10 returns 10^n (n small enough: callers check sizes first). The
// result must not be modified.
func pow10(n int) *big.Int {
	if n <= 0 {
		return smallPow10[0]
	}
	if n < len(smallPow10) {
		return smallPow10[n]
	}
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

func intNum(i int64) num { return num{v: big.NewInt(i)} }

// digits estimates the decimal digits of |x| from its bit length (within
// one of the truth, enough for bounds).
func digits(x *big.Int) int { return int(float64(x.BitLen())*0.30103) + 1 }

func (a num) isZero() bool { return a.v.Sign() == 0 }
func (a num) sign() int    { return a.v.Sign() }

// rescale returns a at scale s, truncating toward zero when s is smaller.
func (a num) rescale(s int) num {
	switch {
	case s == a.s:
		return a
	case s > a.s:
		return num{v: new(big.Int).Mul(a.v, pow10(s-a.s)), s: s}
	default:
		return num{v: new(big.Int).Quo(a.v, pow10(a.s-s)), s: s}
	}
}

func checkSize(d int) error {
	if d > MaxDigits {
		return &limitError{fmt.Sprintf("number too long: about %d digits", d)}
	}
	return nil
}

func add(a, b num) num {
	s := max(a.s, b.s)
	x, y := a.rescale(s), b.rescale(s)
	return num{v: new(big.Int).Add(x.v, y.v), s: s}
}

func sub(a, b num) num {
	s := max(a.s, b.s)
	x, y := a.rescale(s), b.rescale(s)
	return num{v: new(big.Int).Sub(x.v, y.v), s: s}
}

// mul keeps min(s1+s2, max(scale, s1, s2)) digits.
func mul(a, b num, scale int) (num, error) {
	if err := checkSize(digits(a.v) + digits(b.v)); err != nil {
		return num{}, err
	}
	p := num{v: new(big.Int).Mul(a.v, b.v), s: a.s + b.s}
	return p.rescale(min(a.s+b.s, max(scale, a.s, b.s))), nil
}

var errDivZero = &runtimeError{"Divide by zero"}

// div keeps scale digits.
func div(a, b num, scale int) (num, error) {
	if b.isZero() {
		return num{}, errDivZero
	}
	if err := checkSize(digits(a.v) + scale + b.s); err != nil {
		return num{}, err
	}
	// a/b * 10^scale = a.v * 10^(b.s+scale) / (b.v * 10^a.s)
	n := new(big.Int).Mul(a.v, pow10(b.s+scale))
	d := new(big.Int).Mul(b.v, pow10(a.s))
	return num{v: n.Quo(n, d), s: scale}, nil
}

// mod is a - (a/b)*b with the quotient at scale digits, kept at
// max(s1, s2+scale) digits.
func mod(a, b num, scale int) (num, error) {
	q, err := div(a, b, scale)
	if err != nil {
		return num{}, err
	}
	rs := max(a.s, b.s+scale)
	p, err := mul(q, b, rs)
	if err != nil {
		return num{}, err
	}
	return sub(a, p).rescale(max(rs, a.s, p.s)), nil
}

// power raises a to an integer exponent: exact, then truncated to
// min(s*e, max(scale, s)) digits; a negative exponent divides 1 by the
// exact power at scale digits.
func power(a num, e *big.Int, scale int) (num, error) {
	if e.Sign() == 0 {
		return oneNum, nil
	}
	neg := e.Sign() < 0
	ae := new(big.Int).Abs(e)
	if a.isZero() {
		if neg {
			return num{}, errDivZero
		}
		return zeroNum, nil
	}
	if a.v.CmpAbs(oneNum.v) == 0 && a.s == 0 {
		if a.v.Sign() < 0 && ae.Bit(0) == 1 {
			return intNum(-1), nil
		}
		return oneNum, nil
	}
	if !ae.IsInt64() {
		return num{}, &limitError{"number too long: exponent " + e.String()}
	}
	n := ae.Int64()
	if d := float64(a.v.BitLen()) * 0.30103 * float64(n); d > MaxDigits {
		return num{}, &limitError{fmt.Sprintf("number too long: about %.0f digits", d)}
	}
	p := num{v: new(big.Int).Exp(a.v, ae, nil), s: a.s * int(n)}
	if neg {
		return div(oneNum, p, scale)
	}
	return p.rescale(min(p.s, max(scale, a.s))), nil
}

// sqrtNum truncates the square root to max(scale, s) digits.
func sqrtNum(a num, scale int) (num, error) {
	if a.sign() < 0 {
		return num{}, &runtimeError{"Square root of a negative number"}
	}
	r := max(scale, a.s)
	if err := checkSize(digits(a.v) + 2*r); err != nil {
		return num{}, err
	}
	// sqrt(v/10^s) * 10^r = sqrt(v * 10^(2r-s))
	x := new(big.Int).Mul(a.v, pow10(2*r-a.s))
	return num{v: x.Sqrt(x), s: r}, nil
}

func cmp(a, b num) int {
	s := max(a.s, b.s)
	return a.rescale(s).v.Cmp(b.rescale(s).v)
}

// trunc is the integer part (toward zero).
func (a num) trunc() *big.Int { return a.rescale(0).v }

// int64Of is the integer part as an int64, clamped.
func (a num) int64Of() int64 {
	t := a.trunc()
	switch {
	case t.IsInt64():
		return t.Int64()
	case t.Sign() < 0:
		return -1 << 62
	default:
		return 1 << 62
	}
}

// length is bc's length(): significant digits (for a value below 1, the
// scale).
func (a num) length() int {
	if a.isZero() {
		return 1
	}
	n := len(new(big.Int).Abs(a.v).String())
	return max(n, a.s)
}

// parseNum reads a numeric literal in base ibase. A single digit keeps its
// value whatever the base; in longer numbers a digit at or above the base
// counts as base-1. A fraction is kept at as many digits as it was written
// with.
func parseNum(lit string, ibase int) (num, error) {
	ip, fp, _ := strings.Cut(lit, ".")
	if len(ip)+len(fp) > MaxDigits {
		return num{}, &limitError{"number too long"}
	}
	if ibase == 10 && !strings.ContainsAny(lit, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		v, _ := new(big.Int).SetString(ip+fp+"0", 10)
		return num{v: v.Quo(v, bigTen), s: len(fp)}, nil
	}
	if len(lit) > 20_000 {
		// digit by digit is quadratic: long literals only in base 10
		return num{}, &limitError{"number too long for ibase " + fmt.Sprint(ibase)}
	}
	// GNU: a whole number that is one digit after its leading zeros keeps
	// the digit's value (0Z is 35), as a lone digit does (ZZ is 99)
	single := fp == "" && !strings.Contains(lit, ".") && len(strings.TrimLeft(ip, "0")) <= 1
	b := big.NewInt(int64(ibase))
	v := new(big.Int)
	for i := 0; i < len(ip); i++ {
		v.Mul(v, b)
		v.Add(v, big.NewInt(int64(digitVal(ip[i], ibase, single))))
	}
	if fp == "" {
		return num{v: v}, nil
	}
	// fraction: sum d_i / base^i, exactly, then truncated to len(fp)
	fn := new(big.Int)
	den := big.NewInt(1)
	for i := 0; i < len(fp); i++ {
		fn.Mul(fn, b)
		fn.Add(fn, big.NewInt(int64(digitVal(fp[i], ibase, false))))
		den.Mul(den, b)
	}
	s := len(fp)
	fn.Mul(fn, pow10(s))
	fn.Quo(fn, den)
	v.Mul(v, pow10(s))
	v.Add(v, fn)
	return num{v: v, s: s}, nil
}

func digitVal(c byte, base int, single bool) int {
	d := int(c - '0')
	if c >= 'A' {
		d = int(c-'A') + 10
	}
	if d >= base && !single {
		d = base - 1
	}
	return d
}

// format renders a in base obase, the way bc prints numbers.
func format(a num, obase int) string {
	if a.isZero() {
		return "0"
	}
	var sb strings.Builder
	if a.sign() < 0 {
		sb.WriteByte('-')
	}
	abs := new(big.Int).Abs(a.v)
	ip := new(big.Int).Quo(abs, pow10(a.s))
	if obase == 10 {
		str := abs.String()
		if len(str) <= a.s {
			str = strings.Repeat("0", a.s-len(str)+1) + str
		}
		cut := len(str) - a.s
		if ip.Sign() != 0 {
			sb.WriteString(str[:cut])
		}
		if a.s > 0 {
			sb.WriteByte('.')
			sb.WriteString(str[cut:])
		}
		return sb.String()
	}
	wide := obase > 16
	width := len(fmt.Sprint(obase - 1))
	digit := func(d int64, space bool) {
		if !wide {
			sb.WriteByte("0123456789ABCDEF"[d])
			return
		}
		if space {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%0*d", width, d)
	}
	b := big.NewInt(int64(obase))
	if ip.Sign() != 0 {
		var ds []int64
		for q, r := new(big.Int).Set(ip), new(big.Int); q.Sign() != 0; {
			q.QuoRem(q, b, r)
			ds = append(ds, r.Int64())
		}
		for i := len(ds) - 1; i >= 0; i-- {
			digit(ds[i], true)
		}
	}
	if a.s > 0 {
		sb.WriteByte('.')
		one := pow10(a.s)
		frac := new(big.Int).Rem(abs, one)
		t := big.NewInt(1)
		d := new(big.Int)
		for first := true; len(t.String()) <= a.s; first = false {
			frac.Mul(frac, b)
			d.QuoRem(frac, one, frac)
			digit(d.Int64(), !first)
			t.Mul(t, b)
		}
	}
	return sb.String()
}

// bits is what a value costs the memory budget, roughly.
func (a num) bytes() int64 { return int64(a.v.BitLen()/8) + 48 }
