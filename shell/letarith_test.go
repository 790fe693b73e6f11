package shell

import "testing"

// let is a builtin like any other to bash: its arguments are words
// (redirections, quotes and expansions as usual), each evaluated in turn;
// and arithmetic errors name the whole expression as written and the text
// from where bash's evaluator stood (recorded from bash 5.2 reading the
// script on stdin).
func TestLetAndArithMessages(t *testing.T) {
	checkRecorded(t, []recorded{
		{"let x=2**3 y=x+1 2>/dev/null; echo $? $x $y", "0 8 9\n", ""},
		{"let 0 2>/dev/null; echo $?; let '1 ? 0 : 1'; echo $?; let x=010 y=0x10; echo $x $y", "1\n1\n8 16\n", ""},
		{"let x=; echo $?; let - 1; echo $?; let; echo $?; let -- 1; echo $?; let ++x+ 2; echo $?", "1\n1\n1\n0\n1\n", "bash: line 1: let: x=: syntax error: operand expected (error token is \"=\")\nbash: line 1: let: -: syntax error: operand expected (error token is \"-\")\nbash: line 1: let: expression expected\nbash: line 1: let: ++x+: syntax error: operand expected (error token is \"+\")\n"},
		{"a=\"1+2\"; let z=$a*2; echo $z; let \"w = a * 2\"; echo $w", "5\n6\n", ""},
		{"cd /tmp; let x=1>letout; echo $? $x; cat letout; rm letout", "0 1\n", ""},
		{"let x++ x++ 'y = x << 3'; echo $? $x $y", "0 2 16\n", ""},
		{"f() { let x=1 \"y = 2\"; let z++; }; declare -f f; set -x; let a=1+1; set +x; echo \"let b\" let", "f () \n{ \n    let x=1 \"y = 2\";\n    let z++\n}\nlet b let\n", "+ let a=1+1\n+ set +x\n"},
		{"function let { echo fn \"$@\"; }; let x; unset -f let; let x=4; echo $x; for let in 1 2; do echo $let; done; let=5; (( let += 2 )); echo $let ${let}", "fn x\n4\n1\n2\n7 7\n", ""},
		{"cat <<let\nlet x\nlet\necho done", "let x\ndone\n", ""},
		{"echo $(( 5 / 0 )); echo after", "", "bash: line 1: 5 / 0 : division by 0 (error token is \"0 \")\n"},
		{"x=0; echo $(( 7 % x ))\n(( 5 / 0 )); echo $?\necho $[ 4/0 ]", "1\n", "bash: line 1: 7 % x : division by 0 (error token is \"x \")\nbash: line 2: ((: 5 / 0 : division by 0 (error token is \"0 \")\nbash: line 3: 4/0 : division by 0 (error token is \"0 \")\n"},
		{"echo $(( 2 ** -1 + 3 ))\necho $(( 2 ** (0-1) ))", "", "bash: line 1: 2 ** -1 + 3 : exponent less than 0 (error token is \"+ 3 \")\nbash: line 2: 2 ** (0-1) : exponent less than 0 (error token is \") \")\n"},
		{"x=5; echo $(( x /= 0 + 0 ))", "", "bash: line 1: x /= 0 + 0 : division by 0 (error token is \"0 \")\n"},
		{"x=5; echo $(( (x /= 0) + 1 ))", "", "bash: line 1: (x /= 0) + 1 : division by 0 (error token is \") + 1 \")\n"},
		{"echo $(( 4 / ( 1 - 1 ) * 3 ))", "", "bash: line 1: 4 / ( 1 - 1 ) * 3 : division by 0 (error token is \"( 1 - 1 ) * 3 \")\n"},
		{"y=0; echo $(( 4 / $y ))\necho $(( 4 / ${y} + 1 ))", "", "bash: line 1: 4 / 0 : division by 0 (error token is \"0 \")\nbash: line 2: 4 / 0 + 1 : division by 0 (error token is \"0 + 1 \")\n"},
		{"a=(0); echo $(( 1 / a[0] ))\nz=' 1/0 '; echo $(( z + 1 ))", "", "bash: line 1: 1 / a[0] : division by 0 (error token is \"a[0] \")\nbash: line 2: 1/0 : division by 0 (error token is \"0 \")\n"},
		{"echo $(( 1 ? 2 / 0 : 3 ))\nlet \"x = 5 / 0 \"; echo $?", "1\n", "bash: line 1: 1 ? 2 / 0 : 3 : division by 0 (error token is \"0 : 3 \")\nbash: line 2: let: x = 5 / 0 : division by 0 (error token is \"0 \")\n"},
		// a quote in a value evaluated as arithmetic is no operand
		{"a='\"dq\"'\necho $(( a )); echo next", "", "bash: line 2: \"dq\": syntax error: operand expected (error token is \"\"dq\"\")\n"},
		{"a='\"5\"'; declare -i x=1; x=a; echo $? $x", "", "bash: line 1: \"5\": syntax error: operand expected (error token is \"\"5\"\")\n"},
		{"let '\"5\"+1'; echo $?; echo $(( \"5\" + 1 )); b=(1 2); echo ${b[\"1\"]} $(( b[\"0\"] + 1 ))", "1\n6\n2 2\n", "bash: line 1: let: \"5\"+1: syntax error: operand expected (error token is \"\"5\"+1\")\n"},
	}, true)
}
