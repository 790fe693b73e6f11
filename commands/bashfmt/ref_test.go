package bashfmt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// result is what a printf run showed: its streams and exit status.
type result struct {
	stdout, stderr string
	status         int
}

const bashPath, gnuPrintf, gnuEcho = "/usr/bin/bash", "/usr/bin/printf", "/usr/bin/echo"

// reference runs a real program with a fixed locale and time zone.
func reference(t *testing.T, argv ...string) result {
	t.Helper()
	if _, err := os.Stat(argv[0]); err != nil {
		t.Skipf("reference %s not installed: %v", argv[0], err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"LC_ALL=C.UTF-8", "TZ=UTC", "PATH=/usr/bin:/bin"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	st := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		st = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return result{out.String(), errb.String(), st}
}

// ours runs the engine as the shell (bash -c) or /usr/bin/printf would.
func ours(d Dialect, format string, args []string) result {
	var out, errb bytes.Buffer
	p := Printer{Dialect: d, Location: time.UTC}
	prefix := "bash: line 1: printf: "
	if d == GNU {
		prefix = gnuPrintf + ": "
		p.QuoteArg = func(s string) string { return QuoteGNUDiag(s, true) }
	}
	p.Warn = func(e *Error) { errb.WriteString(prefix + e.Msg + "\n") }
	st, err := p.Printf(context.Background(), &out, format, args)
	if err != nil {
		errb.WriteString("ERROR " + err.Error())
	}
	return result{out.String(), errb.String(), st}
}

// printfCase is one printf call, run against both references unless
// only names one of them (the other is known to print garbage or to be
// out of scope, see why).
type printfCase struct {
	format string
	args   []string
	only   Dialect
	both   bool
}

func pc(format string, args ...string) printfCase {
	return printfCase{format: format, args: args, both: true}
}
func bashOnly(format string, args ...string) printfCase {
	return printfCase{format: format, args: args, only: Bash}
}
func gnuOnly(format string, args ...string) printfCase {
	return printfCase{format: format, args: args, only: GNU}
}

var printfCases = []printfCase{
	// strings, widths, precision
	pc("%s-%s\\n", "a", "b", "c"), pc("%5s|%-5s|\\n", "x", "y"), pc("%.3s|%.0s|%.s|\\n", "abcdef", "x", "y"),
	pc("%5s|%.1s|%c|", "é", "é", "é"), pc("%s\\n"), pc("x%sy\\n"), pc("100%%\\n"), pc("%s %s\\n", "1", "2", "3"),
	pc("%-+ 5s|", "a"), pc("%c%c\\n", "hello", "x"), pc("%c|%c|", ""), pc("%5c|%-3c|", "a", "b"),
	pc("%*s|%-*s|", "4", "a", "3", "b"), pc("%*s|", "-4", "a"), pc("%.*s|", "2", "abc"), pc("%.*s|", "-2", "abc"),
	pc("%*.*s|", "6", "2", "abcdef"), pc("%*d|", "-5", "1"), pc("%-*d|", "-5", "1"), pc("%*d|%d", "3"),
	pc("plain"), pc(""), pc("%s"), pc("a\\nb\\tc"), pc("%%%s%%", "x"),
	// integers
	pc("%d %i %u %o %x %X\\n", "42", "-42", "42", "8", "255", "255"), pc("%d\\n", "'A"), pc("%d\\n", "\"B"),
	pc("%d|%d|%d", "'é", "'", "'ab"), pc("%x", "'\xff"), pc("%i\\n", "0x10"), pc("%d\\n", "010"), pc("%d\\n", "-0x1f"),
	pc("%d\\n", "abc"), pc("%d\\n", "12abc"), pc("%d|", ""), pc("%d|", " "), pc("%d|", " 5"), pc("%d|", "5 "),
	pc("%d|", "+7"), pc("%d|", "08"), pc("%d|", "0x"), pc("%d|", "0xg"), pc("%d|", "-"), pc("%d|", "1.5"),
	pc("%u|", "-1"), pc("%x|", "-1"), pc("%o|", "-1"), pc("%d|", "99999999999999999999"), pc("%d|", "-99999999999999999999"),
	pc("%d|", "9223372036854775807"), pc("%d|", "-9223372036854775808"), pc("%d|", "9223372036854775808"),
	pc("%u|", "18446744073709551615"), pc("%u|", "18446744073709551616"), pc("%u|", "-18446744073709551616"),
	pc("%x|", "0x"), pc("%d %d\\n", "1", "x", "3"),
	pc("%05d|%-5d|%+d|% d|%+ d|", "42", "42", "42", "42", "42"), pc("%.3d|%.0d|%.d|%5.3d|%-5.3d|%05.3d|", "7", "0", "0", "7", "7", "7"),
	pc("%+u|% u|%+x|", "5", "6", "7"), pc("%#o|%#o|%#.3o|%#x|%#X|%#x|%#5x|%#05x|", "8", "0", "8", "255", "255", "0", "1", "1"),
	pc("%lld %hd %jd %zd %td %Ld %ld\\n", "1", "2", "3", "4", "5", "6", "7"), pc("%'d|%'i|", "1234567", "-1234567"),
	pc("%010d|%-010d|%0+5d|", "-42", "42", "3"),
	// floats
	pc("%f|%e|%g|%E|%G|%F", "3.14159", "1234.5", "0.0001", "12345", "1e20", "2.5"),
	pc("%5.1f|%g|%G|%.3e\\n", "3.14159", "0.0001", "1e20", "12345"), pc("%.20f|%.20f|%.25e", "0.1", "1.6", "1e-300"),
	pc("%.0f %.0f %.0f %.0f|", "0.5", "1.5", "2.5", "-0.5"), pc("%g|%g|%g|%g|%g|", "100000", "1000000", "1e-4", "1e-5", "123456789"),
	pc("%.3g|%.10g|%#g|%#.3g|%#.0f|%#.0e|", "3.14159", "1", "1", "1", "2", "3"), pc("%g|%G|", "1e100", "1e-100"),
	pc("%a|%A|%a|%a|%a|%a", "1", "1.6", "0.1", "1234567", "-0", "0x1p3"), pc("%.0a|%.1a|%.3a|%#a|%.20a|", "1.5", "1.03125", "0.1", "1", "1"), pc("%.0a|%.1a|%.2A|", "31", "0x1.ffp0", "-0xf.ffp9"),
	pc("%f|%f|%f|%f|%e|%g|%a|%F|%E", "inf", "-inf", "nan", "-nan", "infinity", "INF", "inf", "inf", "nan"),
	pc("%5f|%-8.2f|%08.2f|%+f|% f|%+08.2f|", "inf", "1", "-1", "1", "1", "1"), pc("%08f|%-08f|", "inf", "nan"),
	pc("%f|%f|%f", "1e5000", "-1e5000", "1e-5000"), pc("%f|%g", "1e-4940", "1e4000"), pc("%.10Lf|%Lg", "2", "3"),
	pc("%f|", "abc"), pc("%f|", "1.5abc"), pc("%f|", "1e"), pc("%f|", "0x1.8p1"), pc("%f|", "0x1.8"), pc("%f|", " 2.5"),
	pc("%f|", "2.5 "), pc("%f|", "'A"), pc("%f|", ""), pc("%f|", "."), pc("%f|", "-.5e1"), pc("%f|", "1e+"),
	pc("%f|%f", "nan(123)", "nanx"), pc("%.3f|", "1234567890123456789012345678901234567890"), pc("%e|", "0"), pc("%g|", "-0"),
	pc("%.15g|%.17g|%.19g|%.21g", "0.1", "0.1", "0.1", "0.1"), pc("%f", "0.000001"), pc("%.1f|%.2f|%.2f", "0.05", "2.675", "1.005"),
	pc("%e|%E", "1e-310", "123e300"), pc("%.40f", "1e-30"), pc("%'f|%'g|", "1234567.5", "1234567"),
	// escapes in the format
	pc("\\0101|\\101|\\1010|\\x411|\\e|\\\"|\\?|\\N|\\08|\\0|\\400|\\777|\\\\|\\a\\b\\f\\v\\r\\t|"),
	pc("\\u00e9|\\U0001F600|\\u0041\\u0024|\\u00a0"), pc("\\x41\\x4a\\x4"), pc("a\\"), pc("\\z\\%d", "5"),
	// %b
	pc("%b|", "\\0101|\\101|\\1010|\\x411|\\e|\\\"|\\?|\\'|\\N|\\08|\\0|\\400|\\777|\\\\|a\\tb"), pc("%b|%b", "a\\cb", "x"),
	pc("%b|", "\\u00e9|\\U0001F600"), pc("%b\\n", "a\\tb"), pc("%b|%s", "", "x"), pc("%b"), pc("%b|", "a\\"),
	// \c in the format, %q
	pc("a\\cb"), pc("%q\\n", "a b"), pc("%q|%q|%q|%q|%q", "it's", "", "$x", "a\nb", "é"), pc("%q"),
	pc("%q|", "~a"), pc("%q|", "#a"), pc("%q|", "a=b"), pc("%q|", "{a}"), pc("%q|", "a,b"), pc("%q|", "\t"), pc("%q|", "\x01x"),
	pc("%q|", "\xc3"), pc("%q|", "'"), pc("%q|", "\""), pc("%q|", "a!b"), pc("%q|", "x@y"), pc("%q|", "a?b"), pc("%q|", "\x1b[0m"),
	pc("%q|", "it's $x"), pc("%q|", "%+-./:_"), pc("%q|", "a]"), pc("%q|", "日本"), pc("%q|", "\u0085"), pc("%q|", "\u200b"),
	// errors in the format
	pc("%"), pc("a%5"), pc("%z"), pc("%y", "1"), pc("%5"), pc("%-"), pc("%ls", "x"), pc("%.5c", "x"),
	pc("%#d|%#s|%0s|%0c|%#c|%'s|%'x|%'e", "1", "2", "3", "4", "5", "6", "7", "8"),
	pc("%5b|%-5q|", "a", "b"), pc("%B", "x"), pc("hello\\n", "x", "y"), pc("%s %%\\n", "1", "2"),
	// widths past the limits of an int (bash clamps "%*d" 3000000000 1 to
	// INT_MAX and prints 2 GiB: TestPrintfHugeWidth covers that)
	pc("%3000000000d|", "1"), pc("%.3000000000d|", "1"), pc("%*d|", "4294967301"), pc("%.*d|", "-3000000000", "1"),
	pc("%*d|", "x", "1"), pc("%*d|", "9999999999999999999999"),
	// bash only
	bashOnly("%(%Y-%m-%d %H:%M:%S)T|", "86400"), bashOnly("%(%s %j %a %A %b %B %p %y %e %C %u %w)T|", "1234567890"),
	bashOnly("%(%F %T %D %R %r %c %x %X %%)T|", "1234567890"), bashOnly("%(%U %W %V %G %g %k %l %P %n%t)T|", "1700000000"),
	bashOnly("%(%-d %_d %05d %^a %10A %-H)T|", "1234567890"), bashOnly("%20(%Y)T|%-6(%m)T|%.2(%Y)T|", "0", "0", "0"),
	bashOnly("%(%Y)", "0"), bashOnly("%(%Y)Tx", "x"), bashOnly("%(%Y)T", ""), bashOnly("%()T", "0"),
	bashOnly("%(%Q)T|", "0"), bashOnly("%Q|%.2Q|%5Q|", "a b", "c d", "e"), bashOnly("%n|%s", "v", "x"),
	bashOnly("\\x|\\xg|\\u|\\U|\\ud800|\\U00110000|\\Uffffffff|\\U7FFFFFFF"), bashOnly("%b|", "\\x|\\u|\\ud800|\\U00110000"),
	bashOnly("%5b|%-5b|%.2b|%*b|", "a", "b", "xyz", "4", "c"), bashOnly("%5q|%-6q|%.2q", "a b", "c", "d e"),
	bashOnly("\\c|%c"), bashOnly("%i %s", "1", "2"),
	// GNU only
	gnuOnly("\\x|"), gnuOnly("\\u00"), gnuOnly("\\u0041"), gnuOnly("\\ud800"), gnuOnly("\\U00110000|\\UFFFFFFFF"),
	gnuOnly("%b", "\\x"), gnuOnly("%b|", "\\U00110000|\\u00e9"), gnuOnly("%(%Y)T", "0"), gnuOnly("%n", "x"),
	gnuOnly("%q|%q", "a b"), gnuOnly("%b%s", "a\\cb", "x"),
}

func TestPrintfReferences(t *testing.T) {
	for _, c := range printfCases {
		for _, d := range []Dialect{Bash, GNU} {
			if !c.both && c.only != d {
				continue
			}
			name := map[Dialect]string{Bash: "bash", GNU: "gnu"}[d] + "/" + strings.Join(append([]string{c.format}, c.args...), " ")
			t.Run(name, func(t *testing.T) {
				var want result
				if d == Bash {
					want = reference(t, append([]string{bashPath, "-c", `printf "$@"`, "bash", c.format}, c.args...)...)
				} else {
					want = reference(t, append([]string{gnuPrintf, c.format}, c.args...)...)
				}
				got := ours(d, c.format, c.args)
				if got != want {
					t.Errorf("printf %q %q\n got stdout %q stderr %q status %d\nwant stdout %q stderr %q status %d",
						c.format, c.args, got.stdout, got.stderr, got.status, want.stdout, want.stderr, want.status)
				}
			})
		}
	}
}
