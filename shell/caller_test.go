package shell

import "testing"

// caller reads the call stack as bash 5.2's does: BASH_LINENO[N],
// FUNCNAME[N+1] and BASH_SOURCE[N+1], status 1 past them (recorded from
// bash reading the script on stdin, where no frame is "main").
func TestCallerFrames(t *testing.T) {
	checkRecorded(t, []recorded{
		{"f() { caller 0; echo $?; caller 1; echo $?; caller 2; echo $?; caller; }\ng() { f; }\ng\ncaller; echo $?", "2 g main\n0\n1\n1\n2 main\n1\n", ""},
		{"f() { caller x; echo $?; caller -- 0; echo \"${BASH_LINENO[@]}\" \"${FUNCNAME[@]}\" \"${BASH_SOURCE[@]}\"; }\n\nf", "2\n3 f main\n", "main: line 1: caller: x: invalid number\ncaller: usage: caller [expr]\n"},
	}, true)
}
