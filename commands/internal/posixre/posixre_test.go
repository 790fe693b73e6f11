package posixre

import (
	"errors"
	"regexp"
	"testing"
)

// Expectations recorded with GNU grep 3.8 (grep -c -G/-E, LC_ALL=C).
var matchCases = []struct {
	pat   string
	ere   bool
	input string
	match bool
}{
	{`a\{2\}`, false, `aa`, true},
	{`a\{2\}`, false, `a`, false},
	{`a{2}`, true, `aa`, true},
	{`a{2}`, false, `a{2}`, true},
	{`\(ab\)\{2\}`, false, `abab`, true},
	{`(ab){2}`, true, `abab`, true},
	{`a\|b`, false, `b`, true},
	{`a|b`, false, `a|b`, true},
	{`a|b`, true, `b`, true},
	{`a\+`, false, `aa`, true},
	{`a+`, false, `a+`, true},
	{`a+`, true, `aa`, true},
	{`a\?b`, false, `b`, true},
	{`^*a`, false, `*a`, true},
	{`*a`, false, `*a`, true},
	{`a**`, false, `a`, true},
	{`[]]`, false, `]`, true},
	{`[^]]`, false, `]`, false},
	{`[a-]`, false, `-`, true},
	{`[\]`, false, `\`, true},
	{`[[:upper:]]`, false, `A`, true},
	{`[[:upper:]]`, false, `a`, false},
	{`a^`, false, `a^`, true},
	{`$a`, false, `$a`, true},
	{`a$b`, false, `a$b`, true},
	{`\<ab\>`, false, `x ab y`, true},
	{`\<ab\>`, false, `xab`, false},
	{`\bab`, false, `ab`, true},
	{`a\.b`, false, `axb`, false},
	{`a.b`, false, `axb`, true},
	{`\(^a\)`, false, `a`, true},
	{`x\(^a\)`, false, `x^a`, false},
	{`a{,2}`, true, `a`, true},
	{`{1}`, true, `{1}`, true},
	{`a{1`, true, `a{1`, true},
	{`()`, true, `x`, true},
	{`a\{1,\}b`, false, `aaab`, true},
	{`[.]`, false, `x`, false},
	{`[.]`, false, `.`, true},
	{`\w\+`, false, `ab_1`, true},
	{`\s`, false, `a b`, true},
	{`\S`, false, ` `, false},
	{`[[:space:]]x`, false, "\tx", true},
	{`a\/b`, false, `a/b`, true},
	{`\$`, false, `$`, true},
	{`\^`, false, `^`, true},
	{`[a\n]`, false, `n`, true},
}

func TestTranslateMatches(t *testing.T) {
	for _, c := range matchCases {
		re, err := Compile(c.pat, c.ere, "")
		if err != nil {
			t.Errorf("%q (ere=%v): %v", c.pat, c.ere, err)
			continue
		}
		if got := re.MatchString(c.input); got != c.match {
			t.Errorf("%q (ere=%v) on %q = %v, want %v (Go: %s)", c.pat, c.ere, c.input, got, c.match, re)
		}
	}
}

func TestTranslateErrors(t *testing.T) {
	for _, c := range []struct {
		pat string
		ere bool
		err string
	}{
		{`\(a\)\1`, false, ErrBackref.Error()},
		{`(a)\1`, true, ErrBackref.Error()},
		{`a\{1`, false, `unmatched \{`},
		{`\(a`, false, `unmatched ( or \(`},
		{`a\)`, false, `unmatched ) or \)`},
		{`[a`, false, `unmatched [, [^, [:, [., or [=`},
		{`[[:nope:]]`, false, `invalid character class`},
		{`a\{2,1\}`, false, `invalid content of \{\}`},
		{`a\{1001\}`, false, `regular expression too big`},
		{`a\`, false, `trailing backslash (\)`},
	} {
		_, err := Translate(c.pat, c.ere)
		if err == nil || err.Error() != c.err {
			t.Errorf("Translate(%q) error = %v, want %q", c.pat, err, c.err)
		}
	}
	if _, err := Translate(`\(a\)\1`, false); !errors.Is(err, ErrBackref) {
		t.Errorf("back-reference error is not ErrBackref: %v", err)
	}
}

// Leftmost-longest, as POSIX requires (Go's default is leftmost-first).
func TestLongest(t *testing.T) {
	re, err := Compile(`a|ab`, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := re.FindString("abc"); got != "ab" {
		t.Fatalf("got %q, want the longest match %q", got, "ab")
	}
}

// Every pattern either translates to valid RE2 or fails with an error:
// never a panic, never a translation Go cannot compile.
func FuzzTranslate(f *testing.F) {
	for _, c := range matchCases {
		f.Add(c.pat, c.ere)
	}
	for _, s := range []string{`a**`, `\(a*\)*`, `x\{1\}\{2\}`, `[[:alpha:]-z]`, `[a-]`, `[]-a]`, `a{1,2}{3}`, `(*a)`, `^*`, `\{1\}`, `[\n]`, `\`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, pat string, ere bool) {
		g, err := Translate(pat, ere)
		if err != nil {
			return
		}
		if _, err := regexp.Compile(g); err != nil {
			t.Fatalf("Translate(%q, ere=%v) = %q, which Go rejects: %v", pat, ere, g, err)
		}
	})
}
