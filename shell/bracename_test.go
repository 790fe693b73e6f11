package shell

import "testing"

// TestBraceRejoinsNames: bash expands braces on a word's text and reads
// the parameter names in the results, so `$a{1,2}` is `$a1 $a2` (found by
// the differential harness's brace2 producer; recorded from bash 5.2).
func TestBraceRejoinsNames(t *testing.T) {
	tests := []recorded{
		{`a1=X; a2=Y; a=R; echo $a{1,2}`, "X Y\n", ""},
		{`abd=Q; a=R; echo $a{b,c}d .`, "Q .\n", ""},
		{`ab=Q; echo $a{b..c}`, "Q\n", ""},
		{`a_1=u; a=R; echo $a{_1,-}`, "u R-\n", ""},
		{`x=1; echo $x{,.bak}`, "1 1.bak\n", ""},
		{`set -- p q; echo $1{2,3}`, "p2 p3\n", ""},
		{`a=R; echo ${a}{1,2} "$a"{1,2}`, "R1 R2 R1 R2\n", ""},
		{`abc=Z; a=R; echo $a{b}c $a{bc,}`, "R{b}c Z R\n", ""},
		// the sequence passes through '\\', a word of one backslash that
		// quote removal leaves as an empty field
		{`set -- {Z..a}; echo $# "$3"`, "8 \n", ""},
		{"echo {a..C}", "a ` _ ^ ]  [ Z Y X W V U T S R Q P O N M L K J I H G F E D C\n", ""},
	}
	checkRecorded(t, tests, false)
}
