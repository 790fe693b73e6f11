package bc_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/bc"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// cases are scripts for bc in the notation of printf %b: \n is a newline,
// \\ a backslash. Each runs in warren's bc and in GNU bc (Debian's bc
// 1.07), and the outputs must be the same.
var cases = []struct{ flags, script string }{
	{"-q", `1+2*3`},
	{"-q", `scale=3; 10/3`},
	{"-q", `2^64`},
	{"-q", `sqrt(2)`},
	{"-q", `scale=10; sqrt(2)`},
	{"-q", `obase=16; 255`},
	{"-q", `ibase=2; 1011`},
	{"-q", `x=5; x*x`},
	{"-q", `define f(n){ if(n<2) return 1; return n*f(n-1) }; f(20)`},
	{"-q", `define f(n){ if(n<2) return 1; return n*f(n-1) }\nf(20)`},
	{"-q", `-7 % 3`},
	{"-q", `scale=2; 1/3*3`},
	{"-q", `12345678901234567890*98765432109876543210`},
	{"-q", `a[2]=3; a[2]+1`},
	{"-q", `1/0`},
	{"-q", `length(123.45)`},
	{"-q", `for(i=0;i<3;i++) i`},
	{"-q", `1/0; 2`},
	{"-q", `1/0\n2`},
	{"-q", `1+\n3`},
	{"-q", `1 +* 2; 5\n7`},
	{"-q", `x=1;\nquit\nx`},
	{"-q", `if (0) quit\n5`},
	{"-q", `define f(x) { return x*2 }\nf(3)\nf(3,4)\ng(1)\n5`},
	{"-q", `a[1]=2; a[1]; a[-1]`},
	{"-q", `print 1, "a\\n", 2, "\\n"`},
	{"-q", `"hello\n"; 3`},
	{"-q", `1==1; 2<1; !0; 1&&0; 1||0`},
	{"-q", `x++; x; ++x; x--`},
	{"-q", `ibase=16; FF; A; ibase=A; 10`},
	{"-q", `halt; 4`},
	{"-q", `sqrt(-1)`},
	{"-q", `last; 5; last; .`},
	{"-q", `length(0.001); scale(1.50); length(100)`},
	{"-q", `3 4`},
	{"-q", `a = 3 < 5; a`},
	{"-q", `x=1; if (x) y=1\nelse y=2\ny`},
	{"-q", `if (0) { 1 } else { 2 }`},
	{"-q", `0.000; -0.0; 1.500; -.5; 00012.340`},
	{"-q", `-2^2; 2^3^2; 2^0.5; 2.5^3; 2^-3; scale=5; 2^-3; 1.5^-2`},
	{"-q", `x = y = 2; x; y`},
	{"-q", `define f() { auto x; x = 5; return g() }\ndefine g() { return x }\nx = 1; f(); x`},
	{"-q", `define v() { return; }\nv()`},
	{"-q", `ibase=17; ibase; obase=1; obase`},
	{"-q", `ZZ; 1.Z`},
	{"-q", `scale=2; sqrt(2); sqrt(2.0000); 10/4`},
	{"-q", `obase=16; 3.14159`},
	{"-q", `obase=8; -0.5`},
	{"-q", `1.2.3`},
	{"-q", `for (i=0; i<3; i++) { if (i==1) continue; i }; i`},
	{"-q", `while (i<3) i++`},
	{"-q", `scale(2^-1)`},
	{"-q", `e(1)`},
	{"-q", `j=2; j`},
	{"-q", `"a\\nb"`},
	{"-q", `print "a\\tb\\q\\\\c\\n"`},
	{"-q", `define f(a[]) { a[0]=9; return a[0] }\nb[0]=1; f(b[]); b[0]`},
	{"-q", `2^1000`},
	{"-q", `obase=20; 1.5; 0; -3; 0.05`},
	{"-q", `ibase=2; 12; A; .11; ibase=16; 0.01; 0.8; 1.F`},
	{"-q", `"abc"; 2^200`},
	{"-q", `scale=-1; scale`},
	{"-q", `ibase=1; ibase`},
	{"-q", `ibase=40; ibase`},
	{"-q", `obase=0; obase`},
	{"-q", `obase=1000; 5`},
	{"-q", `scale=2.7; scale`},
	{"-q", `last=5; last`},
	{"-q", `scale=3; 1/3+0; length(1/3); scale(1/3)`},
	{"-q", `-5%3; 5%-3`},
	{"-q", `scale=5; 2.5^3`},
	{"-q", `4 % 0`},
	{"-q", `scale=1; -1/3`},
	{"-q", `1++`},
	{"-q", `define f(x) { x; }\nf(2)`},
	{"-q", `define f() { auto x[]; x[3]=1; return x[3]+x[2] }\nf()`},
	{"-q", `define a(x) { return x }\na(2)`},
	{"-q", `5; quit`},
	{"-q", `5; halt`},
	{"-q", `x=3; define f() { return 2 }; f()`},
	{"-q", `scale=3; a[1.7]=4; a[1]`},
	{"-q", `return 5`},
	{"-q", `break`},
	{"-q", `{ 1; 2 }`},
	{"-q", `if (1) 2 else 3`},
	{"-q", `/* comment */ 1 # another\n2`},
	{"-q", `1 \\\n+ 2`},
	{"-q", `x = 2; x += 3; x; x -= 1; x; x *= 4; x; x /= 3; x; x %= 4; x; x ^= 2; x`},
	{"-q", `scale=4; 7 % 2.5; -7.25 % 2`},
	{"-q", `scale=20; 1/7`},
	{"-q", `obase=2; 255; 0.1`},
	{"-q", `obase=3; 1/3`},
	{"-q", `2^-1`},
	{"-q", `scale=3; (-2)^3; (-2)^-3; 0^0; 0^2`},
	{"-q", `99999999999999999999999 / 7`},
	{"-q", `1 < 2 < 3; 3 > 2 > 1`},
	{"-q", `!1 < 2`},
	{"-q", `-x`},
	{"-q", `--x; x`},
	{"-q", `a[0]++; a[0]`},
	{"-q", `print "x=", 2+3, "\\n"`},
	{"-q", `define f(n) { if (n == 0) return (0); return (f(n-1) + n) }\nf(100)`},
	{"-q", `scale=50; sqrt(3)`},
	{"-q", `sqrt(16); sqrt(0.25); sqrt(1000000)`},
	{"-q", `.5 + .5`},
	{"-q", `1.`},
	{"-lq", `e(0); l(1); s(0); c(0); a(0)`},
	{"-lq", `scale=5; e(1); s(1); c(1); a(1); l(2); j(1,2)`},
	{"-lq", `e(-1); l(0); l(-1); s(100); c(-3.5); a(-1000); e(10); j(0,10); j(-3, 1.5); a(0.5)`},
	{"-lq", `scale=0; e(1); s(1); l(10)`},
	{"-lq", `scale=50; 4*a(1)`},
	{"-lq", `e(1000)`},
	{"-lq", `e(-1000)`},
	{"-lq", `e(1); l(10); s(3.14159); c(3.14159); a(2); a(-0.3); l(0.5); l(1000000)`},
	{"-lq", `scale=30; e(2.5); l(7); s(0.1); c(0.1); a(10); j(2, 3.3)`},
	{"-lq", `scale=3; e(5); l(2)`},
	{"-lq", `s(1000); c(1000); e(50); l(123456789.123)`},
	{"-lq", `scale=100; e(1)`},
	{"-lq", `scale=10; l(2)/l(10)`},
	{"-lq", `sqrt(2)`},
	{"-lq", `1/3`},
	{"-lq", `a(1)*4`},
	{"-lq", `s(-1); c(-1); a(-1); e(-2.5); l(0.001)`},
	{"-lq", `j(5, 10); j(0, 0); j(1, -2)`},
	{"-lq", `scale=2; e(100)`},
}

