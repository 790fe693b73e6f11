package coreutils

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The float fast path of sort -n must never disagree with the exact
// digit comparison.
func TestFastFloatAgreesWithDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	gen := func() string {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteByte('-')
		}
		for i := rng.IntN(17); i >= 0; i-- {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		if rng.IntN(2) == 0 {
			b.WriteByte('.')
			for i := rng.IntN(8); i >= 0; i-- {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		return b.String()
	}
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for i := 0; i < n; i++ {
		a, b := gen(), gen()
		if rng.IntN(4) == 0 {
			b = a + "0" // equal values with different spellings
			if !strings.Contains(a, ".") {
				b = "0" + a
			}
		}
		na, ia, fa := numParts([]byte(a))
		nb, ib, fb := numParts([]byte(b))
		want := numCompareParts(na, ia, fa, nb, ib, fb)
		xa, oka := fastFloat(na, ia, fa)
		xb, okb := fastFloat(nb, ib, fb)
		if !oka || !okb || xa == xb {
			continue
		}
		got := 1
		if xa < xb {
			got = -1
		}
		if got != want {
			t.Fatalf("%q vs %q: fast path says %d, digits say %d", a, b, got, want)
		}
	}
}
