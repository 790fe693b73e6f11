package shell

import "testing"

// An operator among a compound assignment's words is a syntax error bash
// reports without ending the script: the command list up to the end of
// the bad line is dropped and $? is 1. Recorded from bash 5.2 (bash <file).
func TestBadArrayAssignment(t *testing.T) {
	checkRecorded(t, []recorded{
		{"echo a\ntest=(first & second)\necho $?\n", "a\n1\n", "bash: line 2: syntax error near unexpected token `&'\nbash: line 2: `test=(first & second)'\n"},
		{"echo a; x=(a & b)\necho $?; f() { y=(1 2\n3; 4); }\ntype f 2>&1 | head -1; echo x; y=(a | b) ; echo no\necho $?\n", "1\n", "bash: line 1: syntax error near unexpected token `&'\nbash: line 1: `echo a; x=(a & b)'\nbash: line 3: syntax error near unexpected token `;'\nbash: line 3: `3; 4); }'\nbash: line 4: syntax error near unexpected token `|'\nbash: line 4: `type f 2>&1 | head -1; echo x; y=(a | b) ; echo no'\n"},
		{"x=(a &> b)\nx=(a 2>b); echo $?\necho $?\n", "1\n", "bash: line 1: syntax error near unexpected token `&>'\nbash: line 1: `x=(a &> b)'\nbash: line 2: syntax error near unexpected token `2'\nbash: line 2: `x=(a 2>b); echo $?'\n"},
		{"f() {\n x=(a & b)\n echo in\n}\necho after\n", "in\n", "bash: line 2: syntax error near unexpected token `&'\nbash: line 2: ` x=(a & b)'\nbash: line 4: syntax error near unexpected token `}'\nbash: line 4: `}'\n"},
		{"cat <<E\nbody\nE\ny=(a ; b)\necho $?\n", "body\n1\n", "bash: line 4: syntax error near unexpected token `;'\nbash: line 4: `y=(a ; b)'\n"},
		{"trap 'echo ERR' ERR\nx=(a & b)\neval \"y=(\\\"it's\\\" | b)\"; echo $?\n", "ERR\n1\n", "bash: line 2: syntax error near unexpected token `&'\nbash: line 2: `x=(a & b)'\nbash: eval: line 3: syntax error near unexpected token `|'\nbash: eval: line 3: `y=(\"it's\" | b)'\n"},
		{"set -e\nx=(a & b)\necho still\n", "", "bash: line 2: syntax error near unexpected token `&'\n"},
		{"x=(a\n;b)\necho $?\n", "1\n", "bash: line 2: syntax error near unexpected token `;'\nbash: line 2: `;b)'\n"},
	}, true)
}
