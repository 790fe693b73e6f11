package shell

import "testing"

// TestDeclareListsAndRefs: declare with an attribute and no names lists in
// declare -p's form, local lists every local so, typeset +n ref=v assigns
// through the reference first, and unset, read -a and mapfile name
// themselves (or not) as bash does on a readonly variable (recorded from
// bash 5.2's tests/nameref and by hand).
func TestDeclareListsAndRefs(t *testing.T) {
	tests := []recorded{
		{`x=1; declare -n a=x b=y; typeset -n`, "declare -n a=\"x\"\ndeclare -n b=\"y\"\n", ""},
		{`f() { local -i z=1; local x=2; local -i; local; }; f`, "declare -- x=\"2\"\ndeclare -i z=\"1\"\ndeclare -- x=\"2\"\ndeclare -i z=\"1\"\n", ""},
		{`x=1; declare -a arr=(1); declare -a | grep arr; declare | grep ^x=`, "declare -a arr=([0]=\"1\")\nx=1\n", ""},
		{`bar=one; declare -n foo=bar; typeset +n foo=other; echo "$foo $bar"; declare -p foo`, "bar other\ndeclare -- foo=\"bar\"\n", ""},
		{`readonly r; unset r; echo $?`, "1\n", "bash: line 1: unset: r: cannot unset: readonly variable\n"},
		{`readonly a; read -a a <<< x; echo $?; mapfile a <<< x; echo $?`, "1\n1\n", "bash: line 1: a: readonly variable\nbash: line 1: a: readonly variable\n"},
	}
	checkRecorded(t, tests, true)
}
