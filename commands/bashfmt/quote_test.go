package bashfmt

import (
	"strings"
	"testing"
)

var quoteValues = []string{"", "a b", "it's", `a"b`, "$x", "~a", "a~b", "x=~", "a:~", "#a", "a#", "a=b", "a,b", "!",
	"%+-./:@_", "a\nb", "\t", "\x01", "\x7f", "é", "\xc3", "\xff\xfe", "日本", "\x1b[0m", `a\b`, "{a}", "if", "*",
	"^", "\u200b", "\u00a0", "a`b", "x;y", "\r", "'", `"`, "=", "a]", "\u0085", "\u2028", "a?b", "x@y", "it's $x",
	"a\tb'c", "\U0010ffff", "\ufeff"}

// Each quoting function against the bash feature it stands for, and
// QuoteGNU against /usr/bin/printf %q.
func TestQuoteReferences(t *testing.T) {
	const script = `for v in "$@"; do
  x=$v
  printf '%q\0' "$v"
  printf '%s\0' "${x@Q}"
  declare -p x | cut -d' ' -f3- | tr -d '\n'; printf '\0'
  alias al="$v"; alias al | tr -d '\n'; printf '\0'
  { set -x; : "$v"; } 2>&1 | tr -d '\n'; printf '\0'
  set | grep -a '^x=' | tr -d '\n'; printf '\0'
done`
	// tr -d '\n' keeps each answer on one record; ours are compared the same way.
	got := reference(t, append([]string{bashPath, "-c", "set +x; " + script, "bash"}, quoteValues...)...)
	fields := strings.Split(got.stdout, "\x00")
	nl := func(s string) string { return strings.ReplaceAll(s, "\n", "") }
	for i, v := range quoteValues {
		if len(fields) < 6*i+6 {
			t.Fatalf("bash printed %d records for %d values: %q", len(fields), len(quoteValues), got.stdout)
		}
		f := fields[6*i : 6*i+6]
		check := func(what, want, ours string) {
			if nl(ours) != want {
				t.Errorf("%s of %q: got %q, want %q", what, v, nl(ours), want)
			}
		}
		check("printf %q", f[0], QuoteQ(v))
		check("${x@Q}", f[1], QuoteSingle(v))
		check("declare -p", f[2], "x="+QuoteDouble(v))
		check("alias", f[3], "alias al="+QuoteAlias(v))
		check("set -x", f[4], "+ : "+QuoteXtrace(v))
		if v != "" || f[5] != "" {
			check("set", f[5], "x="+QuoteSet(v))
		}
		for _, loc := range []string{"C", "C.UTF-8"} {
			// "z" first: no number at all, whatever v is.
			e := reference(t, "/usr/bin/env", "LC_ALL="+loc, gnuPrintf, "%d", "z"+v)
			want := strings.TrimPrefix(strings.TrimSuffix(e.stderr, ": expected a numeric value\n"), gnuPrintf+": ")
			if got := QuoteGNUDiag("z"+v, loc != "C"); got != want {
				t.Errorf("GNU diagnostic quoting of %q in %s: got %q, want %q", "z"+v, loc, got, want)
			}
		}
		g := reference(t, gnuPrintf, "%q", v)
		if QuoteGNU(v) != g.stdout {
			t.Errorf("GNU %%q of %q: got %q, want %q", v, QuoteGNU(v), g.stdout)
		}
	}
}
