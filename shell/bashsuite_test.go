package shell

import "testing"

// An arithmetic error in an operand of [[ -eq ]] and the like: bash names
// [[, the status is 1 and the line goes on. Recorded from bash 5.2.
func TestCondArithError(t *testing.T) {
	checkRecorded(t, []recorded{
		{"[[ 7 -eq 4+ ]]; echo st $?\n[[ 1 -lt 2 && 7 -eq 4+ ]] || echo or $?\n[[ x -eq 1/0 ]]; echo in $?\n[[ 2 -gt 1 ]]; echo $?\n", "st 1\nor 1\nin 1\n0\n", "bash: line 1: [[: 4+: syntax error: operand expected (error token is \"+\")\nbash: line 2: [[: 4+: syntax error: operand expected (error token is \"+\")\nbash: line 3: [[: 1/0: division by 0 (error token is \"0\")\n"},
		{"x=1+; [[ $x -lt 2 ]]; echo $?\n[[ a -eq a ]] && echo yes\n", "1\nyes\n", "bash: line 1: [[: 1+: syntax error: operand expected (error token is \"+\")\n"},
	}, true)
}

// In POSIX mode readonly and export list variables as readonly/export
// commands with only the array flags. Recorded from bash 5.2.
func TestPosixReadonlyList(t *testing.T) {
	checkRecorded(t, []recorded{
		{"readonly -a a=(1 2); declare -A m=([k]=v); readonly m; readonly z=3; export e=1\nset -o posix\nreadonly -a | grep -v VERSINFO\nreadonly -p | grep -v -e VERSINFO -e UID -e OPTS -e PPID\nexport -p | grep \" e=\"\nreadonly | grep \" z\"\nset +o posix\nreadonly -a|grep -v VERS\n", "readonly -a a=([0]=\"1\" [1]=\"2\")\nreadonly -a a=([0]=\"1\" [1]=\"2\")\nreadonly -A m=([k]=\"v\" )\nreadonly z=\"3\"\nexport e=\"1\"\nreadonly z=\"3\"\ndeclare -ar a=([0]=\"1\" [1]=\"2\")\n", ""},
	}, true)
}

// declare -a/-A with a quoted value reading (...) makes a compound
// assignment of it, expanded again. Recorded from bash 5.2.
func TestDeclareQuotedCompound(t *testing.T) {
	checkRecorded(t, []recorded{
		{"d=(x \"y z\")\ndeclare -a e='(1 \"2 3\")'; declare -p e\ndeclare -a f='(\"${d[@]}\")'; declare -p f\ne[10]=q; declare -a e[10]='(test)'; declare -p e\ng=1; declare -a g='(a b)'; declare -p g\ndeclare -a h=\"(a\"; declare -p h\ndeclare i='(a b)'; declare -p i\n", "declare -a e=([0]=\"1\" [1]=\"2 3\")\ndeclare -a f=([0]=\"x\" [1]=\"y z\")\ndeclare -a e=([0]=\"test\")\ndeclare -a g=([0]=\"a\" [1]=\"b\")\ndeclare -a h=([0]=\"(a\")\ndeclare -- i=\"(a b)\"\n", ""},
	}, true)
}

// Reading an element with a negative subscript out of range: bash names
// the array alone. Recorded from bash 5.2.
func TestNegativeSubscriptRead(t *testing.T) {
	checkRecorded(t, []recorded{
		{"a=(1 2 3)\necho ${a[-4]}\nx=${a[-5]}\necho \"${a[-6]}\" ok\ndeclare -a c; echo ${c[-4]}\necho ${SECONDS[-5]}\nx=ab; echo ${x[-3]}\n", "\n ok\n\n\n\n", "bash: line 2: a: bad array subscript\nbash: line 3: a: bad array subscript\nbash: line 4: a: bad array subscript\nbash: line 5: c: bad array subscript\nbash: line 6: SECONDS: bad array subscript\nbash: line 7: x: bad array subscript\n"},
	}, true)
}

// A negative subscript out of range on a readonly array is reported as a
// bad subscript: bash checks it first. Recorded from bash 5.2.
func TestReadonlyNegativeSubscript(t *testing.T) {
	checkRecorded(t, []recorded{
		{"a=(1 2); echo ${a[-4]}\ndeclare -a c; echo ${c[-4]}\nreadonly -a c; c[-2]=4\ndeclare -ar r=(1); r[-5]=1; r[0]=2\necho $?\nr[0]=2\n", "\n\n1\n", "bash: line 1: a: bad array subscript\nbash: line 2: c: bad array subscript\nbash: line 3: c[-2]: bad array subscript\nbash: line 4: r[-5]: bad array subscript\nbash: line 6: r: readonly variable\n"},
	}, true)
}

// unset a[@] empties an indexed array and keeps it declared; on an
// associative array @ is a key. Recorded from bash 5.2.
func TestUnsetAllElements(t *testing.T) {
	checkRecorded(t, []recorded{
		{"e=(1 2); unset e[*]; declare -p e\ndeclare -A m=([a]=1); unset m[@]; declare -p m\nf=(1); unset \"f[@]\"; echo ${#f[@]}; declare -p f\ndeclare -A n=([@]=1 [b]=2); unset 'n[@]'; declare -p n\ne+=(z); declare -p e\n", "declare -a e=()\ndeclare -A m=([a]=\"1\" )\n0\ndeclare -a f=()\ndeclare -A n=([b]=\"2\" )\ndeclare -a e=([0]=\"z\")\n", ""},
	}, true)
}
