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

// TestPrintfBash: the printf builtin against real bash 5.2 (bash -c, LC_ALL
// C.UTF-8; stdout, stderr and status recorded from /usr/bin/bash): widths
// and precisions count bytes, -v (arrays too) and its errors, %n, %q, %Q,
// %(fmt)T in $TZ, %b, escapes, long double conversions, bad numbers and
// formats.
func TestPrintfBash(t *testing.T) {
	tests := []struct {
		in, out, err string
		st           int
	}{
		{`printf '%5s|%.2s|%-4s|%.1s|\n' é éé é é`, "   \xc3\xa9|\xc3\xa9|\xc3\xa9  |\xc3|\n", "", 0},
		{`printf '%3c|%-3s|%.3s|\n' é ü 日本`, "  \xc3|\xc3\xbc |\xe6\x97\xa5|\n", "", 0},
		{`printf -v 'a[1]' %s hi; declare -p a`, "declare -a a=([1]=\"hi\")\n", "", 0},
		{`declare -A m; printf -v 'm[k y]' %s v; declare -p m`, "declare -A m=([\"k y\"]=\"v\" )\n", "", 0},
		{`printf -v 1a x; echo $?`, "2\n", "bash: line 1: printf: `1a': not a valid identifier\n", 0},
		{`printf -v 'a[' x; echo $?`, "2\n", "bash: line 1: printf: `a[': not a valid identifier\n", 0},
		{`printf -x a; echo $?`, "2\n", "bash: line 1: printf: -x: invalid option\nprintf: usage: printf [-v var] format [arguments]\n", 0},
		{`printf -v; echo $?`, "2\n", "bash: line 1: printf: -v: option requires an argument\nprintf: usage: printf [-v var] format [arguments]\n", 0},
		{`printf; echo $?`, "2\n", "printf: usage: printf [-v var] format [arguments]\n", 0},
		{`printf -vx hi; echo "$x"`, "hi\n", "", 0},
		{`printf -v x -- %s hi; echo "$x"`, "hi\n", "", 0},
		{`printf -- -x; echo`, "-x\n", "", 0},
		{`printf 'ab%ncd\n' v; echo "$v"`, "abcd\n2\n", "", 0},
		{`printf '%n' 1a; echo $?`, "1\n", "bash: line 1: printf: `1a': not a valid identifier\n", 0},
		{`readonly x; printf 'a%nb\n' x; echo $?`, "ab\n0\n", "bash: line 1: x: readonly variable\n", 0},
		{`printf '%q\n' '' 'a b' $'\t' '~x' 'a~' 'a#b' '#a' "it's" é $'\xff'`, "''\na\\ b\n$'\\t'\n\\~x\na~\na#b\n\\#a\nit\\'s\n\xc3\xa9\n$'\\377'\n", "", 0},
		{`printf '%Q|%.2Q|\n' 'a b' 'a b'`, "a\\ b|a\\ |\n", "", 0},
		{`printf '%(%Y-%m-%d %H:%M:%S)T\n' 86400`, "1970-01-02 00:00:00\n", "", 0},
		{`TZ=JST-9 printf '%(%H)T\n' 0`, "09\n", "", 0},
		{`printf '%b|' '\101\0101' 'x\cy'; echo`, "AA|x\n", "", 0},
		{`printf 'x\cy\n'`, "x\\cy\n", "", 0},
		{`printf '%d|' abc 12x 0x1F "'a"; echo " $?"`, "0|12|31|97| 1\n", "bash: line 1: printf: abc: invalid number\nbash: line 1: printf: 12x: invalid number\n", 0},
		{`printf '%y'; echo $?`, "1\n", "bash: line 1: printf: `y': invalid format character\n", 0},
		{`printf '%5'; echo $?`, "1\n", "bash: line 1: printf: `%5': missing format character\n", 0},
		{`printf '%s-%s\n' a b c`, "a-b\nc-\n", "", 0},
		{`printf -v x '%s%b' $'\xff' 'a\c'; declare -p x`, "declare -- x=$'\\377a'\n", "", 0},
		{`printf -v x ''; declare -p x`, "declare -- x=\"\"\n", "", 0},
		{`printf '%*s|%-*s|\n' 4 a 4 b`, "   a|b   |\n", "", 0},
		{`printf '\x41\u00e9\U0001F600\101\n'`, "A\xc3\xa9\xf0\x9f\x98\x80A\n", "", 0},
		{`printf '%.3d|%+5.1f|%#o|%e\n' 7 2.25 8 1e999`, "007| +2.2|010|1.000000e+999\n", "", 0},
		{`printf '%.20f|%La|%g\n' 0.1 1 1e-5`, "0.10000000000000000000|0x8p-3|1e-05\n", "", 0},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out != tt.out || errs != tt.err || st != tt.st {
			t.Errorf("%s:\n got %q %q status %d\nwant %q %q status %d", tt.in, out, errs, st, tt.out, tt.err, tt.st)
		}
	}
}
