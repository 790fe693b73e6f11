package shell

import (
	"strings"
	"testing"
)

// FUNCNEST limits function nesting (the call that passes it fails and its
// command line is abandoned); in POSIX mode assignments before a special
// builtin stay in the shell (recorded from bash 5.2, tests/func3.sub and
// func4.sub).
func TestFuncnestAndSpecialAssign(t *testing.T) {
	checkRecorded(t, []recorded{
		{"FUNCNEST=2; f(){ g; echo after-g; }; g(){ h; echo after-h; }; h(){ :; }; f; echo same $?\necho next $?\nFUNCNEST=x; f; echo st=$?", "next 1\nafter-h\nafter-g\nst=0\n", "environment: line 1: h: maximum function nesting level exceeded (2)\n"},
		{"n=0; r(){ ((n++)); r; }; FUNCNEST=50; r\necho $? $n", "1 50\n", "environment: line 1: r: maximum function nesting level exceeded (50)\n"},
		{"set -o posix; x=1 :; echo $x; f(){ y=2 return 3; }; f; echo $? $y; z=4 eval \"true\"; echo $z; g(){ :; }; v=7 g; echo \"[$v]\"", "1\n3 2\n4\n[]\n", ""},
		{"x=1 :; echo \"[$x]\"", "[]\n", ""},
	}, false)
}

// The FUNCNEST message is bash's (its prefix is where the function was
// defined, main: here and environment: in bash -c).
func TestFuncnestMessage(t *testing.T) {
	sh := newTestShell(t, Limits{})
	_, errs, _ := runScript(t, sh, "FUNCNEST=1; f(){ g; }; g(){ :; }; f")
	if !strings.HasSuffix(errs, ": g: maximum function nesting level exceeded (1)\n") {
		t.Errorf("stderr %q", errs)
	}
}
