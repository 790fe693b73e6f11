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
