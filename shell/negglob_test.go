package shell

import (
	"strings"
	"testing"
)

// TestExtglobNegation: !(list) in globs, case and [[ ]] (outputs are real
// bash 5.2's on the same tree).
func TestExtglobNegation(t *testing.T) {
	setup := "shopt -s extglob; cd /tmp; mkdir -p d/e && touch f1.txt f2.log .hid d/g.txt d/e/h.c\n"
	tests := []struct{ in, out string }{
		{"echo !(f1*)", "d f2.log\n"},
		{"echo !(*.txt|*.log)", "d\n"},
		{"echo f!(1).*", "f2.log\n"},
		{"echo !(f)*.txt", "f1.txt\n"},
		{"echo d/!(g*)", "d/e\n"},
		{"case abc in !(a*)) echo no;; *) echo yes;; esac", "yes\n"},
		{"[[ foo == !(bar) ]] && echo neg1", "neg1\n"},
		{"[[ foo.c == *.!(h) ]] && echo neg2", "neg2\n"},
		{"[[ x.h == *.!(h) ]] || echo neg3", "neg3\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, setup+tt.in)
		if out != tt.out {
			t.Errorf("%s: stdout %q, want %q (stderr %q)", tt.in, out, tt.out, errs)
		}
	}
}

// TestExtglobNegationBounded: a negation over a long subject stops at
// maxNegSteps with a limit error instead of running for minutes.
func TestExtglobNegationBounded(t *testing.T) {
	sh := newTestShell(t, Limits{})
	long := strings.Repeat("a", 120)
	_, errs, st := runScript(t, sh, "x="+long+"\n[[ $x == *!(b)*!(c)*b ]]; echo $?")
	if st != StatusLimit || !strings.Contains(errs, "pattern too complex") {
		t.Errorf("status %d stderr %q, want %d and the limit named", st, errs, StatusLimit)
	}
}

// TestFailglob: a pattern without match abandons the rest of its line (up
// to the top level, through functions), and the script goes on (real bash
// 5.2's output).
func TestFailglob(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, st := runScript(t, sh, "cd /tmp; shopt -s failglob; echo nomatch*; echo $?\necho next $?\nf() { echo in; echo nomatch*; echo after; }\nf; echo l4\necho l5\n")
	if out != "next 1\nin\nl5\n" || st != 0 || strings.Count(errs, "no match: nomatch*") != 2 {
		t.Errorf("stdout %q status %d stderr %q", out, st, errs)
	}
}

// TestGlobTrailingSlash: */ matches directories and keeps the slash.
func TestGlobTrailingSlash(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, "cd /tmp; mkdir -p d/e k; touch f; echo */; echo d/*/; echo /tm*/; shopt -s globstar; echo **/; echo d/**/")
	if out != "d/ k/\nd/e/\n/tmp/\nd/ d/e/ k/\nd/ d/e/\n" {
		t.Errorf("stdout %q (stderr %q)", out, errs)
	}
}

// TestArithErrors: an error in (( )) or let is status 1; one in $(( ))
// abandons its line (through functions) and the script goes on (real bash
// 5.2's output).
func TestArithErrors(t *testing.T) {
	sh := newTestShell(t, Limits{})
	src := "((1/0)); echo same $?\nf() { echo $((1/0)); echo inf; }\nf; echo l3\necho l4 $?\nx=$((1/0)) ; echo l5\nlet 1/0; echo l6 $?\necho l8\n"
	out, errs, st := runScript(t, sh, src)
	if out != "same 1\nl4 1\nl6 1\nl8\n" || st != 0 || strings.Count(errs, "division by 0") != 4 {
		t.Errorf("stdout %q status %d stderr %q", out, st, errs)
	}
}

// TestFailglobStdin: the same through RunStdinScript (bash < script).
func TestFailglobStdin(t *testing.T) {
	sh := newTestShell(t, Limits{})
	var out, errb strings.Builder
	st, err := sh.RunStdinScript(t.Context(), "cd /tmp; shopt -s failglob; echo nomatch*; echo $?\necho next $?\necho $((1/0)); echo same\n", &out, &errb)
	if err != nil || out.String() != "next 1\n" || st != 1 {
		t.Errorf("stdout %q status %d err %v stderr %q", out.String(), st, err, errb.String())
	}
}
