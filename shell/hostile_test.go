package shell

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// hostileMaxStack is the goroutine stack ceiling the hostile table runs
// under: 64 MiB, a sixteenth of Go's default 1 GiB. A script that got past
// a bound would end the test binary with "fatal error: stack overflow"
// (which no recover catches), so passing proves the bounds hold with a wide
// margin. Measured 2026-12-02 by lowering the ceiling: the parser at its
// frame cap (million parens, deep if, deep $(( ) needs 4-8 MiB, the
// runtime at MaxCallDepth (functions, $(...), eval, bash) 2-4 MiB.
const hostileMaxStack = 64 << 20

type hostileCase struct {
	name   string
	lim    Limits
	mem    int64 // commands.Memory budget (0: none)
	script string
	status int
	stderr string
	maxDur time.Duration // wall-clock bound (from the start of the Run)
}

func hostileCases() []hostileCase {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	nest := "nesting too deep (limit 1000)"
	return []hostileCase{
		{"million parens", Limits{}, 0, deep("(", "true", ")", 1_000_000), 2, nest, 5 * time.Second},
		{"million parens via eval", Limits{}, 0, "s='" + deep("(", "true", ")", 1_000_000) + "'; eval \"$s\"; echo after", 2, nest, 5 * time.Second},
		{"parens built at run time", Limits{}, 0, `s=true; for i in {1..3000}; do s="($s)"; done; eval "$s"`, 2, nest, 10 * time.Second},
		{"deep $((", Limits{}, 0, "echo $((" + deep("(", "1", ")", 200_000) + "))", 2, nest, 5 * time.Second},
		{"deep ${x:-", Limits{}, 0, "echo " + deep("${x:-", "a", "}", 200_000), 2, nest, 5 * time.Second},
		{"deep $(", Limits{}, 0, "echo " + deep("$(", "echo", ")", 200_000), 2, nest, 5 * time.Second},
		{"deep \"$(", Limits{}, 0, "echo " + deep("\"$(", "echo", ")\"", 50_000), 2, nest, 5 * time.Second},
		{"deep [[ (", Limits{}, 0, "[[ " + deep("( ", "a", " )", 200_000) + " ]]", 2, nest, 5 * time.Second},
		{"deep { }", Limits{}, 0, deep("{ ", "true", "; }", 200_000), 2, nest, 5 * time.Second},
		{"deep if", Limits{}, 0, deep("if true; then ", "true", "; fi", 100_000), 2, nest, 5 * time.Second},
		{"deep functions", Limits{}, 0, deep("f() { ", "true", "; }", 100_000), 2, nest, 5 * time.Second},
		{"deep arith string", Limits{}, 0, "x='" + deep("(", "1", ")", 100_000) + "'; echo $((x))", 2, nest, 5 * time.Second},
		{"deep subscript", Limits{}, 0, "a=(1); i='" + deep("(", "0", ")", 100_000) + "'; echo ${a[i]} ${a[$i]}", 2, nest, 5 * time.Second},
		{"deep trap string", Limits{}, 0, "trap '" + deep("(", "true", ")", 100_000) + "' USR1; kill -USR1 $$", 2, nest, 5 * time.Second},
		{"deep bash -c", Limits{}, 0, "bash -c '" + deep("(", "true", ")", 100_000) + "'", 2, nest, 5 * time.Second},
		{"deep $( in a here-doc", Limits{}, 0, "cat <<EOF\n" + deep("$(", "echo", ")", 100_000) + "\nEOF", 2, nest, 5 * time.Second},
		{"long && chain", Limits{}, 0, strings.Repeat("true && ", 5000) + "true", 2, nest, 5 * time.Second},
		{"trap re-raise", Limits{MaxLoopIters: 20_000}, 0, `trap 'kill -USR1 $$' USR1; kill -USR1 $$`, StatusLimit, "loop iteration limit exceeded (20000)", 10 * time.Second},
		// the subshell signals the top shell ($$), which runs the trap again
		// when the subshell is done: a loop, as in bash, bounded by the limits
		{"trap re-raise in subshell", Limits{MaxLoopIters: 20_000}, 0, `trap '(kill -USR1 $$)' USR1; kill -USR1 $$`, StatusLimit, "loop iteration limit exceeded (20000)", 10 * time.Second},
		{"recursive function", Limits{}, 0, `f() { f; }; f`, StatusLimit, "function nesting limit exceeded (1000)", 10 * time.Second},
		{"recursive function in $(", Limits{}, 0, `f() { echo $(f); }; f`, StatusLimit, "function nesting limit exceeded (1000)", 10 * time.Second},
		{"source self-loop", Limits{}, 0, `echo '. /tmp/s' > /tmp/s; . /tmp/s`, StatusLimit, "source nesting limit exceeded (1000)", 10 * time.Second},
		{"eval chain", Limits{}, 0, `s='eval "$s"'; eval "$s"`, StatusLimit, "eval nesting limit exceeded (1000)", 10 * time.Second},
		{"cmdsubst via eval", Limits{}, 0, `s='echo $(eval "$s")'; eval "$s"`, StatusLimit, "nesting limit exceeded (1000)", 10 * time.Second},
		{"nested bash", Limits{}, 0, `echo 'bash /tmp/b' > /tmp/b; bash /tmp/b`, StatusLimit, "nesting limit exceeded (1000)", 10 * time.Second},
		{"deep brace expansion", Limits{}, 0, "echo " + deep("{a,", "b", "}", 100_000), StatusLimit, "brace nesting too deep (100000 levels, limit 100)", 5 * time.Second},
		{"deep extglob", Limits{}, 0, "x='" + deep("@(", "a", ")", 100_000) + "'; [[ a == $x ]]", StatusLimit, "pattern too complex (100000 extglob groups, limit 12)", 5 * time.Second},
		{"deep extglob in case", Limits{}, 0, "x='" + deep("@(", "a", ")", 100_000) + "'; case a in $x) ;; esac", StatusLimit, "pattern too complex", 5 * time.Second},
		{"deep extglob in ${x//}", Limits{}, 0, "x='" + deep("@(", "a", ")", 100_000) + "'; y=abc; echo ${y//$x/b}", StatusLimit, "pattern too complex", 5 * time.Second},
		{"unclosed extglob groups", Limits{}, 0, "x='" + strings.Repeat("@([)]", 40) + "'; [[ a == $x ]]", StatusLimit, "pattern too complex (40 extglob groups, limit 12)", 5 * time.Second},
		{"deep regex", Limits{}, 0, "x='" + deep("(", "a", ")", 100_000) + "'; [[ a =~ $x ]]", 2, "", 5 * time.Second},
		// a width is output as it is made: under -v it is charged before it
		// is kept (the budget, then MaxStringBytes), on stdout it streams
		{"printf -v huge width", Limits{}, 16 << 20, `printf -v x '%1000000000s' a`, StatusLimit, "memory limit exceeded (16 MiB)", 5 * time.Second},
		{"printf -v width past a string", Limits{MaxStringBytes: 1 << 20}, 0, `printf -v x '%2000000000s' a`, StatusLimit, "string size limit exceeded", 5 * time.Second},
		{"printf huge width to stdout", Limits{MaxOutputBytes: 1 << 20}, 0, `printf '%2000000000s' a`, StatusLimit, "output limit exceeded", 5 * time.Second},
		{"string doubling", Limits{}, 16 << 20, `x=abcdefgh; while :; do x=$x$x; done`, StatusLimit, "memory limit exceeded (16 MiB)", 5 * time.Second},
		{"string doubling in array", Limits{}, 4 << 20, `a=(x); while :; do a+=("${a[@]}"); done`, StatusLimit, "memory limit exceeded (4 MiB)", 5 * time.Second},
		{"assoc growth", Limits{MaxArrayElems: 10_000_000, Timeout: 20 * time.Second}, 2 << 20, `declare -A m; i=0; while :; do m[k$i]=$i$i$i$i$i$i$i$i; i=$((i+1)); done`, StatusLimit, "memory limit exceeded (2 MiB)", 10 * time.Second},
		{"many variables", Limits{Timeout: 20 * time.Second}, 8 << 20, `x=0123456789abcdef; for i in {1..13}; do x=$x$x; done; i=0; while :; do eval "v$i=\${x}$i"; i=$((i+1)); done`, StatusLimit, "memory limit exceeded (8 MiB)", 10 * time.Second},
		{"fields of one command", Limits{}, 16 << 20, `x=0123456789abcdef; for i in {1..18}; do x=$x$x; done; echo $x $x $x $x $x $x $x $x | wc -c`, StatusLimit, "memory limit exceeded (16 MiB)", 5 * time.Second},
		{"command substitution", Limits{}, 16 << 20, `x=0123456789abcdef; for i in {1..14}; do x=$x$x; done; y=$(while :; do echo "$x"; done)`, StatusLimit, "memory limit exceeded (16 MiB)", 10 * time.Second},
		{"printf -v", Limits{}, 16 << 20, `x=0123456789abcdef; for i in {1..16}; do x=$x$x; done; i=0; while :; do printf -v "p$i" '%s%s' "$x" "$x"; i=$((i+1)); done`, StatusLimit, "memory limit exceeded (16 MiB)", 10 * time.Second},
		{"read into many variables", Limits{}, 8 << 20, `x=0123456789abcdef; for i in {1..16}; do x=$x$x; done; i=0; while :; do read -r "r$i" <<< "$x"; i=$((i+1)); done`, StatusLimit, "memory limit exceeded (8 MiB)", 10 * time.Second},
		{"mapfile", Limits{}, 8 << 20, `x=0123456789abcdef; for i in {1..16}; do x=$x$x; done; i=0; while :; do mapfile -t "m$i" <<< "$x"; i=$((i+1)); done`, StatusLimit, "memory limit exceeded (8 MiB)", 10 * time.Second},
		{"here-doc", Limits{}, 8 << 20, "x=0123456789abcdef; for i in {1..19}; do x=$x$x; done; \ncat <<EOF\n$x\nEOF", StatusLimit, "memory limit exceeded (8 MiB)", 10 * time.Second},
		{"huge substring arithmetic", Limits{Timeout: 2 * time.Second}, 8 << 20, `s=abc; while :; do t=${s:0:9223372036854775807}${s: -9223372036854775807:99999999999}${s:99999999999999}; done`, StatusTimeout, "time limit exceeded", 3 * time.Second},
		{"replace every character of 32 MiB", Limits{Timeout: time.Second}, 0, "x=0123456789abcdef; for i in {1..21}; do x=$x$x; done; while :; do y=${x//?/ab}; done", StatusTimeout, "time limit exceeded", 2 * time.Second},
		{"replace over the string limit", Limits{MaxStringBytes: 1 << 20}, 0, "x=0123456789abcdef; for i in {1..15}; do x=$x$x; done; y=${x//?/abc}", StatusLimit, "string size limit exceeded", 5 * time.Second},
		// 8 MiB: one ${x^^} of it must fit inside the second past the
		// deadline even under -race on a loaded 2-core machine.
		{"upper-case 8 MiB in a loop", Limits{Timeout: time.Second}, 0, "x=0123456789abcdef; for i in {1..19}; do x=$x$x; done; while :; do y=${x^^}; done", StatusTimeout, "time limit exceeded", 2 * time.Second},
		{"array growth timeout", Limits{Timeout: 2 * time.Second, MaxArrayElems: 100_000_000}, 0, `a=(); while :; do a+=($RANDOM); done`, StatusTimeout, "time limit exceeded", 3 * time.Second},
		{"arith self-reference", Limits{}, 0, `a=a; echo $((a))`, 1, "expression recursion level exceeded", 5 * time.Second},
		{"arith mutual reference", Limits{}, 0, `a=b b=a; echo $((a + 1))`, 1, "expression recursion level exceeded", 5 * time.Second},
	}
}

