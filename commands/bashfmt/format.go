package bashfmt

import (
	"math/big"
	"strconv"
	"strings"
)

// spec is one parsed conversion: glibc's flags, width and precision.
type spec struct {
	minus, plus, space, hash, zero bool
	width                          int // >= 0; a negative * width set minus
	prec                           int // -1: none
	verb                           byte
}

// field writes one converted value: sign and prefix, then zeros up to
// zeros, body, extra zeros (precision past what is computed), tail, padded
// to the width. Nothing large is built in memory.
func (r *run) field(sp *spec, sign, prefix string, zeros int, body string, extra int, tail string, zeroPad bool) {
	n := len(sign) + len(prefix) + zeros + len(body) + extra + len(tail)
	fill := max(sp.width-n, 0)
	if zeroPad && sp.zero && !sp.minus {
		zeros += fill
		fill = 0
	}
	if !sp.minus {
		r.pad(fill, ' ')
	}
	r.writeString(sign)
	r.writeString(prefix)
	r.pad(zeros, '0')
	r.writeString(body)
	r.pad(extra, '0')
	r.writeString(tail)
	if sp.minus {
		r.pad(fill, ' ')
	}
}

// str writes s as %s does: precision cuts it (in bytes), width pads it.
func (r *run) str(sp *spec, s string) {
	if sp.prec >= 0 && sp.prec < len(s) {
		s = s[:sp.prec]
	}
	r.field(sp, "", "", 0, s, 0, "", false)
}

// integer writes v (the bits of an int64 for d and i) as verb.
func (r *run) integer(sp *spec, v uint64) {
	sign, prefix := "", ""
	mag := v
	switch sp.verb {
	case 'd', 'i':
		if int64(v) < 0 {
			sign, mag = "-", -v
		} else if sp.plus {
			sign = "+"
		} else if sp.space {
			sign = " "
		}
	}
	var digits string
	switch sp.verb {
	case 'o':
		digits = strconv.FormatUint(mag, 8)
	case 'x':
		digits = strconv.FormatUint(mag, 16)
	case 'X':
		digits = strings.ToUpper(strconv.FormatUint(mag, 16))
	default:
		digits = strconv.FormatUint(mag, 10)
	}
	if sp.prec == 0 && mag == 0 {
		digits = ""
	}
	zeros := 0
	if sp.prec > len(digits) {
		zeros = sp.prec - len(digits)
	}
	if sp.hash {
		switch {
		case sp.verb == 'o' && zeros == 0 && !strings.HasPrefix(digits, "0"):
			zeros = 1
		case sp.verb == 'x' && mag != 0:
			prefix = "0x"
		case sp.verb == 'X' && mag != 0:
			prefix = "0X"
		}
	}
	r.field(sp, sign, prefix, zeros, digits, 0, "", sp.prec < 0)
}

// Digits past these are computed as zeros: a long double's exact decimal
// expansion has no more than about 16,450 digits after the point and
// 11,500 significant ones.
const (
	maxFracDigits = 16500
	maxSigDigits  = 12000
)

