package shell

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/vfs"
)

// Fuzz targets for the parts that see untrusted text first: the parse
// front door, arithmetic and pattern matching. Each runs under a 64 MiB
// stack ceiling (a missed depth bound is a fatal stack overflow, which the
// fuzzer reports as a crash) and asserts the bounds it promises. CI runs a
// bounded slice of each (see scripts/fuzz.sh for the command and a longer
// campaign); seeds are in testdata/fuzz/<target>.

var fuzzSeeds = []string{
	"echo hi", "a=(1 2 3); echo ${a[@]:1}", "((((((1))))))", "$((1+(2*3)))",
	"${x:-${y:-z}}", "[[ ( a == b ) || ( -n x ) ]]", "f() { f; }", "case x in a) ;; esac",
	"cat <<EOF\n$(echo)\nEOF", "echo \xff\xfe 'a\x80b'", "@(a|b)*(c)", "[!]a]", "x[1+2]",
	strings.Repeat("(", 3000), strings.Repeat("$(", 2000), strings.Repeat("${x:-", 2000),
	strings.Repeat("((", 1500), strings.Repeat("[[ ( ", 1000), strings.Repeat("{ ", 1500),
}

func fuzzShell(t testing.TB, env ...string) *Shell {
	fsys := vfs.New(vfs.Options{})
	if err := fsys.MkdirAll("/tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	sh, err := New(Config{FS: fsys, Commands: std.Table(), Env: env, Dir: "/tmp", Limits: Limits{
		Timeout: 2 * time.Second, MaxLoopIters: 10_000, MaxCommands: 10_000, MaxOutputBytes: 1 << 20,
	}, Seed: 1, Sys: &commands.System{Memory: commands.NewMemory(64 << 20)}})
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// FuzzParse: every front-door entry returns (no panic, no overflow), and
// what it accepts is within MaxNesting.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		old := debug.SetMaxStack(64 << 20)
		defer debug.SetMaxStack(old)
		stmts, _ := parseStmts(src)
		for _, st := range stmts {
			if d := nodeDepth(st, MaxNesting+1); d > MaxNesting {
				t.Fatalf("parseStmts accepted depth %d", d)
			}
		}
		if f, err := parseFile(src); err == nil {
			if d := nestDepth(f.Stmts); d != 0 {
				t.Fatalf("parseFile accepted a statement deeper than %d", MaxNesting)
			}
		}
		if x, err := parseArith(src); err == nil && x != nil {
			if d := nodeDepth(x, MaxNesting+1); d > MaxNesting {
				t.Fatalf("parseArith accepted depth %d", d)
			}
		}
		parseWords(src)
	})
}

// FuzzArith evaluates text as arithmetic, both from a variable's value and
// inline: the Run ends, within its time limit, with a status.
func FuzzArith(f *testing.F) {
	for _, s := range []string{"1+2*3", "a=a", "x", "2**62", "1/0", "(((1)))", "a[1]=2, a[1]", "~-1<<63",
		strings.Repeat("(", 2000) + "1", "x++ + ++x", "08", "0x", "64#zz", "b=a, a=b, a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		old := debug.SetMaxStack(64 << 20)
		defer debug.SetMaxStack(old)
		sh := fuzzShell(t, "X="+expr, "a=a", "b=a")
		for _, script := range []string{`echo $((X))`, `(( X )); echo $?`, `echo ${X:0:X}`, `a=(1 2); echo ${a[X]}`} {
			runBounded(t, sh, script)
		}
	})
}

// FuzzPattern matches subjects against patterns as glob, extglob, [[ == ]],
// case and ${s//pat/}: the Run ends, within its time limit.
func FuzzPattern(f *testing.F) {
	for _, s := range [][2]string{{"*", "abc"}, {"@(a|b)", "a"}, {"!(x)*", "xy"}, {"[!]a]", "]"},
		{"+(a*(b))", "abbb"}, {strings.Repeat("@(", 300) + "a", "a"}, {"\\", "\\"}, {"[[:alpha:]]", "\xff"},
		{"*(*(*(*(a))))b", strings.Repeat("a", 40)}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, subj string) {
		old := debug.SetMaxStack(64 << 20)
		defer debug.SetMaxStack(old)
		sh := fuzzShell(t, "P="+pat, "S="+subj)
		runBounded(t, sh, `[[ $S == $P ]]; echo $?; case $S in $P) echo m;; esac; echo "${S//$P/x}" "${S#$P}" "${S%%$P}"; echo /tmp/$P`)
	})
}

func runBounded(t *testing.T, sh *Shell, script string) {
	t.Helper()
	start := time.Now()
	st, err := sh.Run(context.Background(), script, strings.NewReader(""), nil, nil)
	if err != nil {
		t.Fatalf("%q: Run: %v", script, err)
	}
	if st < 0 || st > 255 {
		t.Fatalf("%q: status %d", script, st)
	}
	if d := time.Since(start); d > 2*time.Second+time.Second {
		t.Fatalf("%q: took %v (limit 2s)", script, d)
	}
}