// TestHostile runs each hostile script under a 64 MiB stack ceiling and
// checks its status, its message, its time and that the Shell (and this
// process) goes on.
func TestHostile(t *testing.T) {
	old := debug.SetMaxStack(hostileMaxStack)
	defer debug.SetMaxStack(old)
	for _, tt := range hostileCases() {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, tt.lim)
			if tt.mem > 0 {
				sh.cfg.Sys = &commands.System{Memory: commands.NewMemory(tt.mem)}
			}
			start := time.Now()
			var out, errb bytes.Buffer
			st, err := sh.Run(context.Background(), tt.script, strings.NewReader(""), &out, &errb)
			d := time.Since(start)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			errs := errb.String()
			if st != tt.status {
				t.Errorf("status %d, want %d (stderr %.300q)", st, tt.status, errs)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %.300q does not mention %q", errs, tt.stderr)
			}
			if d > tt.maxDur {
				t.Errorf("took %v, bound %v", d, tt.maxDur)
			}
			o, e, st := runScript(t, sh, "echo ok")
			if o != "ok\n" || st != 0 {
				t.Errorf("next run: %q %q %d", o, e, st)
			}
		})
	}
}

// Bounds must not refuse ordinary input near them.
func TestNestingNotRefused(t *testing.T) {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	tests := []struct{ script, want string }{
		{deep("( ", "echo a", " )", 300), "a\n"},
		{"echo " + deep("${x:-", "b", "}", 300), "b\n"},
		{"echo $((" + deep("(", "2", ")", 300) + "))", "2\n"},
		{"echo " + deep("{a,", "b", "}", 100) + " | wc -w", "101\n"},
		{"x='" + deep("@(", "a", ")", 12) + "'; [[ a == $x ]] && echo m", "m\n"},
		{"x='" + strings.Repeat("@(", 12) + "'; [[ $x == $x ]] && echo u", "u\n"},
		{"p=$(printf '%.0s(' {1..1000}); [[ $p == \"$p\" ]] && echo eq", "eq\n"},
		{strings.Repeat("true && ", 500) + "echo c", "c\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.script)
		if out != tt.want || st != 0 {
			t.Errorf("%.60q: %q %.200q %d, want %q", tt.script, out, errs, st, tt.want)
		}
	}
}