// float writes x as verb (e f g a and their capitals).
func (r *run) float(sp *spec, x ldouble) {
	upper := sp.verb >= 'A' && sp.verb <= 'Z'
	sign := ""
	switch {
	case x.neg:
		sign = "-"
	case sp.plus:
		sign = "+"
	case sp.space:
		sign = " "
	}
	if x.inf || x.nan {
		s := "inf"
		if x.nan {
			s = "nan"
		}
		if upper {
			s = strings.ToUpper(s)
		}
		r.field(sp, sign, "", 0, s, 0, "", false)
		return
	}
	prec := sp.prec
	switch sp.verb {
	case 'f', 'F':
		if prec < 0 {
			prec = 6
		}
		p := min(prec, maxFracDigits)
		body := x.f.Text('f', p)
		if prec == 0 && sp.hash {
			body += "."
		}
		r.field(sp, sign, "", 0, body, prec-p, "", true)
	case 'e', 'E':
		if prec < 0 {
			prec = 6
		}
		p := min(prec, maxSigDigits)
		mant, exp := eDigits(&x.f, p)
		if prec == 0 && sp.hash {
			mant += "."
		}
		r.field(sp, sign, "", 0, mant, prec-p, expText(exp, upper), true)
	case 'g', 'G':
		if prec < 0 {
			prec = 6
		}
		if prec == 0 {
			prec = 1
		}
		p := min(prec, maxSigDigits)
		mant, exp := eDigits(&x.f, p-1)
		digits := strings.Replace(mant, ".", "", 1)
		var body, tail string
		extra := 0
		if exp < -4 || exp >= prec {
			body, tail = mant, expText(exp, upper)
		} else if exp >= 0 {
			body = digits[:min(exp+1, len(digits))] + strings.Repeat("0", max(exp+1-len(digits), 0))
			if frac := digits[min(exp+1, len(digits)):]; frac != "" || sp.hash {
				body += "." + frac
			}
		} else {
			body = "0." + strings.Repeat("0", -exp-1) + digits
		}
		if sp.hash {
			extra = prec - p
			if !strings.Contains(body, ".") {
				body += "."
			}
		} else if strings.Contains(body, ".") {
			body = strings.TrimRight(body, "0")
			body = strings.TrimSuffix(body, ".")
		}
		r.field(sp, sign, "", 0, body, extra, tail, true)
	case 'a', 'A':
		body, tail := hexFloat(&x.f, prec, sp.hash)
		prefix := "0x"
		if upper {
			body, tail, prefix = strings.ToUpper(body), strings.ToUpper(tail), "0X"
		}
		r.field(sp, sign, prefix, 0, body, max(prec-15, 0), tail, true)
	}
}

// eDigits is f (not negative) rounded to 1+p significant digits:
// "d.ddd" and the decimal exponent.
func eDigits(f *big.Float, p int) (string, int) {
	s := f.Text('e', p)
	i := strings.LastIndexAny(s, "e")
	exp, _ := strconv.Atoi(s[i+1:])
	return s[:i], exp
}

// expText is C's exponent: e, sign, at least two digits.
func expText(exp int, upper bool) string {
	e := "e"
	if upper {
		e = "E"
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	d := strconv.Itoa(exp)
	if len(d) < 2 {
		d = "0" + d
	}
	return e + sign + d
}

// hexFloat is glibc's %La for an x87 long double: the 64-bit mantissa's
// top four bits before the point ("0x8p-3" is 1), trailing zeros dropped
// unless a precision asks for digits, rounded to nearest even.
func hexFloat(f *big.Float, prec int, hash bool) (body, tail string) {
	if f.Sign() == 0 {
		body = "0"
		if prec > 0 {
			body += "." + strings.Repeat("0", min(prec, 15))
		} else if hash {
			body += "."
		}
		return body, "p+0"
	}
	var mant big.Float
	exp := f.MantExp(&mant) // f = mant × 2^exp, mant in [0.5, 1)
	m, _ := new(big.Float).SetMantExp(&mant, 64).Uint64()
	exp -= 4
	if exp+4 < ldMinExp {
		// Subnormal: glibc shows the raw mantissa against 2^-16385.
		m, _ = new(big.Float).SetMantExp(&mant, exp+4-ldSubExp).Uint64()
		exp = -16385
	}
	carry := false
	if prec >= 0 && prec < 15 {
		drop := uint(60 - 4*prec)
		half := uint64(1) << (drop - 1)
		rest := m & (1<<drop - 1)
		m >>= drop
		if rest > half || rest == half && m&1 == 1 {
			m++
		}
		// Rounding 0xf.f up gives 0x10: glibc writes it 0x1 with the
		// exponent four higher.
		carry = m>>(4*prec) >= 0x10
		m <<= drop
	}
	hexd := strconv.FormatUint(m, 16)
	hexd = strings.Repeat("0", 16-len(hexd)) + hexd
	lead, frac := hexd[:1], hexd[1:]
	if carry {
		lead, frac, exp = "1", strings.Repeat("0", 15), exp+4
	}
	switch {
	case prec < 0:
		frac = strings.TrimRight(frac, "0")
	case prec <= 15:
		frac = frac[:prec]
	}
	body = lead
	if frac != "" || hash {
		body += "." + frac
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return body, "p" + sign + strconv.Itoa(exp)
}
