package shell

import "testing"

// export -f and readonly -f as bash 5.2 ran these: an exported function
// is in the environment as BASH_FUNC_name%% and a bash started from the
// shell has it; a readonly one cannot be redefined or unset; declare -F
// lists attributes, and names only when given names.
func TestFunctionAttributes(t *testing.T) {
	checkRecorded(t, []recorded{
		{"f(){ echo hi; local x; }; export -f f; env | grep -A2 BASH_FUNC_f; bash -c f; bash -c 'type -t f; declare -F'", "BASH_FUNC_f%%=() {  echo hi;\n local x\n}\nhi\nfunction\ndeclare -fx f\n", ""},
		{"f(){ :; }; export -f nosuch; echo st=$?; readonly -f f; f(){ echo new; }; echo st=$?; unset -f f; echo st=$?; declare -F; declare -F f", "st=1\nst=1\nst=1\ndeclare -fr f\nf\n", "bash: line 1: export: nosuch: not a function\nbash: line 1: f: readonly function\nbash: line 1: unset: f: cannot unset: readonly function\n"},
		{"f(){ :; }; g(){ :; }; export -f g; declare -xF; export -nf g; declare -xF; bash -c g; echo st=$?", "declare -fx g\nst=127\n", "bash: line 1: g: command not found\n"},
		{"f(){ :; }; declare -fx f; declare -F; export -f", "declare -fx f\nf () \n{ \n    :\n}\ndeclare -fx f\n", ""},
		{"f(){ echo \"a'b\" \"$1\"; }; export -f f; bash -c 'f x'; f(){ echo redefined; }; bash -c f; unset -f f; bash -c f 2>/dev/null; echo st=$?", "a'b x\nredefined\nst=127\n", ""},
	}, true)
}

// A function named like a path or an assignment is not exported, with
// bash's message, so a child never shadows /bin/echo with it.
func TestFunctionExportNames(t *testing.T) {
	checkRecorded(t, []recorded{
		{"function foo=bar { echo eq; }; export -f \"foo=bar\"; echo st=$?; f(){ :; }; export -f \"f=x\"; echo st=$?", "st=1\nst=1\n", "bash: line 1: export: foo=bar: cannot export\nbash: line 1: export: f=x: not a function\n"},
		{"function /bin/echo { echo bad; }; export -f /bin/echo; echo st=$?; bash -c \"/bin/echo good\"", "st=1\ngood\n", "bash: line 1: export: /bin/echo: cannot export\n"},
	}, true)
}
