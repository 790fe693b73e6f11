package bc

// The -l math library (s c a l e j), computed natively: each function
// works in fixed point with guard digits beyond the caller's scale and
// truncates the result to scale digits, which is what GNU bc's library
// prints (its own series also carry guard digits and end in a truncating
// division).

import (
	"math/big"
)

const guard = 12

// fixed is a value times 10^p.
type fixed struct {
	v *big.Int
	p int
}

// toFixed is a at precision p, in a big.Int of its own (callers modify it).
func toFixed(a num, p int) fixed { return fixed{new(big.Int).Set(a.rescale(p).v), p} }

// mulP is a*b for values at precision p.
func mulP(a, b *big.Int, p int) *big.Int {
	r := new(big.Int).Mul(a, b)
	return r.Quo(r, pow10(p))
}

// divP is a/b for values at precision p.
func divP(p int, a, b *big.Int) *big.Int {
	r := new(big.Int).Mul(a, pow10(p))
	return r.Quo(r, b)
}

// result truncates v (at precision p) to the caller's scale.
func result(v *big.Int, p, scale int) num {
	return num{v: new(big.Int).Quo(v, pow10(p-scale)), s: scale}
}

func mathlib() map[string]*funcDef {
	one := func(name string, f func(in *interp, x num) (num, error)) *funcDef {
		return &funcDef{name: name, params: []param{{name: "x"}}, native: func(in *interp, a []num) (num, error) {
			if err := in.ctx.Err(); err != nil {
				return num{}, err
			}
			return f(in, a[0])
		}}
	}
	return map[string]*funcDef{
		"e": one("e", func(in *interp, x num) (num, error) { return expNum(x, in.scale) }),
		"l": one("l", func(in *interp, x num) (num, error) { return lnNum(x, in.scale) }),
		"s": one("s", func(in *interp, x num) (num, error) { return sinCos(x, in.scale, false) }),
		"c": one("c", func(in *interp, x num) (num, error) { return sinCos(x, in.scale, true) }),
		"a": one("a", func(in *interp, x num) (num, error) { return atanNum(x, in.scale) }),
		"j": {name: "j", params: []param{{name: "n"}, {name: "x"}}, native: func(in *interp, a []num) (num, error) {
			return besselJ(a[0], a[1], in.scale)
		}},
	}
}

func expNum(x num, scale int) (num, error) {
	if x.isZero() {
		return oneNum.rescale(scale), nil
	}
	// e^x has about x*0.4343 integer digits.
	xf, _ := new(big.Float).SetInt(x.v).Float64()
	for i := 0; i < x.s; i++ {
		xf /= 10
	}
	if xf*0.4343 > MaxDigits {
		return num{}, &limitError{"e(x): result too long"}
	}
	neg := x.sign() < 0
	if neg {
		x = num{v: new(big.Int).Neg(x.v), s: x.s}
		if xf*-0.4343 > float64(scale+guard) {
			return zeroNum.rescale(0), nil
		}
	}
	// halve until below 1/2, sum the series, square back
	k := 0
	for t := xf; t > 0.5 || t < -0.5; t /= 2 {
		k++
	}
	intDigits := 1
	if !neg {
		intDigits = int(xf*0.4343) + 1
	}
	p := scale + guard + k/3 + intDigits
	if neg {
		p += int(-xf*0.4343) + 1
	}
	f := fixed{p: p}
	r := toFixed(x, p).v
	r.Quo(r, new(big.Int).Lsh(big.NewInt(1), uint(k)))
	unit := pow10(p)
	sum := new(big.Int).Set(unit)
	term := new(big.Int).Set(unit)
	for n := int64(1); ; n++ {
		term = mulP(term, r, f.p)
		term.Quo(term, big.NewInt(n))
		if term.Sign() == 0 {
			break
		}
		sum.Add(sum, term)
	}
	for i := 0; i < k; i++ {
		sum = mulP(sum, sum, f.p)
	}
	if neg {
		sum = divP(f.p, unit, sum)
	}
	return result(sum, p, scale), nil
}

