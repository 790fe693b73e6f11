package awk_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/awk"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// compatCases were recorded with gawk 5.2.1 (Debian), LC_ALL=C.UTF-8:
// where GoAWK alone answers differently and the wrapper makes it agree
// (the differential harness's awk features found them; see
// conformance/differential/gen_awk.go).
var compatCases = []struct {
	name string
	args []string // after "awk"
	in   string
	out  string
	err  string
	code int
}{
	{"crlf last field keeps \\r", []string{`{print $NF "|"; print NF}`}, "a b\r\nc d \r\n", "b\r|\n2\n\r|\n3\n", "", 0},
	{"plain getline keeps \\r", []string{`NR==1{r = getline; print r, NF, $NF "|"; while ((getline) > 0) n++; print n, NF}`}, "a b\r\nc d\r\ne \r\n", "1 2 d\r|\n1 2\n", "", 0},
	{"split default keeps \\r", []string{`{n = split($0, p); print n, p[n] "|"}`}, "a b\r\n", "2 b\r|\n", "", 0},
	{"substr", []string{`BEGIN{print substr("hello", -1, 3) "|" substr("hello", 1.5, 2.3) "|" substr("hello", 0) "|" substr("hello", -log(0)) "|" substr("hello", 2, -log(0)) "|" substr("日本語", 2)}`}, "", "hel|he|hello||ello|本語\n", "", 0},
	{"substr with variables", []string{`BEGIN{s = "hello"; i = 0; n = 3; a = substr(s, i, n); i = 1.5; b = substr(s, i); i = 2; n = 2.7; c = substr(s, i, n); i = 2; d = substr(s, i, 2); print a "|" b "|" c "|" d}`}, "", "hel|hello|el|el\n", "", 0},
	{"split separators", []string{`BEGIN{n = split(" a  b ", p); print n, p[1]; n = split("a b", q, / /); print n; n = split("a.b", r, /./); print n}`}, "", "2 a\n2\n4\n", "", 0},
	{"match array", []string{`BEGIN{print match("xab", /(a)(c)?(b)/, m), m[0], m[1] "|" m[2] "|" m[3], m[3, "start"], m[3, "length"], RSTART, RLENGTH}`}, "", "2 ab a||b 3 1 2 2\n", "", 0},
	{"for-in integers ascending, as numbers", []string{`BEGIN{a[10]; a[9]; a[1]; a[100]; for (k in a) printf "%s ", k; print ""; for (k in a) if (k < 9.5) print "lt", k}`}, "", "1 9 10 100 \nlt 1\nlt 9\n", "", 0},
	{"for-in: one negative integer key first, then ascending", []string{"BEGIN{a[5]; a[1]; a[10]; a[3]; a[-2]; a[0]; for (k in a) printf \"%s \", k; print \"\"; b[3]; b[40]; b[-7]; b[1]; for (k in b) s = s k \",\"; print s}"}, "", "-2 0 1 3 5 10 \n-7,1,3,40,\n", "", 0},
	{"for-in: string keys in gawk's hash order", []string{"BEGIN{a[\"k\"]; a[\"b\"]; a[\"a\"]; for (k in a) printf \"%s \", k; print \"\"; n = split(\"a b c d e f g h i j k l m n o p q r s t u v w x y z\", p); for (i = 1; i <= n; i++) c[p[i]]; for (k in c) s = s k; print s; d[\"é\"]; d[\"ü\"]; d[\"日本\"]; d[\"x\"]; for (k in d) printf \"%s \", k; print \"\"}"}, "", "k a b \nuhviwjxkylzmnaobpcqdresftg\nx é ü 日本 \n", "", 0},
	{"for-in recursion", []string{`function f(a, d,   k) { for (k in a) { if (d < 1) f(a, d + 1); printf "%s.%s ", d, k } } BEGIN{a[2]; a[1]; f(a, 0); print ""}`}, "", "1.1 1.2 0.1 1.1 1.2 0.2 \n", "", 0},
	{"for-in snapshot", []string{`BEGIN{a[1]; a[2]; a[3]; for (k in a) { delete a[3]; printf "%s ", k }; print length(a)}`}, "", "1 2 3 2\n", "", 0},
	{"gensub: an empty match steps one byte, as gawk", []string{"{print gensub(/x*/, \"-\", \"g\"); print gensub(/é*/, \"<&>\", \"g\"); print gensub(/x*/, \"-\", 3); print gensub(/(x*)/, \"[\\\\1]\", \"g\"); print gensub(/a|/, \"<&>\", \"g\")}"}, "aé日b\n", "-a-\xc3-\xa9-\xe6-\x97-\xa5-b-\n<>a<é>\xe6<>\x97<>\xa5<>b<>\na\xc3-\xa9日b\n[]a[]\xc3[]\xa9[]\xe6[]\x97[]\xa5[]b[]\n<a>\xc3<>\xa9<>\xe6<>\x97<>\xa5<>b<>\n", "", 0},
	{"gawk regex operators", []string{`{print ($0 ~ /\<b/), ($0 ~ "\\ybc\\y"), gensub(/\yb/, "B", "g"), match($0, "\\<c")}`}, "a bc cb\n", "1 1 a Bc cb 6\n", "", 0},
	{"unicode classes, regex in a variable", []string{`{print gsub(/[[:alpha:]]/, "<&>"), $0; r = "\\<a"; print ($0 ~ r), gensub(/[[:upper:]]/, "U", "g")}`}, "Ä日本ß1 ab\n", "6 <Ä><日><本><ß>1 <a><b>\n1 <U><日><本><ß>1 <a><b>\n", "", 0},
	{"division by zero at run time", []string{`BEGIN{x = 0; print "a"; print 1 % x}`}, "", "a\n", "awk: cmd. line:1: fatal: division by zero attempted in `%'\n", 2},
	{"division by a constant zero", []string{"BEGIN{print \"a\"}\n{print 1 % 0; print 2 / 0}"}, "", "", "awk: cmd. line:2: error: division by zero attempted in `%'\nawk: cmd. line:2: error: division by zero attempted\n", 1},
	// numbers outside int64's range and non-finite ones (bignum.go)
	{"print: integers past int64 with all their digits", []string{"BEGIN{print 2^63, 2^64, -2^64, 1e300 * 10; print(2^53 + 1, 123456789 * 1000)}"}, "", "9223372036854775808 18446744073709551616 -18446744073709551616 10000000000000000525047602552044202487044685811081591549158541155118024579889081957863713750804478640437044438328838781769425232353604305756447921847867069828483872009265758037378302337947880900593689532349707999450811190389676408800746527427801424945792587888200568428381156694721963868654594005401600\n9007199254740992 123456789000\n", "", 0},
	{"print: infinities and NaNs signed", []string{"{print 2^1024, -2^1024, -log(0), log(-1), -log(-1), sqrt(-1), $1 * 2}"}, "3\n", "+inf -inf +inf -nan +nan -nan 6\n", "awk: cmd. line:1: (FILENAME=- FNR=1) warning: log: received negative argument -1\nawk: cmd. line:1: (FILENAME=- FNR=1) warning: log: received negative argument -1\nawk: cmd. line:1: (FILENAME=- FNR=1) warning: sqrt: received negative argument -1\n", 0},
	{"print: in-range values unchanged, strings untouched", []string{"{x = 2^64; print 0.1 * 3, 1e6, -(0), 17 / 3, $1 * 1, \"2^64\", $1 \"\" 1}"}, "1e3\n", "0.3 1000000 0 5.66667 1000 2^64 1e31\n", "", 0},
	{"printf %d %i past int64", []string{"BEGIN{printf \"%d %i %.0f|%5d|%-25d|%+d|% d|%.3d|%030d|%025.3d\\n\", 1e30, -2^63, 1e16, 2^70, 2^70, 2^64, 2^64, 5, -2^70, 2^70}"}, "", "1000000000000000019884624838656 -9223372036854775808 10000000000000000|1180591620717411303424|1180591620717411303424   |+18446744073709551616| 18446744073709551616|005|-00000001180591620717411303424|   1180591620717411303424\n", "", 0},
	{"printf %d of infinities and NaN", []string{"BEGIN{printf \"[%d][%5i][%-5d][%x][%5X][%o]\\n\", 2^1024, -2^1024, log(-1), -log(0), log(-1), -log(0)}"}, "", "[+inf][-inf][-nan][+inf][-NAN][+inf]\n", "awk: cmd. line:1: warning: log: received negative argument -1\nawk: cmd. line:1: warning: log: received negative argument -1\n", 0},
	{"sprintf unsigned past int64", []string{"BEGIN{s = sprintf(\"[%x][%u][%o][%#x][%x][%.3x][%015x][%x][%u]\", 2^63, 2^64, 2^63, 2^63 + 2^62, 2^70, 2^70, 2^70, -1, -3); print length(s), s}"}, "", "155 [8000000000000000][1.84467e+19][1000000000000000000000][0xc000000000000000][1.18059e+21][1.18e+21][00001.18059e+21][ffffffffffffffff][18446744073709551613]\n", "", 0},
	{"printf: in-range values keep GoAWK's conversions", []string{"{printf \"%d %5d|%-5d|%05d|%d|%d|%i|%x|%d %d\\n\", 3.9, -2.5, 1e3, 42, \"abc\", -0, $1, 255, NR, $1 * 2}"}, "7.5\n", "3    -2|1000 |00042|0|0|7|ff|1 15\n", "", 0},
	// the guards' parentheses would take this past the nesting bound: it runs unguarded
	{"printf guards near the nesting bound", []string{"BEGIN{x = " + strings.Repeat(`sprintf("%d", `, 900) + "1" + strings.Repeat(")", 900) + "; print x, 2^53}"}, "", "1 9007199254740992\n", "", 0},
	{"printf %#x of zero is 0, as C's", []string{"{printf \"[%#x][%#X][%#o][%#5x][%#x][%#.3x][%#x][%#x]\\n\", 0, $1, 0, 0, 255, 0, 0.5, NR - 1; s = sprintf(\"%#x|%x\", 0, 0); print s}"}, "0\n", "[0][0][0][    0][0xff][000][0x0][0]\n0|0\n", "", 0},
	{"printf with * widths left to GoAWK", []string{"BEGIN{printf \"[%*d]\\n\", 4, 12}"}, "", "[  12]\n", "", 0},
	// a regex built at run time that does not compile (dynregex.go)
	{"dynamic regex: unmatched (", []string{"{print ($0 ~ \"\\\\(\")}\n{r = \"(\"; print ($1 ~ r)}"}, "a\n", "0\n", "awk: cmd. line:2: (FILENAME=- FNR=1) fatal: invalid regexp: Unmatched ( or \\(: /(/\n", 2},
	{"dynamic regex: the literal's line", []string{"{s = $0; sub(\"\\\\.\", \"\\\\&\", s); print s}\n{s = $0; n = gsub(\"(\", \"<&>\", s); print n, s}"}, "a.b\n", "a&b\n", "awk: cmd. line:2: (FILENAME=- FNR=1) fatal: invalid regexp: Unmatched ( or \\(: /(/\n", 2},
	{"dynamic regex: brackets and ranges", []string{"BEGIN{r = \"[\"; print match(\"x\", r)}"}, "", "", "awk: cmd. line:1: fatal: invalid regexp: Invalid regular expression: /[/\n", 2},
	{"dynamic regex: unmatched [", []string{"{print split($0, p, \"[a\")}"}, "x\n", "", "awk: cmd. line:1: (FILENAME=- FNR=1) fatal: invalid regexp: Unmatched [, [^, [:, [., or [=: /[a/\n", 2},
	{"dynamic regex: range end", []string{"{r = \"[b-a]\"; print $0 ~ r}"}, "x\n", "", "awk: cmd. line:1: (FILENAME=- FNR=1) fatal: invalid regexp: Invalid range end: /[b-a]/\n", 2},
	{"dynamic regex: class name", []string{"{r = \"[[:foo:]]\"; print $0 ~ r}"}, "x\n", "", "awk: cmd. line:1: (FILENAME=- FNR=1) fatal: invalid regexp: Invalid character class name: /[[:foo:]]/\n", 2},
	{"dynamic regex: interval", []string{"{r = \"a{2,1}\"; print $0 ~ r}"}, "x\n", "", "awk: cmd. line:1: (FILENAME=- FNR=1) fatal: invalid regexp: Invalid content of \\{\\}: /a{2,1}/\n", 2},
	{"printf runs out of arguments", []string{"{x = 1}\n{printf \"[%*d]\\n\", 256}", "a.txt"}, "", "", "awk: cmd. line:2: (FILENAME=a.txt FNR=1) fatal: not enough arguments to satisfy format string\n\t`[%*d]\n'\n\t   ^ ran out for this one\n", 2},
	{"math warnings", []string{`BEGIN{x = log(-2.5); print (x == x), sqrt(4)}`}, "", "0 2\n", "awk: cmd. line:1: warning: log: received negative argument -2.5\n", 0},
	{"characters", []string{`BEGIN{print length("日本"), index("日本語", "語")}`}, "", "2 3\n", "", 0},
	{"ARGV as written in BEGIN", []string{`BEGIN{print ARGV[0], ARGV[1], ARGC} {print FILENAME ": " $0}`, "a.txt", "b.txt"}, "", "awk a.txt 3\na.txt: x\nb.txt: y\n", "", 0},
	{"ARGV[1] emptied", []string{`BEGIN{ARGV[1] = ""} {print FILENAME ": " $0}`, "a.txt", "b.txt"}, "", "b.txt: y\n", "", 0},
	{"ARGV extended", []string{`BEGIN{ARGV[ARGC++] = "b.txt"} {print FILENAME ": " $0}`, "a.txt"}, "", "a.txt: x\nb.txt: y\n", "", 0},
	{"-v escapes", []string{"-v", `v=x\`, "-v", `w=a\qb\x41\101`, `BEGIN{print v "|" w}`}, "", "x|aqbAA\n", "awk: warning: escape sequence `\\q' treated as plain `q'\n", 0},
}

func TestCompat(t *testing.T) {
	tab := commands.Table{}
	awk.Register(tab)
	for _, tc := range compatCases {
		t.Run(tc.name, func(t *testing.T) {
			files := cmdtest.NewFiles(map[string]string{"a.txt": "x\n", "b.txt": "y\n"})
			var out, errb strings.Builder
			inv := files.Invocation(append([]string{"awk"}, tc.args...), strings.NewReader(tc.in), &out, &errb)
			inv.Env = []string{"LC_ALL=C.UTF-8"}
			code := tab["awk"](t.Context(), inv)
			if code != tc.code || out.String() != tc.out || errb.String() != tc.err {
				t.Errorf("status %d out %q err %q\nwant   %d out %q err %q", code, out.String(), errb.String(), tc.code, tc.out, tc.err)
			}
		})
	}
}

// TestIntFormatRefused: an integer conversion in OFMT is refused before
// anything runs (GoAWK would print Go's %!d(float64=...)).
func TestIntFormatRefused(t *testing.T) {
	tab := commands.Table{}
	awk.Register(tab)
	for _, args := range [][]string{
		{"awk", `BEGIN{OFMT = "%d"; print 17/3}`},
		{"awk", "-v", "CONVFMT=%x", `BEGIN{print (17/3) ""}`},
	} {
		files := cmdtest.NewFiles(nil)
		var out, errb strings.Builder
		inv := files.Invocation(args, strings.NewReader(""), &out, &errb)
		code := tab["awk"](t.Context(), inv)
		if code == 0 || out.Len() != 0 || !strings.Contains(errb.String(), "not supported") {
			t.Errorf("%q: status %d out %q err %q, want a refusal", args, code, out.String(), errb.String())
		}
	}
}

// TestPipeLimit: output held for commands is bounded; past the bound the
// program stops with a message naming the command and the limit, and the
// command never runs.
func TestPipeLimit(t *testing.T) {
	defer awk.SetMaxPipeBytes(1 << 10)()
	tab := commands.Table{}
	awk.Register(tab)
	files := cmdtest.NewFiles(nil)
	var out, errb strings.Builder
	inv := files.Invocation([]string{"awk", `BEGIN{for (i = 0; i < 1000; i++) print "0123456789" | "cat"}`}, strings.NewReader(""), &out, &errb)
	ran := 0
	// fault injection: counts the commands the program would start
	inv.Exec = func(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
		ran++
		return 0
	}
	code := tab["awk"](t.Context(), inv)
	if code != 2 || ran != 0 || !strings.Contains(errb.String(), `output to "cat": more than 1024 bytes`) {
		t.Errorf("status %d, %d commands run, err %q; want 2, 0 and the limit named", code, ran, errb.String())
	}
}

// TestPipeMemory: output held for commands is charged to the sandbox's
// memory budget; past it the program stops with the budget's status and
// nothing held runs.
func TestPipeMemory(t *testing.T) {
	tab := commands.Table{}
	awk.Register(tab)
	files := cmdtest.NewFiles(nil)
	var out, errb strings.Builder
	inv := files.Invocation([]string{"awk", `BEGIN{s = sprintf("%1000s", ""); for (i = 0; i < 1000; i++) print s | "cat"}`}, strings.NewReader(""), &out, &errb)
	inv.Sys = &commands.System{Memory: commands.NewMemory(256 << 10)}
	ran := 0
	inv.Exec = func(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
		ran++
		return 0
	}
	code := tab["awk"](t.Context(), inv)
	t.Logf("status %d: %s", code, errb.String())
	if code == 0 || ran != 0 || errb.Len() == 0 {
		t.Errorf("status %d, %d commands run, err %q; want the budget's failure and nothing run", code, ran, errb.String())
	}
	if used := inv.Sys.Memory.Used(); used != 0 {
		t.Errorf("%d bytes still charged after the run", used)
	}
}

// TestFieldLayout: the field hook and the diagnostics' NR/FNR read GoAWK's
// unexported state found by name; a GoAWK upgrade that moves it must fail
// here rather than lose the \r of CRLF fields silently.
func TestFieldLayout(t *testing.T) {
	if !awk.FieldLayoutOK() {
		t.Fatal("GoAWK's interpreter no longer has the fields the field hook reads (fields.go)")
	}
}
