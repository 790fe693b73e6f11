package awk_test

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// gawkCases were recorded with gawk 5.2 (Debian), TZ=UTC: the gawk
// extensions warren's awk provides on top of GoAWK, and POSIX's FS timing.
var gawkCases = []struct{ prog, in, want string }{
	{"{FS=\",\"; print $1}", "a,b c,d\ne,f g\n", "a,b\ne\n"},
	{"NR==1{FS=\":\"} {print $1}", "a:b\nc:d\n", "a:b\nc\n"},
	{"{print $1; FS=\",\"}", "a b\nc,d\n", "a\nc\n"},
	{"{FS=\",\"; $0=\"x,y\"; print $1}", "a b\n", "x\n"},
	{"{print and(12, 10), or(12, 10), xor(12, 10), lshift(1, 4), rshift(256, 2), compl(0)}", "\n", "8 14 6 16 64 9007199254740991\n"},
	{"{print and(7, 3, 1), or(1, 2, 4), xor(5, 1, 1)}", "\n", "1 7 5\n"},
	{"{print strtonum(\"0x1A\"), strtonum(\"017\"), strtonum(\"12abc\"), strtonum(\" 3.5\")}", "\n", "26 15 12 3.5\n"},
	{"{print gensub(/o/, \"0\", \"g\")}", "hello world\n", "hell0 w0rld\n"},
	{"{print gensub(/(l+)o/, \"<\\\\1>\", 1)}", "hello world\n", "he<ll> world\n"},
	{"{print gensub(\"o\", \"[&]\", \"g\", $2)}", "hello world\n", "w[o]rld\n"},
	{"{x = gensub(/w(or)/, \"\\\\1-\\\\0\", \"G\"); print x; print $0}", "hello world\n", "hello or-world\nhello world\n"},
	{"{print gensub(/o/, \"O\", 2)}", "foo boo\n", "foO boo\n"},
	{"{print gensub(/[0-9]+/, \"(&)\", \"g\")}", "a1b22c333\n", "a(1)b(22)c(333)\n"},
	{"BEGIN{n = split(\"c a b\", arr, \" \"); asort(arr); for (i=1;i<=n;i++) printf \"%s \", arr[i]; print \"\"}", "", "a b c \n"},
	{"BEGIN{a[\"x\"]=3; a[\"y\"]=1; a[\"z\"]=2; n = asort(a, b); for (i=1;i<=n;i++) printf \"%s \", b[i]; print n, length(a)}", "", "1 2 3 3 3\n"},
	{"BEGIN{a[\"x\"]=3; a[\"b\"]=1; a[\"m\"]=2; n = asorti(a, b); for (i=1;i<=n;i++) printf \"%s \", b[i]; print n}", "", "b m x 3\n"},
	{"BEGIN{a[1]=10; a[2]=9; a[3]=\"abc\"; a[4]=100; n = asort(a); for (i=1;i<=n;i++) printf \"%s \", a[i]; print \"\"}", "", "9 10 100 abc \n"},
	{"{c[$1]++} END{n = asorti(c, k); for (i=1;i<=n;i++) print k[i], c[k[i]]}", "pear\napple\nfig\napple\n", "apple 2\nfig 1\npear 1\n"},
	{"BEGIN{print strftime(\"%Y-%m-%d %H:%M:%S\", 86400*365, 1)}", "", "1971-01-01 00:00:00\n"},
	{"BEGIN{print mktime(\"2024 01 02 03 04 05\")}", "", "1704164645\n"},
	{"BEGIN{t = systime(); print (t > 1600000000)}", "", "1\n"},
	// a blank between a builtin and its "(" (awk allows it; the native
	// functions these become do not): BusyBox's gcc-options test
	{"BEGIN { n = 2; s = \"hello\"; print substr (s, 2, n), substr (s, n); print split (\"a:b:c\", parts, \":\"), parts[3]; print match (\"xyz\", /y/), RSTART, RLENGTH }", "", "el ello\n3 c\n2 2 1\n"},
	// gawk's hex and octal constants in program text (data stays decimal)
	{"BEGIN{print 018, 0x1F, 0XaB, 00, 0.5, 010.5, 1e3, 0x; x=5; print 0 x}", "", "18 31 171 0 0.5 10.5 1000 0\n05\n"},
	{"BEGIN { print 011 + 1; print -0x10; print 0x10 0x10; print or(0xffffffff,1) }", "", "10\n-16\n1616\n4294967295\n"},
	{"{print $011}", "1 2 3 4 5 6 7 8 9 10 11\n", "9\n"},
	{"BEGIN{print \"0x10\", \"011\"}", "", "0x10 011\n"},
	{"{print /0x1/, (011 == 9)}", "0x1\n", "1 1\n"},
}

func TestGawkExtensions(t *testing.T) {
	tab := commands.Table{}
	awk.Register(tab)
	for _, tc := range gawkCases {
		files := cmdtest.NewFiles(nil)
		var out, errb strings.Builder
		inv := files.Invocation([]string{"awk", tc.prog}, strings.NewReader(tc.in), &out, &errb)
		inv.Env = []string{"TZ=UTC"}
		if code := tab["awk"](t.Context(), inv); code != 0 || out.String() != tc.want {
			t.Errorf("awk %q: status %d out %q err %q, want %q", tc.prog, code, out.String(), errb.String(), tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"awk", "-e", "BEGIN{x=1}", "-e", "BEGIN{print x+1}"}, "2\n"},
		{[]string{"awk", "--source=BEGIN{print 3}"}, "3\n"},
		{[]string{"awk", "BEGIN{print and(1)}"}, ""},
		// backslash-newline continues a string (mawk and gawk print "ab")
		{[]string{"awk", "BEGIN{print \"a\\\nb\"} # \"c\\\n"}, "ab\n"},
		{[]string{"awk", "BEGIN{print \"x\\\\\"; print \"y\"}"}, "x\\\ny\n"},
	} {
		files := cmdtest.NewFiles(nil)
		var out, errb strings.Builder
		inv := files.Invocation(tc.args, strings.NewReader(""), &out, &errb)
		code := tab["awk"](t.Context(), inv)
		if out.String() != tc.want || (tc.want == "") != (code != 0) {
			t.Errorf("%q: status %d out %q err %q, want %q", tc.args, code, out.String(), errb.String(), tc.want)
		}
	}
}