func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func table() commands.Table {
	t := commands.Table{}
	bc.Register(t)
	return t
}

// run runs warren's bc over script; stderr is only reported as present.
func run(t *testing.T, args []string, script string, env ...string) (stdout string, stderr string, status int) {
	t.Helper()
	files := cmdtest.NewFiles(map[string]string{"prog.bc": "x = 7\n"})
	var out, errb bytes.Buffer
	inv := files.Invocation(args, strings.NewReader(script), &out, &errb)
	inv.Env = env
	mem := commands.NewMemory(64 << 20)
	inv.Sys = &commands.System{Memory: mem}
	st := table()[args[0]](context.Background(), inv)
	if mem.Used() != 0 {
		t.Errorf("%q: %d bytes still charged after bc returned", script, mem.Used())
	}
	return out.String(), errb.String(), st
}

func gnuBC(t *testing.T) string {
	p, err := exec.LookPath("bc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("GNU bc not installed (Debian package bc, scripts/test-packages.txt)")
		}
		t.Skip("GNU bc not installed: nothing to compare with")
	}
	return p
}

func TestAgainstGNU(t *testing.T) {
	ref := gnuBC(t)
	for _, c := range cases {
		script := unescape(c.script) + "\n"
		cmd := exec.Command(ref, c.flags)
		cmd.Stdin = strings.NewReader(script)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Env = []string{"LC_ALL=C"}
		if err := cmd.Run(); err != nil {
			t.Fatalf("%q: GNU bc: %v", c.script, err)
		}
		got, gotErr, st := run(t, []string{"bc", c.flags}, script)
		if got != out.String() || st != 0 || (gotErr == "") != (errb.Len() == 0) {
			t.Errorf("bc %s <<< %q:\nwarren: %q (stderr %q, status %d)\nGNU:    %q (stderr %q)", c.flags, c.script, got, gotErr, st, out.String(), errb.String())
		}
	}
}

