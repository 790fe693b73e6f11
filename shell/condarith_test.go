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
