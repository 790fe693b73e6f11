package shell

import "testing"

// Declarations as bash 5.2 prints and reads them: a name declared without
// a value (local x) is declared, export -n of nothing creates nothing, a
// quoted (...) assigned to an array by declare is a compound assignment,
// and a function listing (or -p) follows a definition that has attributes
// with its declare line (recorded from bash reading the script on stdin).
func TestDeclareValuelessAndFuncAttrs(t *testing.T) {
	checkRecorded(t, []recorded{
		{"declare x; declare -p x; f() { local x; echo ${x-unset}; declare -p x; local y=1; unset y; declare -p y; local -i z; declare -p z; }; x=outer; f; x=1; unset x; declare -p x", "declare -- x\nunset\ndeclare -- x\ndeclare -- y\ndeclare -i z\n", "bash: line 1: declare: x: not found\n"},
		{"export -n q; declare -p q; q=1; export q; export -n q; declare -p q", "declare -- q=\"1\"\n", "bash: line 1: declare: q: not found\n"},
		{"declare -a y=v; declare y=\"(3 4)\"; declare -p y; w=(1); declare w=\"( 5 )\"; declare -p w; export w=\"(9)\"; declare -p w; z=s; declare z=\"(1 2)\"; declare -p z; declare -A m; declare m=\"([a]=1)\"; declare -p m", "declare -a y=([0]=\"3\" [1]=\"4\")\ndeclare -a w=([0]=\"5\")\ndeclare -ax w=([0]=\"(9)\")\ndeclare -- z=\"(1 2)\"\ndeclare -A m=([a]=\"1\" )\n", ""},
		{"f() { declare -ga gx=v; }; f; f() { declare -g gx='(1 2)'; }; f; declare -p gx", "declare -a gx=([0]=\"1\" [1]=\"2\")\n", ""},
		{"f() { :; }; g() { :; }; export -f f; readonly -f g; declare -f; echo ---; declare -f f; echo ---; declare -fr; echo ---; typeset -fx f; echo ---; declare -pf f", "f () \n{ \n    :\n}\ndeclare -fx f\ng () \n{ \n    :\n}\ndeclare -fr g\n---\nf () \n{ \n    :\n}\n---\ng () \n{ \n    :\n}\ndeclare -fr g\n---\n---\nf () \n{ \n    :\n}\ndeclare -fx f\n", ""},
	}, true)
}
