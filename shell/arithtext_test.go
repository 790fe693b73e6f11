package shell

import "testing"

// TestArithTextDollar: text evaluated as arithmetic (let's arguments, a
// variable's value, declare -i) has been expanded already; a $ left in it
// is bash's "operand expected" error, not an expansion (recorded from bash
// 5.2; warren used to expand it silently).
func TestArithTextDollar(t *testing.T) {
	tests := []recorded{
		{`iv=3; jv=1; let 'jv += $iv'; echo st $? $jv`, "st 1 1\n", "bash: line 1: let: jv += $iv: syntax error: operand expected (error token is \"$iv\")\n"},
		{`iv=3; x='$iv'; echo $(( x + 1 )); echo next`, "", "bash: line 1: $iv: syntax error: operand expected (error token is \"$iv\")\n"},
		{`declare -i n; n="\$x"; echo $n`, "", "bash: line 1: $x: syntax error: operand expected (error token is \"$x\")\n"},
		{`x=3; i=1; a=(5 6); a[$i]=9; let "y = $x + 1"; echo $(( "$x" + 1 )) ${a[@]} $y`, "4 5 9 4\n", ""},
	}
	checkRecorded(t, tests, true)
}
