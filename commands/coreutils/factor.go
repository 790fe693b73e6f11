package coreutils

// factor: prime factors of each operand, or of each word of stdin.

import (
	"bufio"
	"context"
	"io"
	"math/big"
	"math/bits"
	"sort"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
)

var factorSpec = getopt.Spec{}

// Factor is factor(1). Numbers past 64 bits factor over math/big, as GNU's
// does over GMP.
func Factor(ctx context.Context, inv *commands.Invocation) int {
	r := begin(ctx, inv)
	_, nums, code, ok := r.parse(&factorSpec)
	if !ok {
		return code
	}
	if len(nums) > 0 {
		for _, s := range nums {
			if r.stopped() {
				break
			}
			r.factorOne(s)
		}
		return r.done()
	}
	sc := bufio.NewScanner(inv.Stdin)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	sc.Split(bufio.ScanWords)
	for sc.Scan() && !r.stopped() {
		r.factorOne(sc.Text())
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		r.errorf("%s", commands.Strerror(err))
	}
	return r.done()
}

// factorOne prints "N: P P ..." or GNU's complaint about s. GNU takes
// leading blanks and one '+', nothing after the digits.
func (r *run) factorOne(s string) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	t = strings.TrimPrefix(t, "+")
	if t == "" || strings.Trim(t, "0123456789") != "" {
		r.errorf("%s is not a valid positive integer", r.q(s))
		return
	}
	n, ok := new(big.Int).SetString(t, 10)
	if !ok {
		r.errorf("%s is not a valid positive integer", r.q(s))
		return
	}
	r.out.WriteString(n.String())
	r.out.WriteByte(':')
	var fs []*big.Int
	if n.IsUint64() {
		for _, p := range factor64(n.Uint64()) {
			fs = append(fs, new(big.Int).SetUint64(p))
		}
	} else {
		fs = factorBig(r.ctx, n)
	}
	for _, p := range fs {
		r.out.WriteByte(' ')
		r.out.WriteString(p.String())
	}
	r.out.WriteByte('\n')
}

// factor64 returns n's prime factors in ascending order (none for 0 and 1).
func factor64(n uint64) []uint64 {
	var fs []uint64
	if n < 2 {
		return nil
	}
	for _, p := range []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		for n%p == 0 {
			fs = append(fs, p)
			n /= p
		}
	}
	for p := uint64(41); p < 1000 && p*p <= n; p += 2 {
		for n%p == 0 {
			fs = append(fs, p)
			n /= p
		}
	}
	var split func(m uint64)
	split = func(m uint64) {
		if m == 1 {
			return
		}
		if isPrime64(m) {
			fs = append(fs, m)
			return
		}
		d := rho64(m)
		split(d)
		split(m / d)
	}
	split(n)
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	return fs
}

func mulmod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, rem := bits.Div64(hi%m, lo, m)
	return rem
}

func powmod(a, e, m uint64) uint64 {
	r := uint64(1)
	a %= m
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = mulmod(r, a, m)
		}
		a = mulmod(a, a, m)
	}
	return r
}

// isPrime64 is Miller-Rabin with the bases that are exact below 2^64.
func isPrime64(n uint64) bool {
	if n < 2 {
		return false
	}
	for _, p := range []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		if n%p == 0 {
			return n == p
		}
	}
	d, s := n-1, 0
	for d%2 == 0 {
		d /= 2
		s++
	}
next:
	for _, a := range []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		x := powmod(a, d, n)
		if x == 1 || x == n-1 {
			continue
		}
		for i := 1; i < s; i++ {
			x = mulmod(x, x, n)
			if x == n-1 {
				continue next
			}
		}
		return false
	}
	return true
}

// rho64 finds a nontrivial factor of the odd composite n (Pollard-Brent).
func rho64(n uint64) uint64 {
	for c := uint64(1); ; c++ {
		x, y, g := uint64(2), uint64(2), uint64(1)
		for g == 1 {
			x = (mulmod(x, x, n) + c) % n
			y = (mulmod(y, y, n) + c) % n
			y = (mulmod(y, y, n) + c) % n
			d := x - y
			if x < y {
				d = y - x
			}
			g = gcd64(d, n)
		}
		if g != n {
			return g
		}
	}
}

func gcd64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// factorBig factors n > 2^64 - 1: small primes by division, the rest by
// Pollard rho over math/big, stopping (with what it has) when ctx ends.
func factorBig(ctx context.Context, n *big.Int) []*big.Int {
	var fs []*big.Int
	n = new(big.Int).Set(n)
	m := new(big.Int)
	for p := int64(2); p < 10000; p++ {
		bp := big.NewInt(p)
		for m.Mod(n, bp).Sign() == 0 {
			fs = append(fs, bp)
			n = new(big.Int).Quo(n, bp)
		}
	}
	var split func(m *big.Int)
	split = func(m *big.Int) {
		if m.Cmp(big.NewInt(1)) == 0 {
			return
		}
		if m.IsUint64() {
			for _, p := range factor64(m.Uint64()) {
				fs = append(fs, new(big.Int).SetUint64(p))
			}
			return
		}
		if m.ProbablyPrime(25) || ctx.Err() != nil {
			fs = append(fs, m)
			return
		}
		d := rhoBig(ctx, m)
		if d == nil {
			fs = append(fs, m)
			return
		}
		split(d)
		split(new(big.Int).Quo(m, d))
	}
	split(n)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Cmp(fs[j]) < 0 })
	return fs
}

func rhoBig(ctx context.Context, n *big.Int) *big.Int {
	one := big.NewInt(1)
	for c := int64(1); ctx.Err() == nil; c++ {
		bc := big.NewInt(c)
		x, y, g := big.NewInt(2), big.NewInt(2), big.NewInt(1)
		d := new(big.Int)
		step := func(v *big.Int) { v.Mul(v, v).Add(v, bc).Mod(v, n) }
		for i := 0; g.Cmp(one) == 0; i++ {
			if i%1024 == 0 && ctx.Err() != nil {
				return nil
			}
			step(x)
			step(y)
			step(y)
			g.GCD(nil, nil, d.Sub(x, y).Abs(d), n)
		}
		if g.Cmp(n) != 0 {
			return g
		}
	}
	return nil
}
