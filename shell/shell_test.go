package shell

import (
	"strings"
	"testing"
	"time"
)

// runTests are {in, want} cases: want is stdout, then (after "\n#status ")
// an optional exit status. They run in one fresh sandbox each.
var runTests = []struct {
	in, want string
	status   int
}{
	{"echo hi", "hi\n", 0},
	{"false; echo $?", "1\n", 0},
	{"exit 7", "", 7},
	{"nosuchcmd", "", 127},
	{"x=1; { x=2; }; (x=3); echo $x", "2\n", 0},
	{"echo a | cat | cat", "a\n", 0},
	{"! true; echo $?", "1\n", 0},
	{"true && echo y || echo n; false && echo y || echo n", "y\nn\n", 0},
	{"for i in 1 2 3; do [ $i = 2 ] && continue; echo $i; done", "1\n3\n", 0},
	{"i=0; while (( i < 3 )); do ((i++)); done; echo $i", "3\n", 0},
	{"until false; do echo once; break; done", "once\n", 0},
	{"for ((i=0;i<3;i++)); do printf %s $i; done; echo", "012\n", 0},
	{"case abc in a*c) echo m;; *) echo n;; esac", "m\n", 0},
	{"shopt -s extglob; case foo.go in *.@(go|c)) echo src;; esac", "src\n", 0},
	{"f() { local x=$1; echo $((x*2)); }; f 21", "42\n", 0},
	{"f() { return 3; }; f; echo $?", "3\n", 0},
	{"fact() { (( $1 <= 1 )) && echo 1 && return; echo $(( $1 * $(fact $(( $1 - 1 ))) )); }; fact 5", "120\n", 0},
	{"a=(x 'y z'); a+=(w); echo ${#a[@]} \"${a[1]}\" ${a[-1]}", "3 y z w\n", 0},
	{"declare -A m=([k]=v); m[j]=w; echo ${m[k]}${m[j]} ${#m[@]}", "vw 2\n", 0},
	{"x=hello; echo ${x^^} ${x:1:3} ${x/l/L} ${x%lo} ${#x}", "HELLO ell heLlo hel 5\n", 0},
	{"declare -n r=t; t=1; r=2; echo $t", "2\n", 0},
	{"[[ foo123 =~ ([a-z]+)([0-9]+) ]] && echo ${BASH_REMATCH[2]}", "123\n", 0},
	{"echo $(( 2**10 )) $(( 7 / 2 )) $(( -7 % 3 )) $(( 0x1f )) $(( 2#101 ))", "1024 3 -1 31 5\n", 0},
	{"cat <<EOF\na $((1+1))\nEOF", "a 2\n", 0},
	{"cat <<'EOF'\n$x\nEOF", "$x\n", 0},
	{"cat <<< word", "word\n", 0},
	{"cat <<-EOF\n\tone\n\t\ttwo\n\tEOF\necho after", "one\ntwo\nafter\n", 0},
	{"set -x; echo hi 2>/dev/null", "hi\n", 0},
	{"echo err >&2 2>/dev/null; echo out 2>&1", "out\n", 0},
	{"exec 3>/tmp/f; echo to3 >&3; exec 3>&-; cat /tmp/f", "to3\n", 0},
	{"echo x > /tmp/g; exec 4</tmp/g; read l <&4; echo $l", "x\n", 0},
	{"{ echo a; echo b >&2; } 2>&1 | wc -l", "2\n", 0},
	{"echo data > /tmp/h; cat < /tmp/h; echo more >> /tmp/h; wc -l < /tmp/h", "data\n2\n", 0},
	{"cat <(echo in)", "in\n", 0},
	{"echo piped > >(cat)", "piped\n", 0},
	{"echo -n abc > /dev/null; cat /dev/null; head -c 3 /dev/zero | wc -c", "3\n", 0},
	{"echo $(echo a $(echo b))", "a b\n", 0},
	{"x=$(false); echo $?", "1\n", 0},
	{"set -e; false; echo no", "", 1},
	{"set -e; false || true; if false; then :; fi; echo yes", "yes\n", 0},
	{"set -u; echo $undefined_var; echo no", "", 1},
	{"set -o pipefail; false | true; echo $?", "1\n", 0},
	{"trap 'echo bye' EXIT; echo hi", "hi\nbye\n", 0},
	{"trap 'echo err' ERR; false; true", "err\n", 0},
	{"f() { trap 'echo ret' RETURN; :; }; f", "ret\n", 0},
	{"bash -c 'echo $0 $1' a b", "a b\n", 0},
	{"echo 'echo sourced $1' > /tmp/s.sh; source /tmp/s.sh x; . /tmp/s.sh y", "sourced x\nsourced y\n", 0},
	{"printf '#!/bin/bash\\necho script $#\\n' > /tmp/t.sh; chmod +x /tmp/t.sh; /tmp/t.sh a b", "script 2\n", 0},
	{"x=outer; bash -c 'echo ${x:-unset}'; export x; bash -c 'echo $x'", "unset\nouter\n", 0},
	{"alias ll='echo ll'; shopt -s expand_aliases\nll x", "ll x\n", 0},
	{"printf '%s=%d %q %5.2f|%-3s|\\n' a 42 'a b' 3.14159 x", "a=42 a\\ b  3.14|x  |\n", 0},
	{"printf -v v '%03d' 7; echo $v", "007\n", 0},
	{"read -r a b <<< 'one two three'; echo $a/$b", "one/two three\n", 0},
	{"mapfile -t L <<< $'x\\ny'; echo ${#L[@]} ${L[1]}", "2 y\n", 0},
	{"set -- a b c; shift; echo $# $@", "2 b c\n", 0},
	{"while getopts 'ab:' o -a -b v; do echo $o$OPTARG; done", "a\nbv\n", 0},
	{"cd /tmp; cd /; cd -; pwd; pushd /etc >/dev/null; popd >/dev/null; pwd", "/tmp\n/tmp\n/tmp\n", 0},
	{"type cd; type -t echo; command -v cd", "cd is a shell builtin\nbuiltin\ncd\n", 0},
	{"sleep 0.01 & wait $!; echo $?", "0\n", 0},
	{"(exit 3) & wait; echo done", "done\n", 0},
	{"echo {1..3} {a,b}c", "1 2 3 ac bc\n", 0},
	{"mkdir -p /tmp/gl; cd /tmp/gl; touch a.txt b.txt c.log; echo *.txt; shopt -s nullglob; echo *.none", "a.txt b.txt\n\n", 0},
	{"umask 027; umask", "0027\n", 0},
	{"echo $((RANDOM >= 0)) ${#BASHPID} $PPID", "1 1 0\n", 0},
	{"f() { echo ${FUNCNAME[0]}; }; f", "f\n", 0},
	{"x=5; let 'x += 2' y=3; echo $x $y", "7 3\n", 0},
	{"IFS=: read -ra p <<< 'a:b::c'; echo ${#p[@]}", "4\n", 0},
	{"echo ${undefined:-def} ${undefined:=set} $undefined", "def set set\n", 0},
	{"a=(3 1 2); echo ${a[@]:1} ${!a[@]}", "1 2 0 1 2\n", 0},
	{"echo 'a b' | { read x y; echo $y$x; }", "ba\n", 0},
	{"[ -d /tmp ] && [ ! -f /nope ] && test 2 -lt 10 && echo ok", "ok\n", 0},
	{"echo $'tab\\there'", "tab\there\n", 0},
	{"eval 'x=1; echo $x'", "1\n", 0},
	{"declare -i n=3; n+=4; echo $n; declare -u u=abc; echo $u", "7\nABC\n", 0},
	{"readonly r=1; r=2; echo $? $r", "", 1}, // bash leaves the shell
	{"time true", "", 0},
}

