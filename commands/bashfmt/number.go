package bashfmt

import (
	"math"
	"math/big"
	"strings"
	"unicode/utf8"
)

// cSpace is C's isspace in the C and UTF-8 locales.
func cSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// strtoumax is C's strtoumax(s, &end, 0) as far as printf needs it: the
// magnitude, whether a '-' came first, where parsing stopped (0 when no
// number was found) and whether the value overflowed 64 bits.
func strtoumax(s string) (mag uint64, neg bool, end int, overflow bool) {
	i := 0
	for i < len(s) && cSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && isHex(s[i+2]):
		base = 16
		i += 2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	start := i
	for ; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && isHex(c):
			d = uint64(hexVal(c))
		default:
			d = base
		}
		if d >= base {
			break
		}
		if mag > (math.MaxUint64-d)/base {
			overflow = true
		}
		mag = mag*base + d
	}
	if i == start {
		return 0, false, 0, false
	}
	if overflow {
		mag = math.MaxUint64
	}
	return mag, neg, i, overflow
}

// intArg is one integer argument as the dialect reads it: the value
// (signed for %d and %i, else the bits of an unsigned one), after any
// diagnostic it deserves.
func (r *run) intArg(s string, signed bool) uint64 {
	if len(s) >= 1 && (s[0] == '\'' || s[0] == '"') {
		if v, ok := r.charCode(s); ok {
			return uint64(v)
		}
	}
	mag, neg, end, overflow := strtoumax(s)
	var v uint64
	switch {
	case signed && !neg && mag > math.MaxInt64:
		v, overflow = math.MaxInt64, true
	case signed && neg && mag > 1<<63:
		v, overflow = 1<<63, true // math.MinInt64's bits
	case neg:
		v = -mag
	default:
		v = mag
	}
	if overflow && !signed {
		v = math.MaxUint64
	}
	r.numberDiag(s, end, overflow)
	return v
}

// charCode is the value of 'c or "c: the character's code point (its
// byte when it is no UTF-8 character). ok is false for GNU's lone quote,
// which is then no number at all.
func (r *run) charCode(s string) (int64, bool) {
	if len(s) == 1 {
		return 0, r.p.Dialect == Bash
	}
	c, w := utf8.DecodeRuneInString(s[1:])
	if c == utf8.RuneError && w <= 1 {
		c, w = rune(s[1]), 1
	}
	if r.p.Dialect == GNU && 1+w < len(s) {
		r.diag(true, "warning: %s: character(s) following character constant have been ignored", s[1+w:])
	}
	return int64(c), true
}

// numberDiag complains about an argument that was not all number (end
// is where parsing stopped) or out of range.
func (r *run) numberDiag(s string, end int, overflow bool) {
	if r.p.Dialect == GNU {
		switch {
		case overflow:
			r.diag(false, "%s: Numerical result out of range", r.gnuQuote(s))
		case end < len(s) && end == 0:
			r.diag(false, "%s: expected a numeric value", r.gnuQuote(s))
		case end < len(s):
			r.diag(false, "%s: value not completely converted", r.gnuQuote(s))
		}
		return
	}
	switch {
	case end < len(s):
		// bash's sh_invalidnum looks at the argument as it was given.
		msg := "invalid number"
		if len(s) > 1 && s[0] == '0' && s[1] >= '0' && s[1] <= '9' {
			msg = "invalid octal number"
		} else if len(s) > 1 && s[0] == '0' && s[1] == 'x' {
			msg = "invalid hex number"
		}
		r.diag(false, "%s: %s", s, msg)
	case overflow:
		r.diag(true, "warning: %s: Numerical result out of range", s)
	}
}

// ldouble is an x87 80-bit long double, the type both printfs convert
// floating arguments to: a 64-bit mantissa and exponents to ±16383.
type ldouble struct {
	f        big.Float // the magnitude, 64-bit precision; zero keeps its sign
	neg      bool
	inf, nan bool
}

const (
	ldPrec   = 64
	ldMaxExp = 16384  // big.Float exponent (mant in [0.5,1)) of the largest
	ldMinExp = -16381 // ... and of the smallest normal
	ldSubExp = -16445 // 2^ldSubExp is the smallest subnormal
	// maxDigits caps the significant digits kept from an argument; the
	// rest only decides rounding, so it is folded into one sticky digit.
	maxDigits = 1200
)