func lnNum(x num, scale int) (num, error) {
	if x.sign() <= 0 {
		// GNU bc's library answers (1-10^scale) for l(0) and below.
		return sub(oneNum, num{v: pow10(scale)}).rescale(scale), nil
	}
	if cmp(x, oneNum) == 0 {
		return zeroNum, nil
	}
	p := scale + guard + 2*len(x.trunc().String())
	f := fixed{p: p}
	y := toFixed(x, p).v
	unit := pow10(p)
	// square roots bring y near 1: ln x = 2^k ln(x^(1/2^k))
	k := 0
	lo, hi := divP(f.p, big.NewInt(9), big.NewInt(10)), divP(f.p, big.NewInt(11), big.NewInt(10))
	for y.Cmp(lo) < 0 || y.Cmp(hi) > 0 {
		y = new(big.Int).Sqrt(new(big.Int).Mul(y, unit))
		k++
		if k%3 == 0 {
			// each halving costs the result a bit: widen and redo
			p++
			unit = pow10(p)
			y.Mul(y, bigTen)
			lo.Mul(lo, bigTen)
			hi.Mul(hi, bigTen)
			f.p = p
		}
	}
	// ln y = 2 atanh(z), z = (y-1)/(y+1)
	z := divP(f.p, new(big.Int).Sub(y, unit), new(big.Int).Add(y, unit))
	z2 := mulP(z, z, f.p)
	sum := new(big.Int).Set(z)
	pw := new(big.Int).Set(z)
	for n := int64(3); ; n += 2 {
		pw = mulP(pw, z2, f.p)
		t := new(big.Int).Quo(pw, big.NewInt(n))
		if t.Sign() == 0 {
			break
		}
		sum.Add(sum, t)
	}
	sum.Lsh(sum, uint(k+1))
	return result(sum, p, scale), nil
}

// piFixed is pi at precision p (Machin's formula).
func piFixed(p int) *big.Int {
	f := fixed{p: p + 5}
	at := func(inv int64) *big.Int { // atan(1/inv)
		unit := pow10(f.p)
		x := new(big.Int).Quo(unit, big.NewInt(inv))
		x2 := big.NewInt(inv * inv)
		sum := new(big.Int).Set(x)
		for n, sign := int64(3), -1; ; n, sign = n+2, -sign {
			x.Quo(x, x2)
			t := new(big.Int).Quo(x, big.NewInt(n))
			if t.Sign() == 0 {
				break
			}
			if sign < 0 {
				sum.Sub(sum, t)
			} else {
				sum.Add(sum, t)
			}
		}
		return sum
	}
	pi := new(big.Int).Mul(at(5), big.NewInt(16))
	pi.Sub(pi, new(big.Int).Mul(at(239), big.NewInt(4)))
	return pi.Quo(pi, pow10(5))
}

func sinCos(x num, scale int, cos bool) (num, error) {
	if x.isZero() {
		if cos {
			return oneNum.rescale(scale), nil
		}
		return zeroNum, nil
	}
	id := len(x.trunc().String())
	if id > MaxDigits/2 {
		return num{}, &limitError{"argument too large"}
	}
	p := scale + guard + id
	f := fixed{p: p}
	r := toFixed(x, p).v
	// reduce to [-pi, pi]
	pi := piFixed(p + id)
	pi.Quo(pi, pow10(id))
	twoPi := new(big.Int).Lsh(pi, 1)
	q := new(big.Int).Quo(r, twoPi)
	r.Sub(r, q.Mul(q, twoPi))
	if r.Cmp(pi) > 0 {
		r.Sub(r, twoPi)
	} else if r.Cmp(new(big.Int).Neg(pi)) < 0 {
		r.Add(r, twoPi)
	}
	unit := pow10(p)
	r2 := mulP(r, r, f.p)
	var sum, term *big.Int
	var n int64
	if cos {
		sum, term, n = new(big.Int).Set(unit), new(big.Int).Set(unit), 0
	} else {
		sum, term, n = new(big.Int).Set(r), new(big.Int).Set(r), 1
	}
	for {
		term = mulP(term, r2, f.p)
		term.Quo(term, big.NewInt((n+1)*(n+2)))
		term.Neg(term)
		n += 2
		if term.Sign() == 0 {
			break
		}
		sum.Add(sum, term)
	}
	return result(sum, p, scale), nil
}

