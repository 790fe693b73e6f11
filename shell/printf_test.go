package shell

import (
	"strings"
	"testing"
)

// TestPrintfNumbers: 'c arguments (a blank c too) and * widths convert as
// %d arguments do (outputs and statuses are real bash 5.2's).
func TestPrintfNumbers(t *testing.T) {
	tests := []struct {
		in, out string
		st      int
	}{
		{`printf '%d|%+d|%#x|' "' " "' " "' "`, "32|+32|0x20|", 0},
		{`printf '%05d|' "'x"`, "00120|", 0},
		{`printf '%-*d|' 0x1F 255`, "255                            |", 0},
		{`printf '%*d|' '"d' 7`, "                                                                                                   7|", 0},
		{`printf '%*d|' '  ' 3`, "3|", 1},
		{`printf '%d|' '  '`, "0|", 1},
		{`printf '%d|' ''`, "0|", 0},
		{`printf '%.*f|' 2 3.14159`, "3.14|", 0},
		{`printf '%.*f|' -3 -2`, "-2.000000|", 0},
		{`printf '%c|%c|' a`, "a|\x00|", 0},
		{`printf '%c|' ''`, "\x00|", 0},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out != tt.out || st != tt.st {
			t.Errorf("%s: %q status %d, want %q %d (stderr %q)", tt.in, out, st, tt.out, tt.st, errs)
		}
	}
}

// TestDeclarePQuoting: declare -p uses $'...' for control characters and
// bytes that are no character (real bash 5.2's output, LC_ALL=C.UTF-8).
func TestDeclarePQuoting(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, `a=(x $'y\nz'); declare -A m=([$'k\tj']=$'v\x01'); x=$'\e[1m'; u=$'\xff'; w='it"s ünï'; declare -A k=([$'\x7f']=1); declare -p a m x u w k`)
	want := "declare -a a=([0]=\"x\" [1]=$'y\\nz')\ndeclare -A m=([$'k\\tj']=$'v\\001' )\ndeclare -- x=$'\\E[1m'\ndeclare -- u=$'\\377'\ndeclare -- w=\"it\\\"s ünï\"\ndeclare -A k=([$'\\177']=\"1\" )\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s(stderr %q)", out, want, errs)
	}
}

// TestReturnTrap: a function runs the RETURN trap only when it set it
// itself, or under functrace (real bash 5.2's output).
func TestReturnTrap(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, `g() { trap "echo ret-g" RETURN; echo g; }; trap "echo top" RETURN; g; trap -p RETURN; h() { echo h; }; h; set -o functrace; h`)
	want := "g\nret-g\ntrap -- 'echo ret-g' RETURN\nh\nh\nret-g\n"
	if out != want {
		t.Errorf("got %q, want %q (stderr %q)", out, want, errs)
	}
}

// TestArithSingleQuotes: single quotes in arithmetic are a syntax error in
// bash 5.2 (not a character code).
func TestArithSingleQuotes(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, "echo $(('a'))\n(( '1' )); echo $?\necho $(( 1 + \"2\" ))")
	if out != "1\n3\n" || !strings.Contains(errs, "operand expected") {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
}

// TestAssocEmptyKey: assigning to an empty associative key is an error that
// abandons the line, through functions (real bash 5.2's output).
func TestAssocEmptyKey(t *testing.T) {
	sh := newTestShell(t, Limits{})
	src := "declare -A m; a=; m[$a]=x; echo same $?\necho next $?\nf() { m[$a]=y; echo inf; }; f; echo same2\necho n2\nm[\"$a\"]+=z; echo s3\necho ${#m[@]}\n"
	out, errs, _ := runScript(t, sh, src)
	if out != "next 1\nn2\n0\n" || strings.Count(errs, "bad array subscript") != 3 {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
}

// TestAssocEmptyKeyCompound: an empty key in a compound assignment is
// reported and skipped; the others are assigned (bash 5.2).
func TestAssocEmptyKeyCompound(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, "declare -A m=([$x]=1 [a]=2); echo st $?; declare -p m")
	if out != "st 0\ndeclare -A m=([a]=\"2\" )\n" || !strings.Contains(errs, "bad array subscript") {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
}

// TestArithTrailingGarbage: an arithmetic string the parser reads only in
// part is a syntax error; in declare it abandons the line (bash 5.2).
func TestArithTrailingGarbage(t *testing.T) {
	sh := newTestShell(t, Limits{})
	out, errs, _ := runScript(t, sh, "declare -i x=7\ndeclare -u x=a:b:c; echo \"$x\"\necho next $? $x\ny='1 2'; echo $((y))\necho end")
	if out != "next 1 7\nend\n" || !strings.Contains(errs, "syntax error in expression") {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
}