// strtold is glibc's strtold for the C locale: the value, where parsing
// stopped (0: no number), and whether it over- or underflowed.
func strtold(s string) (x ldouble, end int, erange bool) {
	x.f.SetPrec(ldPrec)
	i := 0
	for i < len(s) && cSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		x.neg = s[i] == '-'
		i++
	}
	rest := strings.ToLower(s[i:min(len(s), i+8)])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		x.inf = true
		return x, i + 8, false
	case strings.HasPrefix(rest, "inf"):
		x.inf = true
		return x, i + 3, false
	case strings.HasPrefix(rest, "nan"):
		x.nan = true
		i += 3
		if i < len(s) && s[i] == '(' {
			j := i + 1
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				i = j + 1
			}
		}
		return x, i, false
	}
	hex := i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') &&
		(i+2 < len(s) && isHex(s[i+2]) || i+3 < len(s) && s[i+2] == '.' && isHex(s[i+3]))
	if hex {
		i += 2
	}
	digit := func(c byte) bool { return c >= '0' && c <= '9' || hex && isHex(c) }
	var mant strings.Builder
	nd, frac, sticky := 0, 0, false // digits kept, of them after the point
	start, seen, dot := i, false, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		if !digit(c) {
			break
		}
		seen = true
		if nd == 0 && c == '0' {
			if dot {
				frac++
			}
			continue
		}
		if nd < maxDigits {
			mant.WriteByte(c)
			nd++
			if dot {
				frac++
			}
		} else {
			if c != '0' {
				sticky = true
			}
			if !dot {
				frac-- // a dropped digit before the point scales the rest
			}
		}
	}
	if !seen {
		_ = start
		return ldouble{}, 0, false
	}
	// The exponent, when digits follow its letter.
	exp := int64(0)
	if i < len(s) && (!hex && (s[i] == 'e' || s[i] == 'E') || hex && (s[i] == 'p' || s[i] == 'P')) {
		j := i + 1
		eneg := false
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			eneg = s[j] == '-'
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
				if exp < 1<<40 {
					exp = exp*10 + int64(s[j]-'0')
				}
			}
			if eneg {
				exp = -exp
			}
			i = j
		}
	}
	end = i
	if nd == 0 {
		x.f.SetInt64(0)
		return x, end, false
	}
	if sticky {
		mant.WriteByte('1')
		frac++
	}
	// value = 0.MANT × base^(nd) × base^-frac × (10^exp or 2^exp)
	var scale int64
	if hex {
		scale = exp - 4*int64(frac)
	} else {
		scale = exp - int64(frac)
	}
	// Far beyond the range, the answer is known without computing it.
	digits := int64(mant.Len())
	if hex {
		digits *= 4
	}
	if hex && scale+digits > 4*ldMaxExp || !hex && scale+digits > 5000 {
		x.inf = true
		return x, end, true
	}
	if hex && scale+digits < ldSubExp-8 || !hex && scale+digits < -5000 {
		x.f.SetInt64(0)
		return x, end, true
	}
	var lit string
	if hex {
		lit = "0x" + mant.String() + "p" + itoa(scale)
	} else {
		lit = mant.String() + "e" + itoa(scale)
	}
	// Parse with extra precision, then round once to the long double.
	var f big.Float
	f.SetPrec(ldPrec + 64)
	if _, _, err := f.Parse(lit, 0); err != nil {
		return ldouble{}, 0, false
	}
	e := f.MantExp(nil)
	switch {
	case e > ldMaxExp:
		x.inf = true
		return x, end, true
	case e < ldMinExp:
		// Subnormal: fewer bits are left above 2^ldSubExp.
		bits := e - ldSubExp
		if bits <= 0 {
			x.f.SetInt64(0)
			return x, end, true
		}
		x.f.SetPrec(uint(bits)).Set(&f)
		x.f.SetPrec(ldPrec)
		// glibc reports the underflow only when the value was rounded.
		return x, end, x.f.Cmp(&f) != 0
	}
	x.f.Set(&f)
	if x.f.MantExp(nil) > ldMaxExp { // rounding carried out of the range
		x.inf = true
		return x, end, true
	}
	return x, end, false
}

func itoa(n int64) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// floatArg is one floating argument as the dialect reads it.
func (r *run) floatArg(s string) ldouble {
	if len(s) >= 1 && (s[0] == '\'' || s[0] == '"') {
		if v, ok := r.charCode(s); ok {
			var x ldouble
			x.f.SetPrec(ldPrec).SetInt64(v)
			return x
		}
	}
	x, end, erange := strtold(s)
	r.numberDiag(s, end, erange)
	return x
}
