package shell

import "testing"

// Arithmetic syntax errors as bash 5.2 words them: the expression from its
// first non-blank, the message, and the text from the token where bash
// stopped (its lexer, not this parser, decides where that is); integer
// constants read by bash's rules.
func TestArithSyntaxErrors(t *testing.T) {
	checkRecorded(t, []recorded{
		{"echo $(( 7 = 43 ))", "", "bash: line 1: 7 = 43 : attempted assignment to non-variable (error token is \"= 43 \")\n"},
		{"echo $(( 1 ? 20 : x+=2 ))", "", "bash: line 1: 1 ? 20 : x+=2 : attempted assignment to non-variable (error token is \"+=2 \")\n"},
		{"let 'rv = 7 + (43 * 6'", "", "bash: line 1: let: rv = 7 + (43 * 6: missing `)' (error token is \"6\")\n"},
		{"echo $(( 4 ? : 3 + 5 ))", "", "bash: line 1: 4 ? : 3 + 5 : expression expected (error token is \": 3 + 5 \")\n"},
		{"echo $(( 1 ? 20 ))", "", "bash: line 1: 1 ? 20 : `:' expected for conditional expression (error token is \"20 \")\n"},
		{"echo $(( 0 && B=42 ))", "", "bash: line 1: 0 && B=42 : attempted assignment to non-variable (error token is \"=42 \")\n"},
		{"x=4; echo $(( x++=7 ))", "", "bash: line 1: x++=7 : attempted assignment to non-variable (error token is \"=7 \")\n"},
		{"echo $(( --x=7 ))", "", "bash: line 1: --x=7 : attempted assignment to non-variable (error token is \"=7 \")\n"},
		{"(( a @ 2 )); echo $?", "1\n", "bash: line 1: ((: a @ 2 : syntax error: invalid arithmetic operator (error token is \"@ 2 \")\n"},
		{"echo $(( 1 + 2 3 ))", "", "bash: line 1: 1 + 2 3 : syntax error in expression (error token is \"3 \")\n"},
		{"x='1 +'; echo $(( x ))", "", "bash: line 1: 1 +: syntax error: operand expected (error token is \"+\")\n"},
		{"echo $(( a[1 + 2 ))", "", "bash: line 1: a[1 + 2 : bad array subscript (error token is \"a[1 + 2 \")\n"},
		{"echo $(( 08 + 1 ))", "", "bash: line 1: 08: value too great for base (error token is \"08\")\n"},
		{"echo $(( 2#3 ))", "", "bash: line 1: 2#3: value too great for base (error token is \"2#3\")\n"},
		{"echo $(( 65#1 ))", "", "bash: line 1: 65#1: invalid arithmetic base (error token is \"65#1\")\n"},
		{"echo $(( 1 + , 2 ))", "", "bash: line 1: 1 + , 2 : syntax error: operand expected (error token is \", 2 \")\n"},
		{"y='3 4'; echo $(( y + 1 ))", "", "bash: line 1: 3 4: syntax error in expression (error token is \"4\")\n"},
		{"echo $((0x)) $((0x1f)) $((64#_@)) $((36#Zz)) $((010)) $((16#fF))", "0 31 4094 1295 8 255\n", ""},
		{"echo $((0#4))", "", "bash: line 1: 0#4: invalid number (error token is \"0#4\")\n"},
		{"echo $((2#110#11))", "", "bash: line 1: 2#110#11: invalid number (error token is \"2#110#11\")\n"},
		{"echo $((1#1))", "", "bash: line 1: 1#1: invalid arithmetic base (error token is \"1#1\")\n"},
		{"echo $((2#))", "", "bash: line 1: 2#: invalid integer constant (error token is \"2#\")\n"},
		{"x=4; echo $(( x++ + 1 )) $x; echo $(( x-- - 1)) $x", "5 5\n4 4\n", ""},
		{"echo $(( 1.5 ))", "", "bash: line 1: 1.5 : syntax error: invalid arithmetic operator (error token is \".5 \")\n"},
	}, true)
}
