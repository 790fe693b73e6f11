package shell

import "testing"

// TestQuotingBash: each place the shell quotes a value (alias, set and
// declare listings, declare -p and its keys, complete -p, trap -p, ${x@Q} and
// ${x@A}, set -x) against real bash 5.2 (bash -c, LC_ALL C.UTF-8; stdout,
// stderr and status recorded from /usr/bin/bash). All of them are
// commands/bashfmt's quoting functions now.
func TestQuotingBash(t *testing.T) {
	tests := []struct {
		in, out, err string
		st           int
	}{
		{`alias a=$'l1\nl2' b='x y' c=plain d="it's" e= f=$'t\tb' g=\' h='a#b' i='~x'; alias`, "alias a='l1\nl2'\nalias b='x y'\nalias c='plain'\nalias d='it'\\''s'\nalias e=''\nalias f='t\tb'\nalias g=\\'\nalias h='a#b'\nalias i='~x'\n", "", 0},
		{`alias a=$'l1\nl2'; alias a; command -v a`, "alias a='l1\nl2'\n", "", 1},
		{`x=$'l1\nl2' y='a b' z= w=a=b,c v='~x' u='#x' t='a#b' s=$'\xff' r=é q='x~'; set | grep -a '^[x-zwvutsrq]='`, "q=x~\nr=\xc3\xa9\ns=$'\\377'\nt=a#b\nu='#x'\nv='~x'\nw=a=b,c\nx=$'l1\\nl2'\ny='a b'\nz=\n", "", 0},
		{`x=$'l1\nl2' y='a b' z= w=a=b,c v='~x' u='#x' t='a#b' s=$'\xff' r=é; declare | grep -a '^[x-zwvutsr]='`, "r=\xc3\xa9\ns=$'\\377'\nt=a#b\nu='#x'\nv='~x'\nw=a=b,c\nx=$'l1\\nl2'\ny='a b'\nz=\n", "", 0},
		{"x=$'l1\\nl2' y='a b' z= w=a=b,c v='~x' u='#x' t='a#b' s=$'\\xff' r=\xc3\xa9 p='a\"$`\\b'; declare -p x y z w v u t s r p", "declare -- x=$'l1\\nl2'\ndeclare -- y=\"a b\"\ndeclare -- z=\"\"\ndeclare -- w=\"a=b,c\"\ndeclare -- v=\"~x\"\ndeclare -- u=\"#x\"\ndeclare -- t=\"a#b\"\ndeclare -- s=$'\\377'\ndeclare -- r=\"\xc3\xa9\"\ndeclare -- p=\"a\\\"\\$\\`\\\\b\"\n", "", 0},
		{`for k in 'a b' '~' '#' é $'\t' '*' '|' '!' 'a~' '"' '[' 'x]' $'\u200b'; do declare -A n=(["$k"]=v); declare -p n; done`, "declare -A n=([\"a b\"]=\"v\" )\ndeclare -A n=([\"~\"]=\"v\" )\ndeclare -A n=([\"#\"]=\"v\" )\ndeclare -A n=([\xc3\xa9]=\"v\" )\ndeclare -A n=([$'\\t']=\"v\" )\ndeclare -A n=([\"*\"]=\"v\" )\ndeclare -A n=([\"|\"]=\"v\" )\ndeclare -A n=([\"!\"]=\"v\" )\ndeclare -A n=([a~]=\"v\" )\ndeclare -A n=([\"\\\"\"]=\"v\" )\ndeclare -A n=([\"[\"]=\"v\" )\ndeclare -A n=([\"x]\"]=\"v\" )\ndeclare -A n=([\xe2\x80\x8b]=\"v\" )\n", "", 0},
		{`complete -C 'my cmd' foo; complete -C plain bar; complete -W "'" x; complete -W 'a b' y; complete -p foo bar x y`, "complete -C 'my cmd' foo\ncomplete -C 'plain' bar\ncomplete -W \\' x\ncomplete -W 'a b' y\n", "", 0},
		{`x="it's"; y=$'a\nb'; z=; w=é; echo "${x@Q} ${y@Q} ${z@Q} ${w@Q}"; a=(p 'q r'); echo "${a[@]@Q}"; echo "${x@A}"`, "'it'\\''s' $'a\\nb' '' '\xc3\xa9'\n'p' 'q r'\nx='it'\\''s'\n", "", 0},
		{`declare -A m; m=(['']=x [a]=b); declare -p m`, "declare -A m=([a]=\"b\" )\n", "bash: line 1: ['']=x: bad array subscript\n", 0},
		{`set -x; : 'a b' $'\t' $'\n' '' x= é $'\xff' '~a' 'a~' '#a' 'a#' 'a=b' 'a,b' '{a}' 'a@b' '%' '!x' $'\r' if`, "", "+ : 'a b' '\t' '\n' '' x= \xc3\xa9 $'\\377' '~a' a~ '#a' a# a=b a,b '{a}' a@b % '!x' $'\\r' if\n", 0},
		{`trap "'" USR1; trap -p USR1; trap $'a\nb' USR2; trap -p USR2; trap '' INT; trap -p INT`, "trap -- \\' SIGUSR1\ntrap -- 'a\nb' SIGUSR2\ntrap -- '' SIGINT\n", "", 0},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out != tt.out || errs != tt.err || st != tt.st {
			t.Errorf("%s:\n got %q %q status %d\nwant %q %q status %d", tt.in, out, errs, st, tt.out, tt.err, tt.st)
		}
	}
}