func TestRun(t *testing.T) {
	for _, tt := range runTests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out != tt.want || st != tt.status {
			t.Errorf("%q:\n got %q status %d (stderr %q)\nwant %q status %d", tt.in, out, st, errs, tt.want, tt.status)
		}
	}
}

// Messages follow bash's "bash: line N: ..." form.
func TestErrorMessages(t *testing.T) {
	tests := []struct{ in, stderr string }{
		{"\nnosuch", "bash: line 2: nosuch: command not found\n"},
		{"echo )", "bash: line 1: syntax error near unexpected token `)'\nbash: line 1: `echo )'\n"},
		{"cd /nonexistent", "bash: line 1: cd: /nonexistent: No such file or directory\n"},
		{"set -u; echo $zz", "bash: line 1: zz: unbound variable\n"},
		{"echo $((1/0))", "bash: line 1: 1/0: division by 0 (error token is \"0\")\n"},
		{"cat < /nope", "bash: line 1: /nope: No such file or directory\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		_, errs, _ := runScript(t, sh, tt.in)
		if errs != tt.stderr {
			t.Errorf("%q: stderr %q, want %q", tt.in, errs, tt.stderr)
		}
	}
}

func TestStdinScript(t *testing.T) {
	sh := newTestShell(t, Limits{})
	var out, errb strings.Builder
	st, err := sh.RunStdinScript(t.Context(), "read x\nthis line is data\necho got: $x\n", &out, &errb)
	if err != nil || st != 0 || out.String() != "got: this line is data\n" {
		t.Errorf("got %q %q %d %v", out.String(), errb.String(), st, err)
	}
}

// FuzzRun: no script may crash the interpreter or hit an internal error;
// limits keep each run short.
func FuzzRun(f *testing.F) {
	for _, tt := range runTests {
		f.Add(tt.in)
	}
	f.Add("${a[@]:1:2} ${!x*} ${x@Q} $(( a[1]++ )) <(:) >(:)")
	f.Add("declare -n r=r; echo $r; f() { f & }; f")
	f.Fuzz(func(t *testing.T, script string) {
		sh := newTestShell(t, Limits{Timeout: 200 * time.Millisecond, MaxLoopIters: 10000, MaxCommands: 10000, MaxJobs: 16, MaxOutputBytes: 1 << 16, MaxStringBytes: 1 << 16, MaxArrayElems: 1 << 12, MaxExpansion: 1 << 12})
		_, errs, _ := runScript(t, sh, script)
		if strings.Contains(errs, "internal error") {
			t.Fatalf("internal error for %q: %s", script, errs)
		}
	})
}