// The one-liners agents write, with answers that do not need GNU bc.
func TestOneLiners(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		script, want string
		env          []string
	}{
		{[]string{"bc"}, "scale=2; 10/3\n", "3.33\n", nil},
		{[]string{"bc", "-l"}, "4*a(1)\n", "3.14159265358979323844\n", nil},
		{[]string{"bc"}, "2^100\n", "1267650600228229401496703205376\n", nil},
		{[]string{"bc", "prog.bc"}, "x*6\n", "42\n", nil},
		{[]string{"bc", "-q", "prog.bc", "-"}, "x+1\nquit\nx\n", "8\n", nil},
		{[]string{"bc"}, "2^200\n", "1606938044258990275541962092341162602522202993782792835301376\n", []string{"BC_LINE_LENGTH=0"}},
		{[]string{"bc"}, "123456789\n", "1234567\\\n89\n", []string{"BC_LINE_LENGTH=9"}},
	} {
		got, stderr, st := run(t, tc.args, tc.script, tc.env...)
		if got != tc.want || st != 0 || stderr != "" {
			t.Errorf("%v <<< %q: %q (stderr %q, status %d), want %q", tc.args, tc.script, got, stderr, st, tc.want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		script, stdout string
		stderr         string
		status         int
	}{
		{[]string{"bc", "nope.bc"}, "1\n", "", "File nope.bc is unavailable.", 1},
		{[]string{"bc"}, "1/0\n2\n", "2\n", "Runtime error (func=(main)): Divide by zero", 0},
		{[]string{"bc"}, "1 +* 2\n3\n", "3\n", "(standard_in) 1: syntax error", 0},
		{[]string{"bc"}, "define f(x) { return x }\nf(1,2)\n", "", "Parameter number mismatch", 0},
		{[]string{"bc", "--frobnicate"}, "", "", "unrecognized option '--frobnicate'", 1},
	} {
		got, stderr, st := run(t, tc.args, tc.script)
		if got != tc.stdout || st != tc.status || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v <<< %q: %q (stderr %q, status %d), want %q, %q, %d", tc.args, tc.script, got, stderr, st, tc.stdout, tc.stderr, tc.status)
		}
	}
}

// Untrusted scripts: each ends with a clear error naming the limit, in
// bounded time and memory.
func TestHostile(t *testing.T) {
	deep := strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)
	cmdtest.RunHostile(t, table(), []cmdtest.Hostile{
		{Name: "huge power", Args: []string{"bc"}, Stdin: strings.NewReader("2^100000000\n"), Status: 125, Msg: "number too long", Within: 2 * time.Second},
		{Name: "huge scale", Args: []string{"bc"}, Stdin: strings.NewReader("scale=1000000000; 1/3\n"), Status: 125, Msg: "scale too large", Within: 2 * time.Second},
		{Name: "squaring", Args: []string{"bc"}, Stdin: strings.NewReader("x=7; while (1) x *= x\n"), Status: 125, Msg: "number too long", Within: 5 * time.Second},
		{Name: "huge e", Args: []string{"bc", "-l"}, Stdin: strings.NewReader("e(10000000)\n"), Status: 125, Msg: "result too long", Within: 2 * time.Second},
		{Name: "recursion", Args: []string{"bc"}, Stdin: strings.NewReader("define f(n) { return f(n+1) }\nf(1)\n"), Status: 125, Msg: "warren: nesting too deep (limit 2000)"},
		{Name: "deep parentheses", Args: []string{"bc"}, Stdin: strings.NewReader(deep + "\n"), Status: 125, Msg: "warren: nesting too deep (limit 1000)"},
		{Name: "long chain", Args: []string{"bc"}, Stdin: strings.NewReader(strings.Repeat("1+", 100000) + "1\n"), Status: 125, Msg: "warren: nesting too deep"},
		{Name: "array growth", Args: []string{"bc"}, Stdin: strings.NewReader("for (i=0; 1; i++) a[i] = i\n"), Status: 125, Msg: "warren: memory limit exceeded (8 MiB)", Budget: 8 << 20},
		{Name: "long program", Args: []string{"bc"}, Stdin: strings.NewReader("define f() {\n" + strings.Repeat("x=1;", 400000) + "}\n"), Status: 125, Msg: "warren: memory limit exceeded (8 MiB)", Budget: 8 << 20},
		{Name: "busy loop", Args: []string{"bc"}, Stdin: strings.NewReader("while (1) x++\n"), Cancel: 50 * time.Millisecond, Status: 130, Within: time.Second},
		{Name: "huge literal base 16", Args: []string{"bc"}, Stdin: strings.NewReader("ibase=16\n" + strings.Repeat("F", 30000) + "\n"), Status: 125, Msg: "number too long"},
	})
	_ = bc.MaxDigits
}