// TestDollarSingleQuoteBash: $'...' (and ${x@E}) escapes against real bash 5.2 (bash -c;
// recorded from /usr/bin/bash): \cX (? is DEL, \c\\ one backslash), octal
// of 1 to 3 digits, \x of 1 or 2, \u and \U past U+10FFFF and on
// surrogates as bash encodes them, a NUL ending the word.
func TestDollarSingleQuoteBash(t *testing.T) {
	tests := []struct {
		in, out, err string
		st           int
	}{
		{`printf '%s' $'\cA|\ca|\c?|\c[|\c\\|\c1|\c' | od -An -tx1`, " 01 7c 01 7c 7f 7c 1b 7c 1c 7c 11 7c 5c 63\n", "", 0},
		{`printf '%s' $'\101|\0101|\1|\18|\400|\777' | od -An -tx1`, " 41 7c 08 31 7c 01 7c 01 38 7c\n", "", 0},
		{`printf '%s' $'\x41|\x4|\xg|\x414|\u00e9|\u|\U0001F600|\U|\uD800|\U110000' | od -An -tx1`, " 41 7c 04 7c 5c 78 67 7c 41 34 7c c3 a9 7c 5c 75\n 7c f0 9f 98 80 7c 5c 55 7c ed a0 80 7c f4 90 80\n 80\n", "", 0},
		{`printf '%s' $'\'|\"|\?|\e|\E|\a|\b|\f|\v|\q|\\|\z' | od -An -tx1`, " 27 7c 22 7c 3f 7c 1b 7c 1b 7c 07 7c 08 7c 0c 7c\n 0b 7c 5c 71 7c 5c 7c 5c 7a\n", "", 0},
		{`printf '%s' $'a\0b' | od -An -tx1`, " 61\n", "", 0},
		{`printf '%s' $'\u4|\u12345|\U7FFFFFFF' | od -An -tx1`, " 04 7c e1 88 b4 35 7c fd bf bf bf bf bf\n", "", 0},
		{`printf '%s' $'\c\d' | od -An -tx1`, " 1c 64\n", "", 0},
		{`x='a\cAb\\c?\x41\0z'; printf %s "${x@E}" | od -An -tx1`, " 61 01 62 5c 63 3f 41\n", "", 0},
		{`printf '%s' $'\\c\\\\x' | od -An -tx1`, " 5c 63 5c 5c 78\n", "", 0},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, st := runScript(t, sh, tt.in)
		if out != tt.out || errs != tt.err || st != tt.st {
			t.Errorf("%s:\n got %q %q status %d\nwant %q %q status %d", tt.in, out, errs, st, tt.out, tt.err, tt.st)
		}
	}
}
