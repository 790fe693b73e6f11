package shell

import "testing"

// break and continue as bash 5.2 counts them: capped at the loops there
// are (a C-style loop's step still runs), a count below 1 leaves every
// loop with status 1, a second operand abandons the line, a count that is no number ends
// the shell with 128 (the EXIT trap runs); outside a loop, in this
// function, only a warning (recorded from bash reading the script on
// stdin).
func TestLoopControlCounts(t *testing.T) {
	checkRecorded(t, []recorded{
		{"for ((i=0; i<3; i++)); do continue 2; done; echo $? $i", "0 3\n", ""},
		{"for ((i=0; i<4; i++)); do for ((j=0; j<3; j++)); do (( j == 2 )) && continue 3; echo $i$j; done; done; echo end $i", "00\n01\n10\n11\n20\n21\n30\n31\nend 4\n", ""},
		{"for ((i=0; i<3; i++)); do continue -1; echo no; done; echo $? $i", "1 0\n", "bash: line 1: continue: -1: loop count out of range\n"},
		{"for i in 1 2; do for j in a b; do break -2; done; echo inner; done; echo $?", "1\n", "bash: line 1: break: -2: loop count out of range\n"},
		{"while :; do break 0; done; echo st $?", "st 1\n", "bash: line 1: break: 0: loop count out of range\n"},
		{"for i in 1 2; do echo $i; break 1 2; done; echo after $?", "1\n", "bash: line 1: break: too many arguments\n"},
		{"trap 'echo T' EXIT; for i in 1; do break x; done; echo after", "T\n", "bash: line 1: break: x: numeric argument required\n"},
		{"( for i in 1; do continue 99999999999999999999; done; echo in ); echo out $?", "out 128\n", "bash: line 1: continue: 99999999999999999999: numeric argument required\n"},
		{"break; echo $?; continue 2; echo $?; f() { break; echo inf $?; }; for i in 1 2; do f; echo i$i; done", "0\n0\ninf 0\ni1\ninf 0\ni2\n", "bash: line 1: break: only meaningful in a `for', `while', or `until' loop\nbash: line 1: continue: only meaningful in a `for', `while', or `until' loop\nmain: line 1: break: only meaningful in a `for', `while', or `until' loop\nmain: line 1: break: only meaningful in a `for', `while', or `until' loop\n"},
		{"for i in 1 2 3; do echo $i; break -- 1; done; for i in a b; do while :; do echo $i; break 5; done; echo after $i; done; echo $?", "1\na\n0\n", ""},
		{"for (( i = 10, j = 0; i > j; i -= 4, j++ )); do echo $i $j; done; for ((;0;)); do echo never; done; echo $?", "10 0\n6 1\n0\n", ""},
		{"i=0; for ((;;)); do (( i++ >= 2 )) && break; echo $i; done; echo $i", "1\n2\n3\n", ""},
	}, true)
}
