package bashfmt

import (
	"context"
	"strings"
	"testing"
)

// boundedWriter counts what arrives.
type boundedWriter struct{ n int }

func (w *boundedWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}

// FuzzPrintf: no format and arguments make printf panic, and the output
// stays within what Charge allowed (plus one piece).
func FuzzPrintf(f *testing.F) {
	for _, c := range printfCases {
		if len(c.format)+len(strings.Join(c.args, "")) < 200 {
			f.Add(c.format, strings.Join(c.args, "\x00"), c.only == GNU && !c.both)
		}
	}
	f.Fuzz(func(t *testing.T, format, args string, gnu bool) {
		const budget = 1 << 16
		d := Bash
		if gnu {
			d = GNU
		}
		used := 0
		p := Printer{Dialect: d, Warn: func(*Error) {},
			Charge: func(n int) error {
				used += n
				if used > budget {
					return context.DeadlineExceeded // any refusal
				}
				return nil
			}}
		w := &boundedWriter{}
		st, _ := p.Printf(context.Background(), w, format, strings.Split(args, "\x00"))
		if w.n > budget+chunk {
			t.Fatalf("wrote %d bytes past a %d budget", w.n, budget)
		}
		if st != 0 && st != 1 {
			t.Fatalf("status %d", st)
		}
		for _, q := range []func(string) string{QuoteQ, QuoteSingle, QuoteDouble, QuoteANSI, QuoteXtrace, QuoteSet, QuoteAlias, QuoteGNU} {
			if q(args) == "" && args != "" {
				t.Fatalf("empty quoting of %q", args)
			}
		}
		Unescape(format, EchoEscapes)
		Unescape(format, GNUPercentB)
	})
}