func atanNum(x num, scale int) (num, error) {
	if x.isZero() {
		return zeroNum, nil
	}
	p := scale + guard
	f := fixed{p: p}
	unit := pow10(p)
	neg := x.sign() < 0
	if neg {
		x = num{v: new(big.Int).Neg(x.v), s: x.s}
	}
	if len(x.trunc().String()) > p {
		// atan of a huge value is pi/2 to every digit kept
		r := piFixed(p)
		r.Rsh(r, 1)
		if neg {
			r.Neg(r)
		}
		return result(r, p, scale), nil
	}
	y := toFixed(x, p).v
	inv := y.Cmp(unit) > 0
	if inv {
		y = divP(f.p, unit, y)
	}
	// halve the angle: atan y = 2 atan(y / (1 + sqrt(1+y^2)))
	k := 0
	small := new(big.Int).Quo(unit, big.NewInt(10))
	for y.Cmp(small) > 0 {
		s := new(big.Int).Add(unit, mulP(y, y, f.p))
		s.Sqrt(s.Mul(s, unit))
		y = divP(f.p, y, s.Add(s, unit))
		k++
	}
	y2 := mulP(y, y, f.p)
	sum := new(big.Int).Set(y)
	pw := new(big.Int).Set(y)
	for n, sign := int64(3), -1; ; n, sign = n+2, -sign {
		pw = mulP(pw, y2, f.p)
		t := new(big.Int).Quo(pw, big.NewInt(n))
		if t.Sign() == 0 {
			break
		}
		if sign < 0 {
			sum.Sub(sum, t)
		} else {
			sum.Add(sum, t)
		}
	}
	sum.Lsh(sum, uint(k))
	if inv {
		half := piFixed(p)
		half.Rsh(half, 1)
		sum.Sub(half, sum)
	}
	if neg {
		sum.Neg(sum)
	}
	return result(sum, p, scale), nil
}

func besselJ(nn, x num, scale int) (num, error) {
	n := nn.int64Of()
	flip := false
	if n < 0 {
		n = -n
		flip = n%2 == 1
	}
	if n > 10_000 {
		return num{}, &limitError{"j(n,x): order too large"}
	}
	xf, _ := new(big.Float).SetInt(x.trunc()).Float64()
	if xf < 0 {
		xf = -xf
	}
	if xf > 50_000 {
		return num{}, &limitError{"j(n,x): argument too large"}
	}
	// the alternating series cancels about |x|*0.87 digits
	p := scale + guard + int(xf*0.87) + 1
	f := fixed{p: p}
	h := toFixed(x, p).v
	h.Quo(h, big.NewInt(2)) // x/2
	h2 := mulP(h, h, f.p)
	// first term: (x/2)^n / n!
	term := pow10(p)
	for i := int64(1); i <= n; i++ {
		term = mulP(term, h, f.p)
		term.Quo(term, big.NewInt(i))
	}
	sum := new(big.Int).Set(term)
	for k := int64(1); ; k++ {
		term = mulP(term, h2, f.p)
		term.Quo(term, big.NewInt(k*(k+n)))
		term.Neg(term)
		if term.Sign() == 0 {
			break
		}
		sum.Add(sum, term)
	}
	if flip {
		sum.Neg(sum)
	}
	return result(sum, p, scale), nil
}
