package shell

import "testing"

// Found running bats-core and bash's example functions (conformance/programs):
// `set -euo pipefail` took pipefail for a positional parameter, $- of a
// script file said s, and a bracket expression opening with '-' ([-+]*)
// never matched. Expectations recorded from bash 5.2 (bash -c, LC_ALL=C).
func TestSetClusterDashFlagsBracketDash(t *testing.T) {
	checkRecorded(t, []recorded{
		{"set -euo pipefail; echo \"$# [$*]\"; shopt -o pipefail errexit nounset", "0 []\npipefail       \ton\nerrexit        \ton\nnounset        \ton\n", ""},
		{"set -oo pipefail errexit; echo \"$# [$*]\"; shopt -o pipefail errexit", "0 []\npipefail       \ton\nerrexit        \ton\n", ""},
		{"set -ou pipefail a b; echo \"$# [$*]\"; shopt -o pipefail nounset", "2 [a b]\npipefail       \ton\nnounset        \ton\n", ""},
		{"set -o pipefail; set +eo pipefail x; echo \"$# [$*]\"; shopt -o pipefail", "1 [x]\npipefail       \toff\n", ""},
		{"set -eo nosuch; echo \"rc=$?\"", "", "bash: line 1: set: nosuch: invalid option name\n"},
		{"printf 'echo \"[$-]\"\\n' > s.sh; bash s.sh; bash -c 'echo \"[$-]\"'; echo 'echo \"[$-]\"' | bash; (bash s.sh)", "[hB]\n[hBc]\n[hBs]\n[hB]\n", ""},
		{"for v in -3 +3 x3 - 3; do case $v in [-+]*) echo \"$v signed\";; *) echo \"$v plain\";; esac; done", "-3 signed\n+3 signed\nx3 plain\n- signed\n3 plain\n", ""},
		{"for v in -3 +3 x3 ']' a; do [[ $v == [!-+]* ]] && echo \"$v no sign\" || echo \"$v sign\"; done", "-3 sign\n+3 sign\nx3 no sign\n] no sign\na no sign\n", ""},
		{"[[ - == [-] ]] && echo one; [[ ] == []-] ]] && echo two; [[ a- == ?[-a] ]] && echo three; [[ b == [[:alpha:]-] ]] && echo four", "one\ntwo\nthree\nfour\n", ""},
		{"touch -- -f +g h; echo [-+]*; echo [!-+]*", "+g -f\nh\n", ""},
	}, false)
}

// eval NAME=( ... ) is parsed as declare's compound assignments are (bash's
// examples/functions/autoload.v2); the words inside are eval's arguments.
// Recorded from bash 5.2.
func TestEvalCompoundAssignment(t *testing.T) {
	checkRecorded(t, []recorded{
		{"x=(a b); eval y=( ${x[@]} ); echo \"${y[@]}\"", "a b\n", ""},
		{"eval y=([2]=a [5]=b); declare -p y", "declare -a y=([2]=\"a\" [5]=\"b\")\n", ""},
		{"eval -- y=(1 2); eval y+=(3); echo ${#y[@]}", "3\n", ""},
		{"v=\"1 2\"; eval y=( $v \"\\$v\" ); declare -p y", "declare -a y=([0]=\"1\" [1]=\"2\" [2]=\"1\" [3]=\"2\")\n", ""},
		{"if true; then eval y=(q); fi; echo $y", "q\n", ""},
		{"eval y=(\na\nb\n); echo ${#y[@]} $LINENO", "2 4\n", ""},
		{"f() { local -a l; eval l=( \"$@\" ); echo ${#l[@]}; }; f 'a b' c", "3\n", ""},
	}, true)
}

// (( at a command's start whose inner group a quote or a line separates
// from its ')' is two subshells when that ')' is not followed by another,
// as bash's matching reads it (gzip's zdiff). Recorded from bash 5.2.
func TestDoubleParenSubshellsPastQuotes(t *testing.T) {
	checkRecorded(t, []recorded{
		{"((echo \"a b\"\necho c) | tr a-c A-C)", "A B\nC\n", ""},
		{"x=$( ( (echo \"in\"; echo $? >&2) 2>&1 | ((cat \"-\"\necho after) ) ) ); echo \"$x\"", "in\n0\nafter\n", ""},
		{"x=3; (( x == 3 )) && echo arith; (( \"1\" + 2 == 3 )) && echo dq", "arith\ndq\n", ""},
	}, true)
}

// set -x as bash 5.2 traces (recorded): assignments with the value quoted,
// for and case headers as written, (( )) and each [[ ]] test, prefix
// assignments on lines of their own, PS4 expanded and its first character
// repeated per eval or command substitution level; declaration builtins
// with their words as words (export and readonly trace the assignment too).
func TestXtraceLikeBash(t *testing.T) {
	checkRecorded(t, []recorded{
		{"{ set -x; f() { local y=\"a b\" z; local q=5; declare -i k=1+2; readonly R=; export E=$HOME F; declare -x X=$((1+1)); }; f; set +x; } 2>&1", "+ f\n+ local 'y=a b' z\n+ local q=5\n+ declare -i k=1+2\n+ readonly R=\n+ R=\n+ export E=/home/user F\n+ E=/home/user\n+ declare -x X=2\n+ set +x\n", ""},
		{"{ set -x; x='~'; y=\"a b\"; z=; echo \"$y\" $x; set +x; } 2>&1", "+ x='~'\n+ y='a b'\n+ z=\n+ echo 'a b' '~'\na b ~\n+ set +x\n", ""},
		{"{ set -x; for i in \"a b\" c; do :; done; n=2; (( n++ )); (( n > 1 )); [[ -n $n && $n == [0-9] ]]; [[ ! -z $n ]]; [[ $n ]]; set +x; } 2>&1", "+ for i in \"a b\" c\n+ :\n+ for i in \"a b\" c\n+ :\n+ n=2\n+ ((  n++  ))\n+ ((  n > 1  ))\n+ [[ -n 3 ]]\n+ [[ 3 == [0-9] ]]\n+ [[ ! -z 3 ]]\n+ [[ -n 3 ]]\n+ set +x\n", ""},
		{"{ set -x; case \"$HOME x\" in *) ;; esac; arr=( 1   \"2 3\" ); arr+=(z); z=1 true; set +x; } 2>&1", "+ case \"$HOME x\" in\n+ arr=(1 \"2 3\")\n+ arr+=(z)\n+ z=1\n+ true\n+ set +x\n", ""},
		{"{ set -x; eval 'echo ev'; x=$(echo cs; y=$(echo cs2)); f() { echo fn; }; f; set +x; } 2>&1", "+ eval 'echo ev'\n++ echo ev\nev\n++ echo cs\n+++ echo cs2\n++ y=cs2\n+ x=cs\n+ f\n+ echo fn\nfn\n+ set +x\n", ""},
		{"{ PS4='+$LINENO: '; set -x; echo one; PS4='[${#FUNCNAME[@]}] '; echo two; set +x; } 2>&1", "+1: echo one\none\n+1: PS4='[${#FUNCNAME[@]}] '\n[0] echo two\ntwo\n[0] set +x\n", ""},
	}, true)
}
