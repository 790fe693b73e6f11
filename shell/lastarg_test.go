package shell

import "testing"

// $_ as bash 5.2 sets it: the last word of the command before, a
// function's body starting with the $_ before the call and the call's last
// word after it, empty after assignments alone, a declaration's last word
// as expanded; and declare -p and ${!a[@]} of the shell's own arrays
// (recorded from bash reading the script on stdin).
func TestLastArgAndShellArrays(t *testing.T) {
	checkRecorded(t, []recorded{
		{"true a b; x=$_; echo \"$x\"; f() { echo \"in:$_\"; : x y; }; f one two; echo \"$_\"", "b\nin:b\ntwo\n", ""},
		{"echo a b >/dev/null; echo \"$_\"; x=1; echo \"[$_]\"; echo c; x=$(echo q); echo \"[$_]\"", "b\n[]\nc\n[]\n", ""},
		{"echo a; [[ -n z ]]; echo $_; (( 1 )); echo $_; declare -i q=3; echo $_; local 2>/dev/null; echo $_", "a\na\na\nq=3\nlocal\n", ""},
		{"declare -a a=(1 2); echo $_; export X=1 Y; echo $_; declare >/dev/null; echo $_; declare -p a >/dev/null; echo $_; declare x=$HOME; echo $_; declare y+=\"a b\"; echo $_", "a\nY\ndeclare\na\nx=/home/user\ny+=a b\n", ""},
		{"for i in p q; do :; done; echo \"$_\"; [ -n x ]; echo \"$_\"; : \"$a\"; echo \"[$_]\"", ":\n]\n[]\n", ""},
		{"declare -p FUNCNAME BASH_LINENO BASH_SOURCE; f() { declare -p FUNCNAME BASH_LINENO; echo ${!FUNCNAME[@]} ${!PIPESTATUS[@]} ${!RANDOM[@]}; }; f", "declare -a FUNCNAME\ndeclare -a BASH_LINENO=()\ndeclare -a BASH_SOURCE=()\ndeclare -a FUNCNAME=([0]=\"f\")\ndeclare -a BASH_LINENO=([0]=\"1\")\n0 0 0\n", ""},
	}, true)
}
