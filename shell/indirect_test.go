package shell

import "testing"

// ${!name} naming nothing is an error after which bash abandons the
// command line, through functions, and reads the next (recorded from bash
// 5.2); before, an empty name expanded to nothing and the line went on.
func TestIndirectNamingNothing(t *testing.T) {
	checkRecorded(t, []recorded{
		{"foo=; echo \"[${!foo-d}]\"; echo same\necho next line", "next line\n", "bash: line 1: : invalid variable name\n"},
		{"unset foo; echo \"[${!foo:-d}]\"; echo same\necho next line", "next line\n", "bash: line 1: foo: invalid indirect expansion\n"},
		{"declare foo; echo \"[${!foo}]\"; set --; echo \"[${!1}]\"", "[]\n[]\n", ""},
		{"foo=(); echo \"[${!foo}]\"; arr=(a b); x=\"arr[1]\"; echo ${!x}\necho next line", "[]\nb\nnext line\n", ""},
	}, true)
	checkRecorded(t, []recorded{
		{"f() { foo=\"a b\"; echo \"${!foo}\"; echo in; }; f; echo same\necho next line", "next line\n", ""},
	}, false)
}