// dcCases run in warren's dc and GNU dc (Debian's dc 1.4.1); \n in a case
// is a newline.
var dcCases = []string{
	"2 3 + p",
	"10 3 / p",
	"2 k 10 3 / p",
	"_5 3 % p",
	"[hello] p",
	"1 2 3 f",
	"5 d * p",
	"1 2 r p",
	"3 sa la la * p",
	"16 o 255 p",
	"16 i FF p",
	"2 10 ^ p",
	"2 v p",
	"4 k 2 v p",
	"c p",
	"[abc] P 10 P",
	"65 P",
	"1 2 3 z p",
	"3.14159 X p",
	"123.45 Z p",
	"[1 p] x",
	"[2 p] sa 1 1 =a",
	"[2 p] sa 1 2 >a",
	"[2 p] sa 2 1 >a",
	"10 [d p 1 - d 0 <a] sa la x",
	"1 Sa 2 Sa La p La p",
	"5 1 :a 1 ;a p",
	"K p",
	"I p O p",
	"1 2 3 4 5 3 R f",
	"1 2 3 _2 R f",
	"2 3 ~ f",
	"2 k 7 2 ~ f",
	"2 3 10 | p",
	"9 1 q 8 p",
	"[q] x 5 p",
	"1 0 / p",
	"p",
	"2 k 1 3 / 3 * p",
	"_1 v",
	"2 ^ p",
	"3 # comment\\np",
	"[[a]] p",
	"le p",
	"[abc] Z p [abc] X p [abc] a p 66 a p",
	"256 65 * 66 + P",
	"5 n 6 n",
	"2 sa [la p] sb lb x",
	"[1p]sa 1 2 <a [2p]sb 2 1 !<b",
	"2 100 ^ p",
	"2 1000 ^ p",
	"20 k 2 v p",
	"_3.5 p _0.25 p",
	"[lalb+ lb sa sb lc 1 - d sc 0 <x] sx 0 sa 1 sb 100 sc lx x la p",
	"0 sa [la 1 + d sa 100000 >b] sb lb x la p",
	"1 2 3 c z p",
	"3 k 1 7 / p 16 o p",
	"y",
	"[a] [b] + p",
}

func TestDcAgainstGNU(t *testing.T) {
	ref, err := exec.LookPath("dc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("GNU dc not installed (Debian package dc, scripts/test-packages.txt)")
		}
		t.Skip("GNU dc not installed: nothing to compare with")
	}
	for _, c := range dcCases {
		script := unescape(c) + "\n"
		cmd := exec.Command(ref)
		cmd.Stdin = strings.NewReader(script)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		status := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("%q: GNU dc: %v", c, err)
			}
			status = ee.ExitCode()
		}
		got, gotErr, st := run(t, []string{"dc"}, script)
		if got != out.String() || st != status || (gotErr == "") != (errb.Len() == 0) {
			t.Errorf("dc <<< %q:\nwarren: %q (stderr %q, status %d)\nGNU:    %q (stderr %q, status %d)", c, got, gotErr, st, out.String(), errb.String(), status)
		}
	}
}

func TestDcHostile(t *testing.T) {
	cmdtest.RunHostile(t, table(), []cmdtest.Hostile{
		{Name: "endless loop", Args: []string{"dc"}, Stdin: strings.NewReader("[lax]dsax\n"), Cancel: 50 * time.Millisecond, Status: 130, Within: time.Second},
		{Name: "stack growth", Args: []string{"dc"}, Stdin: strings.NewReader("[1 lax]dsax\n"), Status: 125, Msg: "warren: memory limit exceeded (8 MiB)", Budget: 8 << 20},
		{Name: "deep macros", Args: []string{"dc"}, Stdin: strings.NewReader("[lax 1]dsax\n"), Status: 125, Msg: "warren: nesting too deep (limit 10000)"},
		{Name: "huge power", Args: []string{"dc"}, Stdin: strings.NewReader("2 100000000 ^ p\n"), Status: 125, Msg: "number too long", Within: 2 * time.Second},
		{Name: "huge scale", Args: []string{"dc"}, Stdin: strings.NewReader("1000000000 k 1 3 / p\n"), Status: 125, Msg: "scale too large", Within: 2 * time.Second},
		{Name: "squaring", Args: []string{"dc"}, Stdin: strings.NewReader("7 [d * lax]dsax\n"), Status: 125, Msg: "number too long", Within: 5 * time.Second},
	})
}
